// libFuzzer target: a snapshot file (DESIGN.md "Snapshot") through
// loadSnapshotFile (scoring/snapshot.h), exactly as `placer explain
// --snapshot` and `placer serve --cluster-file` read it (the input is handed
// over as a file), then explain's steps: the snapshot's configuration, an
// engine, one decision for its pod, the explanation as JSON and as a table.
//
// What must hold: an error has a message, and parseSnapshot (the in-memory
// reading of the same decoder) accepts exactly what the file reading
// accepts; explain's output can be written.

#include <sys/mman.h>
#include <unistd.h>

#include "scoring/explain.h"
#include "test/fuzz/fuzz_support.h"

using namespace placer;
using namespace placer::fuzz;

namespace {

// One memory file, rewritten for every input; its /proc path is what
// loadSnapshotFile opens.
struct InputFile {
  int fd = memfd_create("snapshot", 0);
  std::string path = "/proc/self/fd/" + std::to_string(fd);

  void write(std::string_view text) {
    FUZZ_CHECK(fd >= 0 && ftruncate(fd, 0) == 0, "memfd");
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
      FUZZ_CHECK(n > 0, "pwrite");
      done += static_cast<size_t>(n);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static InputFile file;
  const std::string_view text = asText(data, size);
  file.write(text);
  MutableClusterView view;
  auto query = loadSnapshotFile(file.path, view);
  auto inMemory = parseSnapshot(text);
  FUZZ_CHECK(query.ok() == inMemory.ok(),
             query ? "file accepted, memory refused: " + inMemory.error().message
                   : "file refused, memory accepted: " + query.error().message);
  if (!query) {
    FUZZ_CHECK(!query.error().message.empty(), "a snapshot error says why");
    return 0;
  }
  auto config = configurationFromJson(query->config);
  if (!config) {
    FUZZ_CHECK(!config.error().message.empty(), "a configuration error says why");
    return 0;
  }
  if (!query->pod) return 0;
  Engine engine(config->profile);
  Decision decision = engine.place(*query->pod, view, Detail::Full);
  FUZZ_CHECK(decision.feasibleCount <= decision.nodeCount, "feasible <= nodes");
  try {
    (void)explainJson(*query->pod, decision).dump();
    (void)explainTable(*query->pod, decision);
  } catch (const nlohmann::json::exception& e) {
    FUZZ_CHECK(false, std::string("explain output cannot be written: ") + e.what());
  }
  return 0;
}
