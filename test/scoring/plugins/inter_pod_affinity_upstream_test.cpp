// kube-scheduler's InterPodAffinity test tables, case by case, through the
// path `placer explain` takes (test/support/upstream_table.h): the plugin
// alone at PreFilter+Filter for filtering_test.go, at PreScore+Score for
// scoring_test.go, every node's verdict and normalised score compared with
// upstream's.
//
// Source: kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity,
// filtering_test.go at 072825f9a367e9ca0f73f91830945f1b7f46e0d9 and
// scoring_test.go at 8a4d98ac2f6dfd69fc5649b7bb23de0add56be56 (the newest
// versions of the tables in the source index).
//
// Ported:
//   filtering_test.go TestRequiredAffinitySingleNode           26 of 26
//                     TestRequiredAffinityMultipleNodes        18 of 18
//                     TestGetTPMapMatchingIncomingAffinityAntiAffinity
//                                                               8 of 8 (derived, see below)
//                     TestPreFilterStateAddRemovePod            4 of 4 (derived, the added pod nominated)
//   scoring_test.go   TestPreferredAffinity                    26 of 26
//                     TestPreferredAffinityWithHardPodAffinitySymmetricWeight
//                                                               5 of 5
// Derived: TestGetTPMapMatchingIncomingAffinityAntiAffinity checks the counts
// PreFilter takes (pods matching the incoming pod's affinity / anti-affinity
// per topology pair); each case here expects the verdict upstream's Filter
// gives its only node with those counts.
// Not ported (nothing of it applies to placer):
//   TestPreFilterStateAddRemovePod's RemovePod half: the preemption dry run
//     placer does not have;
//   TestPreFilterStateClone: copying the cycle state, an internal;
//   TestPreFilterDisabled: Filter without PreFilter, which the engine never does.
// Upstream's cases leave most namespaces empty; so do these ("" is a
// namespace like any other for term matching).
#include <gtest/gtest.h>

#include "test/support/upstream_table.h"

namespace placer {
namespace {

using namespace test::upstream;

constexpr std::string_view kPlugin = "InterPodAffinity";
const std::string kAffinityReason = "node(s) didn't match pod affinity rules";
const std::string kAntiAffinityReason = "node(s) didn't match pod anti-affinity rules";
const std::string kExistingReason = "node(s) didn't satisfy existing pods anti-affinity rules";

Verdict affinityFails(std::string node) {
  return rejected(std::move(node), Code::UnschedulableAndUnresolvable, kAffinityReason);
}
Verdict antiAffinityFails(std::string node) {
  return rejected(std::move(node), Code::Unschedulable, kAntiAffinityReason);
}
Verdict existingAntiAffinityFails(std::string node) {
  return rejected(std::move(node), Code::Unschedulable, kExistingReason);
}

// scoring_test.go's `namespaces`, which filtering_test.go's single-node table shares.
json teamNamespaces() {
  auto ns = [](const std::string& name, const std::string& team) {
    return json{{"metadata", {{"name", name}, {"labels", {{"team", team}}}}}};
  };
  return {{"namespaces", json::array({ns("subteam1.team1", "team1"), ns("subteam2.team1", "team1"),
                                      ns("subteam1.team2", "team2"), ns("subteam2.team2", "team2")})}};
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestRequiredAffinitySingleNode

std::vector<Case> requiredAffinitySingleNode() {
  const KeyValues podLabel = {{"service", "securityscan"}};
  const KeyValues podLabel2 = {{"security", "S1"}};
  const NodeJson node1 = NodeJson("node1").labels({{"region", "r1"}, {"zone", "z11"}});
  const PodJson pod = PodJson().labels(podLabel).node("node1");
  const std::vector<std::string> securityscan = {"securityscan", "value2"};
  const std::string T = "TestRequiredAffinitySingleNode";

  std::vector<Case> cases = {
      {T, "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
       PodJson(), {}, {node1}, {fits("node1")}},
      {T,
       "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
       "the existing pod",
       PodJson().labels(podLabel2).requiredAffinity(inTerm("service", "region", securityscan)), {pod}, {node1},
       {fits("node1")}},
      {T,
       "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
       "labelSelector that matches the existing pod",
       PodJson().labels(podLabel2).requiredAffinity(notInTerm("service", "region", {"securityscan3", "value3"})), {pod},
       {node1}, {fits("node1")}},
      {T, "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
       PodJson().labels(podLabel2).requiredAffinity(
           Term(Selector().in("service", securityscan), "").namespaces({"DiffNameSpace"})),
       {PodJson().ns("ns").label("service", "securityscan").node("node1")}, {node1}, {affinityFails("node1")}},
      {T, "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
       PodJson().labels(podLabel).requiredAffinity(inTerm("service", "", {"antivirusscan", "value2"})), {pod}, {node1},
       {affinityFails("node1")}},
      {T,
       "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
       PodJson()
           .labels(podLabel2)
           .addRequiredAffinity(Term(Selector().exists("service").doesNotExist("wrongkey"), "region"))
           .addRequiredAffinity(Term(Selector().in("service", {"securityscan"}).notIn("service", {"WrongValue"}), "region")),
       {pod}, {node1}, {fits("node1")}},
      {T,
       "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
       "because one of the matchExpression item don't match.",
       PodJson()
           .labels(podLabel2)
           .addRequiredAffinity(Term(Selector().exists("service").doesNotExist("wrongkey"), "region"))
           .addRequiredAffinity(
               Term(Selector().in("service", {"securityscan2"}).notIn("service", {"WrongValue"}), "region")),
       {pod}, {node1}, {affinityFails("node1")}},
      {T, "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
       PodJson()
           .labels(podLabel2)
           .requiredAffinity(inTerm("service", "region", securityscan))
           .requiredAntiAffinity(inTerm("service", "node", {"antivirusscan", "value2"})),
       {pod}, {node1}, {fits("node1")}},
      {T, "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
       PodJson()
           .labels(podLabel2)
           .requiredAffinity(inTerm("service", "region", securityscan))
           .requiredAntiAffinity(inTerm("service", "node", {"antivirusscan", "value2"})),
       {PodJson().node("node1").labels(podLabel).requiredAntiAffinity(inTerm("service", "node", {"antivirusscan", "value2"}))},
       {node1}, {fits("node1")}},
      {T, "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
       PodJson()
           .labels(podLabel2)
           .requiredAffinity(inTerm("service", "region", securityscan))
           .requiredAntiAffinity(inTerm("service", "zone", securityscan)),
       {pod}, {node1}, {antiAffinityFails("node1")}},
      {T, "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
       PodJson()
           .labels(podLabel)
           .requiredAffinity(inTerm("service", "region", securityscan))
           .requiredAntiAffinity(inTerm("service", "node", {"antivirusscan", "value2"})),
       {PodJson().labels(podLabel).node("node1").requiredAntiAffinity(inTerm("service", "zone", securityscan))}, {node1},
       {existingAntiAffinityFails("node1")}},
      {T, "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
       PodJson().labels(podLabel).requiredAffinity(notInTerm("service", "region", securityscan)),
       {PodJson().label("service", "securityscan").node("node2")}, {node1}, {affinityFails("node1")}},
      {T,
       "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
       "satisfy PodAntiAffinity symmetry with the existing pod",
       PodJson().labels(podLabel),
       {PodJson().node("node1").labels(podLabel).requiredAntiAffinity(inTerm("service", "zone", securityscan))}, {node1},
       {existingAntiAffinityFails("node1")}},
      {T,
       "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
       "PodAntiAffinity symmetry with the existing pod",
       PodJson().labels(podLabel),
       {PodJson().node("node1").labels(podLabel).requiredAntiAffinity(notInTerm("service", "zone", securityscan))},
       {node1}, {fits("node1")}},
      {T, "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
       PodJson()
           .labels(podLabel)
           .addRequiredAntiAffinity(existsTerm("service", "region"))
           .addRequiredAntiAffinity(existsTerm("security", "region")),
       {PodJson().node("node1").labels(podLabel2).requiredAntiAffinity(existsTerm("security", "zone"))}, {node1},
       {antiAffinityFails("node1")}},
      {T, "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
       PodJson()
           .labels(podLabel)
           .addRequiredAntiAffinity(existsTerm("service", "zone"))
           .addRequiredAntiAffinity(existsTerm("security", "zone")),
       {PodJson().node("node1").labels(podLabel2).requiredAntiAffinity(existsTerm("security", "zone"))}, {node1},
       {antiAffinityFails("node1")}},
      {T, "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
       PodJson().labels(podLabel2).requiredAntiAffinity(existsTerm("security", "zone")),
       {PodJson()
            .node("node1")
            .labels(podLabel)
            .addRequiredAntiAffinity(existsTerm("service", "zone"))
            .addRequiredAntiAffinity(existsTerm("security", "zone"))},
       {node1}, {existingAntiAffinityFails("node1")}},
      {T, "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
       PodJson()
           .labels({{"abc", ""}, {"xyz", ""}})
           .addRequiredAntiAffinity(existsTerm("abc", "zone"))
           .addRequiredAntiAffinity(existsTerm("def", "zone")),
       {PodJson()
            .node("node1")
            .labels({{"def", ""}, {"xyz", ""}})
            .addRequiredAntiAffinity(existsTerm("abc", "zone"))
            .addRequiredAntiAffinity(existsTerm("def", "zone"))},
       {node1}, {antiAffinityFails("node1")}},
      {T, "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
       PodJson()
           .labels({{"def", ""}, {"xyz", ""}})
           .addRequiredAntiAffinity(existsTerm("abc", "zone"))
           .addRequiredAntiAffinity(existsTerm("def", "zone")),
       {PodJson()
            .node("node1")
            .labels({{"abc", ""}, {"xyz", ""}})
            .addRequiredAntiAffinity(existsTerm("abc", "zone"))
            .addRequiredAntiAffinity(existsTerm("def", "zone"))},
       {node1}, {antiAffinityFails("node1")}},
  };

  // PreFilter rejects the pod for every node with the parse error.
  const std::string badValue =
      "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must "
      "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  cases.push_back({T, "PodAffinity fails PreFilter with an invalid affinity label syntax",
                   PodJson()
                       .labels(podLabel)
                       .addRequiredAffinity(inTerm("service", "region", {"{{.bad-value.}}"}))
                       .addRequiredAffinity(inTerm("service", "node", {"antivirusscan", "value2"})),
                   {}, {node1}, {rejected("node1", Code::UnschedulableAndUnresolvable, badValue)}});
  cases.push_back({T, "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
                   PodJson()
                       .labels(podLabel)
                       .addRequiredAffinity(inTerm("service", "region", {"foo"}))
                       .addRequiredAffinity(inTerm("service", "node", {"{{.bad-value.}}"})),
                   {}, {node1}, {rejected("node1", Code::UnschedulableAndUnresolvable, badValue)}});

  const json team1 = Selector().in("team", {"team1"});
  const std::vector<Case> namespaceSelectorCases = {
      {T, "affinity with NamespaceSelector",
       PodJson().labels(podLabel2).requiredAffinity(Term(Selector().in("service", securityscan), "region").namespaceSelector(team1)),
       {PodJson().ns("subteam1.team1").labels(podLabel).node("node1")}, {node1}, {fits("node1")}},
      {T, "affinity with non-matching NamespaceSelector",
       PodJson().labels(podLabel2).requiredAffinity(Term(Selector().in("service", securityscan), "region").namespaceSelector(team1)),
       {PodJson().ns("subteam1.team2").labels(podLabel).node("node1")}, {node1}, {affinityFails("node1")}},
      {T, "anti-affinity with matching NamespaceSelector",
       PodJson("", "subteam1.team1")
           .labels(podLabel2)
           .requiredAntiAffinity(Term(Selector().in("service", securityscan), "zone").namespaceSelector(team1)),
       {PodJson().ns("subteam2.team1").labels(podLabel).node("node1")}, {node1}, {antiAffinityFails("node1")}},
      {T, "anti-affinity with matching all NamespaceSelector",
       PodJson("", "subteam1.team1")
           .labels(podLabel2)
           .requiredAntiAffinity(Term(Selector().in("service", securityscan), "zone").namespaceSelector(json::object())),
       {PodJson().ns("subteam2.team1").labels(podLabel).node("node1")}, {node1}, {antiAffinityFails("node1")}},
      {T, "anti-affinity with non-matching NamespaceSelector",
       PodJson("", "subteam1.team1")
           .labels(podLabel2)
           .requiredAntiAffinity(Term(Selector().in("service", securityscan), "zone").namespaceSelector(team1)),
       {PodJson().ns("subteam1.team2").labels(podLabel).node("node1")}, {node1}, {fits("node1")}},
  };
  cases.insert(cases.end(), namespaceSelectorCases.begin(), namespaceSelectorCases.end());
  for (Case& c : cases) c.objects = teamNamespaces();
  return cases;
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestRequiredAffinityMultipleNodes

std::vector<Case> requiredAffinityMultipleNodes() {
  const KeyValues labelRgChina = {{"region", "China"}};
  const KeyValues labelRgChinaAzAz1 = {{"region", "China"}, {"az", "az1"}};
  const KeyValues labelRgIndia = {{"region", "India"}};
  auto rzh = [](const std::string& name, const std::string& zone) {
    return NodeJson(name).labels({{"region", "r1"}, {"zone", zone}, {"hostname", name}});
  };
  const std::string T = "TestRequiredAffinityMultipleNodes";

  std::vector<Case> cases = {
      {T,
       "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
       "an existing pod that matches the affinity rules",
       PodJson().requiredAffinity(inTerm("foo", "region", {"bar"})),
       {PodJson("p1").node("node1").label("foo", "bar")},
       {NodeJson("node1").labels(labelRgChina), NodeJson("node2").labels(labelRgChinaAzAz1),
        NodeJson("node3").labels(labelRgIndia)},
       {fits("node1"), fits("node2"), affinityFails("node3")}},
      {T,
       "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
       "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
       "matches the rule anywhere.",
       PodJson()
           .labels({{"foo", "bar"}, {"service", "securityscan"}})
           .addRequiredAffinity(inTerm("foo", "zone", {"bar"}))
           .addRequiredAffinity(inTerm("service", "zone", {"securityscan"})),
       {PodJson("p1").node("nodeA").label("foo", "bar")},
       {NodeJson("nodeA").labels({{"zone", "az1"}, {"hostname", "h1"}}),
        NodeJson("nodeB").labels({{"zone", "az2"}, {"hostname", "h2"}})},
       {fits("nodeA"), fits("nodeB")}},
      {T, "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
       PodJson()
           .labels({{"foo", "bar"}, {"service", "securityscan"}})
           .addRequiredAffinity(inTerm("foo", "zone", {"bar"}))
           .addRequiredAffinity(inTerm("service", "zone", {"securityscan"})),
       {PodJson("p1").node("nodeA").label("foo", "bar")},
       {NodeJson("nodeA").labels({{"zoneLabel", "az1"}, {"hostname", "h1"}}),
        NodeJson("nodeB").labels({{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       {affinityFails("nodeA"), affinityFails("nodeB")}},
      {T,
       "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
       PodJson().requiredAntiAffinity(inTerm("foo", "region", {"abc"})), {PodJson().node("nodeA").label("foo", "abc")},
       {NodeJson("nodeA").labels({{"region", "r1"}, {"hostname", "nodeA"}}),
        NodeJson("nodeB").labels({{"region", "r1"}, {"hostname", "nodeB"}})},
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB")}},
      {T, "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
       PodJson()
           .addRequiredAntiAffinity(inTerm("foo", "region", {"abc"}))
           .addRequiredAntiAffinity(inTerm("service", "zone", {"securityscan"})),
       {PodJson().node("nodeA").labels({{"foo", "abc"}, {"service", "securityscan"}})},
       {NodeJson("nodeA").labels({{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeJson("nodeB").labels({{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB")}},
      {T,
       "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
       PodJson().requiredAntiAffinity(inTerm("foo", "region", {"abc"})), {PodJson().node("nodeA").label("foo", "abc")},
       {NodeJson("nodeA").labels(labelRgChina), NodeJson("nodeB").labels(labelRgChinaAzAz1),
        NodeJson("nodeC").labels(labelRgIndia)},
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB"), fits("nodeC")}},
      {T,
       "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
       "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
       "existing pod that match the inter pod affinity rule but in different namespace)",
       PodJson("", "NS1").label("foo", "123").requiredAntiAffinity(inTerm("foo", "region", {"bar"})),
       {PodJson().node("nodeA").ns("NS1").label("foo", "bar"),
        PodJson().node("nodeC").ns("NS2").requiredAntiAffinity(inTerm("foo", "region", {"123"}))},
       {NodeJson("nodeA").labels(labelRgChina), NodeJson("nodeB").labels(labelRgChinaAzAz1),
        NodeJson("nodeC").labels(labelRgIndia)},
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB"), fits("nodeC")}},
      {T,
       "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the "
       "term is firstly checked, and then topologyKey of the term is also checked",
       PodJson().label("foo", ""),
       {PodJson().node("nodeA").requiredAntiAffinity(existsTerm("foo", "invalid-node-label"))},
       {NodeJson("nodeA").labels({{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeJson("nodeB").labels({{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})},
       {fits("nodeA"), fits("nodeB")}},
      {T, "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
       PodJson().node("nodeA").requiredAntiAffinity(existsTerm("foo", "invalid-node-label")),
       {PodJson().node("nodeA").label("foo", "")},
       {NodeJson("nodeA").labels({{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        NodeJson("nodeB").labels({{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeB"}})},
       {fits("nodeA"), fits("nodeB")}},
      {T,
       "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
       "terms on all nodes",
       PodJson().label("foo", "").label("bar", ""),
       {PodJson().node("nodeA").requiredAntiAffinity(existsTerm("foo", "zone")),
        PodJson().node("nodeA").requiredAntiAffinity(existsTerm("bar", "region"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       {existingAntiAffinityFails("nodeA"), existingAntiAffinityFails("nodeB")}},
      {T,
       "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
       "anti-affinity rule of existingPod",
       PodJson().addRequiredAntiAffinity(existsTerm("foo", "zone")).addRequiredAntiAffinity(existsTerm("bar", "region")),
       {PodJson().node("nodeA").label("foo", ""), PodJson().node("nodeB").label("bar", "")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")}, {antiAffinityFails("nodeA"), antiAffinityFails("nodeB")}},
      {T,
       "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when one term has invalid topologyKey",
       PodJson().label("foo", "").label("bar", ""),
       {PodJson()
            .node("nodeA")
            .addRequiredAntiAffinity(existsTerm("foo", "invalid-node-label"))
            .addRequiredAntiAffinity(existsTerm("bar", "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")}, {existingAntiAffinityFails("nodeA"), fits("nodeB")}},
      {T,
       "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when one term has invalid topologyKey",
       PodJson()
           .addRequiredAntiAffinity(existsTerm("foo", "invalid-node-label"))
           .addRequiredAntiAffinity(existsTerm("bar", "zone")),
       {PodJson("podA").node("nodeA").labels({{"foo", ""}, {"bar", ""}})}, {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       {antiAffinityFails("nodeA"), fits("nodeB")}},
      {T,
       "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when all terms have valid topologyKey",
       PodJson().label("foo", "").label("bar", ""),
       {PodJson()
            .node("nodeA")
            .addRequiredAntiAffinity(existsTerm("foo", "region"))
            .addRequiredAntiAffinity(existsTerm("bar", "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       {existingAntiAffinityFails("nodeA"), existingAntiAffinityFails("nodeB")}},
      {T,
       "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
       "term match - case when all terms have valid topologyKey",
       PodJson().addRequiredAntiAffinity(existsTerm("foo", "region")).addRequiredAntiAffinity(existsTerm("bar", "zone")),
       {PodJson().node("nodeA").labels({{"foo", ""}, {"bar", ""}})}, {rzh("nodeA", "z1"), rzh("nodeB", "z2")},
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB")}},
      {T,
       "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
       "incoming pod, so incoming pod can only be scheduled to nodeC",
       PodJson().label("foo", "").label("bar", ""),
       {PodJson()
            .node("nodeA")
            .addRequiredAntiAffinity(existsTerm("foo", "zone"))
            .addRequiredAntiAffinity(existsTerm("labelA", "zone")),
        PodJson()
            .node("nodeB")
            .addRequiredAntiAffinity(existsTerm("bar", "zone"))
            .addRequiredAntiAffinity(existsTerm("labelB", "zone"))},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2"), rzh("nodeC", "z3")},
       {existingAntiAffinityFails("nodeA"), existingAntiAffinityFails("nodeB"), fits("nodeC")}},
      {T,
       "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
       "match",
       PodJson().addRequiredAffinity(existsTerm("foo", "region")).addRequiredAffinity(existsTerm("bar", "zone")),
       {PodJson("pod1").labels({{"foo", ""}, {"bar", ""}}).node("nodeA")}, {rzh("nodeA", "z1"), rzh("nodeB", "z1")},
       {fits("nodeA"), fits("nodeB")}},
      {T,
       "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
       "match, and the match logic should be satisfied on the same pod",
       PodJson().addRequiredAffinity(existsTerm("foo", "region")).addRequiredAffinity(existsTerm("bar", "zone")),
       {PodJson("pod1").node("nodeA").label("foo", ""), PodJson("pod2").node("nodeB").label("bar", "")},
       {rzh("nodeA", "z1"), rzh("nodeB", "z2")}, {affinityFails("nodeA"), affinityFails("nodeB")}},
  };
  for (Case& c : cases) c.objects = {{"namespaces", json::array({{{"metadata", {{"name", "NS1"}}}}})}};
  return cases;
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity (derived)
//
// One node, nodeA {hostname: nodeA}. Upstream expects the counts
// (affinity, anti-affinity) per topology pair; Filter then decides: a term
// without matching pods fails affinity unless nothing matches anywhere and
// the pod matches its own terms (these unlabelled pods never do); a matching
// pod in the node's domain fails anti-affinity.

std::vector<Case> tpMapMatchingIncomingAffinityAntiAffinity() {
  auto normal = [](std::vector<std::string> labels) {
    PodJson p("normal");
    p.node("nodeA");
    for (const std::string& l : labels) p.label(l, "");
    return p;
  };
  const NodeJson nodeA = NodeJson("nodeA").label("hostname", "nodeA");
  const std::string T = "TestGetTPMapMatchingIncomingAffinityAntiAffinity";
  std::vector<Case> cases = {
      // counts {} / {}
      {T, "nil test", PodJson("aaa-normal"), {}, {nodeA}, {fits("nodeA")}},
      // counts {} / {}
      {T, "incoming pod without affinity/anti-affinity causes a no-op", PodJson("aaa-normal"), {normal({"aaa"})},
       {nodeA}, {fits("nodeA")}},
      // counts {} / {}: no pod for the affinity term, and the pod does not match its own term
      {T, "no pod has label that violates incoming pod's affinity and anti-affinity",
       PodJson("aaa-anti").requiredAffinity(existsTerm("aaa", "hostname")).requiredAntiAffinity(existsTerm("aaa", "hostname")),
       {normal({"bbb"})}, {nodeA}, {affinityFails("nodeA")}},
      // counts {hostname/nodeA: 1} / {hostname/nodeA: 1}
      {T, "existing pod matches incoming pod's affinity and anti-affinity - single term case",
       PodJson("affi-antiaffi")
           .requiredAffinity(existsTerm("aaa", "hostname"))
           .requiredAntiAffinity(existsTerm("aaa", "hostname")),
       {normal({"aaa"})}, {nodeA}, {antiAffinityFails("nodeA")}},
      // counts {hostname/nodeA: 2} / {hostname/nodeA: 1}
      {T, "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
       PodJson("affi-antiaffi")
           .addRequiredAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAffinity(existsTerm("bbb", "hostname"))
           .requiredAntiAffinity(existsTerm("aaa", "hostname")),
       {normal({"aaa", "bbb"})}, {nodeA}, {antiAffinityFails("nodeA")}},
      // counts {} / {hostname/nodeA: 1}: affinity decides first
      {T, "existing pod not match incoming pod's affinity but matches anti-affinity",
       PodJson("affi-antiaffi")
           .addRequiredAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAffinity(existsTerm("bbb", "hostname"))
           .addRequiredAntiAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAntiAffinity(existsTerm("bbb", "hostname")),
       {normal({"aaa"})}, {nodeA}, {affinityFails("nodeA")}},
      // counts {} / {hostname/nodeA: 1}
      {T, "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
       PodJson("anaffi-antiaffiti")
           .addRequiredAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAffinity(existsTerm("ccc", "hostname"))
           .addRequiredAntiAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAntiAffinity(existsTerm("ccc", "hostname")),
       {normal({"aaa", "bbb"})}, {nodeA}, {affinityFails("nodeA")}},
      // counts {} / {hostname/nodeA: 1}
      {T, "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
       PodJson("affi-antiaffi")
           .addRequiredAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAffinity(existsTerm("bbb", "hostname"))
           .addRequiredAntiAffinity(existsTerm("aaa", "hostname"))
           .addRequiredAntiAffinity(existsTerm("bbb", "hostname")),
       {normal({"bbb"})}, {nodeA}, {affinityFails("nodeA")}},
  };
  for (Case& c : cases) c.derived = true;
  return cases;
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestPreFilterStateAddRemovePod (derived): upstream adds
// the pod to the pending pod's PreFilter state with AddPod; here it is a
// pending pod nominated on that node (status.nominatedNodeName, the pending
// pod's priority), which the engine adds through AddPod in its first filter
// pass on that node (RunFilterPluginsWithNominatedPods). Upstream checks the
// counts after AddPod; each case here expects the verdicts Filter gives on
// them on the nominee's node (which must also pass without the nominee), and
// without the nominee on the other nodes.

std::vector<Case> preFilterStateAddRemovePod() {
  const std::string T = "TestPreFilterStateAddRemovePod";
  const std::vector<NodeJson> nodes = {NodeJson("nodeA").labels({{"region", "r1"}, {"zone", "z11"}}),
                                       NodeJson("nodeB").labels({{"region", "r1"}, {"zone", "z12"}}),
                                       NodeJson("nodeC").labels({{"region", "r2"}, {"zone", "z21"}})};
  const KeyValues selector1 = {{"foo", "bar"}};
  const json fooBar = inTerm("foo", "region", {"bar"});
  const json fooBarBuzz = inTerm("foo", "region", {"bar", "buzz"});
  const json notSecurity = notInTerm("service", "zone", {"bar", "security", "test"});
  const json antiAffinityFooBar = Affinity().requiredAnti(fooBar);
  const json antiAffinityComplex = Affinity().requiredAnti(fooBarBuzz).requiredAnti(notSecurity);
  const json affinityComplex = Affinity().required(fooBarBuzz).required(notSecurity);
  const PodJson p1 = PodJson("p1").labels(selector1).node("nodeA");
  auto added = [&](const std::string& node, const json& affinity) {
    return PodJson("addedPod").labels(selector1).affinity(affinity).nominated(node);
  };

  std::vector<Case> cases = {
      // no term anywhere: counts stay empty (PreFilter skips), every node fits
      {T, "no affinity exist", PodJson("pending").labels(selector1),
       {p1, PodJson("p2").node("nodeC"), PodJson("addedPod").labels(selector1).nominated("nodeB")}, nodes,
       {fits("nodeA"), fits("nodeB"), fits("nodeC")}},
      // anti-affinity counts with addedPod {region r1: 2}; existing pods'
      // {region r1: 1 (addedPod), region r2: 1 (p2)}
      {T, "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
       PodJson("pending").labels(selector1).affinity(antiAffinityFooBar),
       {p1, PodJson("p2").node("nodeC").affinity(antiAffinityFooBar), added("nodeB", antiAffinityFooBar)}, nodes,
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB"), existingAntiAffinityFails("nodeC")}},
      // anti-affinity counts with addedPod {region r1: 2, zone z11: 2, zone z21: 1}
      {T, "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
       PodJson("pending").labels(selector1).affinity(antiAffinityComplex),
       {p1, PodJson("p2").node("nodeC").affinity(antiAffinityFooBar), added("nodeA", antiAffinityComplex)}, nodes,
       {antiAffinityFails("nodeA"), antiAffinityFails("nodeB"), antiAffinityFails("nodeC")}},
      // affinity counts with addedPod {region r1: 2, zone z11: 2}; addedPod's
      // anti-affinity terms match the pending pod in region r1 and zone z11:
      // nodeA, which fits without it, does not with it.
      {T, "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
       PodJson("pending").labels(selector1).affinity(affinityComplex),
       {p1, PodJson("p2").node("nodeC").affinity(antiAffinityFooBar).affinity(affinityComplex),
        added("nodeA", antiAffinityComplex)},
       nodes, {existingAntiAffinityFails("nodeA"), affinityFails("nodeB"), affinityFails("nodeC")}},
  };
  for (Case& c : cases) c.derived = true;
  return cases;
}

class InterPodAffinityUpstreamFilter : public testing::TestWithParam<Case> {};

TEST_P(InterPodAffinityUpstreamFilter, EveryNodeAsUpstream) {
  check(GetParam(), kPlugin, Stage::Filter, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(RequiredAffinitySingleNode, InterPodAffinityUpstreamFilter,
                         testing::ValuesIn(requiredAffinitySingleNode()), testName);
INSTANTIATE_TEST_SUITE_P(RequiredAffinityMultipleNodes, InterPodAffinityUpstreamFilter,
                         testing::ValuesIn(requiredAffinityMultipleNodes()), testName);
INSTANTIATE_TEST_SUITE_P(GetTPMapMatchingIncomingAffinityAntiAffinity, InterPodAffinityUpstreamFilter,
                         testing::ValuesIn(tpMapMatchingIncomingAffinityAntiAffinity()), testName);
INSTANTIATE_TEST_SUITE_P(PreFilterStateAddRemovePod, InterPodAffinityUpstreamFilter,
                         testing::ValuesIn(preFilterStateAddRemovePod()), testName);

// upstream's check that AddPod leaves the state PreFilter computes with the
// pod bound there, through the engine's two filter passes.
class InterPodAffinityNominated : public testing::TestWithParam<Case> {};
TEST_P(InterPodAffinityNominated, CountedAsIfBoundOnItsNode) { checkNominatedAsBound(GetParam(), kPlugin); }
INSTANTIATE_TEST_SUITE_P(PreFilterStateAddRemovePod, InterPodAffinityNominated,
                         testing::ValuesIn(preFilterStateAddRemovePod()), testName);

// ---------------------------------------------------------------------------
// scoring_test.go: TestPreferredAffinity

std::vector<Case> preferredAffinity() {
  const KeyValues labelRgChina = {{"region", "China"}};
  const KeyValues labelRgIndia = {{"region", "India"}};
  const KeyValues labelAzAz1 = {{"az", "az1"}};
  const KeyValues labelAzAz2 = {{"az", "az2"}};
  const KeyValues labelRgChinaAzAz1 = {{"region", "China"}, {"az", "az1"}};
  const KeyValues s1 = {{"security", "S1"}};
  const KeyValues s2 = {{"security", "S2"}};

  const json stayWithS1InRegion = Affinity().preferred(5, inTerm("security", "region", {"S1"}));
  const json stayWithS2InRegion = Affinity().preferred(6, inTerm("security", "region", {"S2"}));
  const json affinity3 = Affinity()
                             .preferred(8, Term(Selector().notIn("security", {"S1"}).in("security", {"S2"}), "region"))
                             .preferred(2, Term(Selector().exists("security").doesNotExist("wrongkey"), "region"));
  const json hardAffinity = Affinity()
                                .required(inTerm("security", "region", {"S1", "value2"}))
                                .required(Term(Selector().exists("security").doesNotExist("wrongkey"), "region"));
  const json awayFromS1InAz = Affinity().preferredAnti(5, inTerm("security", "az", {"S1"}));
  const json awayFromS2InAz = Affinity().preferredAnti(5, inTerm("security", "az", {"S2"}));
  const json stayWithS1InRegionAwayFromS2InAz =
      Affinity().preferred(8, inTerm("security", "region", {"S1"})).preferredAnti(5, inTerm("security", "az", {"S2"}));
  const json team1 = Selector().in("team", {"team1"});
  const json affinityNamespaceSelector = Affinity().preferred(
      5, inTerm("security", "region", {"S1"}).namespaces({"subteam2.team2"}).namespaceSelector(team1));
  const json antiAffinityNamespaceSelector = Affinity().preferredAnti(
      5, inTerm("security", "region", {"S1"}).namespaces({"subteam2.team2"}).namespaceSelector(team1));
  const json invalidAffinityLabels = Affinity().preferred(8, inTerm("security", "region", {"{{.bad-value.}}"}));
  const json invalidAntiAffinityLabels = Affinity().preferredAnti(5, inTerm("security", "az", {"{{.bad-value.}}"}));

  auto node = [](const std::string& name, const KeyValues& labels) { return NodeJson(name).labels(labels); };
  auto on = [](const std::string& node, const KeyValues& labels, const std::string& ns = "") {
    return PodJson("", ns).node(node).labels(labels);
  };
  const std::vector<NodeJson> chinaIndiaAz1 = {node("node1", labelRgChina), node("node2", labelRgIndia),
                                               node("node3", labelAzAz1)};
  const std::string T = "TestPreferredAffinity";

  std::vector<Case> cases = {
      {T, "all nodes are same priority as Affinity is nil", PodJson().labels(s1), {}, chinaIndiaAz1,
       {scored("node1", 0), scored("node2", 0), scored("node3", 0)}},
      {T,
       "Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't "
       "match either pods in nodes or in topology key",
       PodJson().affinity(stayWithS1InRegion).labels(s1),
       {on("node1", s1), on("node2", s2), on("node3", s1)}, chinaIndiaAz1,
       {scored("node1", 100), scored("node2", 0), scored("node3", 0)}},
      {T,
       "All the nodes that have the same topology key & label value with one of them has an existing pod that match "
       "the affinity rules, have the same score",
       PodJson().affinity(stayWithS1InRegion), {on("node1", s1)},
       {node("node1", labelRgChina), node("node2", labelRgChinaAzAz1), node("node3", labelRgIndia)},
       {scored("node1", 100), scored("node2", 100), scored("node3", 0)}},
      {T,
       "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
       "matches will get high score",
       PodJson().affinity(stayWithS2InRegion).labels(s1),
       {on("node1", s2), on("node1", s2), on("node2", s2), on("node3", s2), on("node4", s2), on("node5", s2)},
       {node("node1", labelRgChina), node("node2", labelRgIndia), node("node3", labelRgChina),
        node("node4", labelRgChina), node("node5", labelRgIndia)},
       {scored("node1", 100), scored("node2", 0), scored("node3", 100), scored("node4", 100), scored("node5", 0)}},
      {T,
       "Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
       "failures ",
       PodJson().affinity(affinity3).labels(s1), {on("node1", s1), on("node2", s2), on("node3", s1)}, chinaIndiaAz1,
       {scored("node1", 20), scored("node2", 100), scored("node3", 0)}},
      {T,
       "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
       PodJson().labels(s2),
       {on("node1", s1).affinity(stayWithS1InRegion), on("node2", s2).affinity(stayWithS2InRegion)}, chinaIndiaAz1,
       {scored("node1", 0), scored("node2", 100), scored("node3", 0)}},
      {T, "Affinity symmetry with namespace selector", PodJson("", "subteam1.team1").labels(s1),
       {on("node1", s1).affinity(affinityNamespaceSelector), on("node2", s2).affinity(stayWithS2InRegion)},
       chinaIndiaAz1, {scored("node1", 100), scored("node2", 0), scored("node3", 0)}},
      {T, "AntiAffinity symmetry with namespace selector", PodJson("", "subteam1.team1").labels(s1),
       {on("node1", s1).affinity(antiAffinityNamespaceSelector), on("node2", s2).affinity(stayWithS2InRegion)},
       chinaIndiaAz1, {scored("node1", 0), scored("node2", 100), scored("node3", 100)}},
      {T,
       "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
       PodJson().labels(s1), {on("node1", s1).affinity(hardAffinity), on("node2", s2).affinity(hardAffinity)},
       chinaIndiaAz1, {scored("node1", 100), scored("node2", 100), scored("node3", 0)}},
      {T, "Anti Affinity: pod that does not match existing pods in node will get high score ",
       PodJson().affinity(awayFromS1InAz).labels(s1), {on("node1", s1), on("node2", s2)},
       {node("node1", labelAzAz1), node("node2", labelRgChina)}, {scored("node1", 0), scored("node2", 100)}},
      {T,
       "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
       "to others ",
       PodJson().affinity(awayFromS1InAz).labels(s1), {on("node1", s1), on("node2", s1)},
       {node("node1", labelAzAz1), node("node2", labelRgChina)}, {scored("node1", 0), scored("node2", 100)}},
      {T,
       "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
       "will get high score",
       PodJson().affinity(awayFromS1InAz).labels(s1), {on("node1", s1), on("node1", s1), on("node2", s2)},
       {node("node1", labelAzAz1), node("node2", labelRgIndia)}, {scored("node1", 0), scored("node2", 100)}},
      {T, "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
       PodJson().labels(s2), {on("node1", s1).affinity(awayFromS2InAz), on("node2", s2).affinity(awayFromS1InAz)},
       {node("node1", labelAzAz1), node("node2", labelAzAz2)}, {scored("node1", 0), scored("node2", 100)}},
      {T,
       "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
       "affinity & anti affinity",
       PodJson().affinity(stayWithS1InRegionAwayFromS2InAz).labels(s1), {on("node1", s1), on("node2", s1)},
       {node("node1", labelRgChina), node("node2", labelAzAz1)}, {scored("node1", 100), scored("node2", 0)}},
      {T,
       "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
       "have the same labels",
       PodJson().affinity(stayWithS1InRegionAwayFromS2InAz).labels(s1),
       {on("node1", s1), on("node1", s1), on("node2", s1), on("node3", s1), on("node3", s1), on("node4", s1),
        on("node5", s1)},
       {node("node1", labelRgChinaAzAz1), node("node2", labelRgIndia), node("node3", labelRgChina),
        node("node4", labelRgChina), node("node5", labelRgIndia)},
       {scored("node1", 100), scored("node2", 0), scored("node3", 100), scored("node4", 100), scored("node5", 0)}},
      {T,
       "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
       "both pod affinity & anti affinity & symmetry",
       PodJson().affinity(stayWithS1InRegionAwayFromS2InAz).labels(s1),
       {on("node1", s1), on("node2", s2), on("node3", {}).affinity(stayWithS1InRegionAwayFromS2InAz),
        on("node4", {}).affinity(awayFromS1InAz)},
       {node("node1", labelRgChina), node("node2", labelAzAz1), node("node3", labelRgIndia), node("node4", labelAzAz2)},
       {scored("node1", 100), scored("node2", 0), scored("node3", 100), scored("node4", 0)}},
      {T, "Avoid panic when partial nodes in a topology don't have pods with affinity", PodJson().labels(s1),
       {on("node1", s1), on("node2", {}).affinity(stayWithS1InRegionAwayFromS2InAz)},
       {node("node1", labelRgChina), node("node2", labelRgChina)}, {scored("node1", 0), scored("node2", 0)}},
  };
  Case invalidAffinity{T, "invalid Affinity fails PreScore", PodJson().affinity(invalidAffinityLabels), {},
                       {node("node1", labelRgChina), node("node2", labelRgChina)}};
  invalidAffinity.wantError = "Invalid value: \"{{.bad-value.}}\"";
  cases.push_back(invalidAffinity);
  Case invalidAntiAffinity{T, "invalid AntiAffinity fails PreScore", PodJson().affinity(invalidAntiAffinityLabels), {},
                           {node("node1", labelRgChina), node("node2", labelRgChina)}};
  invalidAntiAffinity.wantError = "Invalid value: \"{{.bad-value.}}\"";
  cases.push_back(invalidAntiAffinity);

  const std::vector<NodeJson> chinaIndia = {node("node1", labelRgChina), node("node2", labelRgIndia)};
  const std::vector<PodJson> team1Pods = {on("node1", s1, "subteam1.team1"), on("node1", s1, "subteam1.team1"),
                                          on("node1", s1, "subteam1.team2"), on("node2", s1, "subteam2.team1")};
  const std::vector<PodJson> team1AndNamespacesPods = {on("node1", s1, "subteam1.team1"),
                                                       on("node1", s1, "subteam1.team1"),
                                                       on("node1", s1, "subteam2.team2"),
                                                       on("node2", s1, "subteam2.team1")};
  const std::vector<Case> namespaceCases = {
      {T, "Affinity with pods matching NamespaceSelector",
       PodJson("", "subteam1.team1").affinity(affinityNamespaceSelector).labels(s1), team1Pods, chinaIndia,
       {scored("node1", 100), scored("node2", 0)}},
      {T, "Affinity with pods matching both NamespaceSelector and Namespaces fields",
       PodJson("", "subteam1.team1").affinity(affinityNamespaceSelector).labels(s1), team1AndNamespacesPods, chinaIndia,
       {scored("node1", 100), scored("node2", 0)}},
      // Upstream names the next two as the two before, for anti-affinity.
      {T, "Affinity with pods matching NamespaceSelector",
       PodJson("", "subteam1.team1").affinity(antiAffinityNamespaceSelector).labels(s1), team1Pods, chinaIndia,
       {scored("node1", 0), scored("node2", 100)}},
      {T, "Affinity with pods matching both NamespaceSelector and Namespaces fields",
       PodJson("", "subteam1.team1").affinity(antiAffinityNamespaceSelector).labels(s1), team1AndNamespacesPods,
       chinaIndia, {scored("node1", 0), scored("node2", 100)}},
  };
  cases.insert(cases.end(), namespaceCases.begin(), namespaceCases.end());

  Case ignore{T, "Ignore preferred terms of existing pods", PodJson().labels(s2),
              {on("node1", s1).affinity(stayWithS1InRegionAwayFromS2InAz), on("node2", s2).affinity(stayWithS2InRegion)},
              chinaIndia, {scored("node1", 0), scored("node2", 0)}};
  ignore.args = {{"hardPodAffinityWeight", 1}, {"ignorePreferredTermsOfExistingPods", true}};
  cases.push_back(ignore);
  cases.push_back({T, "Do not ignore preferred terms of existing pods", PodJson().labels(s2),
                   {on("node1", s1).affinity(stayWithS1InRegionAwayFromS2InAz),
                    on("node2", s2).affinity(stayWithS2InRegion)},
                   chinaIndia, {scored("node1", 0), scored("node2", 100)}});
  cases.push_back({T, "No nodes to score", PodJson().labels(s2), {}, {}, {}});

  for (Case& c : cases) {
    c.objects = teamNamespaces();
    if (c.args.is_null()) c.args = {{"hardPodAffinityWeight", 1}, {"ignorePreferredTermsOfExistingPods", false}};
  }
  return cases;
}

// ---------------------------------------------------------------------------
// scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight

std::vector<Case> hardPodAffinitySymmetricWeight() {
  const json hardPodAffinity = Affinity().required(inTerm("service", "region", {"S1"})
                                                       .namespaces({"", "subteam2.team2"})
                                                       .namespaceSelector(Selector().in("team", {"team1"})));
  const std::vector<PodJson> pods = {PodJson().node("node1").affinity(hardPodAffinity),
                                     PodJson().node("node2").affinity(hardPodAffinity)};
  const std::vector<NodeJson> nodes = {NodeJson("node1").label("region", "China"),
                                       NodeJson("node2").label("region", "India"), NodeJson("node3").label("az", "az1")};
  const std::vector<Verdict> attracted = {scored("node1", 100), scored("node2", 100), scored("node3", 0)};
  const std::vector<Verdict> skipped = {scored("node1", 0), scored("node2", 0), scored("node3", 0)};
  const std::string T = "TestPreferredAffinityWithHardPodAffinitySymmetricWeight";
  auto weight = [](int w) { return json{{"hardPodAffinityWeight", w}}; };

  std::vector<Case> cases = {
      {T, "with default weight", PodJson().label("service", "S1"), pods, nodes, attracted, weight(1)},
      {T, "with zero weight", PodJson().label("service", "S1"), pods, nodes, skipped, weight(0)},
      {T, "with no matching namespace", PodJson("", "subteam1.team2").label("service", "S1"), pods, nodes, skipped,
       weight(1)},
      {T, "with matching NamespaceSelector", PodJson("", "subteam1.team1").label("service", "S1"), pods, nodes,
       attracted, weight(1)},
      {T, "with matching Namespaces", PodJson("", "subteam2.team2").label("service", "S1"), pods, nodes, attracted,
       weight(1)},
  };
  for (Case& c : cases) c.objects = teamNamespaces();
  return cases;
}

class InterPodAffinityUpstreamScore : public testing::TestWithParam<Case> {};

TEST_P(InterPodAffinityUpstreamScore, EveryNodeAsUpstream) {
  check(GetParam(), kPlugin, Stage::Score, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(PreferredAffinity, InterPodAffinityUpstreamScore, testing::ValuesIn(preferredAffinity()),
                         testName);
INSTANTIATE_TEST_SUITE_P(PreferredAffinityWithHardPodAffinitySymmetricWeight, InterPodAffinityUpstreamScore,
                         testing::ValuesIn(hardPodAffinitySymmetricWeight()), testName);

}  // namespace
}  // namespace placer
