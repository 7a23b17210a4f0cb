// Replicas of one workload admitted in a burst, by concurrent clients over
// TLS, land where kube-scheduler would put them one by one: the same count
// per zone and per node under system default spreading, and never two
// members of a required anti-affinity group on one node.
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "scoring/placement.h"
#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

constexpr int kZones = 3;
constexpr int kNodesPerZone = 10;

std::vector<json> zonedNodes() {
  std::vector<json> nodes;
  for (int z = 0; z < kZones; ++z)
    for (int n = 0; n < kNodesPerZone; ++n)
      nodes.push_back(nodeJson("node-" + std::string(1, char('a' + z)) + "-" + std::to_string(n), "8", "16Gi", 110,
                               {{"topology.kubernetes.io/zone", "zone-" + std::string(1, char('a' + z))}}));
  return nodes;
}

// A replica of Deployment "web" (ReplicaSet web-5d8f), as the ReplicaSet
// controller creates it; `group` labels it for anti-affinity tests.
json replica(const std::string& deployment) {
  json pod = podJson("", "shop", "200m", "256Mi");
  pod["metadata"]["generateName"] = deployment + "-5d8f-";
  pod["metadata"]["labels"] = {{"app", deployment}, {"pod-template-hash", "5d8f"}};
  pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                                     {"kind", "ReplicaSet"},
                                                     {"name", deployment + "-5d8f"},
                                                     {"uid", "rs-" + deployment},
                                                     {"controller", true}}});
  return pod;
}

void loadWorkloads(ClusterState& state, const std::string& deployment) {
  state.update([&](MutableClusterView& view) {
    view.upsertNamespace(Namespace{"shop", {{"kubernetes.io/metadata.name", "shop"}}});
    WorkloadSelector rs;
    rs.kind = WorkloadKind::ReplicaSet;
    rs.namespace_ = "shop";
    rs.name = deployment + "-5d8f";
    rs.labelSelector = LabelSelector{{{"app", deployment}, {"pod-template-hash", "5d8f"}}, {}};
    view.upsertWorkload(rs);
    WorkloadSelector service;
    service.kind = WorkloadKind::Service;
    service.namespace_ = "shop";
    service.name = deployment;
    service.selectorMap = Labels{{"app", deployment}};
    view.upsertWorkload(service);
  });
}

struct Counts {
  std::map<std::string, int> perNode;
  std::map<std::string, int> perZone;
  int unassigned = 0;
  void add(const std::string& node) {
    if (node.empty()) {
      ++unassigned;
      return;
    }
    ++perNode[node];
    ++perZone[node.substr(0, 6)];  // "node-a"
  }
};

// The same replicas one at a time, through the reservation book.
Counts oneByOne(const std::vector<json>& pods, const std::string& deployment) {
  ClusterState state;
  loadView(state, zonedNodes());
  loadWorkloads(state, deployment);
  Engine engine(Profile::defaults());
  LocalReservationBook book(engine, state);
  Counts counts;
  for (size_t i = 0; i < pods.size(); ++i) {
    Placement p = book.placeAndReserve(decodePod(pods[i]).value(), "seq-" + std::to_string(i),
                                       std::chrono::steady_clock::time_point::max());
    counts.add(p.outcome == Placement::Outcome::Reserved ? p.node : "");
  }
  return counts;
}

// The replicas sent by `clients` concurrent keep-alive clients over TLS.
Counts burst(const std::vector<json>& pods, const std::string& deployment, int clients) {
  WebhookHarness h;
  loadView(h.state, zonedNodes());
  loadWorkloads(h.state, deployment);
  h.start(/*workers=*/clients);
  std::mutex mutex;
  Counts counts;
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      auto c = h.client();
      if (!c) return;
      for (size_t i = next++; i < pods.size(); i = next++) {
        auto r = c->request("POST", "/mutate", admissionReview("burst-" + std::to_string(i), pods[i]).dump());
        if (!r || r->status != 200) {
          ADD_FAILURE() << (r ? r->body : r.error().message);
          return;
        }
        json patch = patchOf(r->body);
        std::lock_guard lock(mutex);
        counts.add(patch.is_array() && patch[0]["path"] == "/spec/nodeName" ? patch[0]["value"].get<std::string>() : "");
      }
    });
  }
  for (auto& t : threads) t.join();
  return counts;
}

TEST(TopologyBurstTest, SixtyReplicasFromEightClientsSpreadAsOneByOne) {
  std::vector<json> pods(60, replica("web"));
  const Counts expected = oneByOne(pods, "web");
  ASSERT_EQ(expected.unassigned, 0);
  // kube-scheduler's rules spread 60 replicas over 3 zones x 10 nodes evenly.
  for (const auto& [zone, n] : expected.perZone) EXPECT_EQ(n, 20) << zone;
  for (const auto& [node, n] : expected.perNode) EXPECT_EQ(n, 2) << node;

  const Counts got = burst(pods, "web", 8);
  EXPECT_EQ(got.unassigned, 0);
  EXPECT_EQ(got.perZone, expected.perZone);
  EXPECT_EQ(got.perNode, expected.perNode);
}

TEST(TopologyBurstTest, ARequiredAntiAffinityGroupIsNeverColocatedUnderConcurrency) {
  json member = replica("db");
  member["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
      json::array({{{"labelSelector", {{"matchLabels", {{"app", "db"}}}}}, {"topologyKey", "kubernetes.io/hostname"}}});
  // More members than nodes: the surplus is left to kube-scheduler.
  std::vector<json> pods(kZones * kNodesPerZone + 6, member);
  const Counts got = burst(pods, "db", 8);
  for (const auto& [node, n] : got.perNode) EXPECT_EQ(n, 1) << node;
  EXPECT_EQ(got.perNode.size(), static_cast<size_t>(kZones * kNodesPerZone));
  EXPECT_EQ(got.unassigned, 6);
}

}  // namespace
}  // namespace placer::testing
