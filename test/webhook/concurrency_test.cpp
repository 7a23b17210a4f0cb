// Thousands of admissions in parallel over TLS on a small cluster: decide and
// reserve are one step, so no node is ever overcommitted — resources, pod
// count, host ports — whatever the interleaving.
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

struct Shape {
  int64_t milliCpu;
  int64_t memoryMi;
  int hostPort;  // 0: none
};

json shapedPod(const Shape& s) {
  json pod = podJson("", "load", std::to_string(s.milliCpu) + "m", std::to_string(s.memoryMi) + "Mi");
  if (s.hostPort)
    pod["spec"]["containers"][0]["ports"] =
        json::array({{{"containerPort", s.hostPort}, {"hostPort", s.hostPort}, {"protocol", "TCP"}}});
  return pod;
}

TEST(ConcurrencyTest, ParallelAdmissionsNeverOvercommitAnyNode) {
  WebhookHarness h;
  struct Capacity {
    int64_t milliCpu, memoryMi, pods;
  };
  std::map<std::string, Capacity> capacity = {
      {"node-a", {2000, 4096, 10}}, {"node-b", {4000, 8192, 110}}, {"node-c", {1000, 1024, 110}}};
  loadView(h.state, {nodeJson("node-a", "2", "4Gi", 10), nodeJson("node-b", "4", "8Gi", 110),
                     nodeJson("node-c", "1", "1Gi", 110)},
           {boundPodJson("bound-1", "node-b", "500m", "512Mi")});
  // The bound pod counts too.
  std::map<std::string, Capacity> used = {{"node-a", {0, 0, 0}}, {"node-b", {500, 512, 1}}, {"node-c", {0, 0, 0}}};
  h.start(/*workers=*/16);

  const std::vector<Shape> shapes = {{100, 128, 0}, {250, 256, 0}, {50, 64, 8080}, {300, 700, 0}, {10, 16, 9100}};
  constexpr int kClients = 16;
  constexpr int kPerClient = 125;
  std::mutex mutex;
  std::map<std::string, std::vector<Shape>> placed;  // node -> pods assigned there
  int answered = 0, fallback = 0;
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&, t] {
      auto c = h.client();
      if (!c) return;
      for (int i = 0; i < kPerClient; ++i) {
        const Shape& shape = shapes[(t + i) % shapes.size()];
        std::string uid = "c" + std::to_string(t) + "-" + std::to_string(i);
        auto r = c->request("POST", "/mutate", admissionReview(uid, shapedPod(shape)).dump());
        if (!r || r->status != 200) {
          ADD_FAILURE() << (r ? r->body : r.error().message);
          return;
        }
        json patch = patchOf(r->body);
        std::lock_guard lock(mutex);
        ++answered;
        if (patch.is_array() && patch[0]["path"] == "/spec/nodeName") {
          placed[patch[0]["value"]].push_back(shape);
        } else {
          ++fallback;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  ASSERT_EQ(answered, kClients * kPerClient);
  EXPECT_GT(fallback, 0) << "the cluster should fill up";

  size_t assigned = 0;
  for (const auto& [node, pods] : placed) {
    SCOPED_TRACE(node);
    Capacity total = used[node];
    std::set<int> ports;
    for (const Shape& s : pods) {
      total.milliCpu += s.milliCpu;
      total.memoryMi += s.memoryMi;
      total.pods += 1;
      if (s.hostPort) {
        EXPECT_TRUE(ports.insert(s.hostPort).second) << "host port " << s.hostPort << " given twice";
      }
    }
    EXPECT_LE(total.milliCpu, capacity[node].milliCpu);
    EXPECT_LE(total.memoryMi, capacity[node].memoryMi);
    EXPECT_LE(total.pods, capacity[node].pods);
    assigned += pods.size();
  }
  // The view agrees: one reservation per assignment, and reserved + bound within allocatable.
  h.state.update([&](MutableClusterView& view) {
    EXPECT_EQ(view.reservationCount(), assigned);
    for (const NodeInfo& n : view.nodes()) {
      SCOPED_TRACE(n.name());
      EXPECT_LE(n.requested.milliCpu, n.allocatable().milliCpu);
      EXPECT_LE(n.requested.memory, n.allocatable().memory);
      EXPECT_LE(n.podCount, n.allocatable().pods);
    }
  });
}

}  // namespace
}  // namespace placer::testing
