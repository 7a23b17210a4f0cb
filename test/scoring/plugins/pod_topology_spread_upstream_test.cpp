// kube-scheduler's PodTopologySpread test tables, case by case, through the
// path `placer explain` takes (test/support/upstream_table.h): the plugin
// alone at PreFilter+Filter for filtering_test.go, at PreScore+Score for
// scoring_test.go, every node's verdict and normalised score compared with
// upstream's.
//
// Source: kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread,
// filtering_test.go at e7827879dbc282e7f5103451dc63169e964b6bb7 and
// scoring_test.go at 38f68d59a73f5685774b2f1e1d1921e231cc8ab4 (the newest
// versions of the tables in the source index).
//
// Ported:
//   filtering_test.go TestPreFilterState          34 of 35 (derived, see below)
//                     TestSingleConstraint        23 of 23
//                     TestMultipleConstraints     11 of 11
//                     TestPreFilterStateAddPod    16 of 16 (derived, the added pod nominated)
//   scoring_test.go   TestPreScoreSkip             2 of 2
//                     TestPreScoreStateEmptyNodes 12 of 12 (derived)
//                     TestPodTopologySpreadScore  26 of 27
// Upstream's Filter tables give status codes only; the reasons expected here
// are the ones upstream's Filter returns with them (ErrReasonConstraintsNotMatch
// for Unschedulable, ErrReasonNodeLabelNotMatch for UnschedulableAndUnresolvable).
// Derived: TestPreFilterState and TestPreScoreStateEmptyNodes check the state
// PreFilter / PreScore compute (matching pods per domain, domains, the
// minimum; ignored nodes, topology weights). Each case here expects what
// upstream's Filter (count + self-match - minimum <= maxSkew, 0 as minimum
// below minDomains, a missing key unresolvable) or Score and NormalizeScore
// (round(sum(count * log(domains + 2) + maxSkew - 1)), 100 * (max + min - s) / max,
// ignored nodes 0) make of that state, for the case's nodes.
// Cases written for a feature gate turned off: the gates are on by default
// and placer has no off; the cases whose outcome does not depend on the gate
// are ported ("feature gate disabled with NodeAffinityPolicy", "feature gate
// disabled with NodeTaintsPolicy", "no pod is matched when LabelSelector is
// nil when feature gate disabled", and the many cases that leave upstream's
// enableNodeInclusionPolicy false without setting a policy), the two whose
// outcome changes are not: "matchLabelKeys ignored when feature gate disabled"
// (TestPreFilterState and TestPodTopologySpreadScore).
// Not ported (nothing of it applies to placer):
//   TestPreFilterStateRemovePod: RemovePod, the preemption dry run placer
//     does not have;
//   TestPreFilterDisabled: Filter without PreFilter, which the engine never does;
//   BenchmarkFilter, BenchmarkTestPodTopologySpreadScore: benchmarks.
#include <gtest/gtest.h>

#include "test/support/upstream_table.h"

namespace placer {
namespace {

using namespace test::upstream;
using Spread = PodJson::Spread;

constexpr std::string_view kPlugin = "PodTopologySpread";
const std::string kSkewReason = "node(s) didn't match pod topology spread constraints";
const std::string kLabelReason = "node(s) didn't match pod topology spread constraints (missing required label)";
const std::string DoNotSchedule = "DoNotSchedule";
const std::string ScheduleAnyway = "ScheduleAnyway";
const std::string Ignore = "Ignore";
const std::string Honor = "Honor";
const std::string kHostname = "kubernetes.io/hostname";
const std::string kZone = "topology.kubernetes.io/zone";

Verdict skewFails(std::string node) { return rejected(std::move(node), Code::Unschedulable, kSkewReason); }
Verdict labelMissing(std::string node) {
  return rejected(std::move(node), Code::UnschedulableAndUnresolvable, kLabelReason);
}

const json foo = Selector().exists("foo");
const json bar = Selector().exists("bar");

// st.MakeNode().Name(n).Label("zone", zone).Label("node", n)
NodeJson zoned(const std::string& name, const std::string& zone) {
  return NodeJson(name).label("zone", zone).label("node", name);
}
NodeJson named(const std::string& name) { return NodeJson(name).label("node", name); }
// A pod on a node with the given labels ("" values, as upstream's Label("foo", "")).
PodJson on(const std::string& name, const std::string& node, std::vector<std::string> labels) {
  PodJson p(name);
  p.node(node);
  for (const std::string& l : labels) p.label(l, "");
  return p;
}
PodJson incoming(std::vector<std::string> labels) {
  PodJson p("p");
  for (const std::string& l : labels) p.label(l, "");
  return p;
}

const json kListDefaulting = {{"defaultingType", "List"}};

std::vector<NodeJson> abxy() { return {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"), zoned("node-y", "zone2")}; }

// ---------------------------------------------------------------------------
// filtering_test.go: TestPreFilterState (derived)

std::vector<Case> preFilterState() {
  const std::string T = "TestPreFilterState";
  const std::vector<PodJson> a2b1y2 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-y1", "node-y", {"foo"}),
                                       on("p-y2", "node-y", {"foo"})};
  const std::vector<PodJson> a2b1y4 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-y1", "node-y", {"foo"}),
                                       on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"}),
                                       on("p-y4", "node-y", {"foo"})};
  const std::vector<NodeJson> aby = {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-y", "zone2")};
  // node-a, node-b {foo}, node-c {bar}; bar pods 1/2/0 (node-c's pod has no label)
  const std::vector<NodeJson> fooFooBar = {named("node-a").label("foo", ""), named("node-b").label("foo", ""),
                                           named("node-c").label("bar", "")};
  const std::vector<PodJson> bar120 = {on("p-a", "node-a", {"bar"}), on("p-b", "node-b", {"bar"}),
                                       on("p-c", "node-b", {"bar"}), on("p-d", "node-c", {})};
  const std::vector<NodeJson> plainTaintedC = {named("node-a"), named("node-b"),
                                               named("node-c").unschedulableTaint().label("bar", "")};
  auto fooA = [](const std::string& name, const std::string& node) { return PodJson(name).node(node).label("foo", "a"); };
  const std::vector<PodJson> fooAa2b1y2 = {fooA("p-a1", "node-a"), fooA("p-a2", "node-a"), fooA("p-b1", "node-b"),
                                           fooA("p-y1", "node-y"), fooA("p-y2", "node-y")};
  const json service = {{"services", json::array({{{"metadata", {{"name", "svc"}}}, {"spec", {{"selector", {{"foo", "bar"}}}}}}})}};

  std::vector<Case> cases = {
      // zone1 0, zone2 0; the pod does not match foo=bar
      {T, "clean cluster with one spreadConstraint",
       incoming({"foo"}).spread(5, "zone", DoNotSchedule, Selector().label("foo", "bar")), {}, abxy(),
       {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      // zone1 3, zone2 2, min 2
      {T, "normal case with one spreadConstraint", incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo), a2b1y2,
       abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      // a nil selector matches no pod, not even the incoming one
      {T, "normal case with null label selector", incoming({"foo"}).spread(1, "zone", DoNotSchedule, nullptr), a2b1y2,
       abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      // zone1 3, zone2 2, zone3 0, min 0
      {T, "normal case with one spreadConstraint, on a 3-zone cluster",
       incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo), a2b1y2,
       {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"), zoned("node-y", "zone2"),
        zoned("node-o", "zone3"), zoned("node-p", "zone3")},
       {skewFails("node-a"), skewFails("node-b"), skewFails("node-x"), skewFails("node-y"), fits("node-o"),
        fits("node-p")}},
      // zone1 2, zone2 1, min 1
      {T, "namespace mismatch doesn't count", incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}).ns("ns1"), on("p-b1", "node-b", {"foo"}),
        on("p-y1", "node-y", {"foo"}).ns("ns2"), on("p-y2", "node-y", {"foo"})},
       abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      // zone1 3, zone2 4, min 3; node-a 2, node-b 1, node-x 0, node-y 4, min 0
      {T, "normal case with two spreadConstraints",
       incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, foo), a2b1y4, abxy(),
       {skewFails("node-a"), skewFails("node-b"), skewFails("node-x"), skewFails("node-y")}},
      // zone1 3, zone2 4, min 3; node-a 2, node-b 1, node-y 4, min 1
      {T, "soft spreadConstraints should be bypassed",
       incoming({"foo"})
           .spread(1, "zone", ScheduleAnyway, foo)
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(1, "node", ScheduleAnyway, foo)
           .spread(1, "node", DoNotSchedule, foo),
       a2b1y4, aby, {skewFails("node-a"), fits("node-b"), skewFails("node-y")}},
      // foo: zone1 1, zone2 0, min 0; bar: node-a 0, node-b 1, node-y 0, min 0
      {T, "different labelSelectors - simple version",
       incoming({"foo", "bar"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, bar),
       {on("p-a", "node-a", {"foo"}), on("p-b", "node-b", {"bar"})}, aby,
       {skewFails("node-a"), skewFails("node-b"), fits("node-y")}},
      // foo: zone1 3, zone2 4, min 3; bar: node-a 1, node-b 0, node-y 2, min 0
      {T, "different labelSelectors - complex pods",
       incoming({"foo", "bar"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, bar),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo", "bar"}), on("p-b1", "node-b", {"foo"}),
        on("p-y1", "node-y", {"foo"}), on("p-y2", "node-y", {"foo", "bar"}), on("p-y3", "node-y", {"foo"}),
        on("p-y4", "node-y", {"foo", "bar"})},
       aby, {skewFails("node-a"), fits("node-b"), skewFails("node-y")}},
      // node-x excluded: zone1 3, zone2 4, min 3; node-a 2, node-b 1, node-y 4, min 1
      {T, "two spreadConstraints, and with podAffinity",
       incoming({"foo"})
           .nodeAffinityNotIn("node", {"node-x"})
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(1, "node", DoNotSchedule, foo),
       a2b1y4, abxy(), {skewFails("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
  };

  // Default constraints (List) in clusters without nodes: PreFilter takes the
  // Service's selector, skips, or keeps the pod's own constraints; none fails.
  const json nodeRack = json::array({{{"maxSkew", 3}, {"topologyKey", "node"}, {"whenUnsatisfiable", DoNotSchedule}},
                                     {{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", ScheduleAnyway}},
                                     {{"maxSkew", 5}, {"topologyKey", "rack"}, {"whenUnsatisfiable", DoNotSchedule}}});
  Case defaults{T, "default constraints and a service", PodJson("p").labels({{"foo", "bar"}, {"baz", "kar"}}), {}, {}, {}};
  defaults.args = {{"defaultingType", "List"}, {"defaultConstraints", nodeRack}};
  defaults.objects = service;
  cases.push_back(defaults);
  Case noMatch{T, "default constraints and a service that doesn't match", PodJson("p").label("foo", "bar"), {}, {}, {}};
  noMatch.args = {{"defaultingType", "List"},
                  {"defaultConstraints", json::array({{{"maxSkew", 3}, {"topologyKey", "node"}, {"whenUnsatisfiable", DoNotSchedule}}})}};
  noMatch.objects = {{"services", json::array({{{"metadata", {{"name", "svc"}}}, {"spec", {{"selector", {{"baz", "kep"}}}}}}})}};
  cases.push_back(noMatch);
  Case own{T, "default constraints and a service, but pod has constraints",
           PodJson("p")
               .labels({{"foo", "bar"}, {"baz", "tar"}})
               .spread(1, "zone", DoNotSchedule, Selector().label("baz", "tar"))
               .spread(2, "planet", ScheduleAnyway, Selector().label("fot", "rok")),
           {}, {}, {}};
  own.args = {{"defaultingType", "List"},
              {"defaultConstraints", json::array({{{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", DoNotSchedule}}})}};
  own.objects = service;
  cases.push_back(own);
  Case soft{T, "default soft constraints and a service", PodJson("p").label("foo", "bar"), {}, {}, {}};
  soft.args = {{"defaultingType", "List"},
               {"defaultConstraints", json::array({{{"maxSkew", 2}, {"topologyKey", "node"}, {"whenUnsatisfiable", ScheduleAnyway}}})}};
  soft.objects = service;
  cases.push_back(soft);

  const std::vector<Case> more = {
      // as "normal case with two spreadConstraints"
      {T, "TpKeyToDomainsNum is calculated when MinDomains is enabled",
       incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, foo), a2b1y4, abxy(),
       {skewFails("node-a"), skewFails("node-b"), skewFails("node-x"), skewFails("node-y")}},
      // node-c excluded by the nodeSelector: node-a 1, node-b 2, min 1 (the pod does not match bar)
      {T, "feature gate disabled with NodeAffinityPolicy",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(1, "node", DoNotSchedule, bar), bar120, fooFooBar,
       {fits("node-a"), fits("node-b"), fits("node-c")}},
      {T, "NodeAffinityPolicy honored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(1, "node", DoNotSchedule, bar), bar120, fooFooBar,
       {fits("node-a"), fits("node-b"), fits("node-c")}},
      // node-a 1, node-b 2, node-c 0, min 0
      {T, "NodeAffinityPolicy ignored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(Spread{1, "node", DoNotSchedule, bar, std::nullopt, Ignore}),
       bar120, fooFooBar, {fits("node-a"), skewFails("node-b"), fits("node-c")}},
      {T, "NodeAffinityPolicy honored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(1, "node", DoNotSchedule, bar), bar120, fooFooBar,
       {fits("node-a"), fits("node-b"), fits("node-c")}},
      {T, "NodeAffinityPolicy ignored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(Spread{1, "node", DoNotSchedule, bar, std::nullopt, Ignore}),
       bar120, fooFooBar, {fits("node-a"), skewFails("node-b"), fits("node-c")}},
      // taints ignored: node-a 1, node-b 2, node-c 0, min 0
      {T, "feature gate disabled with NodeTaintsPolicy", incoming({"foo"}).spread(1, "node", DoNotSchedule, bar),
       bar120, plainTaintedC, {fits("node-a"), skewFails("node-b"), fits("node-c")}},
      {T, "NodeTaintsPolicy ignored", incoming({"foo"}).spread(1, "node", DoNotSchedule, bar), bar120, plainTaintedC,
       {fits("node-a"), skewFails("node-b"), fits("node-c")}},
      // node-c excluded by its taint: node-a 1, node-b 2, min 1
      {T, "NodeTaintsPolicy honored",
       incoming({"foo"}).spread(Spread{1, "node", DoNotSchedule, bar, std::nullopt, "", Honor}), bar120, plainTaintedC,
       {fits("node-a"), fits("node-b"), fits("node-c")}},
      {T, "NodeTaintsPolicy honored with tolerated taints",
       incoming({"foo"})
           .toleration("node.kubernetes.io/unschedulable")
           .spread(Spread{1, "node", DoNotSchedule, bar, std::nullopt, "", Honor}),
       bar120, plainTaintedC, {fits("node-a"), skewFails("node-b"), fits("node-c")}},
      // zone: zone1 0, zone2 1, min 0; node: node-a 0, node-b 2, node-x 1, min 0
      {T, "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, Ignore}),
       {on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}), on("p-x1", "node-x", {"foo"})},
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1"), zoned("node-x", "zone2").label("foo", "")},
       {fits("node-a"), skewFails("node-b"), skewFails("node-x")}},
      {T, "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       incoming({"foo"})
           .spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, "", Honor})
           .spread(1, "node", DoNotSchedule, foo),
       {on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}), on("p-x1", "node-x", {"foo"})},
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1").unschedulableTaint(),
        zoned("node-x", "zone2").label("foo", "")},
       {fits("node-a"), skewFails("node-b"), skewFails("node-x")}},
      // zone: zone1 0, zone2 1, min 0; node: node-b 0, node-x 1, min 0
      {T, "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(1, "node", DoNotSchedule, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-x1", "node-x", {"foo"}),
        on("p-y1", "node-y", {"foo"})},
       {zoned("node-a", "zone1"), zoned("node-b", "zone1").label("foo", "").unschedulableTaint(),
        zoned("node-x", "zone2").label("foo", ""), zoned("node-y", "zone2")},
       {fits("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      // zone: zone1 2, zone2 3, min 2; node: node-x 2, node-y 1, min 1
      {T, "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, Ignore})
           .spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, "", Honor}),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-x1", "node-x", {"foo"}),
        on("p-x2", "node-x", {"foo"}), on("p-y1", "node-y", {"foo"})},
       {zoned("node-a", "zone1"), zoned("node-b", "zone1").label("foo", "").unschedulableTaint(),
        zoned("node-x", "zone2").label("foo", ""), zoned("node-y", "zone2").label("foo", "")},
       {fits("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      // "matchLabelKeys ignored when feature gate disabled": not ported (see the top).
      // foo exists and bar=a: zone1 1, zone2 1, min 1
      {T, "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       PodJson("p").labels({{"foo", ""}, {"bar", "a"}}).spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, "", "", {"bar"}}),
       {on("p-a1", "node-a", {"foo"}), PodJson("p-a2").node("node-a").labels({{"foo", ""}, {"bar", "a"}}),
        on("p-b1", "node-b", {"foo"}), PodJson("p-y1").node("node-y").labels({{"foo", ""}, {"bar", "a"}}),
        on("p-y2", "node-y", {"bar"})},
       abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      // foo=a: zone1 3, zone2 2, min 2
      {T, "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       PodJson("p").label("foo", "a").spread(Spread{1, "zone", DoNotSchedule, Selector(), std::nullopt, "", "", {"foo"}}),
       fooAa2b1y2, abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      // nil selector: no pod counts
      {T, "key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
       incoming({"foo"}).spread(Spread{1, "zone", DoNotSchedule, nullptr, std::nullopt, "", "", {"bar"}}), fooAa2b1y2,
       abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "no pod is matched when LabelSelector is nil when feature gate disabled",
       incoming({"foo"}).spread(Spread{1, "zone", DoNotSchedule, nullptr, std::nullopt, "", "", {"bar"}}), fooAa2b1y2,
       abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      // foo exists (bar is not a label of the pod): zone1 3, zone2 2, min 2
      {T, "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
       incoming({"foo"}).spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, "", "", {"bar"}}), fooAa2b1y2,
       abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      {T, "skip if not specified", incoming({"foo"}), {}, {zoned("node-a", "zone1")}, {fits("node-a")}},
  };
  cases.insert(cases.end(), more.begin(), more.end());
  for (Case& c : cases) {
    c.derived = true;
    if (c.args.is_null()) c.args = kListDefaulting;
  }
  return cases;
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestSingleConstraint

std::vector<Case> singleConstraint() {
  const std::string T = "TestSingleConstraint";
  const std::vector<PodJson> a2b1y3 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-y1", "node-y", {"foo"}),
                                       on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"})};
  const std::vector<PodJson> a2b2c1 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}),
                                       on("p-c1", "node-c", {"foo"})};
  const std::vector<NodeJson> abc = {named("node-a"), named("node-b"), named("node-c")};
  const std::vector<PodJson> ab_y = {on("p-b1", "node-a", {"foo"}), on("p-b2", "node-b", {"foo"}),
                                     on("p-y1", "node-y", {"foo"})};
  // node-a, node-b, node-x {foo}, node-y without it
  const std::vector<NodeJson> fooFooFooNone = {named("node-a").label("foo", ""), named("node-b").label("foo", ""),
                                               named("node-x").label("foo", ""), named("node-y")};
  const std::vector<NodeJson> fooFooFooTainted = {named("node-a").label("foo", ""), named("node-b").label("foo", ""),
                                                  named("node-x").label("foo", ""),
                                                  named("node-y").unschedulableTaint()};
  auto minDomains = [](int32_t maxSkew, const std::string& key, int32_t min) {
    return incoming({"foo"}).spread(Spread{maxSkew, key, DoNotSchedule, foo, min});
  };

  std::vector<Case> cases = {
      {T, "no existing pods", incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo), {}, abxy(),
       {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "no existing pods, incoming pod doesn't match itself", incoming({"foo"}).spread(1, "zone", DoNotSchedule, bar),
       {}, abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "existing pods in a different namespace do not count", incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo),
       {on("p-a1", "node-a", {"foo"}).ns("ns1"), on("p-b1", "node-a", {"foo"}).ns("ns2"), on("p-x1", "node-x", {"foo"}),
        on("p-y1", "node-y", {"foo"})},
       abxy(), {fits("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "existing pods do not match null selector", incoming({"foo"}).spread(1, "zone", DoNotSchedule, nullptr),
       {on("p-x1", "node-x", {"foo"}), on("p-y1", "node-y", {"foo"})}, abxy(),
       {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "pods spread across zones as 3/3, all nodes fit", incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo),
       a2b1y3, abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}), on("p-x1", "node-x", {"foo"}),
        on("p-y1", "node-y", {"foo"})},
       {zoned("node-a", "zone1"), named("node-b").label("zon", "zone1"), zoned("node-x", "zone2"),
        zoned("node-y", "zone2")},
       {fits("node-a"), labelMissing("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "pod cannot be scheduled as all nodes don't have label 'rack'",
       incoming({"foo"}).spread(1, "rack", DoNotSchedule, foo), {},
       {zoned("node-a", "zone1"), zoned("node-x", "zone2")}, {labelMissing("node-a"), labelMissing("node-x")}},
      {T, "pods spread across nodes as 2/1/0/3, only node-x fits", incoming({"foo"}).spread(1, "node", DoNotSchedule, foo),
       a2b1y3, abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       incoming({"foo"}).spread(2, "node", DoNotSchedule, foo), a2b1y3, abxy(),
       {skewFails("node-a"), fits("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       incoming({"bar"}).spread(1, "node", DoNotSchedule, foo), a2b1y3, abxy(),
       {skewFails("node-a"), fits("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       incoming({"foo"}).nodeAffinityIn("node", {"node-a", "node-y"}).spread(1, "node", DoNotSchedule, foo), a2b1y3,
       abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "terminating Pods should be excluded", incoming({"foo"}).spread(1, "node", DoNotSchedule, foo),
       {on("p-a", "node-a", {"foo"}).terminating(), on("p-b", "node-b", {"foo"})}, {named("node-a"), named("node-b")},
       {fits("node-a"), skewFails("node-b")}},
      {T, "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
       incoming({"foo"}).nodeAffinityNotIn("node", {"node-b"}).spread(1, "zone", DoNotSchedule, foo),
       {on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}), on("p-y1", "node-y", {"foo"})}, abxy(),
       {fits("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T,
       "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node "
       "fits",
       minDomains(2, "node", 4), a2b2c1, abc, {skewFails("node-a"), skewFails("node-b"), fits("node-c")}},
      {T,
       "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
       minDomains(2, "node", 2), a2b2c1, abc, {fits("node-a"), fits("node-b"), fits("node-c")}},
      {T,
       "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth "
       "nodes fit",
       minDomains(2, "zone", 3), ab_y, abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      {T,
       "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
       minDomains(2, "zone", 1), ab_y, abxy(), {fits("node-a"), fits("node-b"), fits("node-x"), fits("node-y")}},
      {T, "NodeAffinityPolicy honored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(1, "node", DoNotSchedule, foo), ab_y, fooFooFooNone,
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      {T, "NodeAffinityPolicy ignored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, Ignore}),
       ab_y, fooFooFooNone, {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "NodeAffinityPolicy honored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(1, "node", DoNotSchedule, foo), ab_y, fooFooFooNone,
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      // Upstream's name; the case is nodeAffinity with the policy ignored.
      {T, "NodeAffinityPolicy ignored with labelSelectors",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, Ignore}),
       ab_y, fooFooFooNone, {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "NodeTaintsPolicy honored",
       incoming({"foo"}).spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, "", Honor}), ab_y, fooFooFooTainted,
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), fits("node-y")}},
      {T, "NodeTaintsPolicy ignored", incoming({"foo"}).spread(1, "node", DoNotSchedule, foo), ab_y, fooFooFooTainted,
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
  };
  for (Case& c : cases) c.args = kListDefaulting;
  return cases;
}

// ---------------------------------------------------------------------------
// filtering_test.go: TestMultipleConstraints

std::vector<Case> multipleConstraints() {
  const std::string T = "TestMultipleConstraints";
  auto zoneAndNode = [](std::vector<std::string> labels, json zoneSelector, json nodeSelector) {
    return incoming(std::move(labels))
        .spread(1, "zone", DoNotSchedule, std::move(zoneSelector))
        .spread(1, "node", DoNotSchedule, std::move(nodeSelector));
  };
  const std::vector<PodJson> a1b1y1 = {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
                                       on("p-y1", "node-y", {"foo"})};

  std::vector<Case> cases = {
      {T, "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", zoneAndNode({"foo"}, foo, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
        on("p-y1", "node-y", {"foo"}), on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"})},
       abxy(), {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", zoneAndNode({"foo"}, foo, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
        on("p-y1", "node-y", {"foo"}), on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"}),
        on("p-y4", "node-y", {"foo"})},
       abxy(), {skewFails("node-a"), skewFails("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", zoneAndNode({"foo", "bar"}, foo, bar),
       {on("p-a1", "node-a", {"foo"}), on("p-y1", "node-y", {"bar"})}, abxy(),
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]", zoneAndNode({"foo", "bar"}, foo, bar),
       {on("p-a1", "node-a", {"foo"}), on("p-x1", "node-x", {"bar"}), on("p-y1", "node-y", {"bar"})}, abxy(),
       {skewFails("node-a"), skewFails("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]", zoneAndNode({"foo", "bar"}, foo, bar),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo", "bar"}), on("p-y1", "node-y", {"foo"}),
        on("p-y2", "node-y", {"foo", "bar"}), on("p-y3", "node-y", {"foo"})},
       abxy(), {skewFails("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
       zoneAndNode({"bar"}, foo, bar),
       {on("p-a1", "node-a", {"foo"}), on("p-x1", "node-x", {"bar"}), on("p-y1", "node-y", {"bar"})}, abxy(),
       {fits("node-a"), fits("node-b"), skewFails("node-x"), skewFails("node-y")}},
      {T, "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
       zoneAndNode({"foo"}, foo, foo), {on("p-a1", "node-a", {"foo"}), on("p-y3", "node-y", {"foo"})},
       {zoned("node-a", "zone1"), zoned("node-b", "zone1"), NodeJson("node-x").label("zone", "zone2"),
        zoned("node-y", "zone2")},
       {skewFails("node-a"), fits("node-b"), labelMissing("node-x"), skewFails("node-y")}},
      {T, "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, Ignore}),
       a1b1y1,
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1").label("foo", ""),
        zoned("node-x", "zone2").label("foo", ""), zoned("node-y", "zone2")},
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       incoming({"foo"})
           .spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, "", Honor})
           .spread(1, "node", DoNotSchedule, foo),
       a1b1y1,
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1").label("foo", ""),
        zoned("node-x", "zone2").label("foo", ""), zoned("node-y", "zone2").unschedulableTaint()},
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(1, "zone", DoNotSchedule, foo)
           .spread(1, "node", DoNotSchedule, foo),
       a1b1y1,
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1"), zoned("node-x", "zone2").label("foo", ""),
        zoned("node-y", "zone2").label("foo", "").unschedulableTaint()},
       {skewFails("node-a"), fits("node-b"), fits("node-x"), skewFails("node-y")}},
      {T, "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
       incoming({"foo"})
           .nodeSelector({{"foo", ""}})
           .spread(Spread{1, "zone", DoNotSchedule, foo, std::nullopt, "", Honor})
           .spread(Spread{1, "node", DoNotSchedule, foo, std::nullopt, Ignore}),
       a1b1y1,
       {zoned("node-a", "zone1").label("foo", ""), zoned("node-b", "zone1"), zoned("node-x", "zone2").label("foo", ""),
        zoned("node-y", "zone2").label("foo", "").unschedulableTaint()},
       {skewFails("node-a"), skewFails("node-b"), fits("node-x"), skewFails("node-y")}},
  };
  for (Case& c : cases) c.args = kListDefaulting;
  return cases;
}

class PodTopologySpreadUpstreamFilter : public testing::TestWithParam<Case> {};

TEST_P(PodTopologySpreadUpstreamFilter, EveryNodeAsUpstream) {
  check(GetParam(), kPlugin, Stage::Filter, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(PreFilterState, PodTopologySpreadUpstreamFilter, testing::ValuesIn(preFilterState()),
                         testName);
INSTANTIATE_TEST_SUITE_P(SingleConstraint, PodTopologySpreadUpstreamFilter, testing::ValuesIn(singleConstraint()),
                         testName);
INSTANTIATE_TEST_SUITE_P(MultipleConstraints, PodTopologySpreadUpstreamFilter,
                         testing::ValuesIn(multipleConstraints()), testName);

// ---------------------------------------------------------------------------
// filtering_test.go: TestPreFilterStateAddPod (derived): upstream adds the pod
// to the preemptor's PreFilter state with AddPod; here it is a pending pod
// nominated on that node (status.nominatedNodeName, the preemptor's priority),
// which the engine adds through AddPod in its first filter pass on that node
// (RunFilterPluginsWithNominatedPods). The nominee's node must pass with the
// state upstream expects after AddPod and with the state without it; the
// other nodes see only the latter.

// A pending pod nominated on a node, with the given labels.
PodJson nominee(const std::string& name, const std::string& node, std::vector<std::string> labels) {
  PodJson p(name);
  p.nominated(node);
  for (const std::string& l : labels) p.label(l, "");
  return p;
}

std::vector<Case> preFilterStateAddPod() {
  const std::string T = "TestPreFilterStateAddPod";
  const std::vector<NodeJson> ab = {zoned("node-a", "zone1"), zoned("node-b", "zone1")};
  const std::vector<NodeJson> ax = {zoned("node-a", "zone1"), zoned("node-x", "zone2")};
  const std::vector<NodeJson> abx = {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")};
  // node-a carries foo=bar (outside `NodeAffinityNotIn(foo, bar)`), node-b foo="".
  const std::vector<NodeJson> fooBarAB = {zoned("node-a", "zone1").label("foo", "bar"), zoned("node-b", "zone2").label("foo", "")};
  const std::vector<NodeJson> taintedAB = {zoned("node-a", "zone1").unschedulableTaint(), zoned("node-b", "zone2")};
  auto zonedPod = [](const std::string& name, const std::string& node, const std::string& zone, bool foo) {
    PodJson p(name);
    p.node(node).label("zone", zone);
    if (foo) p.label("foo", "");
    return p;
  };
  const std::vector<PodJson> a1b2 = {zonedPod("p-a1", "node-a", "zone1", true), zonedPod("p-b2", "node-b", "zone2", true)};
  const PodJson nodeSpread = incoming({"foo"}).spread(1, "node", DoNotSchedule, foo);
  const PodJson zoneNodeSpread = incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, foo);
  const PodJson zoneSpread = incoming({"foo"}).spread(1, "zone", DoNotSchedule, foo);
  const PodJson fooBarSpread =
      incoming({"foo", "bar"}).spread(1, "zone", DoNotSchedule, foo).spread(1, "node", DoNotSchedule, bar);
  auto with = [](std::vector<PodJson> pods, PodJson added) {
    pods.push_back(std::move(added));
    return pods;
  };
  PodJson unmatched("p-b1");
  unmatched.nominated("node-b").label("zone", "zone2");
  PodJson fooZone2("p-b1");
  fooZone2.nominated("node-b").label("foo", "").label("zone", "zone2");
  PodJson fooZone1("p-a1");
  fooZone1.nominated("node-a").label("foo", "").label("zone", "zone1");

  std::vector<Case> cases = {
      // with p-a1: node-a 1, node-b 0, min 0
      {T, "node a and b both impact current min match", nodeSpread, {nominee("p-a1", "node-a", {"foo"})}, ab,
       {skewFails("node-a"), fits("node-b")}},
      // with p-a1: node-a 1, node-b 1, min 1; without: node-b 1, min 0
      {T, "only node a impacts current min match", nodeSpread,
       {on("p-b1", "node-b", {"foo"}), nominee("p-a1", "node-a", {"foo"})}, ab, {fits("node-a"), skewFails("node-b")}},
      // p-a1 lives in ns1: node-a 0, node-b 1, min 0
      {T, "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap", nodeSpread,
       {on("p-b1", "node-b", {"foo"}), nominee("p-a1", "node-a", {"foo"}).ns("ns1")}, ab,
       {fits("node-a"), skewFails("node-b")}},
      // with p-b2: node-a 0, node-b 2, min 0
      {T, "add pod on non-critical node won't trigger re-calculation", nodeSpread,
       {on("p-b1", "node-b", {"foo"}), nominee("p-b2", "node-b", {"foo"})}, ab, {fits("node-a"), skewFails("node-b")}},
      // with p-a1: zone1 1, zone2 0; node-a 1, node-x 0
      {T, "node a and x both impact topologyKeyToMinPodsMap on zone and node", zoneNodeSpread,
       {nominee("p-a1", "node-a", {"foo"})}, ax, {skewFails("node-a"), fits("node-x")}},
      // with p-a1: zone1 1, zone2 1, node-a 1, node-x 1, min 1 each; without: zone2 1, node-x 1, min 0
      {T, "only node a impacts topologyKeyToMinPodsMap on zone and node", zoneNodeSpread,
       {on("p-x1", "node-x", {"foo"}), nominee("p-a1", "node-a", {"foo"})}, ax, {fits("node-a"), skewFails("node-x")}},
      // with p-a1: zone1 3, zone2 1; without: zone1 2, zone2 1; node-a 0, node-b 2, node-x 1
      {T, "node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
       zoneNodeSpread,
       {on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}), on("p-x1", "node-x", {"foo"}),
        nominee("p-a1", "node-a", {"foo"})},
       abx, {skewFails("node-a"), skewFails("node-b"), skewFails("node-x")}},
      // foo with p-a1: zone1 2, zone2 1; bar: node-a 0, node-b 1, node-x 2
      {T, "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone", fooBarSpread,
       {on("p-b1", "node-b", {"foo", "bar"}), on("p-x1", "node-x", {"foo", "bar"}), on("p-x2", "node-x", {"bar"}),
        nominee("p-a1", "node-a", {"foo"})},
       abx, {skewFails("node-a"), skewFails("node-b"), skewFails("node-x")}},
      // foo with p-a1: zone1 1, zone2 1; bar with p-a1: node-a 1, node-b 1, node-x 2 (min 1); without: min 0
      {T, "Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
       fooBarSpread,
       {on("p-b1", "node-b", {"bar"}), on("p-x1", "node-x", {"foo", "bar"}), on("p-x2", "node-x", {"bar"}),
        nominee("p-a1", "node-a", {"foo", "bar"})},
       abx, {fits("node-a"), skewFails("node-b"), skewFails("node-x")}},
      // node-a is outside the pod's node affinity: its domain is not counted
      // (zone2 1, min 1) and p-a1 is not added there.
      {T, "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
       incoming({"foo"}).nodeAffinityNotIn("foo", {"bar"}).spread(1, "zone", DoNotSchedule, foo),
       {zonedPod("p-a2", "node-a", "zone1", true), zonedPod("p-b1", "node-b", "zone2", true), fooZone1}, fooBarAB,
       {fits("node-a"), fits("node-b")}},
      {T, "add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
       incoming({"foo"}).nodeAffinityNotIn("foo", {"bar"}).spread(1, "zone", DoNotSchedule, foo),
       {zonedPod("p-a2", "node-a", "zone1", true), zonedPod("p-b1", "node-b", "zone2", true), fooZone1}, fooBarAB,
       {fits("node-a"), fits("node-b")}},
      // with p-b1: zone1 1, zone2 2
      {T, "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled", zoneSpread,
       with(a1b2, fooZone2), fooBarAB, {fits("node-a"), skewFails("node-b")}},
      {T, "add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled", zoneSpread,
       with(a1b2, fooZone2), fooBarAB, {fits("node-a"), skewFails("node-b")}},
      // p-b1 lacks foo: zone1 1, zone2 1
      {T, "add a label selector not matched pod when with NodeInclusionPolicy enabled", zoneSpread,
       with(a1b2, unmatched), fooBarAB, {fits("node-a"), fits("node-b")}},
      // the taint does not matter under nodeTaintsPolicy Ignore: with p-b1 zone1 1, zone2 2
      {T, "add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled", zoneSpread,
       with(a1b2, fooZone2), taintedAB, {fits("node-a"), skewFails("node-b")}},
      {T, "add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
       incoming({"foo"}).toleration("node.kubernetes.io/unschedulable").spread(1, "zone", DoNotSchedule, foo),
       with(a1b2, fooZone2), taintedAB, {fits("node-a"), skewFails("node-b")}},
  };
  for (Case& c : cases) {
    c.args = kListDefaulting;
    c.derived = true;
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(PreFilterStateAddPod, PodTopologySpreadUpstreamFilter,
                         testing::ValuesIn(preFilterStateAddPod()), testName);

// upstream's check that AddPod leaves the state PreFilter computes with the
// pod bound there: on the nominee's node, the first pass rejects as the
// decision with the nominee bound does, and the second pass is the decision
// without it.
class PodTopologySpreadNominated : public testing::TestWithParam<Case> {};
TEST_P(PodTopologySpreadNominated, CountedAsIfBoundOnItsNode) { checkNominatedAsBound(GetParam(), kPlugin); }
INSTANTIATE_TEST_SUITE_P(PreFilterStateAddPod, PodTopologySpreadNominated, testing::ValuesIn(preFilterStateAddPod()),
                         testName);

// ---------------------------------------------------------------------------
// scoring_test.go: TestPreScoreSkip (every node scores 0 after Skip)

std::vector<Case> preScoreSkip() {
  const std::string T = "TestPreScoreSkip";
  Case noSoft{T, "the pod doesn't have soft topology spread Constraints", PodJson("p", "default"), {},
              {NodeJson("node-a").label(kHostname, "node-a"), NodeJson("node-b").label(kHostname, "node-b")},
              {scored("node-a", 0), scored("node-b", 0)}, kListDefaulting};
  Case noReplicaSet{T, "default constraints and a replicaset that doesn't match",
                    PodJson("p", "default").labels({{"foo", "bar"}, {"baz", "sup"}}).owner("ReplicaSet", "rs2"),
                    {}, {NodeJson("node-a").label("planet", "mars")}, {scored("node-a", 0)}};
  noReplicaSet.args = {{"defaultingType", "List"},
                       {"defaultConstraints",
                        json::array({{{"maxSkew", 2}, {"topologyKey", "planet"}, {"whenUnsatisfiable", ScheduleAnyway}}})}};
  noReplicaSet.objects = {
      {"replicasets",
       json::array({{{"metadata", {{"name", "rs1"}, {"namespace", "default"}}}, {"spec", {{"selector", Selector().exists("tar")}}}}})}};
  return {noSoft, noReplicaSet};
}

// ---------------------------------------------------------------------------
// scoring_test.go: TestPreScoreStateEmptyNodes (derived)
//
// No pod anywhere: every count is 0, a node scores sum(maxSkew - 1) over the
// constraints whose key it has, ignored nodes (missing a key of the pod's own
// constraints) score 0, the others 100 * (max + min - s) / max (100 when max is 0).

std::vector<Case> preScoreStateEmptyNodes() {
  const std::string T = "TestPreScoreStateEmptyNodes";
  auto zh = [](const std::string& name, const std::string& zone) {
    return NodeJson(name).label("zone", zone).label(kHostname, name);
  };
  const std::vector<NodeJson> abx = {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")};
  const std::vector<NodeJson> fooFooNone = {zh("node-a", "zone1").label("foo", ""), zh("node-b", "zone1").label("foo", ""),
                                            zh("node-x", "zone2")};
  const std::vector<NodeJson> fooFooTainted = {zh("node-a", "zone1").label("foo", ""),
                                               zh("node-b", "zone1").label("foo", ""),
                                               zh("node-x", "zone2").unschedulableTaint()};
  const std::vector<Verdict> all100 = {scored("node-a", 100), scored("node-b", 100), scored("node-x", 100)};
  const json rs1 = {{"replicasets", json::array({{{"metadata", {{"name", "rs1"}, {"namespace", "default"}}},
                                                  {"spec", {{"selector", foo}}}}})}};

  std::vector<Case> cases = {
      {T, "normal case",
       incoming({"foo"}).spread(1, "zone", ScheduleAnyway, foo).spread(1, kHostname, ScheduleAnyway, foo), {}, abx,
       all100, kListDefaulting},
      {T, "null selector", incoming({"foo"}).spread(1, "zone", ScheduleAnyway, nullptr), {}, abx, all100,
       kListDefaulting},
      // node-x ignored
      {T, "node-x doesn't have label zone",
       incoming({"foo"}).spread(1, "zone", ScheduleAnyway, foo).spread(1, kHostname, ScheduleAnyway, bar), {},
       {zh("node-a", "zone1"), zh("node-b", "zone1"), NodeJson("node-x").label(kHostname, "node-x")},
       {scored("node-a", 100), scored("node-b", 100), scored("node-x", 0)}, kListDefaulting},
  };
  // hostname maxSkew 3 (+2), zone maxSkew 5 (+4) where the node has a zone:
  // node-a, node-b 6, node-c, node-d 2 -> 100 * (6 + 2 - 6) / 6 = 33 and 100.
  Case system{T, "system default constraints and a replicaset",
              PodJson("p", "default").labels({{"foo", "tar"}, {"baz", "sup"}}).owner("ReplicaSet", "rs1"), {},
              {NodeJson("node-a").label(kHostname, "node-a").label(kZone, "mars"),
               NodeJson("node-b").label(kHostname, "node-b").label(kZone, "mars"),
               NodeJson("node-c").label(kHostname, "node-c"), NodeJson("node-d").label(kHostname, "node-d")},
              {scored("node-a", 33), scored("node-b", 33), scored("node-c", 100), scored("node-d", 100)},
              {{"defaultingType", "System"}}};
  system.objects = rs1;
  cases.push_back(system);
  // hostname maxSkew 1, planet maxSkew 2 (rack is DoNotSchedule): one node
  Case list{T, "default constraints and a replicaset",
            PodJson("p", "default").labels({{"foo", "tar"}, {"baz", "sup"}}).owner("ReplicaSet", "rs1"), {},
            {NodeJson("node-a").label("rack", "rack1").label(kHostname, "node-a").label("planet", "mars")},
            {scored("node-a", 100)}};
  list.args = {{"defaultingType", "List"},
               {"defaultConstraints",
                json::array({{{"maxSkew", 1}, {"topologyKey", kHostname}, {"whenUnsatisfiable", ScheduleAnyway}},
                             {{"maxSkew", 2}, {"topologyKey", "rack"}, {"whenUnsatisfiable", DoNotSchedule}},
                             {{"maxSkew", 2}, {"topologyKey", "planet"}, {"whenUnsatisfiable", ScheduleAnyway}}})}};
  list.objects = rs1;
  cases.push_back(list);
  Case own{T, "default constraints and a replicaset, but pod has constraints",
           PodJson("p", "default")
               .labels({{"foo", "bar"}, {"baz", "sup"}})
               .owner("ReplicaSet", "rs1")
               .spread(1, "zone", DoNotSchedule, bar)
               .spread(2, "planet", ScheduleAnyway, Selector().label("baz", "sup")),
           {}, {NodeJson("node-a").label("planet", "mars").label("galaxy", "andromeda")}, {scored("node-a", 100)}};
  own.args = {{"defaultingType", "List"},
              {"defaultConstraints",
               json::array({{{"maxSkew", 2}, {"topologyKey", "galaxy"}, {"whenUnsatisfiable", ScheduleAnyway}}})}};
  own.objects = rs1;
  cases.push_back(own);

  const std::vector<Case> policies = {
      {T, "NodeAffinityPolicy honored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(1, "zone", ScheduleAnyway, bar), {}, fooFooNone, all100,
       kListDefaulting},
      {T, "NodeAffinityPolicy ignored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(Spread{1, "zone", ScheduleAnyway, bar, std::nullopt, Ignore}),
       {}, fooFooNone, all100, kListDefaulting},
      {T, "NodeAffinityPolicy honored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(1, "zone", ScheduleAnyway, bar), {}, fooFooNone, all100,
       kListDefaulting},
      {T, "NodeAffinityPolicy ignored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(Spread{1, "zone", ScheduleAnyway, bar, std::nullopt, Ignore}),
       {}, fooFooNone, all100, kListDefaulting},
      {T, "NodeTaintsPolicy honored",
       incoming({"foo"}).spread(Spread{1, "zone", ScheduleAnyway, bar, std::nullopt, "", Honor}), {}, fooFooTainted,
       all100, kListDefaulting},
      {T, "NodeTaintsPolicy ignored", incoming({"foo"}).spread(1, "zone", ScheduleAnyway, bar), {}, fooFooTainted,
       all100, kListDefaulting},
  };
  cases.insert(cases.end(), policies.begin(), policies.end());
  for (Case& c : cases) c.derived = true;
  return cases;
}

// ---------------------------------------------------------------------------
// scoring_test.go: TestPodTopologySpreadScore (args: System defaulting)

std::vector<Case> podTopologySpreadScore() {
  const std::string T = "TestPodTopologySpreadScore";
  auto host = [](const std::string& name) { return NodeJson(name).label(kHostname, name); };
  auto zh = [](const std::string& name, const std::string& zone) {
    return NodeJson(name).label("zone", zone).label(kHostname, name);
  };
  auto byHost = [](int32_t maxSkew, json selector) {
    return incoming({"foo"}).spread(maxSkew, kHostname, ScheduleAnyway, std::move(selector));
  };
  const std::vector<PodJson> a2b1d3 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-d1", "node-d", {"foo"}),
                                       on("p-d2", "node-d", {"foo"}), on("p-d3", "node-d", {"foo"})};
  const std::vector<PodJson> a4b3c2d1 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                         on("p-a3", "node-a", {"foo"}), on("p-a4", "node-a", {"foo"}),
                                         on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}),
                                         on("p-b3", "node-b", {"foo"}), on("p-c1", "node-c", {"foo"}),
                                         on("p-c2", "node-c", {"foo"}), on("p-d1", "node-d", {"foo"})};
  const std::vector<PodJson> a4b2x1y3 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                         on("p-a3", "node-a", {"foo"}), on("p-a4", "node-a", {"foo"}),
                                         on("p-b1", "node-b", {"foo"}), on("p-b2", "node-b", {"foo"}),
                                         on("p-x1", "node-x", {"foo"}), on("p-y1", "node-y", {"foo"}),
                                         on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"})};
  const std::vector<NodeJson> abcd = {host("node-a"), host("node-b"), host("node-c"), host("node-d")};
  const std::vector<PodJson> a1ab1y1y2 = {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo", "bar"}),
                                          on("p-y1", "node-y", {"foo"}), on("p-y2", "node-y", {"bar"})};
  // node-a, node-b {foo}, node-c without it; pods 2/1/1
  const std::vector<NodeJson> fooFooNone = {named("node-a").label("foo", ""), named("node-b").label("foo", ""),
                                            named("node-c")};
  const std::vector<PodJson> a2b1c1 = {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}),
                                       on("p-b1", "node-b", {"foo"}), on("p-c1", "node-c", {"foo"})};
  const std::vector<NodeJson> abTaintedC = {named("node-a"), named("node-b"), named("node-c").unschedulableTaint()};
  const std::vector<NodeJson> zz = {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"),
                                    zh("node-d", "zone2")};

  Case onlyOne{T, "one constraint on node, only one node is candidate", byHost(1, foo),
               {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"})},
               {host("node-a")}, {scored("node-a", 100)}};
  onlyOne.failedNodes = {host("node-b")};
  Case threeOfFour{T, "one constraint on node, 3 out of 4 nodes are candidates", byHost(1, foo), a4b2x1y3,
                   {host("node-a"), host("node-b"), host("node-x")},
                   {scored("node-a", 33), scored("node-b", 83), scored("node-x", 100)}};
  threeOfFour.failedNodes = {host("node-y")};
  Case noKey{T, "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
             byHost(1, foo), a4b2x1y3, {host("node-a"), NodeJson("node-b").label("n", "node-b"), host("node-x")},
             {scored("node-a", 16), scored("node-b", 0), scored("node-x", 100)}};
  noKey.failedNodes = {host("node-y")};
  Case zone{T, "one constraint on zone, 3 out of 4 nodes are candidates",
            incoming({"foo"}).spread(1, "zone", ScheduleAnyway, foo), a4b2x1y3,
            {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")},
            {scored("node-a", 75), scored("node-b", 75), scored("node-x", 100)}};
  zone.failedNodes = {zh("node-y", "zone2")};
  Case twoOfFour{T, "two Constraints on zone and node, 2 out of 4 nodes are candidates",
                 incoming({"foo"}).spread(1, "zone", ScheduleAnyway, foo).spread(1, kHostname, ScheduleAnyway, foo),
                 {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
                  on("p-x1", "node-x", {"foo"}), on("p-x2", "node-x", {"foo"}), on("p-y1", "node-y", {"foo"}),
                  on("p-y2", "node-y", {"foo"}), on("p-y3", "node-y", {"foo"}), on("p-y4", "node-y", {"foo"})},
                 {zh("node-a", "zone1"), zh("node-x", "zone2")}, {scored("node-a", 100), scored("node-x", 63)}};
  twoOfFour.failedNodes = {zh("node-b", "zone1"), zh("node-y", "zone2")};
  auto zoneFooHostBar = [] {
    return incoming({"foo", "bar"}).spread(1, "zone", ScheduleAnyway, foo).spread(1, kHostname, ScheduleAnyway, bar);
  };
  Case differentThree{T,
                      "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
                      zoneFooHostBar(), a1ab1y1y2,
                      {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")},
                      {scored("node-a", 50), scored("node-b", 25), scored("node-x", 100)}};
  differentThree.failedNodes = {zh("node-y", "zone2")};
  Case service{T, "system defaulting, nodes don't have zone, pods match service", incoming({"foo"}), a4b3c2d1, abcd,
               {scored("node-a", 44), scored("node-b", 66), scored("node-c", 77), scored("node-d", 100)}};
  service.objects = {{"services", json::array({{{"metadata", {{"name", "svc"}}}, {"spec", {{"selector", {{"foo", ""}}}}}}})}};

  std::vector<Case> cases = {
      {T, "one constraint on node, no existing pods", byHost(1, foo), {}, {host("node-a"), host("node-b")},
       {scored("node-a", 100), scored("node-b", 100)}},
      onlyOne,
      {T, "one constraint on node, all nodes have the same number of matching pods", byHost(1, foo),
       {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"})}, {host("node-a"), host("node-b")},
       {scored("node-a", 100), scored("node-b", 100)}},
      {T, "one constraint on node, all 4 nodes are candidates", byHost(1, foo), a2b1d3, abcd,
       {scored("node-a", 20), scored("node-b", 60), scored("node-c", 100), scored("node-d", 0)}},
      {T, "one constraint on node, null selector", byHost(1, nullptr), a2b1d3, abcd,
       {scored("node-a", 100), scored("node-b", 100), scored("node-c", 100), scored("node-d", 100)}},
      {T, "one constraint on node, all 4 nodes are candidates, maxSkew=2", byHost(2, foo), a2b1d3, abcd,
       {scored("node-a", 33), scored("node-b", 66), scored("node-c", 100), scored("node-d", 16)}},
      {T, "one constraint on node, all 4 nodes are candidates, maxSkew=3", byHost(3, foo), a4b3c2d1, abcd,
       {scored("node-a", 44), scored("node-b", 66), scored("node-c", 77), scored("node-d", 100)}},
      service,
      threeOfFour,
      noKey,
      zone,
      twoOfFour,
      {T, "two Constraints on zone and node, with different labelSelectors", zoneFooHostBar(), a1ab1y1y2,
       {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")},
       {scored("node-a", 60), scored("node-b", 20), scored("node-x", 100), scored("node-y", 60)}},
      {T, "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods", zoneFooHostBar(),
       {on("p-b1", "node-b", {"bar"}), on("p-x1", "node-x", {"foo"}), on("p-y1", "node-y", {"foo", "bar"})},
       {zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")},
       {scored("node-a", 100), scored("node-b", 60), scored("node-x", 40), scored("node-y", 0)}},
      differentThree,
      {T, "existing pods in a different namespace do not count", byHost(1, foo),
       {on("p-a1", "node-a", {"foo"}).ns("ns1"), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
        on("p-b2", "node-b", {"foo"})},
       {host("node-a"), host("node-b")}, {scored("node-a", 100), scored("node-b", 33)}},
      {T, "terminating Pods should be excluded", byHost(1, foo),
       {on("p-a", "node-a", {"foo"}).terminating(), on("p-b", "node-b", {"foo"})}, {host("node-a"), host("node-b")},
       {scored("node-a", 100), scored("node-b", 0)}},
      {T, "minDomains has no effect when ScheduleAnyway", incoming({"foo"}).spread(Spread{2, "node", ScheduleAnyway, foo, 10}),
       {on("p-a1", "node-a", {"foo"}), on("p-a2", "node-a", {"foo"}), on("p-b1", "node-b", {"foo"}),
        on("p-b2", "node-b", {"foo"}), on("p-c1", "node-c", {"foo"})},
       {named("node-a"), named("node-b"), named("node-c")},
       {scored("node-a", 75), scored("node-b", 75), scored("node-c", 100)}},
      {T, "NodeAffinityPolicy honoed with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(1, "node", ScheduleAnyway, foo), a2b1c1, fooFooNone,
       {scored("node-a", 0), scored("node-b", 33), scored("node-c", 100)}},
      {T, "NodeAffinityPolicy ignored with labelSelectors",
       incoming({"foo"}).nodeSelector({{"foo", ""}}).spread(Spread{1, "node", ScheduleAnyway, foo, std::nullopt, Ignore}),
       a2b1c1, fooFooNone, {scored("node-a", 66), scored("node-b", 100), scored("node-c", 100)}},
      {T, "NodeAffinityPolicy honoed with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(1, "node", ScheduleAnyway, foo), a2b1c1, fooFooNone,
       {scored("node-a", 0), scored("node-b", 33), scored("node-c", 100)}},
      {T, "NodeAffinityPolicy ignored with nodeAffinity",
       incoming({"foo"}).nodeAffinityIn("foo", {""}).spread(Spread{1, "node", ScheduleAnyway, foo, std::nullopt, Ignore}),
       a2b1c1, fooFooNone, {scored("node-a", 66), scored("node-b", 100), scored("node-c", 100)}},
      {T, "NodeTaintsPolicy honored",
       incoming({"foo"}).spread(Spread{1, "node", ScheduleAnyway, foo, std::nullopt, "", Honor}), a2b1c1, abTaintedC,
       {scored("node-a", 0), scored("node-b", 33), scored("node-c", 100)}},
      {T, "NodeTaintsPolicy ignored", incoming({"foo"}).spread(1, "node", ScheduleAnyway, foo), a2b1c1, abTaintedC,
       {scored("node-a", 66), scored("node-b", 100), scored("node-c", 100)}},
      // "matchLabelKeys ignored when feature gate disabled": not ported (see the top).
      {T, "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       incoming({"foo", "bar"})
           .spread(Spread{1, "zone", ScheduleAnyway, Selector(), std::nullopt, "", "", {"foo"}})
           .spread(Spread{1, kHostname, ScheduleAnyway, Selector(), std::nullopt, "", "", {"bar"}}),
       {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo", "bar"}), on("p-y1", "node-c", {"foo"}),
        on("p-y2", "node-c", {"bar"})},
       zz, {scored("node-a", 60), scored("node-b", 20), scored("node-c", 60), scored("node-d", 100)}},
      {T, "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       incoming({"foo", "bar", "baz"})
           .spread(1, "zone", ScheduleAnyway, foo)
           .spread(Spread{1, kHostname, ScheduleAnyway, bar, std::nullopt, "", "", {"baz"}}),
       {on("p-a1", "node-a", {"foo"}), on("p-b1", "node-b", {"foo", "bar", "baz"}), on("p-c1", "node-c", {"foo"}),
        on("p-c2", "node-c", {"bar"}), on("p-d3", "node-c", {"bar", "baz"})},
       zz, {scored("node-a", 60), scored("node-b", 20), scored("node-c", 60), scored("node-d", 100)}},
  };
  for (Case& c : cases) c.args = {{"defaultingType", "System"}};
  return cases;
}

class PodTopologySpreadUpstreamScore : public testing::TestWithParam<Case> {};

TEST_P(PodTopologySpreadUpstreamScore, EveryNodeAsUpstream) {
  check(GetParam(), kPlugin, Stage::Score, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(PreScoreSkip, PodTopologySpreadUpstreamScore, testing::ValuesIn(preScoreSkip()), testName);
INSTANTIATE_TEST_SUITE_P(PreScoreStateEmptyNodes, PodTopologySpreadUpstreamScore,
                         testing::ValuesIn(preScoreStateEmptyNodes()), testName);
INSTANTIATE_TEST_SUITE_P(PodTopologySpreadScore, PodTopologySpreadUpstreamScore,
                         testing::ValuesIn(podTopologySpreadScore()), testName);

}  // namespace
}  // namespace placer
