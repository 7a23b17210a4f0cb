// The feeds that need no API server: a snapshot file and the demo cluster.
#include <atomic>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "webhook/cluster_feed.h"
#include "webhook/demo_cluster.h"
#include "webhook/log.h"

namespace placer {
namespace {

using nlohmann::json;

// Decodes every node and pod first, then applies them in one update, so the
// view is never half-filled.
Outcome applySnapshot(const json& snapshot, ClusterState& state) {
  if (!snapshot.is_object()) return Error{"snapshot: expected a JSON object with \"nodes\" and \"pods\""};
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  if (auto it = snapshot.find("nodes"); it != snapshot.end() && !it->is_null()) {
    if (!it->is_array()) return Error{"nodes: expected an array"};
    for (size_t i = 0; i < it->size(); ++i) {
      Result<Node> n = decodeNode((*it)[i]);
      if (!n) return Error{"nodes[" + std::to_string(i) + "]." + n.error().message};
      nodes.push_back(std::move(*n));
    }
  }
  if (auto it = snapshot.find("pods"); it != snapshot.end() && !it->is_null()) {
    if (!it->is_array()) return Error{"pods: expected an array"};
    for (size_t i = 0; i < it->size(); ++i) {
      Result<Pod> p = decodePod((*it)[i]);
      if (!p) return Error{"pods[" + std::to_string(i) + "]." + p.error().message};
      pods.push_back(std::move(*p));
    }
  }
  state.update([&](MutableClusterView& view) {
    for (Node& n : nodes) view.upsertNode(std::move(n));
    for (const Pod& p : pods) view.upsertPod(p);
  });
  return {};
}

class StaticFeed : public ClusterFeed {
 public:
  using Loader = std::function<Result<json>()>;
  StaticFeed(std::string description, Loader loader)
      : description_(std::move(description)), loader_(std::move(loader)) {}

  Outcome start(ClusterState& state) override {
    Result<json> snapshot = loader_();
    if (!snapshot) return snapshot.error();
    if (Outcome applied = applySnapshot(*snapshot, state); !applied) return Error{description_ + ": " + applied.error().message};
    size_t nodes = 0, pods = 0;
    state.read([&](const ClusterView& v) {
      nodes = v.nodes().size();
      pods = v.podCount();
    });
    logEvent(LogLevel::Info, "cluster view loaded", {{"source", description_}, {"nodes", nodes}, {"pods", pods}});
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
  return std::make_unique<StaticFeed>("snapshot " + path, [path]() -> Result<json> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open"};
    json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Error{path + ": not valid JSON"};
    return doc;
  });
}

std::unique_ptr<ClusterFeed> makeDemoFeed() {
  return std::make_unique<StaticFeed>("demo", []() -> Result<json> { return demoSnapshot(); });
}

}  // namespace placer
