// InterPodAffinity and PodTopologySpread through the engine, each alone in
// a profile: the verdict and the normalised score of every node for a pod,
// as kube-scheduler's plugins give them (upstream's filtering_test.go and
// scoring_test.go cases, in their own words).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/engine.h"
#include "scoring/placement.h"
#include "scoring/profile.h"
#include "scoring/snapshot.h"

namespace placer {
namespace {

using nlohmann::json;

json node(const std::string& name, json labels = json::object()) {
  labels["kubernetes.io/hostname"] = name;
  return {{"metadata", {{"name", name}, {"labels", labels}}},
          {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "16Gi"}, {"pods", "110"}}}}}};
}
json zoned(const std::string& name, const std::string& zone) {
  return node(name, {{"topology.kubernetes.io/zone", zone}});
}

json pod(const std::string& name, json labels, const std::string& nodeName = "", const std::string& ns = "default") {
  json p = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + ns + "-" + name}, {"labels", labels}}},
            {"spec", {{"containers", json::array({{{"name", "c"}}})}}}};
  if (!nodeName.empty()) {
    p["spec"]["nodeName"] = nodeName;
    p["status"]["phase"] = "Running";
  }
  return p;
}

json term(json matchLabels, const std::string& topologyKey) {
  return {{"labelSelector", {{"matchLabels", matchLabels}}}, {"topologyKey", topologyKey}};
}
json withAffinity(json p, const std::string& kind, json required, json preferred = json::array()) {
  json rules = json::object();
  if (!required.empty()) rules["requiredDuringSchedulingIgnoredDuringExecution"] = required;
  if (!preferred.empty()) rules["preferredDuringSchedulingIgnoredDuringExecution"] = preferred;
  p["spec"]["affinity"][kind] = rules;
  return p;
}
json weighted(int weight, json t) { return {{"weight", weight}, {"podAffinityTerm", t}}; }

json spread(int maxSkew, const std::string& key, const std::string& when, json matchLabels) {
  return {{"maxSkew", maxSkew},
          {"topologyKey", key},
          {"whenUnsatisfiable", when},
          {"labelSelector", {{"matchLabels", matchLabels}}}};
}

struct Result {
  Decision decision;
  std::map<std::string, std::string> reason;  // unfeasible node -> first reason
  std::map<std::string, int64_t> score;       // feasible node -> the plugin's normalised score
};

// A pod of app=web spreading over zones (whenUnsatisfiable `when`), in the
// blue pool only or anywhere.
Pod webPodSpreadingOverZones(const std::string& when, bool onlyBlue) {
  json p = pod("p", {{"app", "web"}});
  if (onlyBlue) p["spec"]["nodeSelector"] = {{"pool", "blue"}};
  p["spec"]["topologySpreadConstraints"] = json::array({spread(1, "topology.kubernetes.io/zone", when, {{"app", "web"}})});
  return decodePod(p).value();
}

class TopologyPluginTest : public ::testing::Test {
 protected:
  // state_ holds the snapshot's nodes and pods, engine_ runs `plugin` alone
  // (with `args`); the snapshot's pod, if any, is returned.
  std::optional<Pod> load(const std::string& plugin, const json& snapshot, json args = nullptr) {
    json profile = {{"plugins", {{"multiPoint", {{"enabled", {{{"name", plugin}}}}, {"disabled", {{{"name", "*"}}}}}}}}};
    if (!args.is_null()) profile["pluginConfig"] = {{{"name", plugin}, {"args", args}}};
    auto built = Profile::fromJson(profile);
    EXPECT_TRUE(built.ok()) << built.error().message;
    engine_ = std::make_unique<Engine>(*built, 0);
    state_ = std::make_unique<ClusterState>();
    auto decoded = decodeSnapshot(snapshot);
    if (!decoded.ok()) {
      ADD_FAILURE() << decoded.error().message;
      return std::nullopt;
    }
    state_->update([&](MutableClusterView& v) { fillView(v, *decoded); });
    return decoded->pod;
  }

  // Runs `plugin` alone (with `args`) for the snapshot's pod.
  Result run(const std::string& plugin, json snapshot, json args = nullptr) {
    const std::optional<Pod> pod = load(plugin, snapshot, std::move(args));
    Result out;
    if (!pod) {
      ADD_FAILURE() << "the snapshot has no pod to place";
      return out;
    }
    state_->read([&](const ClusterView& view) {
      out.decision = engine_->place(*pod, view, Detail::Full);
      for (const NodeOutcome& o : out.decision.nodes) {
        if (o.code != Code::Success)
          out.reason[o.node->name()] = o.reasons.empty() ? "" : o.reasons[0];
        else
          out.score[o.node->name()] = o.pluginScores.empty() ? 0 : o.pluginScores[0];
      }
    });
    return out;
  }

  std::unique_ptr<ClusterState> state_;
  std::unique_ptr<Engine> engine_;
};

// ---- InterPodAffinity: Filter ----

TEST_F(TopologyPluginTest, RequiredAntiAffinityKeepsReplicasApart) {
  json incoming = withAffinity(pod("web-2", {{"app", "web"}}), "podAntiAffinity",
                               json::array({term({{"app", "web"}}, "kubernetes.io/hostname")}));
  Result r = run("InterPodAffinity", {{"nodes", {node("node-a"), node("node-b")}},
                                      {"pods", {pod("web-1", {{"app", "web"}}, "node-a")}},
                                      {"pod", incoming}});
  EXPECT_EQ(r.reason["node-a"], "node(s) didn't match pod anti-affinity rules");
  EXPECT_FALSE(r.reason.contains("node-b"));
  ASSERT_NE(r.decision.selected, nullptr);
  EXPECT_EQ(r.decision.selected->name(), "node-b");
}

TEST_F(TopologyPluginTest, AnExistingPodsRequiredAntiAffinityBindsAPodThatDeclaresNothing) {
  json guard = withAffinity(pod("guard", {{"app", "guard"}}, "node-b"), "podAntiAffinity",
                            json::array({term({{"app", "web"}}, "kubernetes.io/hostname")}));
  Result r = run("InterPodAffinity",
                 {{"nodes", {node("node-a"), node("node-b")}}, {"pods", {guard}}, {"pod", pod("web", {{"app", "web"}})}});
  EXPECT_EQ(r.reason["node-b"], "node(s) didn't satisfy existing pods anti-affinity rules");
  EXPECT_FALSE(r.reason.contains("node-a"));
}

TEST_F(TopologyPluginTest, RequiredAffinityFollowsTheTopologyDomain) {
  json incoming = withAffinity(pod("app", {{"app", "api"}}), "podAffinity",
                               json::array({term({{"app", "db"}}, "topology.kubernetes.io/zone")}));
  Result r = run("InterPodAffinity",
                 {{"nodes", {zoned("a1", "zone-a"), zoned("a2", "zone-a"), zoned("b1", "zone-b"), node("bare")}},
                  {"pods", {pod("db", {{"app", "db"}}, "a1")}},
                  {"pod", incoming}});
  EXPECT_FALSE(r.reason.contains("a1"));
  EXPECT_FALSE(r.reason.contains("a2"));
  EXPECT_EQ(r.reason["b1"], "node(s) didn't match pod affinity rules");
  EXPECT_EQ(r.reason["bare"], "node(s) didn't match pod affinity rules");
  EXPECT_EQ(r.decision.nodes[0].code, Code::Success);
  EXPECT_EQ(r.decision.nodes[2].code, Code::UnschedulableAndUnresolvable);
}

TEST_F(TopologyPluginTest, TheFirstPodOfAGroupWithAffinityToItselfMayGoAnywhereTheKeyExists) {
  json incoming = withAffinity(pod("cache-0", {{"app", "cache"}}), "podAffinity",
                               json::array({term({{"app", "cache"}}, "topology.kubernetes.io/zone")}));
  Result r = run("InterPodAffinity",
                 {{"nodes", {zoned("a1", "zone-a"), zoned("b1", "zone-b"), node("bare")}}, {"pod", incoming}});
  EXPECT_FALSE(r.reason.contains("a1"));
  EXPECT_FALSE(r.reason.contains("b1"));
  EXPECT_EQ(r.reason["bare"], "node(s) didn't match pod affinity rules");
}

TEST_F(TopologyPluginTest, TermsSelectTheirOwnNamespaceUnlessTheyNameOthers) {
  json incoming = withAffinity(pod("web-2", {{"app", "web"}}), "podAntiAffinity",
                               json::array({term({{"app", "web"}}, "kubernetes.io/hostname")}));
  Result r = run("InterPodAffinity", {{"nodes", {node("node-a"), node("node-b")}},
                                      {"pods", {pod("web-1", {{"app", "web"}}, "node-a", "other")}},
                                      {"pod", incoming}});
  EXPECT_TRUE(r.reason.empty());

  json naming = withAffinity(pod("web-3", {{"app", "web"}}), "podAntiAffinity",
                             json::array({json{{"labelSelector", {{"matchLabels", {{"app", "web"}}}}},
                                               {"namespaces", {"other"}},
                                               {"topologyKey", "kubernetes.io/hostname"}}}));
  Result r2 = run("InterPodAffinity", {{"nodes", {node("node-a"), node("node-b")}},
                                       {"pods", {pod("web-1", {{"app", "web"}}, "node-a", "other")}},
                                       {"pod", naming}});
  EXPECT_EQ(r2.reason["node-a"], "node(s) didn't match pod anti-affinity rules");
}

TEST_F(TopologyPluginTest, NamespaceSelectorsSelectByTheNamespacesLabels) {
  json incoming = withAffinity(pod("web-2", {{"app", "web"}}), "podAntiAffinity",
                               json::array({json{{"labelSelector", {{"matchLabels", {{"app", "web"}}}}},
                                                 {"namespaceSelector", {{"matchLabels", {{"team", "a"}}}}},
                                                 {"topologyKey", "kubernetes.io/hostname"}}}));
  json namespaces = json::array({{{"metadata", {{"name", "team-a"}, {"labels", {{"team", "a"}}}}}},
                                 {{"metadata", {{"name", "team-b"}, {"labels", {{"team", "b"}}}}}}});
  Result r = run("InterPodAffinity", {{"nodes", {node("node-a"), node("node-b"), node("node-c")}},
                                      {"namespaces", namespaces},
                                      {"pods", {pod("w1", {{"app", "web"}}, "node-a", "team-a"),
                                                pod("w2", {{"app", "web"}}, "node-b", "team-b")}},
                                      {"pod", incoming}});
  EXPECT_EQ(r.reason["node-a"], "node(s) didn't match pod anti-affinity rules");
  EXPECT_FALSE(r.reason.contains("node-b"));
  EXPECT_FALSE(r.reason.contains("node-c"));
}

TEST_F(TopologyPluginTest, AnInvalidSelectorRejectsThePodAsUpstreamParsesIt) {
  json bad = {{"labelSelector", {{"matchExpressions", json::array({{{"key", "app"}, {"operator", "In"}}})}}},
              {"topologyKey", "kubernetes.io/hostname"}};
  Result r = run("InterPodAffinity", {{"nodes", {node("node-a")}},
                                      {"pod", withAffinity(pod("p", {{"app", "web"}}), "podAffinity", json::array({bad}))}});
  ASSERT_TRUE(r.decision.preFilterRejection.has_value());
  EXPECT_EQ(r.reason["node-a"],
            "parsing pod: requiredAffinityTerms: values: Invalid value: []string(nil): for 'in', 'notin' operators, "
            "values set can't be empty");
}

TEST_F(TopologyPluginTest, AReservationCountsAsThePodItWillBe) {
  Result first = run("InterPodAffinity", {{"nodes", {node("node-a"), node("node-b")}}, {"pod", pod("x", {{"app", "x"}})}});
  ASSERT_NE(first.decision.selected, nullptr);
  // A replica with anti-affinity is reserved on node-a, not yet in the view.
  Pod reserved = decodePod(withAffinity(pod("web-1", {{"app", "web"}}), "podAntiAffinity",
                                        json::array({term({{"app", "web"}}, "kubernetes.io/hostname")})))
                     .value();
  state_->update([&](MutableClusterView& v) {
    ASSERT_TRUE(v.reserve(reservationFor(reserved, "review-1", "node-a", std::chrono::steady_clock::time_point::max())));
  });
  Pod plain = decodePod(pod("web-2", {{"app", "web"}})).value();
  state_->read([&](const ClusterView& view) {
    Decision d = engine_->place(plain, view, Detail::Full);
    ASSERT_NE(d.selected, nullptr);
    EXPECT_EQ(d.selected->name(), "node-b");
    EXPECT_TRUE(d.podDependent);
  });
}

// ---- InterPodAffinity: Score ----

TEST_F(TopologyPluginTest, PreferredAffinityFavoursTheDomainOfMatchingPods) {
  json incoming = withAffinity(pod("api", {{"app", "api"}}), "podAffinity", json::array(),
                               json::array({weighted(10, term({{"app", "db"}}, "topology.kubernetes.io/zone"))}));
  Result r = run("InterPodAffinity", {{"nodes", {zoned("a1", "zone-a"), zoned("a2", "zone-a"), zoned("b1", "zone-b")}},
                                      {"pods", {pod("db", {{"app", "db"}}, "a1")}},
                                      {"pod", incoming}});
  EXPECT_EQ(r.score["a1"], 100);
  EXPECT_EQ(r.score["a2"], 100);
  EXPECT_EQ(r.score["b1"], 0);
}

TEST_F(TopologyPluginTest, PreferredAntiAffinityFavoursOtherDomains) {
  json incoming = withAffinity(pod("web-3", {{"app", "web"}}), "podAntiAffinity", json::array(),
                               json::array({weighted(5, term({{"app", "web"}}, "kubernetes.io/hostname"))}));
  Result r = run("InterPodAffinity", {{"nodes", {node("n1"), node("n2"), node("n3")}},
                                      {"pods", {pod("web-1", {{"app", "web"}}, "n1"), pod("web-2", {{"app", "web"}}, "n1"),
                                                pod("web-0", {{"app", "web"}}, "n2")}},
                                      {"pod", incoming}});
  // Scores -10, -5, 0 normalised over [min, max].
  EXPECT_EQ(r.score["n1"], 0);
  EXPECT_EQ(r.score["n2"], 50);
  EXPECT_EQ(r.score["n3"], 100);
}

TEST_F(TopologyPluginTest, ExistingPodsRequiredAffinityAttractsThePodsTheyWant) {
  json sidecarFan = withAffinity(pod("agent", {{"app", "agent"}}, "n2"), "podAffinity",
                                 json::array({term({{"app", "web"}}, "kubernetes.io/hostname")}));
  Result r = run("InterPodAffinity", {{"nodes", {node("n1"), node("n2")}},
                                      {"pods", {sidecarFan}},
                                      {"pod", pod("web", {{"app", "web"}})}},
                 {{"hardPodAffinityWeight", 5}});
  EXPECT_EQ(r.score["n1"], 0);
  EXPECT_EQ(r.score["n2"], 100);

  Result off = run("InterPodAffinity", {{"nodes", {node("n1"), node("n2")}},
                                        {"pods", {sidecarFan}},
                                        {"pod", pod("web", {{"app", "web"}})}},
                   {{"hardPodAffinityWeight", 0}});
  EXPECT_EQ(off.score["n2"], 0);
}

TEST_F(TopologyPluginTest, InterPodAffinityArgsAreValidated) {
  auto bad = Profile::fromJson({{"pluginConfig", {{{"name", "InterPodAffinity"}, {"args", {{"hardPodAffinityWeight", 101}}}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not in valid range [0, 100]"), std::string::npos) << bad.error().message;
}

// ---- PodTopologySpread: Filter ----

TEST_F(TopologyPluginTest, DoNotScheduleRejectsDomainsThatWouldSkewTooFar) {
  json incoming = pod("p", {{"app", "web"}});
  incoming["spec"]["topologySpreadConstraints"] =
      json::array({spread(1, "topology.kubernetes.io/zone", "DoNotSchedule", {{"app", "web"}})});
  Result r = run("PodTopologySpread",
                 {{"nodes", {zoned("a1", "zone-a"), zoned("a2", "zone-a"), zoned("b1", "zone-b"), node("bare")}},
                  {"pods", {pod("w1", {{"app", "web"}}, "a1"), pod("w2", {{"app", "web"}}, "a2")}},
                  {"pod", incoming}});
  EXPECT_EQ(r.reason["a1"], "node(s) didn't match pod topology spread constraints");
  EXPECT_EQ(r.reason["a2"], "node(s) didn't match pod topology spread constraints");
  EXPECT_FALSE(r.reason.contains("b1"));
  EXPECT_EQ(r.reason["bare"], "node(s) didn't match pod topology spread constraints (missing required label)");
}

TEST_F(TopologyPluginTest, MinDomainsTreatsTheMinimumAsZeroWhileDomainsAreMissing) {
  json incoming = pod("p", {{"app", "web"}});
  json c = spread(1, "topology.kubernetes.io/zone", "DoNotSchedule", {{"app", "web"}});
  c["minDomains"] = 3;
  incoming["spec"]["topologySpreadConstraints"] = json::array({c});
  // One pod in each of the two zones: without minDomains either zone fits
  // (1 + 1 - 1 = 1); with three required, the minimum counts as 0 (skew 2).
  Result r = run("PodTopologySpread",
                 {{"nodes", {zoned("a1", "zone-a"), zoned("b1", "zone-b")}},
                  {"pods", {pod("w1", {{"app", "web"}}, "a1"), pod("w2", {{"app", "web"}}, "b1")}},
                  {"pod", incoming}});
  EXPECT_EQ(r.reason["a1"], "node(s) didn't match pod topology spread constraints");
  EXPECT_EQ(r.reason["b1"], "node(s) didn't match pod topology spread constraints");
}

TEST_F(TopologyPluginTest, NodeAffinityPolicyDecidesWhichDomainsCount) {
  // zone-c exists only on a node the pod's nodeSelector excludes. Honoured
  // (the default), it is no domain: zone-a and zone-b hold one pod each, the
  // minimum is 1 and both fit. Ignored, zone-c is a domain with no pod: the
  // minimum is 0 and a second pod in zone-a or zone-b skews by 2.
  auto blue = [](const std::string& name, const std::string& zone) {
    return node(name, {{"topology.kubernetes.io/zone", zone}, {"pool", "blue"}});
  };
  auto snapshot = [&](const std::string& policy) {
    json incoming = pod("p", {{"app", "web"}});
    incoming["spec"]["nodeSelector"] = {{"pool", "blue"}};
    json c = spread(1, "topology.kubernetes.io/zone", "DoNotSchedule", {{"app", "web"}});
    if (!policy.empty()) c["nodeAffinityPolicy"] = policy;
    incoming["spec"]["topologySpreadConstraints"] = json::array({c});
    return json{{"nodes", {blue("a1", "zone-a"), blue("b1", "zone-b"), zoned("c1", "zone-c")}},
                {"pods", {pod("w1", {{"app", "web"}}, "a1"), pod("w2", {{"app", "web"}}, "b1")}},
                {"pod", incoming}};
  };
  Result honoured = run("PodTopologySpread", snapshot(""));
  EXPECT_FALSE(honoured.reason.contains("a1")) << honoured.reason["a1"];
  EXPECT_FALSE(honoured.reason.contains("b1"));
  Result ignored = run("PodTopologySpread", snapshot("Ignore"));
  EXPECT_EQ(ignored.reason["a1"], "node(s) didn't match pod topology spread constraints");
  EXPECT_EQ(ignored.reason["b1"], "node(s) didn't match pod topology spread constraints");
  EXPECT_FALSE(ignored.reason.contains("c1"));
}

// One engine deciding pods in turn over a view that changes: which domains
// count for a DoNotSchedule constraint is worked out once per view
// generation for pods alike in node affinity and tolerations, so it must
// follow each pod's own nodeSelector and tolerations and every change of a
// node's labels and taints.
TEST_F(TopologyPluginTest, TheDomainsThatCountFollowEachPodsNodeSelectorAndNodeLabelChanges) {
  auto blue = [](const std::string& name, const std::string& zone) {
    return node(name, {{"topology.kubernetes.io/zone", zone}, {"pool", "blue"}});
  };
  load("PodTopologySpread",
       {{"nodes", {blue("a1", "zone-a"), blue("b1", "zone-b"), zoned("c1", "zone-c")}},
        {"pods", {pod("w1", {{"app", "web"}}, "a1"), pod("w2", {{"app", "web"}}, "b1")}}});
  ClusterState& state = *state_;
  auto incoming = [](bool onlyBlue) { return webPodSpreadingOverZones("DoNotSchedule", onlyBlue); };
  // The nodes that pass, by name.
  auto feasible = [&](const Pod& p) {
    std::vector<std::string> out;
    state.read([&](const ClusterView& view) {
      Decision d = engine_->place(p, view, Detail::Full);
      for (const NodeOutcome& o : d.nodes)
        if (o.code == Code::Success) out.push_back(o.node->name());
    });
    std::sort(out.begin(), out.end());
    return out;
  };
  using Names = std::vector<std::string>;
  // Only blue nodes: zone-c is no domain, zone-a and zone-b hold one pod each.
  EXPECT_EQ(feasible(incoming(true)), (Names{"a1", "b1", "c1"}));
  // Any node: zone-c is a domain without pods, so the minimum is 0.
  EXPECT_EQ(feasible(incoming(false)), (Names{"c1"}));
  EXPECT_EQ(feasible(incoming(true)), (Names{"a1", "b1", "c1"}));
  // c1 joins the blue pool: zone-c now counts for the blue pods too.
  state.upsertNode(decodeNode(blue("c1", "zone-c")).value());
  EXPECT_EQ(feasible(incoming(true)), (Names{"c1"}));
  // c1 moves to zone-a: two domains again, zone-a with one pod (w1), zone-b with one.
  state.upsertNode(decodeNode(blue("c1", "zone-a")).value());
  EXPECT_EQ(feasible(incoming(true)), (Names{"a1", "b1", "c1"}));
  EXPECT_EQ(feasible(incoming(false)), (Names{"a1", "b1", "c1"}));
  // c1 back in zone-c with a NoSchedule taint. Honouring taints, zone-c counts
  // for a pod that tolerates it and not for one that does not.
  json tainted = blue("c1", "zone-c");
  tainted["spec"]["taints"] = json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}});
  state.upsertNode(decodeNode(tainted).value());
  auto honouring = [](bool tolerates) {
    json p = pod("p", {{"app", "web"}});
    json c = spread(1, "topology.kubernetes.io/zone", "DoNotSchedule", {{"app", "web"}});
    c["nodeTaintsPolicy"] = "Honor";
    p["spec"]["topologySpreadConstraints"] = json::array({c});
    if (tolerates)
      p["spec"]["tolerations"] = json::array({{{"key", "dedicated"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
    return decodePod(p).value();
  };
  EXPECT_EQ(feasible(honouring(false)), (Names{"a1", "b1", "c1"}));
  EXPECT_EQ(feasible(honouring(true)), (Names{"c1"}));
  EXPECT_EQ(feasible(honouring(false)), (Names{"a1", "b1", "c1"}));
}

// The same for a soft constraint: whose pods PreScore counts follows the
// pod's nodeSelector and the nodes' labels as they change.
TEST_F(TopologyPluginTest, ThePodsThatCountForScoringFollowEachPodsNodeSelectorAndNodeLabelChanges) {
  auto inPool = [](const std::string& name, const std::string& zone, const std::string& pool) {
    return node(name, {{"topology.kubernetes.io/zone", zone}, {"pool", pool}});
  };
  load("PodTopologySpread", {{"nodes", {inPool("a1", "zone-a", "blue"), inPool("a2", "zone-a", "red"),
                                         inPool("b1", "zone-b", "blue")}},
                              {"pods", {pod("w1", {{"app", "web"}}, "a2"), pod("w2", {{"app", "web"}}, "a2"),
                                        pod("w3", {{"app", "web"}}, "b1")}}});
  ClusterState& state = *state_;
  auto incoming = [](bool onlyBlue) { return webPodSpreadingOverZones("ScheduleAnyway", onlyBlue); };
  // Every node is feasible (only PodTopologySpread runs); the zone with
  // fewer counted pods scores higher, ties go to the smaller name.
  auto selected = [&](const Pod& p) {
    std::string out;
    state.read([&](const ClusterView& view) {
      Decision d = engine_->place(p, view);
      if (d.selected) out = d.selected->name();
    });
    return out;
  };
  // For a blue pod only blue nodes' pods count: zone-a 0 (a2 is red), zone-b 1.
  EXPECT_EQ(selected(incoming(true)), "a1");
  // For any pod every node's: zone-a 2, zone-b 1.
  EXPECT_EQ(selected(incoming(false)), "b1");
  EXPECT_EQ(selected(incoming(true)), "a1");
  // a2 joins the blue pool: zone-a counts 2 for the blue pod too.
  state.upsertNode(decodeNode(inPool("a2", "zone-a", "blue")).value());
  EXPECT_EQ(selected(incoming(true)), "b1");
  // And leaves it again.
  state.upsertNode(decodeNode(inPool("a2", "zone-a", "red")).value());
  EXPECT_EQ(selected(incoming(true)), "a1");
  EXPECT_EQ(selected(incoming(false)), "b1");
}

// ---- PodTopologySpread: Score, and the system defaults ----

TEST_F(TopologyPluginTest, SystemDefaultsSpreadAReplicaSetsPodsAcrossZonesAndNodes) {
  json rs = {{"metadata", {{"name", "web-7d4b"}, {"namespace", "default"}}},
             {"spec", {{"selector", {{"matchLabels", {{"app", "web"}, {"pod-template-hash", "7d4b"}}}}}}}};
  auto replica = [](const std::string& name, const std::string& nodeName) {
    json p = pod(name, {{"app", "web"}, {"pod-template-hash", "7d4b"}}, nodeName);
    p["metadata"]["ownerReferences"] = json::array(
        {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web-7d4b"}, {"uid", "rs"}, {"controller", true}}});
    return p;
  };
  Result r = run("PodTopologySpread",
                 {{"nodes", {zoned("a1", "zone-a"), zoned("a2", "zone-a"), zoned("b1", "zone-b"), zoned("b2", "zone-b")}},
                  {"replicasets", {rs}},
                  {"pods", {replica("w1", "a1"), replica("w2", "a1"), replica("w3", "b1")}},
                  {"pod", replica("w4", "")}});
  // Fewest replicas: b2 (zone-b has 1, node 0) beats a2 (zone-a 2, node 0),
  // b1 (zone 1, node 1) and a1 (zone 2, node 2).
  ASSERT_NE(r.decision.selected, nullptr);
  EXPECT_EQ(r.decision.selected->name(), "b2");
  EXPECT_GT(r.score["b2"], r.score["a2"]);
  EXPECT_GT(r.score["a2"], r.score["a1"]);
  EXPECT_GT(r.score["b1"], r.score["a1"]);
}

TEST_F(TopologyPluginTest, APodNoWorkloadSelectsIsNotSpreadByTheDefaults) {
  Result r = run("PodTopologySpread", {{"nodes", {zoned("a1", "zone-a"), zoned("b1", "zone-b")}},
                                       {"pods", {pod("w1", {{"app", "web"}}, "a1")}},
                                       {"pod", pod("w2", {{"app", "web"}})}});
  EXPECT_EQ(r.score["a1"], 0);
  EXPECT_EQ(r.score["b1"], 0);
  EXPECT_FALSE(r.decision.podDependent);
}

TEST_F(TopologyPluginTest, AServiceSelectingThePodMakesTheDefaultsApply) {
  json svc = {{"metadata", {{"name", "web"}, {"namespace", "default"}}}, {"spec", {{"selector", {{"app", "web"}}}}}};
  Result r = run("PodTopologySpread", {{"nodes", {zoned("a1", "zone-a"), zoned("b1", "zone-b")}},
                                       {"services", {svc}},
                                       {"pods", {pod("w1", {{"app", "web"}}, "a1")}},
                                       {"pod", pod("w2", {{"app", "web"}})}});
  EXPECT_GT(r.score["b1"], r.score["a1"]);
  ASSERT_NE(r.decision.selected, nullptr);
  EXPECT_EQ(r.decision.selected->name(), "b1");
}

// Hundreds of nodes whose scores take a few values (normalised through a
// table of the quotients): every node's score is upstream's, computed here
// from its formula. Nodes without the zone are ignored (the pod's own
// constraints), scoring 0.
TEST_F(TopologyPluginTest, ScheduleAnywayScoresOfHundredsOfNodesFollowUpstreamsFormula) {
  json nodes = json::array();
  json pods = json::array();
  std::map<std::string, int> zoneCount;
  std::map<std::string, int> nodeCount;
  std::map<std::string, std::string> zoneOf;
  for (int i = 0; i < 300; ++i) {
    const std::string name = "n" + std::to_string(i);
    const std::string zone = "zone-" + std::to_string(i % 3);
    nodes.push_back(zoned(name, zone));
    zoneOf[name] = zone;
    const int replicas = (i % 10 == 0 ? 1 : 0) + (i % 3 == 0 && i % 7 == 0 ? 1 : 0);
    for (int k = 0; k < replicas; ++k) {
      pods.push_back(pod(name + "-w" + std::to_string(k), {{"app", "web"}}, name));
      ++zoneCount[zone];
      ++nodeCount[name];
    }
  }
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(node("bare" + std::to_string(i)));
    pods.push_back(pod("bare-w" + std::to_string(i), {{"app", "web"}}, "bare" + std::to_string(i)));
  }
  json incoming = pod("w", {{"app", "web"}});
  incoming["spec"]["topologySpreadConstraints"] = {spread(1, "topology.kubernetes.io/zone", "ScheduleAnyway", {{"app", "web"}}),
                                                   spread(2, "kubernetes.io/hostname", "ScheduleAnyway", {{"app", "web"}})};
  Result r = run("PodTopologySpread", {{"nodes", nodes}, {"pods", pods}, {"pod", incoming}});
  ASSERT_EQ(r.score.size(), 304u);
  // upstream: weights log(domains + 2) over the nodes not ignored; a node's
  // score the sum, constraint by constraint, of count * weight + maxSkew - 1,
  // rounded; then MaxNodeScore * (max + min - score) / max.
  const double zoneWeight = std::log(3.0 + 2);
  const double nodeWeight = std::log(300.0 + 2);
  std::map<std::string, int64_t> raw;
  for (const auto& [name, zone] : zoneOf) {
    double score = 0;
    score += static_cast<double>(zoneCount[zone]) * zoneWeight + 0;
    score += static_cast<double>(nodeCount[name]) * nodeWeight + 1;
    raw[name] = static_cast<int64_t>(std::round(score));
  }
  int64_t low = raw.begin()->second;
  int64_t high = 0;
  for (const auto& [name, s] : raw) {
    low = std::min(low, s);
    high = std::max(high, s);
  }
  ASSERT_LT(low, high);
  for (const auto& [name, s] : raw) EXPECT_EQ(r.score[name], 100 * (high + low - s) / high) << name;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.score["bare" + std::to_string(i)], 0);
}

// The engine takes PodTopologySpread's scores of the feasible list its
// PreScore scored at once (ScorePlugin::normalizedScoresOfFeasible): they
// equal scoreAll() then normalizeScores() over that list, and score() node
// by node then normalizeScores(), whether every node's id is its position
// or not, for the system defaults (a node without the zone skips it) and
// for the pod's own constraints (a node without the zone is ignored). Any
// other list (a copy of it, a part of it) is not answered.
struct PreScoredListCase {
  std::string name;
  bool ownConstraints;
  std::vector<std::string> removed;  // nodes that leave the view after it is filled
  bool everyOtherNode;               // the feasible list: every other node, else all
};

class PreScoredListCases : public ::testing::TestWithParam<PreScoredListCase> {};

TEST_P(PreScoredListCases, NormalisedAtOnceAsScoredThenNormalised) {
  const PreScoredListCase& c = GetParam();
  json nodes = json::array();
  json pods = json::array();
  for (int i = 0; i < 90; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes.push_back(i % 7 == 3 ? node(name) : zoned(name, "zone-" + std::to_string(i % 3)));
    const int replicas = (i % 4 == 0 ? 1 : 0) + (i % 9 == 0 ? 2 : 0);
    for (int k = 0; k < replicas; ++k) pods.push_back(pod(name + "-w" + std::to_string(k), {{"app", "web"}}, name));
  }
  json svc = {{"metadata", {{"name", "web"}, {"namespace", "default"}}}, {"spec", {{"selector", {{"app", "web"}}}}}};
  json incoming = pod("w", {{"app", "web"}});
  if (c.ownConstraints)
    incoming["spec"]["topologySpreadConstraints"] = {
        spread(1, "kubernetes.io/hostname", "ScheduleAnyway", {{"app", "web"}}),
        spread(2, "topology.kubernetes.io/zone", "ScheduleAnyway", {{"app", "web"}})};
  auto decoded = decodeSnapshot({{"nodes", nodes}, {"pods", pods}, {"services", {svc}}, {"pod", incoming}});
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  auto profile = Profile::fromJson(
      {{"plugins", {{"multiPoint", {{"enabled", {{{"name", "PodTopologySpread"}}}}, {"disabled", {{{"name", "*"}}}}}}}}});
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const PreScorePlugin& preScore = *(*profile)->preScorePlugins().at(0);
  const ScorePlugin& score = *(*profile)->scorePlugins().at(0).plugin;
  ClusterState state;
  state.update([&](MutableClusterView& v) {
    fillView(v, *decoded);
    for (const std::string& name : c.removed) v.removeNode(name);
  });
  const Pod& p = *decoded->pod;
  state.read([&](const ClusterView& view) {
    EXPECT_EQ(view.idsArePositions(), c.removed.empty());
    std::vector<const NodeInfo*> feasible;
    for (size_t i = 0; i < view.nodes().size(); i += c.everyOtherNode ? 2 : 1) feasible.push_back(&view.nodes()[i]);
    CycleState cycle;
    ASSERT_TRUE(preScore.preScore(cycle, p, feasible, view).isSuccess());
    std::vector<int64_t> atOnce(feasible.size(), -7);
    ASSERT_TRUE(score.normalizedScoresOfFeasible(cycle, p, feasible, atOnce));
    std::vector<int64_t> scoredAll(feasible.size());
    score.scoreAll(cycle, p, feasible, scoredAll);
    score.normalizeScores(cycle, p, scoredAll);
    std::vector<int64_t> oneByOne;
    for (const NodeInfo* n : feasible) oneByOne.push_back(score.score(cycle, p, *n));
    score.normalizeScores(cycle, p, oneByOne);
    EXPECT_EQ(atOnce, scoredAll);
    EXPECT_EQ(atOnce, oneByOne);
    // Scores spread over more than one value (the table of quotients is used).
    EXPECT_NE(*std::min_element(atOnce.begin(), atOnce.end()), *std::max_element(atOnce.begin(), atOnce.end()));
    // Not the list PreScore scored: no answer, nothing written.
    const std::vector<const NodeInfo*> copy = feasible;
    std::vector<int64_t> untouched(feasible.size(), -7);
    EXPECT_FALSE(score.normalizedScoresOfFeasible(cycle, p, copy, untouched));
    EXPECT_FALSE(score.normalizedScoresOfFeasible(
        cycle, p, std::span<const NodeInfo* const>(feasible.data(), feasible.size() - 1),
        std::span<int64_t>(untouched.data(), untouched.size() - 1)));
    EXPECT_EQ(untouched, std::vector<int64_t>(feasible.size(), -7));
  });
}

INSTANTIATE_TEST_SUITE_P(
    PodTopologySpread, PreScoredListCases,
    ::testing::Values(PreScoredListCase{"SystemDefaultsIdsArePositions", false, {}, false},
                      PreScoredListCase{"SystemDefaultsAfterNodesLeft", false, {"n5", "n40"}, false},
                      PreScoredListCase{"SystemDefaultsEveryOtherNode", false, {}, true},
                      PreScoredListCase{"OwnConstraintsIdsArePositions", true, {}, false},
                      PreScoredListCase{"OwnConstraintsAfterNodesLeftEveryOtherNode", true, {"n0", "n17"}, true}),
    [](const auto& info) { return info.param.name; });

TEST_F(TopologyPluginTest, PodTopologySpreadArgsAreValidated) {
  auto systemWithList = Profile::fromJson(
      {{"pluginConfig",
        {{{"name", "PodTopologySpread"},
          {"args", {{"defaultingType", "System"},
                    {"defaultConstraints", json::array({{{"maxSkew", 1}, {"topologyKey", "zone"}, {"whenUnsatisfiable", "DoNotSchedule"}}})}}}}}}});
  ASSERT_FALSE(systemWithList.ok());
  EXPECT_NE(systemWithList.error().message.find("when .defaultConstraints are not empty"), std::string::npos)
      << systemWithList.error().message;
  auto withSelector = Profile::fromJson(
      {{"pluginConfig",
        {{{"name", "PodTopologySpread"},
          {"args", {{"defaultingType", "List"},
                    {"defaultConstraints", json::array({{{"maxSkew", 0}, {"topologyKey", "zone"}, {"whenUnsatisfiable", "DoNotSchedule"},
                                                         {"labelSelector", json::object()}}})}}}}}}});
  ASSERT_FALSE(withSelector.ok());
  EXPECT_NE(withSelector.error().message.find("not in valid range (0, inf)"), std::string::npos);
  EXPECT_NE(withSelector.error().message.find("constraint must not define a selector"), std::string::npos);
}

// ---- Placing replicas one by one through the reservation book ----

TEST_F(TopologyPluginTest, ReplicasReservedOneAfterAnotherSpreadAsTheyWouldOneByOne) {
  json rs = {{"metadata", {{"name", "web-7d4b"}, {"namespace", "default"}}},
             {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}}}};
  json nodes = json::array();
  for (std::string zone : {"zone-a", "zone-b", "zone-c"})
    for (int i = 0; i < 2; ++i) nodes.push_back(zoned(zone + "-" + std::to_string(i), zone));
  auto decoded = decodeSnapshot({{"nodes", nodes}, {"replicasets", {rs}}});
  ASSERT_TRUE(decoded.ok());
  ClusterState state;
  state.update([&](MutableClusterView& v) { fillView(v, *decoded); });
  Engine engine(Profile::defaults());
  LocalReservationBook book(engine, state);
  std::map<std::string, int> perNode;
  for (int i = 0; i < 12; ++i) {
    json p = pod("web-" + std::to_string(i), {{"app", "web"}});
    p["metadata"]["ownerReferences"] = json::array(
        {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web-7d4b"}, {"uid", "rs"}, {"controller", true}}});
    Placement placed = book.placeAndReserve(decodePod(p).value(), "review-" + std::to_string(i),
                                            std::chrono::steady_clock::time_point::max());
    ASSERT_EQ(placed.outcome, Placement::Outcome::Reserved) << placed.reason;
    ++perNode[placed.node];
  }
  for (const auto& [name, count] : perNode) EXPECT_EQ(count, 2) << name;
  EXPECT_EQ(perNode.size(), 6u);
}

// Admissions that cannot count each other do not make each other decide
// again: pods of unrelated ReplicaSets in another namespace are each decided
// once while a Deployment's replicas are reserved concurrently beside them
// (their decisions depend on other pods too: the default spreading).
TEST_F(TopologyPluginTest, UnrelatedAdmissionsAreNotDecidedAgainWhileReplicasAreReserved) {
  auto replicaSet = [](const std::string& name, const std::string& ns, const std::string& app) {
    return json{{"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", {{"selector", {{"matchLabels", {{"app", app}}}}}}}};
  };
  json sets = json::array({replicaSet("web-7d4b", "team-a", "web")});
  for (int i = 0; i < 40; ++i) sets.push_back(replicaSet("api-" + std::to_string(i), "team-b", "api-" + std::to_string(i)));
  json nodes = json::array();
  for (std::string zone : {"zone-a", "zone-b", "zone-c"})
    for (int i = 0; i < 20; ++i) nodes.push_back(zoned(zone + "-" + std::to_string(i), zone));
  auto decoded = decodeSnapshot({{"nodes", nodes}, {"replicasets", sets}});
  ASSERT_TRUE(decoded.ok());
  ClusterState state;
  state.update([&](MutableClusterView& v) { fillView(v, *decoded); });
  Engine engine(Profile::defaults());
  LocalReservationBook book(engine, state);
  auto owned = [](json p, const std::string& owner) {
    p["metadata"]["ownerReferences"] = json::array(
        {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", owner}, {"uid", owner}, {"controller", true}}});
    return decodePod(p).value();
  };
  const auto forever = std::chrono::steady_clock::time_point::max();
  std::atomic<int> webDone{0};
  std::vector<std::thread> web;
  for (int t = 0; t < 2; ++t)
    web.emplace_back([&, t] {
      for (int i = 0; i < 60; ++i) {
        const std::string name = "web-" + std::to_string(t) + "-" + std::to_string(i);
        book.placeAndReserve(owned(pod(name, {{"app", "web"}}, "", "team-a"), "web-7d4b"), name, forever);
      }
      ++webDone;
    });
  std::vector<Placement> api;
  for (int i = 0; webDone < 2 || i < 40; ++i) {
    const std::string app = "api-" + std::to_string(i % 40);
    api.push_back(book.placeAndReserve(owned(pod(app + "-" + std::to_string(i), {{"app", app}}, "", "team-b"), app),
                                       "api-review-" + std::to_string(i), forever));
  }
  for (std::thread& t : web) t.join();
  int decidedAgain = 0;
  for (const Placement& p : api) {
    EXPECT_EQ(p.outcome, Placement::Outcome::Reserved) << p.reason;
    if (p.rounds != 1) ++decidedAgain;
  }
  EXPECT_EQ(decidedAgain, 0) << "of " << api.size() << " unrelated admissions";
}

}  // namespace
}  // namespace placer
