// Nominated pods: a pending pod that kube-scheduler's preemption made room
// for (status.nominatedNodeName) counts on that node for incoming pods of
// lower or equal priority, as kube-scheduler's RunFilterPluginsWithNominatedPods
// counts it, and stops counting once bound, deleted or no longer nominated.
#include <functional>

#include <gtest/gtest.h>

#include "scoring/engine.h"
#include "scoring/placement.h"
#include "test/support/builders.h"
#include "test/support/upstream_table.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;

constexpr int64_t kGi = 1024LL * 1024 * 1024;

Pod nominated(std::string name, std::string node, int32_t priority, int64_t milliCpu) {
  Pod pod = PodBuilder(std::move(name), "prod").requests(milliCpu, kGi).obj();
  pod.nominatedNodeName = std::move(node);
  pod.priority = priority;
  return pod;
}

Pod incoming(int32_t priority, int64_t milliCpu, std::string uid = "") {
  Pod pod = PodBuilder("incoming", "batch").requests(milliCpu, kGi).obj();
  pod.uid = std::move(uid);
  pod.priority = priority;
  return pod;
}

// Two nodes of 4 cpu; "full" runs 3 cpu of bound pods, "roomy" runs nothing.
void twoNodes(MutableClusterView& view) {
  view.upsertNode(NodeBuilder("full").allocatable(4000, 16 * kGi).obj());
  view.upsertNode(NodeBuilder("roomy").allocatable(4000, 16 * kGi).obj());
  view.upsertPod(PodBuilder("bound", "prod").nodeName("full").requests(3000, kGi).obj());
}

struct Case {
  std::string name;
  std::vector<Pod> nominatedPods;
  Pod pod;
  bool fitsFull;  // whether "full" stays feasible for the incoming pod
  std::string reason;  // its rejection on "full" when it does not
};

std::vector<Case> cases() {
  return {
      {"NoNominatedPodTheFreeCpuIsTaken", {}, incoming(0, 1000), true, ""},
      {"HigherPriorityNomineeHoldsTheRoom", {nominated("preemptor", "full", 1000, 1000)}, incoming(0, 1000), false,
       "Insufficient cpu"},
      {"EqualPriorityNomineeHoldsTheRoom", {nominated("preemptor", "full", 10, 1000)}, incoming(10, 1000), false,
       "Insufficient cpu"},
      {"LowerPriorityNomineeDoesNotCount", {nominated("preemptor", "full", 5, 1000)}, incoming(10, 1000), true, ""},
      {"RoomLeftBesideTheNominee", {nominated("preemptor", "full", 1000, 500)}, incoming(0, 500), true, ""},
      {"NomineeOnAnotherNodeDoesNotCount", {nominated("preemptor", "roomy", 1000, 4000)}, incoming(0, 1000), true, ""},
      {"ThePodItselfDoesNotCount", {nominated("preemptor", "full", 1000, 1000)}, incoming(1000, 1000, "prod-preemptor-uid"),
       true, ""},
  };
}

class NominatedPods : public ::testing::TestWithParam<Case> {};

TEST_P(NominatedPods, CountOnTheirNodeForPodsOfLowerOrEqualPriority) {
  const Case& c = GetParam();
  Engine engine(Profile::defaults());
  MutableClusterView view;
  twoNodes(view);
  for (const Pod& p : c.nominatedPods) view.upsertPod(p);
  {
    const Engine* e = &engine;
    Decision d = e->place(c.pod, view, Detail::Full);
    bool feasible = false;
    std::vector<std::string> reasons;
    for (const NodeOutcome& o : d.nodes) {
      if (o.node->name() != "full") continue;
      feasible = o.code == Code::Success;
      reasons = o.reasons;
    }
    EXPECT_EQ(feasible, c.fitsFull);
    if (!c.fitsFull) {
      EXPECT_EQ(reasons, std::vector<std::string>{c.reason});
    }
    // The decision cache (Detail::Summary) answers alike, twice in a row.
    for (int round = 0; round < 2; ++round) {
      const NodeInfo* full = view.findNode("full");
      Decision only = e->evaluate(c.pod, view, std::span<const NodeInfo* const>(&full, 1), Detail::FilterOnly,
                                  Engine::CacheUse::Reuse);
      EXPECT_EQ(only.selected != nullptr, c.fitsFull) << "round " << round;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(, NominatedPods, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(NominatedPodsTest, PodCountOfTheNodeIncludesNominees) {
  Engine engine(Profile::defaults());
  MutableClusterView view;
  view.upsertNode(NodeBuilder("small").allocatable(4000, 16 * kGi, 2).obj());
  view.upsertPod(PodBuilder("bound", "prod").nodeName("small").requests(100, kGi).obj());
  view.upsertPod(nominated("preemptor", "small", 1000, 100));
  Decision d = engine.place(incoming(0, 100), view, Detail::Full);
  ASSERT_EQ(d.nodes.size(), 1u);
  EXPECT_EQ(d.nodes[0].reasons, std::vector<std::string>{"Too many pods"});
}

// How a nominee stops counting: the watch shows it bound, deleted, no longer
// nominated, or terminal; a resync that no longer lists it drops it too.
struct Ending {
  std::string name;
  std::function<void(MutableClusterView&, Pod)> end;
};

TEST(NominatedPodsTest, ANomineeStopsCountingWhenBoundDeletedOrUnnominated) {
  const std::vector<Ending> endings = {
      {"Bound elsewhere", [](MutableClusterView& v, Pod p) { p.nodeName = "roomy"; v.upsertPod(p); }},
      {"Deleted", [](MutableClusterView& v, Pod p) { v.removePod(podKey(p)); }},
      {"NoLongerNominated", [](MutableClusterView& v, Pod p) { p.nominatedNodeName.clear(); v.upsertPod(p); }},
      {"Failed", [](MutableClusterView& v, Pod p) { p.phase = "Failed"; v.upsertPod(p); }},
      {"NotRelisted",
       [](MutableClusterView& v, Pod) {
         v.beginResync(ResyncKind::Pods);
         v.finishResync(ResyncKind::Pods);
       }},
  };
  Engine engine(Profile::defaults());
  for (const Ending& ending : endings) {
    SCOPED_TRACE(ending.name);
    MutableClusterView view;
    view.upsertNode(NodeBuilder("full").allocatable(4000, 16 * kGi).obj());
    view.upsertNode(NodeBuilder("roomy").allocatable(4000, 16 * kGi).obj());
    const Pod preemptor = nominated("preemptor", "full", 1000, 4000);
    view.upsertPod(preemptor);
    EXPECT_FALSE(view.podUpsertChangesNothing(nominated("preemptor", "full", 1000, 3000)));
    EXPECT_TRUE(view.podUpsertChangesNothing(preemptor));
    const NodeInfo* full = view.findNode("full");
    auto fits = [&] {
      return engine.evaluate(incoming(0, 1000), view, std::span<const NodeInfo* const>(&full, 1), Detail::FilterOnly)
                 .selected != nullptr;
    };
    EXPECT_FALSE(fits());
    ending.end(view, preemptor);
    full = view.findNode("full");
    EXPECT_TRUE(fits());
    EXPECT_TRUE(view.nominatedPods().empty());
  }
}

// A reservation is confirmed against nominees too: the admission path never
// hands the room preemption made to a lower-priority pod.
TEST(NominatedPodsTest, ReservationsGoAroundTheNominee) {
  Engine engine(Profile::defaults());
  ClusterState state;
  state.update([](MutableClusterView& v) {
    twoNodes(v);
    v.upsertPod(nominated("preemptor", "full", 1000, 1000));
  });
  LocalReservationBook book(engine, state);
  const auto expires = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < 4; ++i) {
    Placement p = book.placeAndReserve(incoming(0, 1000), "r" + std::to_string(i), expires);
    ASSERT_EQ(p.outcome, Placement::Outcome::Reserved);
    EXPECT_EQ(p.node, "roomy");
  }
  // The room on "roomy" is gone, and "full" is held for the preemptor.
  EXPECT_EQ(book.placeAndReserve(incoming(0, 1000), "r4", expires).outcome, Placement::Outcome::Unschedulable);
  // The preemptor itself fits where it was nominated.
  EXPECT_EQ(book.reserveOn(nominated("preemptor", "full", 1000, 1000), "full", "bind:x", expires).outcome,
            Placement::Outcome::Reserved);
}

// ---------------------------------------------------------------------------
// The topology plugins: a nominee counts in InterPodAffinity's and
// PodTopologySpread's PreFilter state (upstream's AddPod) in the first filter
// pass on its own node, as kube-scheduler's addGENominatedPods adds it. Each
// case runs one plugin alone, as `placer explain` would.

namespace nominees {

using namespace test::upstream;
using test::upstream::Case;  // not this file's own Case

const json kWeb = Selector().label("app", "web");
const json kDb = Selector().label("app", "db");

// nodeA and nodeB share zone z1, nodeC is in z2.
std::vector<NodeJson> threeNodes() {
  auto node = [](const std::string& name, const std::string& zone) {
    return NodeJson(name).label("kubernetes.io/hostname", name).label("zone", zone);
  };
  return {node("nodeA", "z1"), node("nodeB", "z1"), node("nodeC", "z2")};
}

Verdict antiFails(std::string node) {
  return rejected(std::move(node), Code::Unschedulable, "node(s) didn't match pod anti-affinity rules");
}
Verdict existingAntiFails(std::string node) {
  return rejected(std::move(node), Code::Unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules");
}
Verdict affinityFails(std::string node) {
  return rejected(std::move(node), Code::UnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules");
}

struct TopologyCase {
  std::string plugin;
  Case c;
};
void PrintTo(const TopologyCase& t, std::ostream* os) { *os << t.plugin << ": " << t.c.name; }

std::vector<TopologyCase> topologyCases() {
  const std::string T = "placer";
  const std::string ipa = "InterPodAffinity";
  const std::string pts = "PodTopologySpread";
  // A high-priority pod kube-scheduler made room for on nodeB, which wants no web pod beside it.
  auto payments = [](int32_t priority) {
    return PodJson("payments-0").label("app", "payments").requiredAntiAffinity(Term(kWeb, "kubernetes.io/hostname")).nominated("nodeB", priority);
  };
  // A web replica that keeps off db pods' nodes, so that InterPodAffinity runs.
  const PodJson webAvoidingDb = PodJson("web-1").label("app", "web").requiredAntiAffinity(Term(kDb, "kubernetes.io/hostname"));
  return {
      {ipa,
       {T, "a nominee matching the pod's anti-affinity rejects only its own node, not the rest of its zone",
        PodJson("web-1").label("app", "web").requiredAntiAffinity(Term(kWeb, "zone")),
        {PodJson("web-0").label("app", "web").nominated("nodeB")}, threeNodes(),
        {fits("nodeA"), antiFails("nodeB"), fits("nodeC")}}},
      {ipa,
       {T, "a nominee's required anti-affinity keeps the pod off the nominee's node", webAvoidingDb, {payments(0)},
        threeNodes(), {fits("nodeA"), existingAntiFails("nodeB"), fits("nodeC")}}},
      {ipa,
       {T, "a higher-priority nominee's anti-affinity counts", PodJson(webAvoidingDb).priority(10), {payments(1000)},
        threeNodes(), {fits("nodeA"), existingAntiFails("nodeB"), fits("nodeC")}}},
      {ipa,
       {T, "a lower-priority nominee's anti-affinity does not count", PodJson(webAvoidingDb).priority(1000),
        {payments(10)}, threeNodes(), {fits("nodeA"), fits("nodeB"), fits("nodeC")}}},
      // upstream runs AddPod only for plugins whose PreFilter did not skip:
      // with no required term of its own and no bound pod's anti-affinity
      // matching it, InterPodAffinity skips, and the nominee's terms are not read.
      {ipa,
       {T, "a nominee's anti-affinity is not read when InterPodAffinity skips the pod, as upstream",
        PodJson("web-1").label("app", "web"), {payments(0)}, threeNodes(),
        {fits("nodeA"), fits("nodeB"), fits("nodeC")}}},
      // The pod must pass without the nominee too: it may never come.
      {ipa,
       {T, "a nominee alone does not satisfy the pod's required affinity",
        PodJson("web-1").label("app", "web").requiredAffinity(Term(kDb, "zone")),
        {PodJson("db-0").label("app", "db").nominated("nodeB")}, threeNodes(),
        {affinityFails("nodeA"), affinityFails("nodeB"), affinityFails("nodeC")}}},
      {pts,
       {T, "a nominee fills its node's domain for the pod's spread constraint",
        PodJson("web-1").label("app", "web").spread(1, "kubernetes.io/hostname", "DoNotSchedule", kWeb),
        {PodJson("web-0").label("app", "web").nominated("nodeB")}, threeNodes(),
        {fits("nodeA"), rejected("nodeB", Code::Unschedulable, "node(s) didn't match pod topology spread constraints"),
         fits("nodeC")}}},
      {pts,
       {T, "a nominee of another namespace does not count for the spread constraint",
        PodJson("web-1").label("app", "web").spread(1, "kubernetes.io/hostname", "DoNotSchedule", kWeb),
        {PodJson("web-0", "other").label("app", "web").nominated("nodeB")}, threeNodes(),
        {fits("nodeA"), fits("nodeB"), fits("nodeC")}}},
      // upstream's PreFilter counts no pod for an empty selector, but its
      // AddPod counts every pod the selector matches: all of them.
      {pts,
       {T, "an empty selector counts the nominee but no bound pod, as upstream",
        PodJson("web-1").label("app", "web").spread(1, "kubernetes.io/hostname", "DoNotSchedule", Selector()),
        {PodJson("web-0").label("app", "web").node("nodeA"), PodJson("db-0").label("app", "db").nominated("nodeB")},
        threeNodes(),
        {fits("nodeA"), rejected("nodeB", Code::Unschedulable, "node(s) didn't match pod topology spread constraints"),
         fits("nodeC")}}},
  };
}

class NominatedTopology : public testing::TestWithParam<TopologyCase> {};

TEST_P(NominatedTopology, CountInTheFirstFilterPassOnTheirNode) {
  const TopologyCase& t = GetParam();
  check(t.c, t.plugin, Stage::Filter, testing::UnitTest::GetInstance()->current_test_info()->name());
}

INSTANTIATE_TEST_SUITE_P(, NominatedTopology, testing::ValuesIn(topologyCases()),
                         [](const auto& info) { return testName(testing::TestParamInfo<Case>(info.param.c, info.index)); });

}  // namespace nominees

// The whole default profile, through the decision cache and the admission
// path: a web replica is never placed beside a nominee that wants no web pod.
TEST(NominatedPodsTest, TheDefaultProfileKeepsThePodOffANomineesAntiAffinity) {
  using namespace test::upstream;
  json doc = snapshotOf(test::upstream::Case("placer", "default profile", PodJson(), {}, nominees::threeNodes()),
                        "InterPodAffinity", Stage::Filter);
  auto snapshot = decodeSnapshot(doc);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  Engine engine(Profile::defaults());
  ClusterState state;
  state.update([&](MutableClusterView& v) {
    fillView(v, *snapshot);
    auto nominee = decodePod(PodJson("payments-0", "prod")
                                 .label("app", "payments")
                                 .requiredAntiAffinity(Term(Selector().label("app", "web"), "kubernetes.io/hostname").namespaces({"prod"}))
                                 .nominated("nodeA", 1000)
                                 .obj(""));
    ASSERT_TRUE(nominee.ok());
    v.upsertPod(*nominee);
    EXPECT_TRUE(v.podUpsertChangesNothing(*nominee)) << "the same nominee again changes nothing";
  });
  auto web = decodePod(PodJson("web", "prod")
                           .label("app", "web")
                           .requiredAntiAffinity(Term(Selector().label("app", "db"), "kubernetes.io/hostname"))
                           .obj(""));
  ASSERT_TRUE(web.ok());
  // nodeA sorts first and would win every tie; the cache is filled by the first round.
  for (int round = 0; round < 2; ++round) {
    state.readForDecision([&](const ClusterView& view) {
      Decision d = engine.place(*web, view);
      ASSERT_NE(d.selected, nullptr);
      EXPECT_NE(d.selected->name(), "nodeA") << "round " << round;
      EXPECT_EQ(d.feasibleCount, 2u);
    });
  }
  LocalReservationBook book(engine, state);
  const auto expires = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  EXPECT_EQ(book.reserveOn(*web, "nodeA", "bind:web", expires).outcome, Placement::Outcome::Refused);
  Placement p = book.placeAndReserve(*web, "r1", expires);
  ASSERT_EQ(p.outcome, Placement::Outcome::Reserved);
  EXPECT_NE(p.node, "nodeA");
}

}  // namespace
}  // namespace placer
