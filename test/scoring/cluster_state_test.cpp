#include "scoring/cluster_state.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/engine.h"
#include "scoring/profile.h"
#include "scoring/topology.h"

namespace placer {
namespace {

constexpr int64_t kMi = 1024 * 1024;
using Clock = std::chrono::steady_clock;

Node makeNode(const std::string& name, std::vector<std::vector<std::string>> images = {}) {
  Node node;
  node.name = name;
  node.allocatable.milliCpu = 4000;
  node.allocatable.memory = 8192 * kMi;
  node.allocatable.pods = 110;
  for (auto& names : images) node.images.add(names, 100 * kMi);
  return node;
}

struct PodSpec {
  std::string name = "";
  std::string node = "";
  int64_t milliCpu = 100;  // < 0: no request
  int64_t memory = 128 * kMi;
  std::vector<int32_t> hostPorts = {};
  std::string uid = "";  // defaults to "uid-<name>"; "-" for none
  std::string phase = "Running";
  bool terminating = false;
  std::string reservation = "";
  Labels labels = {};
};

Pod makePod(const PodSpec& s) {
  Pod pod;
  pod.namespace_ = "default";
  pod.name = s.name;
  pod.uid = s.uid == "-" ? "" : s.uid.empty() ? "uid-" + s.name : s.uid;
  pod.nodeName = s.node;
  pod.phase = s.phase;
  pod.terminating = s.terminating;
  pod.labels = s.labels;
  if (!s.reservation.empty()) pod.annotations.push_back({std::string(kReservationAnnotation), s.reservation});
  Container c;
  c.name = "app";
  c.image = "nginx:1.25";
  if (s.milliCpu >= 0) {
    c.requests.milliCpu = s.milliCpu;
    c.hasCpuRequest = true;
    c.requests.memory = s.memory;
    c.hasMemoryRequest = true;
  }
  for (int32_t port : s.hostPorts) c.hostPorts.push_back(HostPort{"0.0.0.0", "TCP", port});
  pod.containers.push_back(c);
  computePodRequests(pod);
  return pod;
}

Reservation makeReservation(const std::string& id, const std::string& node, int64_t milliCpu,
                            Clock::time_point expires = Clock::time_point::max()) {
  Reservation r;
  r.id = id;
  r.nodeName = node;
  r.podKey = "default/pending";
  r.requests.milliCpu = milliCpu;
  r.requests.memory = 64 * kMi;
  r.nonZeroRequests.milliCpu = milliCpu;
  r.nonZeroRequests.memory = 64 * kMi;
  r.expires = expires;
  return r;
}

struct NodeExpectation {
  std::string node;
  int32_t pods;
  int64_t milliCpu;
  int64_t nonZeroMilliCpu;
  size_t ports;
};

struct Case {
  std::string name;
  std::function<void(MutableClusterView&)> steps;
  std::vector<NodeExpectation> nodes;
  size_t podsKept;
  size_t reservations = 0;
};

const Clock::time_point kT0 = Clock::time_point() + std::chrono::hours(1);

std::vector<Case> cases() {
  return {
      {"pod counted on its node", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 250}));
       }, {{"n1", 1, 250, 250, 0}}, 1},
      {"pod arriving before its node is attached when the node appears", [](MutableClusterView& v) {
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 250}));
         v.upsertNode(makeNode("n1"));
       }, {{"n1", 1, 250, 250, 0}}, 1},
      {"node deleted and re-created keeps its pods counted once", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 250}));
         v.removeNode("n1");
         v.upsertNode(makeNode("n1"));
       }, {{"n1", 1, 250, 250, 0}}, 1},
      {"pod deleted while its node is gone is not counted when the node returns", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1"}));
         v.removeNode("n1");
         v.removePod("uid-a");
         v.upsertNode(makeNode("n1"));
       }, {{"n1", 0, 0, 0, 0}}, 0},
      {"the same pod upserted twice is counted once", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 300}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 300}));
       }, {{"n1", 1, 300, 300, 0}}, 1},
      {"a pod moved to another node leaves the first", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertNode(makeNode("n2"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 300, .hostPorts = {8080}}));
         v.upsertPod(makePod({.name = "a", .node = "n2", .milliCpu = 300, .hostPorts = {8080}}));
       }, {{"n1", 0, 0, 0, 0}, {"n2", 1, 300, 300, 1}}, 1},
      {"changed requests replace the old ones", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 100}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 700}));
       }, {{"n1", 1, 700, 700, 0}}, 1},
      {"a Succeeded pod stops counting", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1"}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .phase = "Succeeded"}));
       }, {{"n1", 0, 0, 0, 0}}, 0},
      {"a Failed pod stops counting", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .hostPorts = {80}}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .hostPorts = {80}, .phase = "Failed"}));
       }, {{"n1", 0, 0, 0, 0}}, 0},
      {"a terminating pod still counts until it is deleted", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 400}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 400, .terminating = true}));
       }, {{"n1", 1, 400, 400, 0}}, 1},
      {"an unbound pod is not counted", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = ""}));
       }, {{"n1", 0, 0, 0, 0}}, 0},
      {"a pod without requests counts the scorers' non-zero defaults", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = -1}));
       }, {{"n1", 1, 0, kDefaultMilliCpuRequest, 0}}, 1},
      {"pods without uid are keyed by namespace/name", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .uid = "-"}));
         v.upsertPod(makePod({.name = "b", .node = "n1", .uid = "-"}));
         v.removePod("default/a");
       }, {{"n1", 1, 100, 100, 0}}, 1},
      {"host ports are a multiset", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .hostPorts = {9100}}));
         v.upsertPod(makePod({.name = "b", .node = "n1", .hostPorts = {9100}}));
         v.removePod("uid-a");
       }, {{"n1", 1, 100, 100, 1}}, 1},
      {"a pod with many host ports leaves only its own, even those another pod also uses", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         std::vector<int32_t> many;
         for (int32_t port = 1; port <= 40000; ++port) many.push_back(port);
         v.upsertPod(makePod({.name = "b", .node = "n1", .hostPorts = {9100, 40001}}));
         v.upsertPod(makePod({.name = "a", .node = "n1", .hostPorts = many}));
         v.upsertPod(makePod({.name = "c", .node = "n1", .hostPorts = {9100}}));
         v.removePod("uid-a");
       }, {{"n1", 2, 200, 200, 3}}, 2},
      {"a reservation counts like a pod", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         ASSERT_TRUE(v.reserve(makeReservation("r1", "n1", 500)));
       }, {{"n1", 1, 500, 500, 0}}, 0, 1},
      {"the pod carrying the reservation annotation releases it in the same step", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         ASSERT_TRUE(v.reserve(makeReservation("r1", "n1", 500)));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 500, .reservation = "r1"}));
       }, {{"n1", 1, 500, 500, 0}}, 1, 0},
      {"an unknown reservation annotation changes nothing", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         ASSERT_TRUE(v.reserve(makeReservation("r1", "n1", 500)));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 200, .reservation = "other"}));
       }, {{"n1", 2, 700, 700, 0}}, 1, 1},
      {"reserving on an unknown node or a taken id is refused", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         EXPECT_FALSE(v.reserve(makeReservation("r1", "nope", 500)));
         EXPECT_TRUE(v.reserve(makeReservation("r1", "n1", 500)));
         EXPECT_FALSE(v.reserve(makeReservation("r1", "n1", 500)));
       }, {{"n1", 1, 500, 500, 0}}, 0, 1},
      {"released and expired reservations stop counting", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         ASSERT_TRUE(v.reserve(makeReservation("r1", "n1", 500, kT0)));
         ASSERT_TRUE(v.reserve(makeReservation("r2", "n1", 300, kT0 + std::chrono::seconds(30))));
         ASSERT_TRUE(v.reserve(makeReservation("r3", "n1", 200, kT0 + std::chrono::seconds(60))));
         EXPECT_TRUE(v.release("r1"));
         EXPECT_FALSE(v.release("r1"));
         EXPECT_EQ(v.expireReservations(kT0 + std::chrono::seconds(30)), 1u);
       }, {{"n1", 1, 200, 200, 0}}, 0, 1},
      {"a relist removes the pods it did not see", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertPod(makePod({.name = "a", .node = "n1", .milliCpu = 100}));
         v.upsertPod(makePod({.name = "b", .node = "n1", .milliCpu = 200}));
         v.beginResync(ResyncKind::Pods);
         v.upsertPod(makePod({.name = "b", .node = "n1", .milliCpu = 200}));
         EXPECT_EQ(v.finishResync(ResyncKind::Pods), 1u);
       }, {{"n1", 1, 200, 200, 0}}, 1},
      {"a relist removes the nodes it did not see and keeps their pods for later", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         v.upsertNode(makeNode("n2"));
         v.upsertPod(makePod({.name = "a", .node = "n2", .milliCpu = 100}));
         v.beginResync(ResyncKind::Nodes);
         v.upsertNode(makeNode("n1"));
         EXPECT_EQ(v.finishResync(ResyncKind::Nodes), 1u);
         EXPECT_EQ(v.findNode("n2"), nullptr);
         v.upsertNode(makeNode("n2"));
       }, {{"n1", 0, 0, 0, 0}, {"n2", 1, 100, 100, 0}}, 1},
      {"removing a node drops the reservations on it", [](MutableClusterView& v) {
         v.upsertNode(makeNode("n1"));
         ASSERT_TRUE(v.reserve(makeReservation("r1", "n1", 500)));
         v.removeNode("n1");
         v.upsertNode(makeNode("n1"));
       }, {{"n1", 0, 0, 0, 0}}, 0, 0},
  };
}

class ClusterStateCases : public ::testing::TestWithParam<Case> {};

TEST_P(ClusterStateCases, AccountingMatches) {
  const Case& c = GetParam();
  MutableClusterView view;
  c.steps(view);
  for (const NodeExpectation& e : c.nodes) {
    const NodeInfo* node = view.findNode(e.node);
    ASSERT_NE(node, nullptr) << e.node;
    EXPECT_EQ(node->podCount, e.pods) << e.node;
    EXPECT_EQ(node->requested.milliCpu, e.milliCpu) << e.node;
    EXPECT_EQ(node->nonZeroRequested.milliCpu, e.nonZeroMilliCpu) << e.node;
    EXPECT_EQ(node->usedPorts.size(), e.ports) << e.node;
  }
  EXPECT_EQ(view.podCount(), c.podsKept);
  EXPECT_EQ(view.reservationCount(), c.reservations);
}

INSTANTIATE_TEST_SUITE_P(, ClusterStateCases, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

// The interned strings (label keys and values, namespaces, node names) as
// the view uses them: an id stays while any acquisition holds it, and a
// released string is gone while every other one is still found, whatever the
// order of releases (the index's probe runs are mended on each release).
TEST(StringTable, HeldStringsStayFoundThroughReleasesInAnyOrder) {
  struct Case {
    std::string name;
    int strings;
    int releaseEvery;  // release string i when i % releaseEvery == 0 ...
    bool backwards;    // ... from the last string to the first
  };
  const std::vector<Case> cases = {
      {"one string", 1, 1, false},
      {"every string released, first to last", 3000, 1, false},
      {"every string released, last to first", 3000, 1, true},
      {"every other string, first to last", 3000, 2, false},
      {"every third string, last to first", 5000, 3, true},
      {"every seventh string, many table growths", 20000, 7, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    StringTable table;
    auto text = [](int i) { return "web-" + std::to_string(i * 7919 % 100003) + (i % 2 ? "" : ".example.com/label"); };
    std::vector<uint32_t> ids;
    for (int i = 0; i < c.strings; ++i) ids.push_back(table.acquire(text(i)));
    for (int i = 0; i < c.strings; i += 2) ASSERT_EQ(table.acquire(text(i)), ids[i]) << "a second acquisition: the same id";
    ASSERT_EQ(table.size(), static_cast<size_t>(c.strings));

    auto released = [&](int i) { return i % c.releaseEvery == 0; };
    for (int k = 0; k < c.strings; ++k) {
      const int i = c.backwards ? c.strings - 1 - k : k;
      if (!released(i)) continue;
      table.release(ids[i]);
      if (i % 2 == 0) {
        EXPECT_EQ(table.find(text(i)), ids[i]) << "still held once: " << text(i);
        table.release(ids[i]);
      }
      EXPECT_EQ(table.find(text(i)), StringTable::kNone) << text(i);
    }
    size_t held = 0;
    for (int i = 0; i < c.strings; ++i) {
      if (released(i)) {
        EXPECT_EQ(table.find(text(i)), StringTable::kNone) << text(i);
        continue;
      }
      ++held;
      EXPECT_EQ(table.find(text(i)), ids[i]) << text(i);
      EXPECT_EQ(table.text(ids[i]), text(i));
    }
    EXPECT_EQ(table.size(), held);

    // Released strings come back (on freed ids), and the held ones keep theirs.
    for (int i = 0; i < c.strings; ++i)
      if (released(i)) ids[i] = table.acquire(text(i));
    EXPECT_EQ(table.size(), static_cast<size_t>(c.strings));
    EXPECT_EQ(table.bound(), static_cast<size_t>(c.strings)) << "every freed id reused";
    for (int i = 0; i < c.strings; ++i) {
      EXPECT_EQ(table.find(text(i)), ids[i]) << text(i);
      EXPECT_EQ(table.text(ids[i]), text(i));
    }
  }
}

// The view's index of pods (by uid, or namespace/name for a pod without
// one): every pod kept is found by its key, whatever the order of removals,
// updates and relists before it, and a removed one is not.
TEST(ClusterView, PodsStayFoundByKeyThroughRemovalsUpdatesAndRelists) {
  struct Case {
    std::string name;
    int pods;
    int removeEvery;  // pod i is removed when i % removeEvery == 0 ...
    bool backwards;   // ... from the last pod to the first
  };
  const std::vector<Case> cases = {
      {"one pod", 1, 1, false},
      {"every pod removed, first to last", 2000, 1, false},
      {"every pod removed, last to first", 2000, 1, true},
      {"every other pod, first to last", 3000, 2, false},
      {"every third pod, last to first, many index growths", 20000, 3, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MutableClusterView view;
    view.upsertNode(makeNode("n1"));
    view.upsertNode(makeNode("n2"));
    // Every fifth pod has no uid: its key is namespace/name.
    auto spec = [](int i, const std::string& node) {
      return PodSpec{.name = "web-" + std::to_string(i * 7919 % 100003), .node = node, .uid = i % 5 ? "" : "-"};
    };
    auto key = [&](int i) {
      const Pod pod = makePod(spec(i, "n1"));
      return podKey(pod);
    };
    for (int i = 0; i < c.pods; ++i) view.upsertPod(makePod(spec(i, "n1")));
    ASSERT_EQ(view.podCount(), static_cast<size_t>(c.pods));

    auto removed = [&](int i) { return i % c.removeEvery == 0; };
    for (int k = 0; k < c.pods; ++k) {
      const int i = c.backwards ? c.pods - 1 - k : k;
      if (!removed(i)) continue;
      view.removePod(key(i));
      EXPECT_EQ(view.findPod(key(i)), nullptr) << key(i);
    }
    // The kept pods move to n2 (an update under the same key).
    size_t kept = 0;
    for (int i = 0; i < c.pods; ++i) {
      if (removed(i)) continue;
      ++kept;
      view.upsertPod(makePod(spec(i, "n2")));
    }
    EXPECT_EQ(view.podCount(), kept);
    for (int i = 0; i < c.pods; ++i) {
      const PodRecord* pod = view.findPod(key(i));
      if (removed(i)) {
        EXPECT_EQ(pod, nullptr) << key(i);
        continue;
      }
      ASSERT_NE(pod, nullptr) << key(i);
      EXPECT_EQ(pod->name, spec(i, "n2").name);
      EXPECT_EQ(view.text(pod->nodeNameId), "n2");
    }

    // A relist that holds the removed pods only: the kept ones go, the
    // removed ones come back (into freed slots).
    view.beginResync(ResyncKind::Pods);
    for (int i = 0; i < c.pods; ++i)
      if (removed(i)) view.upsertPod(makePod(spec(i, "n1")));
    EXPECT_EQ(view.finishResync(ResyncKind::Pods), kept);
    EXPECT_EQ(view.podCount(), static_cast<size_t>(c.pods) - kept);
    for (int i = 0; i < c.pods; ++i)
      EXPECT_EQ(view.findPod(key(i)) != nullptr, removed(i)) << key(i);
  }
}

TEST(ClusterView, ImageNodeCountsFollowNodeUpdates) {
  MutableClusterView view;
  view.upsertNode(makeNode("n1", {{"repo/app@sha256:abc", "repo/app:v1"}, {"repo/sidecar:v2"}}));
  view.upsertNode(makeNode("n2", {{"repo/app:v1"}}));
  EXPECT_EQ(view.imageNodeCount("repo/app:v1"), 2);
  EXPECT_EQ(view.imageNodeCount("repo/app@sha256:abc"), 1);
  EXPECT_EQ(view.imageNodeCount("repo/sidecar:v2"), 1);
  EXPECT_EQ(view.imageNodeCount("repo/absent:v1"), 0);

  view.upsertNode(makeNode("n1", {{"repo/sidecar:v2"}}));  // the kubelet garbage-collected app:v1
  EXPECT_EQ(view.imageNodeCount("repo/app:v1"), 1);
  EXPECT_EQ(view.imageNodeCount("repo/app@sha256:abc"), 0);
  view.removeNode("n2");
  EXPECT_EQ(view.imageNodeCount("repo/app:v1"), 0);
  view.upsertNode(makeNode("n3", {{"repo/x:1"}, {"repo/x:1"}}));  // listed twice, one node
  EXPECT_EQ(view.imageNodeCount("repo/x:1"), 1);
}

TEST(ClusterView, PodsOfANodeAreReachableWithTheirLabels) {
  MutableClusterView view;
  view.upsertNode(makeNode("n1"));
  view.upsertNode(makeNode("n2"));
  view.upsertPod(makePod({.name = "a", .node = "n1", .labels = {{"app", "web"}, {"tier", "front"}}}));
  view.upsertPod(makePod({.name = "b", .node = "n1", .labels = {{"app", "db"}}}));
  view.upsertPod(makePod({.name = "c", .node = "n2", .labels = {{"app", "web"}}}));

  const NodeInfo* n1 = view.findNode("n1");
  ASSERT_EQ(n1->podSlots.size(), 2u);
  std::vector<std::string> apps;
  for (uint32_t slot : n1->podSlots) {
    const PodRecord* pod = view.pod(slot);
    ASSERT_NE(pod, nullptr);
    EXPECT_EQ(view.text(pod->namespaceId), "default");
    apps.emplace_back(view.podLabel(*pod, "app").value_or(""));
  }
  std::sort(apps.begin(), apps.end());
  EXPECT_EQ(apps, (std::vector<std::string>{"db", "web"}));
  const PodRecord* a = view.findPod("uid-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(view.podLabel(*a, "tier"), "front");
  EXPECT_EQ(view.podLabel(*a, "missing"), std::nullopt);

  // Relabelled and moved: the old labels and slot go away.
  view.upsertPod(makePod({.name = "a", .node = "n2", .labels = {{"app", "api"}}}));
  EXPECT_EQ(view.findNode("n1")->podSlots.size(), 1u);
  EXPECT_EQ(view.findNode("n2")->podSlots.size(), 2u);
  EXPECT_EQ(view.podLabel(*view.findPod("uid-a"), "app"), "api");
  EXPECT_EQ(view.podLabel(*view.findPod("uid-a"), "tier"), std::nullopt);
}

// The topology plugins' label index (podsWithLabel, podLabel, stringId) as
// pods come, change labels, move between nodes, leave and are relisted: after
// every step it answers exactly what the pods kept say (each label's list of
// slots is mended by swap-removal as pods leave). Replicas share their label
// lists; a StatefulSet-like label is one value per pod, whose interned string
// leaves with the pod.
TEST(ClusterView, LabelIndexFollowsPodsThroughEveryChange) {
  struct Case {
    std::string name;
    int pods;
    int workloads;      // label lists shared by the replicas of a workload
    bool ownLabel;      // each pod also carries a label of its own
    int steps;
    int relistEvery;    // every n-th step is a relist that drops a third of the pods (0: none)
  };
  const std::vector<Case> cases = {
      {"one workload, shared labels only", 40, 1, false, 300, 0},
      {"many workloads, a label of each pod's own", 300, 12, true, 2000, 0},
      {"every pod its own list", 60, 60, true, 800, 0},
      {"relists among the changes", 200, 7, true, 1500, 97},
  };
  const std::vector<std::string> nodes = {"node-a", "node-b", "node-c"};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MutableClusterView view;
    for (const std::string& n : nodes) view.upsertNode(makeNode(n));
    std::mt19937 random(7);
    auto draw = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
    // What the view should hold: pod name -> (node, labels).
    std::map<std::string, std::pair<std::string, Labels>> kept;
    auto labelsOf = [&](int pod, int workload) {
      Labels labels = {{"app", "app-" + std::to_string(workload % 5)},
                       {"pod-template-hash", "hash-" + std::to_string(workload)},
                       {"tier", workload % 2 ? "front" : "back"}};
      if (c.ownLabel) labels.push_back({"statefulset.kubernetes.io/pod-name", "pod-" + std::to_string(pod)});
      std::sort(labels.begin(), labels.end());
      return labels;
    };
    auto upsert = [&](int pod) {
      const std::string name = "pod-" + std::to_string(pod);
      const int choice = draw(10);
      if (choice == 0) {  // pending again: leaves the view
        view.upsertPod(makePod({.name = name, .node = ""}));
        kept.erase(name);
        return;
      }
      Labels labels = labelsOf(pod, choice == 1 ? draw(c.workloads) : pod % c.workloads);  // now and then relabelled
      const std::string& node = nodes[static_cast<size_t>(draw(3))];
      view.upsertPod(makePod({.name = name, .node = node, .labels = labels}));
      kept[name] = {node, labels};
    };
    auto check = [&](int step) {
      SCOPED_TRACE("step " + std::to_string(step));
      ASSERT_EQ(view.podCount(), kept.size());
      // Every label any pod may carry: the slots holding it, as names.
      std::map<std::pair<std::string, std::string>, std::vector<std::string>> expected;
      for (int pod = 0; pod < c.pods; ++pod)
        for (int w = 0; w < c.workloads; ++w)
          for (const auto& label : labelsOf(pod, w)) expected[label];
      for (const auto& [name, entry] : kept)
        for (const auto& label : entry.second) expected[label].push_back(name);
      for (auto& [label, names] : expected) {
        std::sort(names.begin(), names.end());
        std::vector<std::string> found;
        for (uint32_t slot : view.podsWithLabel(view.stringId(label.first), view.stringId(label.second))) {
          const PodRecord* pod = view.pod(slot);
          ASSERT_NE(pod, nullptr) << label.first << "=" << label.second;
          found.push_back(pod->name);
        }
        std::sort(found.begin(), found.end());
        ASSERT_EQ(found, names) << label.first << "=" << label.second;
        if (names.empty() && label.first == "statefulset.kubernetes.io/pod-name") {
          EXPECT_EQ(view.stringId(label.second), StringTable::kNone) << "released with its last pod: " << label.second;
        }
      }
      for (const auto& [name, entry] : kept) {
        const PodRecord* pod = view.findPod("uid-" + name);
        ASSERT_NE(pod, nullptr) << name;
        EXPECT_EQ(view.text(pod->nodeNameId), entry.first) << name;
        ASSERT_EQ(pod->labels.size(), entry.second.size()) << name;
        for (size_t i = 0; i < entry.second.size(); ++i) {
          EXPECT_EQ(view.text(pod->labels[i].key), entry.second[i].first) << name;
          EXPECT_EQ(view.text(pod->labels[i].value), entry.second[i].second) << name;
          EXPECT_EQ(view.podLabel(*pod, entry.second[i].first), entry.second[i].second) << name;
        }
      }
    };
    for (int step = 1; step <= c.steps; ++step) {
      if (c.relistEvery > 0 && step % c.relistEvery == 0) {
        view.beginResync(ResyncKind::Pods);
        std::map<std::string, std::pair<std::string, Labels>> relisted;
        for (const auto& [name, entry] : kept) {
          if (draw(3) == 0) continue;
          view.upsertPod(makePod({.name = name, .node = entry.first, .labels = entry.second}));
          relisted[name] = entry;
        }
        EXPECT_EQ(view.finishResync(ResyncKind::Pods), kept.size() - relisted.size());
        kept = std::move(relisted);
      } else if (draw(4) == 0 && !kept.empty()) {
        auto it = std::next(kept.begin(), draw(static_cast<int>(kept.size())));
        view.removePod("uid-" + it->first);
        kept.erase(it);
      } else {
        upsert(draw(c.pods));
      }
      if (step % 50 == 0 || step == c.steps) check(step);
      if (::testing::Test::HasFatalFailure()) return;
    }
    // Everything leaves: no label is left indexed, no label string held.
    for (const auto& [name, entry] : kept) view.removePod("uid-" + name);
    kept.clear();
    check(c.steps + 1);
    for (int pod = 0; pod < c.pods; ++pod)
      for (int w = 0; w < c.workloads; ++w)
        for (const auto& [key, value] : labelsOf(pod, w)) {
          EXPECT_EQ(view.stringId(key), StringTable::kNone) << key;
          EXPECT_EQ(view.stringId(value), StringTable::kNone) << value;
        }
  }
}

TEST(ClusterView, RemovingANodeKeepsTheOthersFindable) {
  MutableClusterView view;
  for (int i = 0; i < 5; ++i) view.upsertNode(makeNode("n" + std::to_string(i)));
  view.upsertPod(makePod({.name = "a", .node = "n4", .milliCpu = 123}));
  view.removeNode("n1");  // n4 moves into n1's place
  ASSERT_EQ(view.nodes().size(), 4u);
  for (int i : {0, 2, 3, 4}) ASSERT_NE(view.findNode("n" + std::to_string(i)), nullptr) << i;
  EXPECT_EQ(view.findNode("n4")->requested.milliCpu, 123);
  view.removePod("uid-a");
  EXPECT_EQ(view.findNode("n4")->requested.milliCpu, 0);
  EXPECT_TRUE(view.findNode("n4")->podSlots.empty());
}

// The watch drops pod events that would change nothing without the exclusive
// lock; anything that would change the view must not be judged so.
TEST(ClusterView, PodUpsertChangesNothingOnlyForTheSameRecord) {
  MutableClusterView view;
  view.upsertNode(makeNode("n1"));
  const Pod bound = makePod({.name = "a", .node = "n1", .milliCpu = 200, .labels = {{"app", "web"}}});
  EXPECT_FALSE(view.podUpsertChangesNothing(bound));  // not in the view yet
  EXPECT_TRUE(view.podUpsertChangesNothing(makePod({.name = "pending", .node = ""})));  // neither counted nor kept
  view.upsertPod(bound);
  EXPECT_TRUE(view.podUpsertChangesNothing(bound));  // a status update

  EXPECT_FALSE(view.podUpsertChangesNothing(makePod({.name = "a", .node = "n1", .milliCpu = 300, .labels = {{"app", "web"}}})));
  EXPECT_FALSE(view.podUpsertChangesNothing(makePod({.name = "a", .node = "n1", .milliCpu = 200, .labels = {{"app", "db"}}})));
  EXPECT_FALSE(view.podUpsertChangesNothing(makePod({.name = "a", .node = "n1", .milliCpu = 200})));
  EXPECT_FALSE(view.podUpsertChangesNothing(
      makePod({.name = "a", .node = "n1", .milliCpu = 200, .hostPorts = {8080}, .labels = {{"app", "web"}}})));
  EXPECT_FALSE(view.podUpsertChangesNothing(
      makePod({.name = "a", .node = "n1", .milliCpu = 200, .phase = "Succeeded", .labels = {{"app", "web"}}})));

  // Naming an active reservation releases it: a change.
  ASSERT_TRUE(view.reserve(makeReservation("r1", "n1", 100)));
  Pod claiming = bound;
  claiming.annotations.push_back({std::string(kReservationAnnotation), "r1"});
  EXPECT_FALSE(view.podUpsertChangesNothing(claiming));
  view.upsertPod(claiming);
  EXPECT_EQ(view.reservationCount(), 0u);
  EXPECT_TRUE(view.podUpsertChangesNothing(claiming));

  // During a resync every listed pod must be marked.
  view.beginResync(ResyncKind::Pods);
  EXPECT_FALSE(view.podUpsertChangesNothing(claiming));
  view.upsertPod(claiming);
  EXPECT_TRUE(view.podUpsertChangesNothing(claiming));
  EXPECT_EQ(view.finishResync(ResyncKind::Pods), 0u);
}

// After nodes leave (the last node moving into each hole) and come back, a
// name finds its own node, pods and reservations still land on it, and the
// batched lookup agrees with the one-by-one lookup; ranks sort nodes by name.
TEST(ClusterView, NodesFoundByNameThroughRemovalsAndReAdds) {
  MutableClusterView view;
  for (int i = 0; i < 300; ++i) view.upsertNode(makeNode("node-" + std::to_string(i)));
  for (int i = 0; i < 300; i += 4) view.removeNode("node-" + std::to_string(i));
  for (int i = 0; i < 300; i += 20) view.upsertNode(makeNode("node-" + std::to_string(i)));
  view.upsertPod(makePod({.name = "a", .node = "node-299", .milliCpu = 250}));
  ASSERT_TRUE(view.reserve(makeReservation("r1", "node-299", 100)));
  EXPECT_FALSE(view.reserve(makeReservation("r2", "node-4", 100)));  // removed, never back

  std::vector<std::string> names;
  for (int i = 0; i < 310; ++i) names.push_back("node-" + std::to_string(i));
  names.push_back("");
  names.push_back("node-");
  names.push_back("node-299");
  std::vector<std::string_view> views(names.begin(), names.end());
  std::vector<const NodeInfo*> found = {nullptr};  // replaced, not appended to
  view.findNodes(views, found);
  ASSERT_EQ(found.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const NodeInfo* one = view.findNode(names[i]);
    EXPECT_EQ(found[i], one) << names[i];
    if (one != nullptr) {
      EXPECT_EQ(one->name(), names[i]);
    }
    int n = -1;
    if (names[i].size() > 5) n = std::stoi(names[i].substr(5));
    const bool present = n >= 0 && n < 300 && (n % 4 != 0 || n % 20 == 0);
    EXPECT_EQ(one != nullptr, present) << names[i];
  }
  // Ranks order the view's nodes by name, each rank once.
  std::vector<const NodeInfo*> byRank(view.nodes().size(), nullptr);
  for (const NodeInfo& node : view.nodes()) {
    ASSERT_LT(view.nameRank(node), byRank.size());
    EXPECT_EQ(byRank[view.nameRank(node)], nullptr) << node.name();
    byRank[view.nameRank(node)] = &node;
  }
  for (size_t r = 1; r < byRank.size(); ++r) EXPECT_LT(byRank[r - 1]->name(), byRank[r]->name());
  // Ids read by position (what the topology plugins use) are the nodes' own,
  // through the moves that removals make.
  size_t byPosition = 0;
  for (const NodeInfo& node : view.nodes()) {
    EXPECT_EQ(viewNodeId(view, node), node.id) << node.name();
    if (node.id == static_cast<uint32_t>(&node - view.nodes().data())) ++byPosition;
    EXPECT_EQ(view.nodeById(node.id), &node) << node.name();
  }
  EXPECT_GT(byPosition, 0u);                   // ids read without the node
  EXPECT_LT(byPosition, view.nodes().size());  // and from it, once nodes moved
  EXPECT_EQ(view.findNode("node-299")->requested.milliCpu, 350);
  view.removeNode("node-1");
  EXPECT_EQ(view.findNode("node-299")->requested.milliCpu, 350);
  EXPECT_TRUE(view.release("r1"));
  EXPECT_EQ(view.findNode("node-299")->requested.milliCpu, 250);
}

// ClusterView::idsArePositions() (the topology plugins then read a node's
// id from its address alone) is true exactly when every node's id is its
// position, through any order of nodes leaving and coming back; viewNodeId
// is each node's own id either way. Steps: "+name" adds (or updates) a
// node, "-name" removes one.
struct IdsArePositionsCase {
  std::string name;
  std::vector<std::string> steps;
  bool expected;  // after the last step
};

class IdsArePositionsCases : public ::testing::TestWithParam<IdsArePositionsCase> {};

TEST_P(IdsArePositionsCases, FlagEqualsEveryNodeAtItsId) {
  MutableClusterView view;
  EXPECT_TRUE(view.idsArePositions());  // no node
  for (const std::string& step : GetParam().steps) {
    if (step[0] == '+')
      view.upsertNode(makeNode(step.substr(1)));
    else
      view.removeNode(step.substr(1));
    bool allAtPosition = true;
    for (const NodeInfo& node : view.nodes()) {
      allAtPosition &= node.id == static_cast<uint32_t>(&node - view.nodes().data());
      EXPECT_EQ(viewNodeId(view, node), node.id) << step << ": " << node.name();
    }
    EXPECT_EQ(view.idsArePositions(), allAtPosition) << "after " << step;
  }
  EXPECT_EQ(view.idsArePositions(), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    ClusterView, IdsArePositionsCases,
    ::testing::Values(
        IdsArePositionsCase{"NodesOnlyAdded", {"+a", "+b", "+c"}, true},
        IdsArePositionsCase{"UpdatingANodeKeepsItsPlace", {"+a", "+b", "+a", "+c", "+b"}, true},
        IdsArePositionsCase{"LastNodeLeaves", {"+a", "+b", "+c", "-c"}, true},
        IdsArePositionsCase{"LastNodeLeavesAndANewOneTakesItsId", {"+a", "+b", "+c", "-c", "+d"}, true},
        IdsArePositionsCase{"UnknownNodeRemoved", {"+a", "+b", "-x"}, true},
        IdsArePositionsCase{"MiddleNodeLeavesTheLastMovesIntoItsPlace", {"+a", "+b", "+c", "-b"}, false},
        IdsArePositionsCase{"FirstNodeLeaves", {"+a", "+b", "+c", "-a"}, false},
        IdsArePositionsCase{"MiddleNodeComesBackAtTheEnd", {"+a", "+b", "+c", "-b", "+b"}, false},
        // b leaves (c moves to b's place), then c leaves as the last node:
        // a alone is at its id again.
        IdsArePositionsCase{"MovedNodeLeavesToo", {"+a", "+b", "+c", "-b", "-c"}, true},
        // Then two nodes come back with the freed ids the wrong way round
        // (c's id first), and the one at the wrong place leaves: y moves
        // into x's place, which is its id.
        IdsArePositionsCase{"BackInPlaceAfterOutOfOrderReAdds",
                            {"+a", "+b", "+c", "-b", "-c", "+x", "+y", "-x"}, true},
        IdsArePositionsCase{"OutOfOrderReAddsStayOff", {"+a", "+b", "+c", "-b", "-c", "+x", "+y"}, false},
        IdsArePositionsCase{"EveryNodeLeaves", {"+a", "+b", "+c", "-a", "-b", "-c"}, true},
        IdsArePositionsCase{"EveryNodeLeavesAndNewOnesCome", {"+a", "+b", "+c", "-a", "-b", "-c", "+d", "+e"},
                            false}),
    [](const auto& info) { return info.param.name; });

// Decisions read while the watch keeps moving pods: every read sees the
// total requested cpu unchanged, never a pod half moved.
TEST(ClusterState, ReadersNeverSeeATornUpdate) {
  ClusterState state;
  state.upsertNode(makeNode("n1"));
  state.upsertNode(makeNode("n2"));
  for (int i = 0; i < 20; ++i) state.upsertPod(makePod({.name = "p" + std::to_string(i), .node = "n1", .milliCpu = 50}));

  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::thread writer([&] {
    for (int round = 0; round < 300; ++round)
      for (int i = 0; i < 20; ++i)
        state.upsertPod(makePod({.name = "p" + std::to_string(i), .node = round % 2 ? "n1" : "n2", .milliCpu = 50}));
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done.load() || reads.load() < 100) {
        state.read([&](const ClusterView& view) {
          int64_t total = 0;
          int32_t pods = 0;
          for (const NodeInfo& n : view.nodes()) {
            total += n.requested.milliCpu;
            pods += n.podCount;
          }
          if (total != 1000 || pods != 20) ++torn;
        });
        ++reads;
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(reads.load(), 100);
}

// Admissions decide on the shared view and reserve under their node's
// accounting stripe while other decisions go on, some of them inside a
// consistent read() and some entirely under update(). Every thread decides
// until no node fits: the cluster ends exactly full, no node over its cpu,
// and nothing deadlocks (shared stripes are not recursive).
TEST(ClusterState, ReservationsAlongsideDecisionsFillTheClusterExactly) {
  constexpr int kNodes = 300;  // 5 stripes of 64 nodes
  ClusterState state;
  for (int i = 0; i < kNodes; ++i) state.upsertNode(makeNode("n" + std::to_string(i)));
  const Engine engine(Profile::defaults());
  const Pod pod = makePod({.name = "pending", .milliCpu = 500, .uid = "-"});  // 8 fit on a node
  std::atomic<int> nextId{0};
  std::atomic<int> reserved{0};
  std::atomic<int> inconsistent{0};

  auto reservationFor = [&](const std::string& node) {
    Reservation r = makeReservation("r" + std::to_string(nextId++), node, 0);
    r.requests = pod.requests;
    r.nonZeroRequests = pod.nonZeroRequests;
    return r;
  };
  auto optimistic = [&] {
    for (;;) {
      std::string node = state.readForDecision([&](const ClusterView& view) {
        const NodeInfo* chosen = engine.place(pod, view).selected;
        return chosen ? chosen->name() : std::string();
      });
      if (node.empty()) return;
      auto outcome = state.reserve(reservationFor(node), 0, [&](const ClusterView& view, const NodeInfo& n) {
        const NodeInfo* candidates[] = {&n};
        return engine.evaluate(pod, view, candidates, Detail::FilterOnly).selected != nullptr;
      });
      if (outcome == ClusterState::ReserveOutcome::Reserved) ++reserved;
    }
  };
  auto exclusive = [&] {
    for (bool placed = true; placed;) {
      placed = state.update([&](MutableClusterView& view) {
        const NodeInfo* chosen = engine.place(pod, view).selected;
        return chosen != nullptr && view.reserve(reservationFor(chosen->name()));
      });
      if (placed) ++reserved;
    }
  };
  std::atomic<bool> done{false};
  auto consistentReader = [&] {
    while (!done.load()) {
      state.read([&](const ClusterView& view) {
        int64_t cpu = 0;
        int32_t pods = 0;
        for (const NodeInfo& n : view.nodes()) {
          cpu += n.requested.milliCpu;
          pods += n.podCount;
        }
        if (cpu != int64_t{pods} * 500) ++inconsistent;
        (void)engine.place(pod, view, Detail::Full);  // takes no stripe again inside read()
      });
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(optimistic);
  threads.emplace_back(exclusive);
  std::thread reader(consistentReader);
  for (auto& t : threads) t.join();
  done = true;
  reader.join();

  EXPECT_EQ(reserved.load(), kNodes * 8);
  EXPECT_EQ(inconsistent.load(), 0);
  state.read([&](const ClusterView& view) {
    EXPECT_EQ(static_cast<const MutableClusterView&>(view).reservationCount(), size_t{kNodes * 8});
    for (const NodeInfo& n : view.nodes()) {
      EXPECT_EQ(n.requested.milliCpu, 4000) << n.name();
      EXPECT_EQ(n.podCount, 8) << n.name();
    }
  });
}

// A review sent again with a reserved uid is not reserved twice on the shared
// path: it must release the first inside update().
TEST(ClusterState, ReservingATakenIdNeedsTheExclusivePath) {
  ClusterState state;
  state.upsertNode(makeNode("n1"));
  state.upsertNode(makeNode("n2"));
  auto accept = [](const ClusterView&, const NodeInfo&) { return true; };
  EXPECT_EQ(state.reserve(makeReservation("uid-1", "n1", 500), 0, accept), ClusterState::ReserveOutcome::Reserved);
  EXPECT_EQ(state.reserve(makeReservation("uid-1", "n2", 500), 0, accept), ClusterState::ReserveOutcome::NeedsExclusive);
  EXPECT_EQ(state.reserve(makeReservation("uid-2", "gone", 500), 0, accept), ClusterState::ReserveOutcome::UnknownNode);
  EXPECT_EQ(state.reserve(makeReservation("uid-3", "n2", 500), 0, [](const ClusterView&, const NodeInfo&) { return false; }),
            ClusterState::ReserveOutcome::NotConfirmed);
  state.read([](const ClusterView& view) {
    EXPECT_EQ(view.findNode("n1")->requested.milliCpu, 500);
    EXPECT_EQ(view.findNode("n2")->requested.milliCpu, 0);
  });
}

}  // namespace
}  // namespace placer

namespace placer {
namespace topology_indexes {

using nlohmann::json;

WorkloadSelector service(const std::string& name, std::optional<Labels> selector, const std::string& ns = "default") {
  WorkloadSelector s;
  s.kind = WorkloadKind::Service;
  s.namespace_ = ns;
  s.name = name;
  s.selectorMap = std::move(selector);
  return s;
}

// What the index finds, filtered by the whole selector: it must be exactly
// what a scan of every Service of the namespace finds.
std::vector<std::string> selecting(const ClusterView& view, const std::string& ns, const Labels& labels) {
  auto matches = [&](const Labels& selector) {
    return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
      const std::string* v = findLabel(labels, kv.first);
      return v != nullptr && *v == kv.second;
    });
  };
  std::vector<std::string> indexed;
  view.forEachServiceSelecting(ns, labels, [&](std::string_view name, const Labels* selector) {
    if (matches(*selector)) indexed.emplace_back(name);
  });
  std::vector<std::string> scanned;
  view.forEachService(ns, [&](std::string_view name, const Labels* selector) {
    if (selector != nullptr && matches(*selector)) scanned.emplace_back(name);
  });
  std::sort(indexed.begin(), indexed.end());
  std::sort(scanned.begin(), scanned.end());
  EXPECT_EQ(indexed, scanned);
  return indexed;
}

TEST(ClusterView, ServicesSelectingAPodAreFoundThroughEveryChange) {
  const Labels web = {{"app", "web"}, {"tier", "front"}};
  struct Case {
    std::string name;
    std::function<void(MutableClusterView&)> change;
    std::vector<std::string> expected;  // Services selecting `web` in "default"
  };
  const std::vector<Case> cases = {
      {"a selector on one of the pod's labels", [](auto& v) { v.upsertWorkload(service("s", Labels{{"app", "web"}})); }, {"s"}},
      {"a selector on two labels", [](auto& v) { v.upsertWorkload(service("s", Labels{{"app", "web"}, {"tier", "front"}})); }, {"s"}},
      {"a selector the pod misses by one label",
       [](auto& v) { v.upsertWorkload(service("s", Labels{{"app", "web"}, {"tier", "back"}})); }, {}},
      {"an empty selector selects every pod", [](auto& v) { v.upsertWorkload(service("s", Labels{})); }, {"s"}},
      {"a nil selector selects none", [](auto& v) { v.upsertWorkload(service("s", std::nullopt)); }, {}},
      {"another namespace's Service", [](auto& v) { v.upsertWorkload(service("s", Labels{{"app", "web"}}, "other")); }, {}},
      {"a selector changed away from the pod",
       [](auto& v) {
         v.upsertWorkload(service("s", Labels{{"app", "web"}}));
         v.upsertWorkload(service("s", Labels{{"app", "db"}}));
       },
       {}},
      {"a selector changed to the pod",
       [](auto& v) {
         v.upsertWorkload(service("s", Labels{{"app", "db"}}));
         v.upsertWorkload(service("s", Labels{{"tier", "front"}}));
       },
       {"s"}},
      {"a selector emptied, then nil",
       [](auto& v) {
         v.upsertWorkload(service("s", Labels{{"app", "db"}}));
         v.upsertWorkload(service("s", Labels{}));
         v.upsertWorkload(service("t", Labels{}));
         v.upsertWorkload(service("t", std::nullopt));
       },
       {"s"}},
      {"removed", [](auto& v) {
         v.upsertWorkload(service("s", Labels{{"app", "web"}}));
         v.upsertWorkload(service("t", Labels{{"app", "web"}}));
         v.removeWorkload(WorkloadKind::Service, "default", "s");
       },
       {"t"}},
      {"gone from a relist",
       [](auto& v) {
         v.upsertWorkload(service("s", Labels{{"app", "web"}}));
         v.upsertWorkload(service("t", Labels{{"app", "web"}}));
         v.beginResync(ResyncKind::Services);
         v.upsertWorkload(service("t", Labels{{"app", "web"}}));
         v.finishResync(ResyncKind::Services);
       },
       {"t"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MutableClusterView view;
    c.change(view);
    EXPECT_EQ(selecting(view, "default", web), c.expected);
  }
}

Pod podWith(const std::string& name, json labels, json affinity, const std::string& ns = "default") {
  json object = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"labels", labels}}},
                 {"spec", {{"nodeName", "n1"}, {"containers", json::array({{{"name", "c"}}})}, {"affinity", affinity}}},
                 {"status", {{"phase", "Running"}}}};
  auto pod = decodePod(object);
  EXPECT_TRUE(pod.ok()) << pod.error().message;
  return *pod;
}

json antiAffinity(json labelSelector, json namespaces = nullptr) {
  json term = {{"labelSelector", labelSelector}, {"topologyKey", "kubernetes.io/hostname"}};
  if (!namespaces.is_null()) term["namespaces"] = namespaces;
  return {{"podAntiAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {term}}}}};
}

// The term classes visited for a pod must hold every class whose term
// selects it: the index skips only classes that cannot.
TEST(ClusterView, TermClassesThatMaySelectAPodAreAllVisited) {
  struct Case {
    std::string name;
    json selector;
    json namespaces;
    bool selectsWeb;  // selects a pod {app: web, tier: front} of "default"
  };
  const std::vector<Case> cases = {
      {"matchLabels on the pod's label", {{"matchLabels", {{"app", "web"}}}}, nullptr, true},
      {"matchLabels on another value", {{"matchLabels", {{"app", "db"}}}}, nullptr, false},
      {"In with the pod's value among others",
       {{"matchExpressions", {{{"key", "app"}, {"operator", "In"}, {"values", {"db", "web"}}}}}}, nullptr, true},
      {"Exists only", {{"matchExpressions", {{{"key", "tier"}, {"operator", "Exists"}}}}}, nullptr, true},
      {"NotIn only", {{"matchExpressions", {{{"key", "app"}, {"operator", "NotIn"}, {"values", {"db"}}}}}}, nullptr, true},
      {"an empty selector", json::object(), nullptr, true},
      {"another namespace listed", {{"matchLabels", {{"app", "web"}}}}, json::array({"other"}), false},
      {"this namespace among others", {{"matchLabels", {{"app", "web"}}}}, json::array({"default", "other"}), true},
  };
  const Labels web = {{"app", "web"}, {"tier", "front"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    MutableClusterView view;
    view.upsertNode(makeNode("n1"));
    view.upsertPod(podWith("holder", {{"app", "holder"}}, antiAffinity(c.selector, c.namespaces)));
    view.upsertPod(podWith("unrelated", {{"app", "x"}}, antiAffinity({{"matchLabels", {{"app", "x"}}}})));
    int selects = 0;
    view.forEachTermClassFor("default", web, [&](const TermClass& tc) {
      if (tc.term.matches("default", Labels{}, web)) ++selects;
    });
    EXPECT_EQ(selects, c.selectsWeb ? 1 : 0);
    // Once the holder is gone, nothing of it is visited.
    view.removePod("uid-holder");
    int visited = 0;
    view.forEachTermClassFor("default", web, [&](const TermClass& tc) { visited += tc.refs > 0 ? 1 : 0; });
    EXPECT_EQ(visited, 0);
  }
}

}  // namespace topology_indexes
}  // namespace placer
