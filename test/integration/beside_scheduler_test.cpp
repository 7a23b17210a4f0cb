// Living beside kube-scheduler, the kubelet and other webhooks, end to end:
// `placer serve --kubeconfig` (the real binary) watching the fake API server
// and called by its admission chain.
//  - preemption: the room kube-scheduler made for a nominated pod is not
//    handed to lower-priority pods admitted meanwhile;
//  - the extender's /bind reserves, so a concurrent admission cannot take
//    the same capacity;
//  - reinvocation (reinvocationPolicy: IfNeeded) after a second webhook
//    changed the pod;
//  - Events for decisions, and kubelet rejections counted.
#include <stdlib.h>

#include <atomic>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "test/fakeapi/test_webhook.h"
#include "test/integration/live_placer.h"

namespace placer::integration {
namespace {

using fakeapi::Kind;
using fakeapi::MutatingWebhook;
using nlohmann::json;
using watchtest::metricValue;
using watchtest::waitFor;

constexpr const char* kNamespace = "apps";

json nodeJson(const std::string& name, const std::string& cpu, int pods = 110) {
  json resources = {{"cpu", cpu}, {"memory", "64Gi"}, {"pods", std::to_string(pods)}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
          {"status", {{"allocatable", resources}, {"capacity", resources}}}};
}

json podJson(const std::string& name, const std::string& cpu, int priority = 0) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"namespace", kNamespace}, {"labels", {{"app", "beside"}}}}},
              {"spec",
               {{"priority", priority},
                {"containers", json::array({{{"name", "app"},
                                             {"image", "nginx:1.25"},
                                             {"resources", {{"requests", {{"cpu", cpu}, {"memory", "64Mi"}}}}}}})}}}};
  if (name.back() == '-')
    pod["metadata"]["generateName"] = name;
  else
    pod["metadata"]["name"] = name;
  return pod;
}

class BesideScheduler : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("POD_NAME", "placer-test-0", 1);  // the Events' reportingInstance
    GeneratorParams params;
    params.nodes = 0;
    params.podsPerNode = 0;
    ASSERT_TRUE(live.start(params));
  }

  fakeapi::FakeApiServer& server() { return *live.server; }
  double metric(const std::string& series) {
    return metricValue(live.plainGet(live.metricsPort, "/metrics"), series);
  }
  // Waits (bounded) until the metric reads `value`.
  bool metricIs(const std::string& series, double value, std::chrono::milliseconds bound = std::chrono::seconds(10)) {
    return waitFor([&] { return metric(series) == value; }, bound);
  }
  void addNodes(const std::vector<json>& nodes) {
    for (const json& n : nodes) ASSERT_TRUE(server().load(Kind::Node, n));
    ASSERT_TRUE(metricIs("placer_nodes_in_view", double(nodes.size())));
  }
  // A pod placed before the test, bound to `node`.
  void loadBound(const std::string& name, const std::string& cpu, const std::string& node, int priority = 0) {
    json pod = podJson(name, cpu, priority);
    pod["spec"]["nodeName"] = node;
    pod["metadata"]["uid"] = name + "-uid";
    pod["status"] = {{"phase", "Running"}};
    ASSERT_TRUE(server().load(Kind::Pod, pod));
  }
  MutatingWebhook placerHook() const {
    MutatingWebhook hook;
    hook.name = "pods.placer.io";
    hook.url = live.webhookUrl() + "/mutate";
    hook.caBundlePem = live.server->caPem();
    hook.failurePolicy = MutatingWebhook::FailurePolicy::Ignore;
    hook.reinvocationPolicy = MutatingWebhook::Reinvocation::IfNeeded;
    return hook;
  }
  // The server's own count on a node: requested cpu of its bound, non-terminal pods.
  int64_t usedMilliCpu(const std::string& node) { return watchtest::serverTruth(server()).nodes[node].requested.milliCpu; }

  LiveCluster live;
};

// kube-scheduler nominated a high-priority pod on a full node and deleted
// the victims; 200 low-priority pods admitted concurrently afterwards must
// leave that room to it.
TEST_F(BesideScheduler, PreemptionRoomIsLeftToTheNominatedPod) {
  addNodes({nodeJson("n-full", "4"), nodeJson("n-other-1", "2"), nodeJson("n-other-2", "2")});
  for (int i = 0; i < 4; ++i) loadBound("victim-" + std::to_string(i), "1", "n-full");
  json preemptor = podJson("preemptor", "3", 1000);
  preemptor["metadata"]["uid"] = "preemptor-uid";
  preemptor["status"] = {{"phase", "Pending"}, {"nominatedNodeName", "n-full"}};
  ASSERT_TRUE(server().load(Kind::Pod, preemptor));
  for (int i = 1; i < 4; ++i) ASSERT_TRUE(server().remove(Kind::Pod, kNamespace, "victim-" + std::to_string(i)));
  ASSERT_TRUE(metricIs("placer_pods_in_view", 1));
  ASSERT_TRUE(metricIs("placer_nominated_pods", 1));
  server().setMutatingWebhooks({placerHook()});

  constexpr int kPods = 200;
  std::atomic<int> next{0}, created{0}, onFull{0}, assigned{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t)
    workers.emplace_back([&] {
      for (int i = next++; i < kPods; i = next++) {
        auto r = server().createPod(podJson("low-", "100m"), kNamespace);
        if (!r.ok()) continue;
        ++created;
        const std::string node = r.body["spec"].value("nodeName", "");
        if (!node.empty()) ++assigned;
        if (node == "n-full") ++onFull;
      }
    });
  for (auto& w : workers) w.join();
  EXPECT_EQ(created.load(), kPods);
  EXPECT_EQ(onFull.load(), 0) << "low-priority pods placed on the room made for the preemptor";
  EXPECT_EQ(assigned.load(), 40) << "the other nodes' room (2 x 2 cpu) is used";

  // The preemptor now fits where it was nominated: bind it as kube-scheduler would.
  EXPECT_TRUE(server().bindPod(kNamespace, "preemptor", "n-full").ok());
  EXPECT_EQ(usedMilliCpu("n-full"), 4000);
  ASSERT_TRUE(metricIs("placer_nominated_pods", 0)) << "bound: it counts as itself now";
}

// The extender's /bind and an admission race for the last room of a node:
// exactly one gets it, 20 runs in a row.
TEST_F(BesideScheduler, FallbackBindAndAdmissionNeverOvercommit) {
  addNodes({nodeJson("tight", "1")});
  loadBound("filler", "600m", "tight");
  ASSERT_TRUE(metricIs("placer_pods_in_view", 1));
  server().setMutatingWebhooks({placerHook()});
  int bindWon = 0, admissionWon = 0;
  for (int run = 0; run < 20; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    // A pod left to the fallback scheduler (placer's webhook skips it).
    json pending = podJson("fallback-" + std::to_string(run), "300m");
    pending["spec"]["schedulerName"] = "placer-fallback";
    auto made = server().createPod(pending, kNamespace);
    ASSERT_TRUE(made.ok());
    ASSERT_FALSE(made.body["spec"].contains("nodeName"));
    const std::string uid = made.body["metadata"]["uid"];
    const json bindArgs = {{"PodName", pending["metadata"]["name"]}, {"PodNamespace", kNamespace}, {"PodUID", uid},
                           {"Node", "tight"}};
    std::string bindAnswer;
    fakeapi::ApiResponse admitted;
    std::thread binder([&] { bindAnswer = live.plainPost(live.extenderPort, "/bind", bindArgs.dump()); });
    std::thread admitter([&] { admitted = server().createPod(podJson("web-" + std::to_string(run), "300m"), kNamespace); });
    binder.join();
    admitter.join();
    ASSERT_TRUE(admitted.ok());
    const json bindResult = json::parse(bindAnswer, nullptr, false);
    ASSERT_TRUE(bindResult.is_object()) << bindAnswer;
    const bool bound = bindResult["Error"] == "";
    const bool placed = admitted.body["spec"].value("nodeName", "") == "tight";
    EXPECT_NE(bound, placed) << "exactly one of them takes the last 400m: " << bindAnswer;
    bindWon += bound;
    admissionWon += placed;
    EXPECT_LE(usedMilliCpu("tight"), 1000);
    // Back to the filler alone, every reservation released by the watch.
    // Reservations first: one is released when the watch brings its pod
    // bound, which puts the pod in the view; only then does one pod in the
    // view mean that the removals were seen too. (In the other order the
    // view could hold the filler alone before the bound pod arrived, and the
    // next run raced against that pod's late arrival and removal: neither
    // the bind nor the admission found room, about 1 run in 300.)
    ASSERT_TRUE(server().remove(Kind::Pod, kNamespace, pending["metadata"]["name"]));
    ASSERT_TRUE(server().remove(Kind::Pod, kNamespace, admitted.body["metadata"]["name"]));
    ASSERT_TRUE(metricIs("placer_reservations_active", 0));
    ASSERT_TRUE(metricIs("placer_pods_in_view", 1));
  }
  EXPECT_EQ(bindWon + admissionWon, 20);
  EXPECT_EQ(metric("placer_reservations_expired_total"), 0);
}

// A second webhook runs after placer and changes the pod; with
// reinvocationPolicy IfNeeded placer sees the final pod.
TEST_F(BesideScheduler, ReinvocationSeesTheFinalPod) {
  addNodes({nodeJson("alpha", "4"), nodeJson("beta", "4")});
  // The second webhook does what the pod's "mutate" label asks for.
  auto second = fakeapi::TestWebhook::start([](const json& review) {
    const json& pod = review["request"]["object"];
    const std::string what = pod["metadata"]["labels"].value("mutate", "");
    const std::string node = pod["spec"].value("nodeName", "");
    json patch = json::array();
    if (what == "label") {
      patch.push_back({{"op", "add"}, {"path", "/metadata/labels/sidecar"}, {"value", "injected"}});
    } else if (what == "avoid-node" && !node.empty()) {
      json term = {{"matchFields", json::array({{{"key", "metadata.name"}, {"operator", "NotIn"}, {"values", {node}}}})}};
      patch.push_back({{"op", "add"},
                       {"path", "/spec/affinity"},
                       {"value", {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution",
                                                     {{"nodeSelectorTerms", json::array({term})}}}}}}}});
    } else if (what == "gate") {
      patch.push_back({{"op", "add"}, {"path", "/spec/schedulingGates"}, {"value", {{{"name", "example.com/quota"}}}}});
    } else if (what == "claim") {
      patch.push_back({{"op", "add"},
                       {"path", "/spec/resourceClaims"},
                       {"value", {{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}}}});
    }
    return fakeapi::TestWebhook::allow(review, patch.empty() ? json(nullptr) : patch);
  });
  ASSERT_TRUE(second) << second.error().message;
  MutatingWebhook mutator;
  mutator.name = "mutator.example.com";
  mutator.url = (*second)->url();
  mutator.caBundlePem = (*second)->caPem();
  server().setMutatingWebhooks({placerHook(), mutator});

  struct Case {
    std::string name;
    std::string mutate;
    std::string presetNode;  // spec.nodeName written by the user, not placer
    std::function<void(const json& pod, const std::string& firstNode)> check;
  };
  const std::vector<Case> cases = {
      {"UnchangedFitKeepsTheNode", "label", "",
       [](const json& pod, const std::string& first) {
         EXPECT_EQ(pod["spec"]["nodeName"], first);
         EXPECT_EQ(pod["metadata"]["annotations"]["placer.io/assigned-node"], first);
         EXPECT_EQ(pod["metadata"]["labels"]["sidecar"], "injected");
       }},
      {"NoLongerFitsMovesIt", "avoid-node", "",
       [](const json& pod, const std::string& first) {
         ASSERT_TRUE(pod["spec"].contains("nodeName"));
         const std::string now = pod["spec"]["nodeName"];
         EXPECT_NE(now, first);
         EXPECT_EQ(pod["metadata"]["annotations"]["placer.io/assigned-node"], now);
       }},
      {"GatesAddedLeaveItToKubeScheduler", "gate", "",
       [](const json& pod, const std::string&) {
         EXPECT_FALSE(pod["spec"].contains("nodeName"));
         EXPECT_EQ(pod["spec"]["schedulingGates"].size(), 1u);
         const json& annotations = pod["metadata"]["annotations"];
         EXPECT_FALSE(annotations.contains("placer.io/assigned-node"));
         EXPECT_FALSE(annotations.contains("placer.io/reservation"));
         EXPECT_NE(annotations.value("placer.io/unassigned-reason", "").find("scheduling gates"), std::string::npos);
       }},
      {"ResourceClaimsAddedLeaveItToKubeScheduler", "claim", "",
       [](const json& pod, const std::string&) {
         EXPECT_FALSE(pod["spec"].contains("nodeName"));
         const json& annotations = pod["metadata"]["annotations"];
         EXPECT_FALSE(annotations.contains("placer.io/assigned-node"));
         EXPECT_NE(annotations.value("placer.io/unassigned-reason", "").find("resource claims"), std::string::npos);
       }},
      {"ANodeNamePlacerDidNotWriteIsLeftAlone", "label", "beta",
       [](const json& pod, const std::string&) {
         EXPECT_EQ(pod["spec"]["nodeName"], "beta");
         EXPECT_FALSE(pod["metadata"].contains("annotations") &&
                      pod["metadata"]["annotations"].contains("placer.io/assigned-node"));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json pod = podJson("reinvoked-", "1");
    pod["metadata"]["labels"]["mutate"] = c.mutate;
    if (!c.presetNode.empty()) pod["spec"]["nodeName"] = c.presetNode;
    const size_t before = (*second)->received().size();
    auto r = server().createPod(pod, kNamespace);
    ASSERT_TRUE(r.ok()) << r.body.dump();
    auto calls = (*second)->received();
    ASSERT_EQ(calls.size(), before + 1);
    const std::string firstNode = calls.back().review["request"]["object"]["spec"].value("nodeName", "");
    if (c.presetNode.empty()) {
      EXPECT_FALSE(firstNode.empty()) << "placer assigned a node first";
    }
    c.check(r.body, firstNode);
  }
  // Every reservation ends: by the watch for assigned pods, at once for the gated one.
  EXPECT_TRUE(metricIs("placer_reservations_active", 0));
  EXPECT_EQ(usedMilliCpu("alpha") + usedMilliCpu("beta"), 3000);
}

// Every assigned pod gets one Scheduled Event as kube-scheduler writes it, a
// declined one a NotPlaced Event; a kubelet rejection of a placed pod is counted.
TEST_F(BesideScheduler, EventsAndKubeletRejections) {
  addNodes({nodeJson("alpha", "4")});
  server().setMutatingWebhooks({placerHook()});
  EXPECT_EQ(metric("placer_kubelet_rejections_total{reason=\"OutOfcpu\"}"), 0);
  std::map<std::string, std::string> placed;  // uid -> "ns/name to node"
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    auto r = server().createPod(podJson("ev-", "300m"), kNamespace);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r.body["spec"].contains("nodeName"));
    names.push_back(r.body["metadata"]["name"].get<std::string>());
    placed[r.body["metadata"]["uid"].get<std::string>()] = std::string(kNamespace) + "/" + names.back() + " to alpha";
  }
  auto declined = server().createPod(podJson("too-big", "8"), kNamespace);
  ASSERT_TRUE(declined.ok());
  ASSERT_FALSE(declined.body["spec"].contains("nodeName"));
  const std::string reason = declined.body["metadata"]["annotations"]["placer.io/unassigned-reason"];
  ASSERT_TRUE(server().createPod(podJson("dry-", "300m"), kNamespace, /*dryRun=*/true).ok());

  std::vector<json> events;
  ASSERT_TRUE(waitFor(
      [&] {
        events = server().list(Kind::Event, kNamespace);
        // The sender counts an Event once it has read the API server's answer, after the API server stored it.
        return events.size() >= placed.size() + 1 && metric("placer_events_sent_total") >= double(placed.size() + 1);
      },
      std::chrono::seconds(10)))
      << events.size() << " events";
  std::map<std::string, int> scheduled;
  int notPlaced = 0;
  for (const json& e : events) {
    EXPECT_EQ(e["reportingController"], "placer.io/placer");
    EXPECT_EQ(e["reportingInstance"], "placer-test-0");
    EXPECT_EQ(e["type"], "Normal");
    EXPECT_EQ(e["regarding"]["kind"], "Pod");
    const std::string uid = e["regarding"].value("uid", "");
    if (e["reason"] == "Scheduled") {
      EXPECT_EQ(e["action"], "Binding");
      ASSERT_TRUE(placed.count(uid)) << e.dump();
      EXPECT_EQ(e["note"], "Successfully assigned " + placed[uid]);
      ++scheduled[uid];
    } else {
      EXPECT_EQ(e["reason"], "NotPlaced");
      EXPECT_EQ(uid, declined.body["metadata"]["uid"]);
      EXPECT_EQ(e["note"], reason);
      ++notPlaced;
    }
  }
  EXPECT_EQ(scheduled.size(), placed.size());
  for (const auto& [uid, n] : scheduled) EXPECT_EQ(n, 1) << uid;
  EXPECT_EQ(notPlaced, 1);
  EXPECT_EQ(metric("placer_events_sent_total"), double(placed.size() + 1));

  // The node shrinks after the decision and the kubelet rejects one pod.
  ASSERT_TRUE(server().mutate(Kind::Node, "", "alpha", [](json& n) { n["status"]["allocatable"]["cpu"] = "1"; }));
  ASSERT_TRUE(server().mutate(Kind::Pod, kNamespace, names.front(), [](json& p) {
    p["status"] = {{"phase", "Failed"},
                   {"reason", "OutOfcpu"},
                   {"message", "Pod was rejected: Node didn't have enough resource: cpu, requested: 300, used: 2700, "
                               "capacity: 1000"}};
  }));
  EXPECT_TRUE(metricIs("placer_kubelet_rejections_total{reason=\"OutOfcpu\"}", 1));
  EXPECT_NE(live.serve->err().find("kubelet rejected a pod placer assigned"), std::string::npos);
}

}  // namespace
}  // namespace placer::integration
