# Writes OUTPUT (placer_revision.h) with the source tree's revision for
# placer_build_info: REVISION when given (-DPLACER_REVISION=..., e.g. an image
# build without .git), else `git describe --always --dirty` of SOURCE_DIR, else
# "unknown". The file is rewritten only when the revision changes, so a build
# recompiles nothing otherwise.
if(REVISION)
  set(revision "${REVISION}")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                  OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(failed OR NOT revision)
    set(revision "unknown")
  endif()
endif()
set(content "#pragma once\n#define PLACER_REVISION \"${revision}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
