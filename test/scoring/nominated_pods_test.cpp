// Nominated pods: a pending pod that kube-scheduler's preemption made room
// for (status.nominatedNodeName) counts on that node for incoming pods of
// lower or equal priority, as kube-scheduler's RunFilterPluginsWithNominatedPods
// counts it, and stops counting once bound, deleted or no longer nominated.
#include <functional>

#include <gtest/gtest.h>

#include "scoring/engine.h"
#include "scoring/placement.h"
#include "test/support/builders.h"

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
    if (!c.fitsFull) EXPECT_EQ(reasons, std::vector<std::string>{c.reason});
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

}  // namespace
}  // namespace placer
