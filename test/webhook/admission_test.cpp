// reviewAdmission as a pure function: AdmissionReview fixtures shaped as the
// API server sends them, and what placer answers to each.
#include "webhook/admission.h"

#include <algorithm>
#include <functional>
#include <future>

#include <gtest/gtest.h>

#include "test/support/huge_pods.h"
#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loadView(state_, {nodeJson("node-a", "4", "8Gi"), nodeJson("node-b", "4", "8Gi"), nodeJson("node-c", "2", "4Gi")});
  }

  AdmissionAnswer review(const json& doc, bool synced = true) { return reviewBody(doc.dump(), synced); }
  AdmissionAnswer reviewBody(const std::string& body, bool synced = true) {
    AdmissionInput input{engine_, state_, settings_, now_, synced};
    return reviewAdmission(body, input);
  }
  size_t reservations() {
    return state_.update([](MutableClusterView& v) { return v.reservationCount(); });
  }
  const Reservation* reservation(const std::string& id) {
    return state_.update([&](MutableClusterView& v) { return v.findReservation(id); });
  }

  Engine engine_{Profile::defaults()};
  ClusterState state_;
  PlacerSettings settings_;
  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
};

TEST_F(AdmissionTest, GenerateNamePodWithoutAnnotationsIsAssignedWithTheWholeAnnotationsMap) {
  json pod = podJson("", "team-a", "500m", "512Mi");
  AdmissionAnswer a = review(admissionReview("uid-1", pod));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Assigned) << a.reason;
  EXPECT_EQ(a.httpStatus, 200);
  EXPECT_EQ(a.pod, "team-a/web-7d4b9c8f5-");

  json resp = json::parse(a.body);
  EXPECT_EQ(resp["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(resp["kind"], "AdmissionReview");
  EXPECT_EQ(resp["response"]["uid"], "uid-1");
  EXPECT_EQ(resp["response"]["allowed"], true);
  EXPECT_EQ(resp["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(resp["response"].size(), 4u);

  json patch = patchOf(a.body);
  ASSERT_EQ(patch.size(), 2u);
  EXPECT_EQ(patch[0], (json{{"op", "add"}, {"path", "/spec/nodeName"}, {"value", a.node}}));
  EXPECT_EQ(patch[1]["op"], "add");
  EXPECT_EQ(patch[1]["path"], "/metadata/annotations");
  EXPECT_EQ(patch[1]["value"], (json{{"placer.io/assigned-node", a.node},
                                     {"placer.io/reservation", "uid-1"},
                                     {"placer.io/score", std::to_string(a.score)}}));
  // Written by hand, byte for byte what a JSON library writes (sorted keys, no spaces).
  EXPECT_EQ(base64Decode(resp["response"]["patch"].get<std::string>()).value(), patch.dump());
  EXPECT_EQ(a.body, nlohmann::ordered_json::parse(a.body).dump());
  const Reservation* r = reservation("uid-1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->nodeName, a.node);
  EXPECT_EQ(r->expires, now_ + settings_.reservationTtl);
}

TEST_F(AdmissionTest, PodWithAnnotationsGetsOneOpPerKeyWithJsonPointerEscaping) {
  json pod = podJson("web-0", "team-a", "100m", "64Mi");
  pod["metadata"]["annotations"] = {{"example.com/owner", "team-a"}};
  AdmissionAnswer a = review(admissionReview("uid-2", pod));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Assigned) << a.reason;
  json patch = patchOf(a.body);
  ASSERT_EQ(patch.size(), 4u);
  EXPECT_EQ(patch[1]["path"], "/metadata/annotations/placer.io~1assigned-node");
  EXPECT_EQ(patch[2]["path"], "/metadata/annotations/placer.io~1reservation");
  EXPECT_EQ(patch[2]["value"], "uid-2");
  EXPECT_EQ(patch[3]["path"], "/metadata/annotations/placer.io~1score");
}

TEST_F(AdmissionTest, DaemonSetPodWithMatchFieldsGoesToItsNode) {
  json pod = podJson("", "monitoring", "50m", "32Mi");
  pod["metadata"]["generateName"] = "node-exporter-";
  pod["metadata"]["ownerReferences"] = json::array(
      {{{"apiVersion", "apps/v1"}, {"kind", "DaemonSet"}, {"name", "node-exporter"}, {"uid", "ds-1"}, {"controller", true}}});
  pod["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           json::array({{{"matchFields", json::array({{{"key", "metadata.name"}, {"operator", "In"},
                                                       {"values", json::array({"node-c"})}}})}}})}}}}}};
  AdmissionAnswer a = review(admissionReview("uid-ds", pod));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Assigned) << a.reason;
  EXPECT_EQ(a.node, "node-c");
}

TEST_F(AdmissionTest, DryRunDecidesButReservesNothing) {
  AdmissionAnswer a = review(admissionReview("uid-dry", podJson("", "team-a", "1", "1Gi"), "CREATE", true));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Assigned) << a.reason;
  EXPECT_TRUE(a.dryRun);
  EXPECT_FALSE(a.reserved);
  EXPECT_FALSE(patchOf(a.body).is_null());
  EXPECT_EQ(reservations(), 0u);
}

TEST_F(AdmissionTest, PodsPlacerLeavesAlone) {
  struct Case {
    std::string name;
    std::function<void(json& pod, json& review)> shape;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"already has nodeName", [](json& p, json&) { p["spec"]["nodeName"] = "node-a"; }, "spec.nodeName"},
      {"foreign scheduler", [](json& p, json&) { p["spec"]["schedulerName"] = "volcano"; }, "schedulerName volcano"},
      {"scheduling gates",
       [](json& p, json&) { p["spec"]["schedulingGates"] = json::array({{{"name", "example.com/quota"}}}); },
       "scheduling gates"},
      {"resource claims (DRA)",
       [](json& p, json&) {
         p["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}});
       },
       "resource claims"},
      {"persistent volume claim",
       [](json& p, json&) {
         p["spec"]["volumes"] = json::array({{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-0"}}}}});
       },
       "volumes"},
      {"generic ephemeral volume",
       [](json& p, json&) {
         p["spec"]["volumes"] = json::array(
             {{{"name", "scratch"},
               {"ephemeral",
                {{"volumeClaimTemplate",
                  {{"spec", {{"accessModes", json::array({"ReadWriteOnce"})},
                             {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}}}}}}});
       },
       "volumes"},
      {"kube-system namespace",
       [](json& p, json& r) {
         p["metadata"]["namespace"] = "kube-system";
         r["request"]["namespace"] = "kube-system";
       },
       "namespace kube-system"},
      {"placer's own namespace",
       [](json& p, json& r) {
         p["metadata"]["namespace"] = "placer-system";
         r["request"]["namespace"] = "placer-system";
       },
       "namespace placer-system"},
      {"skip label", [](json& p, json&) { p["metadata"]["labels"]["placer.io/skip"] = "true"; }, "placer.io/skip"},
      {"UPDATE operation", [](json&, json& r) { r["request"]["operation"] = "UPDATE"; }, "operation UPDATE"},
      {"not a pod",
       [](json&, json& r) {
         r["request"]["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
       },
       "not a core/v1 Pod"},
      {"pods/binding subresource", [](json&, json& r) { r["request"]["subResource"] = "binding"; }, "not a core/v1 Pod"},
  };
  settings_.ownNamespace = "placer-system";
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json pod = podJson("", "team-a", "100m", "64Mi");
    json r = admissionReview("uid-" + c.name, pod);
    c.shape(pod, r);
    r["request"]["object"] = pod;
    AdmissionAnswer a = review(r);
    EXPECT_EQ(a.outcome, AdmissionOutcome::Skipped);
    EXPECT_NE(a.reason.find(c.reason), std::string::npos) << a.reason;
    EXPECT_EQ(a.body, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":")" +
                          ("uid-" + c.name) + R"(","allowed":true}})");
  }
  EXPECT_EQ(reservations(), 0u);
}

TEST_F(AdmissionTest, PodsWithVolumesArePlacedWhenConfigured) {
  settings_.placePodsWithBoundVolumes = true;
  json pod = podJson("", "team-a", "100m", "64Mi");
  pod["spec"]["volumes"] = json::array({{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data-0"}}}}});
  EXPECT_EQ(review(admissionReview("uid-pvc", pod)).outcome, AdmissionOutcome::Assigned);
}

TEST_F(AdmissionTest, NoFeasibleNodeLeavesThePodToTheFallbackSchedulerWithTheReason) {
  settings_.fallbackSchedulerName = "placer-fallback";
  AdmissionAnswer a = review(admissionReview("uid-big", podJson("", "team-a", "64", "1Gi")));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Fallback);
  json patch = patchOf(a.body);
  ASSERT_EQ(patch.size(), 2u);
  EXPECT_EQ(patch[0]["path"], "/metadata/annotations");
  std::string reason = patch[0]["value"]["placer.io/unassigned-reason"];
  EXPECT_EQ(reason.rfind("0/3 nodes are available: 3 Insufficient cpu", 0), 0u) << reason;
  EXPECT_EQ(patch[1], (json{{"op", "add"}, {"path", "/spec/schedulerName"}, {"value", "placer-fallback"}}));
  EXPECT_EQ(reservations(), 0u);
}

// A pod requesting 40,000 extended resources no node has (a 1.4 MB review,
// as in issue 15): the reason written on it stays far under the API server's
// 256 KiB annotation limit.
TEST_F(AdmissionTest, TheUnassignedReasonOfAPodWithFortyThousandMissingResourcesIsBounded) {
  json pod = podJson("", "team-a", "100m", "64Mi");
  pod["spec"]["containers"][0]["resources"]["requests"][kResourcesPlaceholder] = "";
  const std::string body =
      withResources(admissionReview("uid-many", pod).dump(), "example.com/resource-", 40000, "1");
  ASSERT_GE(body.size(), 1400000u);
  AdmissionAnswer a = reviewBody(body);
  ASSERT_EQ(a.outcome, AdmissionOutcome::Fallback) << a.reason;
  const std::string reason = patchOf(a.body)[0]["value"]["placer.io/unassigned-reason"];
  EXPECT_LE(reason.size(), kMaxAnnotationBytes);
  EXPECT_NE(reason.find("3 and 39984 more insufficient resources"), std::string::npos) << reason;
}

// 40,000 host ports: placed, kept off the node for a second such pod, and
// released again, each in time linear in the ports.
TEST_F(AdmissionTest, APodWithFortyThousandHostPortsIsPlacedHeldAndReleased) {
  json ports = json::array();
  for (int i = 0; i < 40000; ++i) ports.push_back({{"containerPort", 10000 + i}, {"hostPort", 10000 + i}});
  json pod = podJson("", "team-a", "100m", "64Mi");
  pod["spec"]["containers"][0]["ports"] = ports;
  AdmissionAnswer first = review(admissionReview("uid-ports-1", pod));
  ASSERT_EQ(first.outcome, AdmissionOutcome::Assigned) << first.reason;
  AdmissionAnswer second = review(admissionReview("uid-ports-2", pod));
  ASSERT_EQ(second.outcome, AdmissionOutcome::Assigned) << second.reason;
  EXPECT_NE(second.node, first.node) << "the first pod's ports are taken on its node";

  MetricsRegistry metrics;
  ReservationSweeper sweeper(state_, metrics, [this] { return now_ + settings_.reservationTtl + std::chrono::seconds(1); });
  EXPECT_EQ(sweeper.sweep(), 2u);
  state_.read([&](const ClusterView& view) {
    for (const NodeInfo& node : view.nodes()) EXPECT_TRUE(node.usedPorts.empty()) << node.name();
  });
  AdmissionAnswer again = review(admissionReview("uid-ports-3", pod));
  EXPECT_EQ(again.outcome, AdmissionOutcome::Assigned);
}

// 80 distinct 2.8 MB pod shapes (80,000 extended resources each, dry-run
// reviews, as in issue 15) are each answered, and decided without the decision
// cache, so they cannot fill it with copies of themselves.
TEST_F(AdmissionTest, EightyDistinctLargeShapesAreDecidedWithoutFillingTheDecisionCache) {
  ASSERT_NE(engine_.cache(), nullptr);
  const auto before = engine_.cache()->stats();
  for (int shape = 0; shape < 80; ++shape) {
    json pod = podJson("", "team-a", std::to_string(100 + shape) + "m", "64Mi");
    pod["spec"]["containers"][0]["resources"]["requests"][kResourcesPlaceholder] = "";
    const std::string uid = "uid-shape-" + std::to_string(shape);
    const std::string body = withResources(admissionReview(uid, pod, "CREATE", /*dryRun=*/true).dump(),
                                           "example.com/shape-r-", 80000, std::to_string(10 + shape));
    ASSERT_GE(body.size(), 2800000u);
    AdmissionAnswer a = reviewBody(body);
    EXPECT_EQ(a.outcome, AdmissionOutcome::Fallback) << a.reason;
    EXPECT_EQ(a.uid, uid);
    EXPECT_LE(patchOf(a.body)[0]["value"]["placer.io/unassigned-reason"].get<std::string>().size(),
              kMaxAnnotationBytes);
  }
  EXPECT_EQ(engine_.cache()->stats().bypassed - before.bypassed, 80u);
  EXPECT_EQ(engine_.cache()->size(), 0u);
  EXPECT_EQ(reservations(), 0u);
}

// Every annotation placer writes, on a pod it places or leaves, is at most
// 4 KiB (kMaxAnnotationBytes) and valid UTF-8, whatever the pod and cluster:
// the API server refuses a pod whose annotations pass 256 KiB, failing its
// creation.
TEST_F(AdmissionTest, EveryAnnotationPlacerWritesIsAtMostFourKiB) {
  // Longest legal names: a DNS subdomain prefix of 253 and a name of 63.
  const std::string longPrefix = std::string(249, 'p') + ".com";
  auto longName = [&](int i) {
    std::string n = std::to_string(i);
    return longPrefix + "/" + std::string(63 - n.size(), 'n') + n;
  };
  struct Case {
    std::string name;
    std::function<void(ClusterState&)> cluster;  // added to the three nodes
    std::function<std::string()> body;           // the review
    bool summarized = false;                     // the whole reason is longer than the limit
  };
  auto reviewOf = [](const json& pod) { return admissionReview("uid-annotations", pod).dump(); };
  const std::vector<Case> cases = {
      {"40,000 unknown extended resources", [](ClusterState&) {},
       [&] {
         json pod = podJson("", "team-a", "100m", "64Mi");
         pod["spec"]["containers"][0]["resources"]["requests"][kResourcesPlaceholder] = "";
         return withResources(reviewOf(pod), "example.com/resource-", 40000, "1");
       }},
      {"2,000 unknown resources with the longest legal names", [](ClusterState&) {},
       [&] {
         json pod = podJson("", "team-a", "100m", "64Mi");
         json& requests = pod["spec"]["containers"][0]["resources"]["requests"];
         for (int i = 0; i < 2000; ++i) requests[longName(i)] = "1";
         return reviewOf(pod);
       }},
      {"a different untolerated taint with a long key on each of 400 nodes, every node full",
       [&](ClusterState& state) {
         for (int i = 0; i < 400; ++i)
           loadView(state, {nodeJson("tainted-" + std::to_string(i), "1", "1Gi", 110, json::object(),
                                     json::array({{{"key", longName(i)},
                                                   {"value", std::string(63, 'v')},
                                                   {"effect", "NoSchedule"}}}))});
       },
       [&] { return reviewOf(podJson("", "team-a", "64", "64Mi")); }, true},
      {"reasons with multi-byte characters cut at the limit",
       [&](ClusterState& state) {
         std::string accents;
         for (int i = 0; i < 40; ++i) accents += "\xc3\xa9";
         for (int i = 0; i < 200; ++i)
           loadView(state, {nodeJson("accented-" + std::to_string(i), "1", "1Gi", 110, json::object(),
                                     json::array({{{"key", "k" + std::to_string(i) + accents},
                                                   {"value", accents},
                                                   {"effect", "NoSchedule"}}}))});
       },
       [&] { return reviewOf(podJson("", "team-a", "64", "64Mi")); }, true},
      {"placed on a node with a 253-character name",
       [](ClusterState& state) { loadView(state, {nodeJson(std::string(253, 'x'), "64", "256Gi")}); },
       [&] { return reviewOf(podJson("", "team-a", "32", "64Mi")); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ClusterState fresh;
    loadView(fresh, {nodeJson("node-a", "4", "8Gi"), nodeJson("node-b", "4", "8Gi"), nodeJson("node-c", "2", "4Gi")});
    c.cluster(fresh);
    Engine engine{Profile::defaults()};
    AdmissionInput input{engine, fresh, settings_, now_, true};
    AdmissionAnswer a = reviewAdmission(c.body(), input);
    ASSERT_TRUE(a.outcome == AdmissionOutcome::Assigned || a.outcome == AdmissionOutcome::Fallback) << a.reason;
    const json patch = patchOf(a.body);  // parses: every string valid UTF-8
    size_t annotations = 0;
    for (const json& op : patch) {
      const std::string path = op["path"];
      if (path == "/metadata/annotations") {
        for (const auto& [key, value] : op["value"].items()) {
          ++annotations;
          EXPECT_LE(value.get<std::string>().size(), kMaxAnnotationBytes) << key;
        }
      } else if (path.rfind("/metadata/annotations/", 0) == 0) {
        ++annotations;
        EXPECT_LE(op["value"].get<std::string>().size(), kMaxAnnotationBytes) << path;
      }
    }
    EXPECT_GE(annotations, 1u);
    if (c.summarized) {
      ASSERT_EQ(a.outcome, AdmissionOutcome::Fallback);
      EXPECT_GT(a.reason.size(), kMaxAnnotationBytes);
      const std::string written = patch[0]["value"]["placer.io/unassigned-reason"];
      EXPECT_NE(written.find(" more."), std::string::npos) << written;
    }
  }
}

TEST(SummarizeTest, KeepsShortTextAndCutsLongListsAtAnEntryWithACount) {
  EXPECT_EQ(summarize("0/3 nodes are available: 3 Insufficient cpu."), "0/3 nodes are available: 3 Insufficient cpu.");
  std::string reason = "0/5000 nodes are available:";
  for (int i = 0; i < 5000; ++i) reason += (i ? ", " : " ") + std::string("1 node(s) had untolerated taint {t") + std::to_string(i) + ": x}";
  reason += ".";
  const std::string cut = summarize(reason);
  EXPECT_LE(cut.size(), kMaxAnnotationBytes);
  EXPECT_EQ(cut.rfind("0/5000 nodes are available: 1 node(s) had untolerated taint {t0: x}, ", 0), 0u);
  const size_t tail = cut.rfind(", and ");
  ASSERT_NE(tail, std::string::npos) << cut;
  const size_t kept = size_t(std::count(cut.begin(), cut.begin() + tail, ',')) + 1;
  EXPECT_EQ(cut.substr(tail), ", and " + std::to_string(5000 - kept) + " more.");
  // A single entry longer than the limit is cut on a UTF-8 boundary.
  std::string accents;
  for (int i = 0; i < 3000; ++i) accents += "\xc3\xa9";
  const std::string cutAccents = summarize(accents);
  EXPECT_LE(cutAccents.size(), kMaxAnnotationBytes);
  EXPECT_NO_THROW((void)json(cutAccents).dump()) << "valid UTF-8";
}

TEST(ShedAdmissionTest, AllowsTheReviewUnchangedEchoingItsUid) {
  const json review = admissionReview("uid-shed", podJson("web", "team-a", "100m", "64Mi"));
  AdmissionAnswer a = shedAdmission(review.dump());
  EXPECT_EQ(a.httpStatus, 200);
  json body = json::parse(a.body);
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(body["kind"], "AdmissionReview");
  EXPECT_EQ(body["response"], (json{{"uid", "uid-shed"}, {"allowed", true}}));
  EXPECT_EQ(shedAdmission("not json").httpStatus, 400);
  EXPECT_EQ(shedAdmission(R"({"kind":"AdmissionReview","request":{"kind":"x"}})").httpStatus, 400);
  // Found by test/fuzz/admission: an empty uid was echoed with a 200, where /mutate answers 400.
  EXPECT_EQ(shedAdmission(R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":""}})").httpStatus,
            400);
}

TEST_F(AdmissionTest, NoFeasibleNodeWithoutFallbackSchedulerOnlyAnnotates) {
  AdmissionAnswer a = review(admissionReview("uid-big", podJson("", "team-a", "64", "1Gi")));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Fallback);
  EXPECT_EQ(patchOf(a.body).size(), 1u);
}

// "One replica per node": web-1 (app=web) runs on node-a; web-2 requires
// anti-affinity to app=web on kubernetes.io/hostname. kube-scheduler puts it
// on node-b or node-c; the kubelet never re-checks the rule, so placer must
// never put it on node-a, nor put any pod next to one that forbids it.
TEST_F(AdmissionTest, RequiredPodAntiAffinityIsNeverBroken) {
  state_.upsertPod(decodePod(boundPodJson("web-1", "node-a", "100m", "64Mi")).value());
  json antiAffinity = {
      {"podAntiAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         json::array({{{"labelSelector", {{"matchLabels", {{"app", "web"}}}}},
                       {"topologyKey", "kubernetes.io/hostname"}}})}}}};
  json web2 = podJson("web-2", "default", "100m", "64Mi");
  web2["spec"]["affinity"] = antiAffinity;
  AdmissionAnswer a = review(admissionReview("uid-web-2", web2));
  if (a.outcome == AdmissionOutcome::Assigned) {
    EXPECT_NE(a.node, "node-a");
  } else {
    ASSERT_EQ(a.outcome, AdmissionOutcome::Fallback) << a.reason;
    EXPECT_FALSE(patchOf(a.body)[0]["value"]["placer.io/unassigned-reason"].get<std::string>().empty());
  }

  // The symmetric case: an existing pod's required anti-affinity binds a pod
  // that declares nothing.
  json guard = boundPodJson("guard", "node-b", "100m", "64Mi");
  guard["metadata"]["labels"] = {{"app", "guard"}};
  guard["spec"]["affinity"] = antiAffinity;
  state_.upsertPod(decodePod(guard).value());
  for (int i = 0; i < 3; ++i) {
    AdmissionAnswer plain = review(admissionReview("uid-plain-" + std::to_string(i), podJson("", "default", "100m", "64Mi")));
    if (plain.outcome == AdmissionOutcome::Assigned) {
      EXPECT_NE(plain.node, "node-b");
    }
  }
}

TEST_F(AdmissionTest, FailuresNeverBlockCreation) {
  json badQuantity = podJson("", "team-a", "lots", "64Mi");
  AdmissionAnswer a = review(admissionReview("uid-bad", badQuantity));
  EXPECT_EQ(a.outcome, AdmissionOutcome::Error);
  EXPECT_NE(a.reason.find("cpu"), std::string::npos) << a.reason;
  EXPECT_TRUE(patchOf(a.body).is_null());

  json noObject = admissionReview("uid-noobj", podJson("", "team-a", "1", "1Gi"));
  noObject["request"].erase("object");
  EXPECT_EQ(review(noObject).outcome, AdmissionOutcome::Error);

  AdmissionAnswer cold = review(admissionReview("uid-cold", podJson("", "team-a", "1", "1Gi")), /*synced=*/false);
  EXPECT_EQ(cold.outcome, AdmissionOutcome::Error);
  EXPECT_NE(cold.reason.find("not synced"), std::string::npos);
  EXPECT_TRUE(patchOf(cold.body).is_null());
  EXPECT_EQ(json::parse(cold.body)["response"]["allowed"], true);
  EXPECT_EQ(reservations(), 0u);
}

TEST_F(AdmissionTest, BodiesThatAreNotAnAdmissionReviewAre400) {
  struct Case {
    std::string name;
    std::string body;
  };
  std::vector<Case> cases = {
      {"not JSON", "hello"},
      {"truncated JSON", R"({"kind":"AdmissionReview","request":{"uid":)"},
      {"array", "[1,2,3]"},
      {"other kind", R"({"kind":"Pod","apiVersion":"v1"})"},
      {"no request", R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"})"},
      {"no uid", R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"operation":"CREATE"}})"},
      {"uid not a string", R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":7}})"},
      // Found by test/fuzz/admission: the answer would echo it as U+FFFD, a uid the API server does not know.
      {"uid not UTF-8", "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{\"uid\":\"a\xff" "b\",\"operation\":\"CREATE\"}}"},
      {"deeply nested", std::string(100000, '[') + std::string(100000, ']')},
      {"empty", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    AdmissionInput input{engine_, state_, settings_, now_, true};
    AdmissionAnswer a = reviewAdmission(c.body, input);
    EXPECT_EQ(a.outcome, AdmissionOutcome::BadRequest);
    EXPECT_EQ(a.httpStatus, 400);
    EXPECT_FALSE(a.body.empty());
  }
}

TEST_F(AdmissionTest, ReservationsHoldCapacityUntilTheyExpire) {
  // node-c has 2 cpu; fill every node with 1.5-cpu pods.
  int assigned = 0;
  for (int i = 0; i < 10; ++i)
    if (review(admissionReview("uid-" + std::to_string(i), podJson("", "team-a", "1500m", "64Mi"))).outcome ==
        AdmissionOutcome::Assigned)
      ++assigned;
  EXPECT_EQ(assigned, 2 + 2 + 1);
  EXPECT_EQ(review(admissionReview("uid-more", podJson("", "team-a", "1500m", "64Mi"))).outcome,
            AdmissionOutcome::Fallback);

  MetricsRegistry metrics;
  ReservationSweeper sweeper(state_, metrics, [this] { return now_ + settings_.reservationTtl + std::chrono::seconds(1); });
  EXPECT_EQ(sweeper.sweep(), 5u);
  EXPECT_EQ(reservations(), 0u);
  EXPECT_NE(metrics.render().find("placer_reservations_expired_total 5\n"), std::string::npos);
  EXPECT_EQ(review(admissionReview("uid-after", podJson("", "team-a", "1500m", "64Mi"))).outcome,
            AdmissionOutcome::Assigned);
}

TEST_F(AdmissionTest, ASweepWithNothingToExpireDoesNotWaitForDecisionsInFlight) {
  ASSERT_EQ(review(admissionReview("uid-1", podJson("", "team-a", "1", "64Mi"))).outcome, AdmissionOutcome::Assigned);
  MetricsRegistry metrics;
  ReservationSweeper sweeper(state_, metrics, [this] { return now_; });  // the reservation is still young
  // A decision holds the view (shared) while the sweep runs: a sweep that took
  // the exclusive lock would wait for it, and this would time out.
  // (The future outlives the shared lock, so that a sweep that does wait can
  // finish once it is released, and the test fails rather than hangs.)
  std::future<size_t> sweep;
  std::future_status status{};
  state_.readForDecision([&](const ClusterView&) {
    sweep = std::async(std::launch::async, [&] { return sweeper.sweep(); });
    status = sweep.wait_for(std::chrono::seconds(10));
    return 0;
  });
  EXPECT_EQ(status, std::future_status::ready);
  EXPECT_EQ(sweep.get(), 0u);
  EXPECT_EQ(reservations(), 1u);
}

TEST_F(AdmissionTest, AReviewSentAgainWithTheSameUidIsNotCountedTwice) {
  json r = admissionReview("uid-same", podJson("", "team-a", "3", "64Mi"));
  // node-a and node-b fit one 3-cpu pod each; the same uid three times keeps one reservation.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(review(r).outcome, AdmissionOutcome::Assigned);
  EXPECT_EQ(reservations(), 1u);
  EXPECT_EQ(review(admissionReview("uid-other", podJson("", "team-a", "3", "64Mi"))).outcome,
            AdmissionOutcome::Assigned);
}

TEST_F(AdmissionTest, TheReservationIsReplacedByThePodWhenItAppears) {
  AdmissionAnswer a = review(admissionReview("uid-r", podJson("", "team-a", "3", "64Mi")));
  ASSERT_EQ(a.outcome, AdmissionOutcome::Assigned);
  json created = podJson("web-7d4b9c8f5-x2x9z", "team-a", "3", "64Mi");
  created["metadata"]["uid"] = "pod-uid-1";
  created["metadata"]["annotations"] = {{"placer.io/reservation", "uid-r"}};
  created["spec"]["nodeName"] = a.node;
  auto pod = decodePod(created);
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  state_.upsertPod(*pod);
  EXPECT_EQ(reservations(), 0u);
  int32_t podCount = state_.read([&](const ClusterView& v) { return v.findNode(a.node)->podCount; });
  EXPECT_EQ(podCount, 1);
}

TEST(JsonPointerTest, EscapesTildeAndSlash) {
  EXPECT_EQ(escapeJsonPointer("placer.io/score"), "placer.io~1score");
  EXPECT_EQ(escapeJsonPointer("a~b/c"), "a~0b~1c");
}

}  // namespace
}  // namespace placer::testing
