// The watch's handler: events are applied in batches off the watch's thread,
// in the order they came, and a list waits for the events before it.
#include "webhook/kube/kube_feed.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/json_value.h"

namespace placer {
namespace {

using nlohmann::json;

// An object as the watch hands it to the handler: parsed from its JSON text.
class Parsed {
 public:
  explicit Parsed(const json& object) : text_(object.dump()), value_(*parser_.parse(text_)) {}
  operator const JsonValue&() const { return value_; }

 private:
  JsonParser parser_;
  std::string text_;
  JsonValue value_;
};

Parsed node(const std::string& name) {
  return Parsed(json{{"metadata", {{"name", name}}},
          {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}}}}});
}

Parsed pod(const std::string& uid, const std::string& nodeName, const std::string& cpu,
           const std::string& phase = "Running") {
  return Parsed(json{{"metadata", {{"name", "p-" + uid}, {"namespace", "default"}, {"uid", uid}}},
          {"spec",
           {{"nodeName", nodeName},
            {"containers", json::array({{{"name", "app"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}},
          {"status", {{"phase", phase}}}});
}

int64_t cpuOn(ClusterState& state, const std::string& name) {
  return state.read([&](const ClusterView& v) {
    const NodeInfo* n = v.findNode(name);
    return n ? n->requested.milliCpu : int64_t{-1};
  });
}

// Waits, within a bound, for a condition on the view.
template <class F>
bool eventually(F&& f) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::yield();
  }
  return f();
}

TEST(KubeFeedHandler, AppliesABurstOfEventsInOrder) {
  ClusterState state;
  auto nodes = kube::makeNodeHandler(state);
  auto pods = kube::makePodHandler(state);
  nodes->upserted(node("a"));
  nodes->upserted(node("b"));
  // One pod moved, changed, deleted and re-created, another status-updated
  // many times: only the order decides the outcome.
  pods->upserted(pod("u1", "a", "100m"));
  pods->upserted(pod("u1", "b", "200m"));
  for (int i = 0; i < 50; ++i) pods->upserted(pod("u2", "a", "300m"));
  pods->deleted(pod("u1", "b", "200m"));
  pods->upserted(pod("u1", "a", "400m"));
  pods->upserted(pod("u1", "a", "400m", "Succeeded"));  // terminal: no longer counted
  pods->upserted(pod("u3", "b", "50m"));
  ASSERT_TRUE(eventually([&] { return cpuOn(state, "b") == 50; }));
  EXPECT_EQ(cpuOn(state, "a"), 300);
  EXPECT_EQ(state.read([](const ClusterView& v) { return v.podCount(); }), 2u);

  nodes->deleted(node("b"));
  ASSERT_TRUE(eventually([&] { return cpuOn(state, "b") == -1; }));
}

TEST(KubeFeedHandler, AListWaitsForTheEventsBeforeIt) {
  ClusterState state;
  auto nodes = kube::makeNodeHandler(state);
  auto pods = kube::makePodHandler(state);
  nodes->upserted(node("a"));
  ASSERT_TRUE(eventually([&] { return cpuOn(state, "a") == 0; }));  // another handler, another queue
  pods->upserted(pod("old", "a", "100m"));
  // A relist that no longer has "old": it must be gone afterwards, not
  // re-added by its queued event applying after the resync.
  pods->listStarted();
  pods->listed(pod("new", "a", "250m"));
  pods->listFinished();
  pods.reset();  // whatever is still queued applies now
  EXPECT_EQ(cpuOn(state, "a"), 250);
  EXPECT_EQ(state.read([](const ClusterView& v) { return v.findPod("old") == nullptr; }), true);
}

TEST(KubeFeedHandler, QueuedEventsApplyBeforeItIsDestroyed) {
  ClusterState state;
  {
    auto nodes = kube::makeNodeHandler(state);
    auto pods = kube::makePodHandler(state);
    nodes->upserted(node("a"));
    nodes.reset();
    pods->upserted(pod("u1", "a", "700m"));
  }
  EXPECT_EQ(cpuOn(state, "a"), 700);
}

}  // namespace
}  // namespace placer
