#!/usr/bin/env bash
# Fuzzes one target for N minutes and merges what it found into its corpus.
#
#   test/fuzz/run.sh <target> <minutes> [build-dir]
#
# <target>: admission extender watch_stream list_page config snapshot quantity
# (fuzz_<target> in <build-dir>/fuzz/test/fuzz, built by the normal build;
# build-dir defaults to build). New inputs go to a scratch directory first;
# then `-merge=1` copies into test/fuzz/corpus/<target>/ only those that add
# coverage, so the corpus stays minimal. A crash, leak or sanitizer report
# stops the run and leaves crash-*/leak-* files in the current directory:
# each becomes a corpus file once the code is fixed.
# FUZZ_OUT=DIR keeps the new inputs in DIR instead (nothing merged): for runs
# whose finds should not grow the committed corpus. FUZZ_ARTIFACTS=DIR/ puts
# crash files there instead of the current directory.
# Runs at nice 19 (the machine is shared); one job, -max_total_time wall time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target=${1:?usage: run.sh <target> <minutes> [build-dir]}
minutes=${2:?usage: run.sh <target> <minutes> [build-dir]}
build=${3:-$here/../../build}
binary="$build/fuzz/test/fuzz/fuzz_$target"
corpus="$here/corpus/$target"
[ -x "$binary" ] || { echo "no $binary: build first (cmake --build $build)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "no corpus $corpus" >&2; exit 2; }
if [ -n "${FUZZ_OUT:-}" ]; then
  scratch=$FUZZ_OUT
  mkdir -p "$scratch"
else
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The committed corpus is read, not written: new inputs land in the scratch
# directory (the first corpus directory given is the one written).
status=0
nice -n 19 "$binary" -max_total_time=$((minutes * 60)) -timeout=25 -rss_limit_mb=4096 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="${FUZZ_ARTIFACTS:-./}" "$scratch" "$corpus" || status=$?
# Keep only what adds coverage to the committed corpus.
if [ -z "${FUZZ_OUT:-}" ]; then
  nice -n 19 "$binary" -merge=1 "$corpus" "$scratch" 2>&1 | tail -n 2
fi
exit $status
