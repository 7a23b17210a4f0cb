// The feeds that need no API server: a snapshot file and the demo cluster.

#include <atomic>
#include <chrono>
#include <functional>

#include "scoring/snapshot.h"
#include "webhook/allocator.h"
#include "webhook/cluster_feed.h"
#include "webhook/demo_cluster.h"
#include "webhook/log.h"

namespace placer {
namespace {

class StaticFeed : public ClusterFeed {
 public:
  // Fills the state; an error names what is wrong.
  using Loader = std::function<Outcome(ClusterState&)>;
  StaticFeed(std::string description, Loader loader)
      : description_(std::move(description)), loader_(std::move(loader)) {}

  Outcome start(ClusterState& state) override {
    const auto began = std::chrono::steady_clock::now();
    if (Outcome loaded = loader_(state); !loaded) return loaded;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    size_t nodes = 0, pods = 0;
    state.read([&](const ClusterView& v) {
      nodes = v.nodes().size();
      pods = v.podCount();
    });
    logEvent(LogLevel::Info, "cluster view loaded", {{"source", description_}, {"nodes", nodes}, {"pods", pods}, {"seconds", seconds}});
    synced_.store(true);
    return {};
  }
  void stop() override {}
  bool synced() const override { return synced_.load(); }
  std::string describe() const override { return description_; }

 private:
  std::string description_;
  Loader loader_;
  std::atomic<bool> synced_{false};
};

}  // namespace

std::unique_ptr<ClusterFeed> makeSnapshotFeed(std::string path) {
  return std::make_unique<StaticFeed>("snapshot " + path, [path](ClusterState& state) -> Outcome {
    // Streamed into the view object by object (scoring/snapshot.h); the
    // serve configuration is --config's, so the snapshot's pod and config are
    // checked and dropped.
    auto query = loadSnapshotFile(path, state);
    if (!query) return query.error();
    // What decoding held for a moment (the checks' sets, a piece of the file)
    // goes back to the system rather than staying in malloc's free lists.
    releaseFreeMemory();
    return {};
  });
}

std::unique_ptr<ClusterFeed> makeDemoFeed() {
  return std::make_unique<StaticFeed>("demo", [](ClusterState& state) -> Outcome {
    auto snapshot = decodeSnapshot(demoSnapshot());
    if (!snapshot) return Error{"demo: " + snapshot.error().message};
    state.update([&](MutableClusterView& view) { fillView(view, *snapshot); });
    return {};
  });
}

}  // namespace placer
