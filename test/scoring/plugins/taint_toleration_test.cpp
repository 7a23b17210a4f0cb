// Ported from kube-scheduler plugins/tainttoleration/taint_toleration_test.go.
#include "scoring/plugins/taint_toleration.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;
constexpr auto NoSchedule = TaintEffect::NoSchedule;
constexpr auto PreferNoSchedule = TaintEffect::PreferNoSchedule;
constexpr auto NoExecute = TaintEffect::NoExecute;
constexpr auto AnyEffect = TaintEffect::All;
constexpr auto Equal = TolerationOperator::Equal;
constexpr auto Exists = TolerationOperator::Exists;

std::unique_ptr<Plugin> plugin() {
  auto p = newTaintToleration(nullptr);
  EXPECT_TRUE(p.ok());
  return std::move(p).value();
}

struct FilterCase {
  std::string name;
  Pod pod;
  Node node;
  Code code;
  std::string reason;
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class TaintTolerationFilter : public testing::TestWithParam<FilterCase> {};

TEST_P(TaintTolerationFilter, Verdict) {
  const FilterCase& c = GetParam();
  auto p = plugin();
  NodeInfo info;
  info.node = c.node;
  Status got = test::runFilter(*p, c.pod, info).filter;
  EXPECT_EQ(got.code(), c.code);
  if (!c.reason.empty()) {
    ASSERT_EQ(got.reasons().size(), 1u);
    EXPECT_EQ(got.reasons()[0], c.reason);
  } else {
    EXPECT_TRUE(got.reasons().empty());
  }
}

const Code Ok = Code::Success;
const Code Unresolvable = Code::UnschedulableAndUnresolvable;

INSTANTIATE_TEST_SUITE_P(
    Upstream, TaintTolerationFilter,
    testing::Values(
        FilterCase{"PodWithoutTolerationsCannotLandOnTaintedNode", PodBuilder("pod1"),
                   NodeBuilder("nodeA").taint("dedicated", "user1", NoSchedule), Unresolvable,
                   "node(s) had untolerated taint {dedicated: user1}"},
        FilterCase{"TolerationWithEqualValueTolerates",
                   PodBuilder("pod1").toleration("dedicated", Equal, "user1", NoSchedule),
                   NodeBuilder("nodeA").taint("dedicated", "user1", NoSchedule), Ok, ""},
        FilterCase{"TolerationWithOtherValueDoesNotTolerate",
                   PodBuilder("pod1").toleration("dedicated", Equal, "user2", NoSchedule),
                   NodeBuilder("nodeA").taint("dedicated", "user1", NoSchedule), Unresolvable,
                   "node(s) had untolerated taint {dedicated: user1}"},
        FilterCase{"ExistsToleratesAnyValue", PodBuilder("pod1").toleration("foo", Exists, "", NoSchedule),
                   NodeBuilder("nodeA").taint("foo", "bar", NoSchedule), Ok, ""},
        FilterCase{"AllTaintsTolerated",
                   PodBuilder("pod1")
                       .toleration("dedicated", Equal, "user2", NoSchedule)
                       .toleration("foo", Exists, "", NoSchedule),
                   NodeBuilder("nodeA").taint("dedicated", "user2", NoSchedule).taint("foo", "bar", NoSchedule), Ok,
                   ""},
        FilterCase{"NonEmptyEffectMustMatch",
                   PodBuilder("pod1").toleration("foo", Equal, "bar", PreferNoSchedule),
                   NodeBuilder("nodeA").taint("foo", "bar", NoSchedule), Unresolvable,
                   "node(s) had untolerated taint {foo: bar}"},
        FilterCase{"EmptyEffectMatchesNoSchedule", PodBuilder("pod1").toleration("foo", Equal, "bar", AnyEffect),
                   NodeBuilder("nodeA").taint("foo", "bar", NoSchedule), Ok, ""},
        FilterCase{"PreferNoScheduleTaintNeverFilters",
                   PodBuilder("pod1").toleration("dedicated", Equal, "user2", NoSchedule),
                   NodeBuilder("nodeA").taint("dedicated", "user1", PreferNoSchedule), Ok, ""},
        FilterCase{"PreferNoScheduleTaintWithoutTolerations", PodBuilder("pod1"),
                   NodeBuilder("nodeA").taint("dedicated", "user1", PreferNoSchedule), Ok, ""},
        // Beyond upstream's table: facts a user relies on.
        FilterCase{"EmptyTaintValuePrintsEmpty", PodBuilder("pod1"),
                   NodeBuilder("nodeA").taint("node-role.kubernetes.io/control-plane", "", NoSchedule),
                   Unresolvable, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"},
        FilterCase{"NoExecuteTaintFilters", PodBuilder("pod1"),
                   NodeBuilder("nodeA").taint("node.kubernetes.io/not-ready", "", NoExecute), Unresolvable,
                   "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
        FilterCase{"FirstUntoleratedTaintInNodeOrderIsReported",
                   PodBuilder("pod1").toleration("a", Exists, "", AnyEffect),
                   NodeBuilder("nodeA").taint("a", "1", NoSchedule).taint("b", "2", NoExecute).taint("c", "3", NoSchedule),
                   Unresolvable, "node(s) had untolerated taint {b: 2}"},
        FilterCase{"EmptyKeyExistsToleratesEverything", PodBuilder("pod1").toleration("", Exists, "", AnyEffect),
                   NodeBuilder("nodeA").taint("x", "y", NoSchedule).taint("z", "", NoExecute), Ok, ""},
        FilterCase{"UntaintedNode", PodBuilder("pod1"), NodeBuilder("nodeA"), Ok, ""}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  Pod pod;
  std::vector<Node> nodes;
  std::vector<int64_t> want;
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class TaintTolerationScore : public testing::TestWithParam<ScoreCase> {};

TEST_P(TaintTolerationScore, NormalisedScores) {
  const ScoreCase& c = GetParam();
  auto p = plugin();
  std::vector<NodeInfo> infos;
  for (const Node& n : c.nodes) infos.push_back(test::nodeInfo(n));
  test::ScoreOutcome got = test::runScore(*p, c.pod, test::pointers(infos));
  EXPECT_TRUE(got.preScore.isSuccess());
  EXPECT_EQ(got.scores, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, TaintTolerationScore,
    testing::Values(
        ScoreCase{"ToleratedTaintScoresHigherThanIntolerable",
                  PodBuilder("pod1").toleration("foo", Equal, "bar", PreferNoSchedule),
                  {NodeBuilder("nodeA").taint("foo", "bar", PreferNoSchedule),
                   NodeBuilder("nodeB").taint("foo", "blah", PreferNoSchedule)},
                  {100, 0}},
        ScoreCase{"CountOfToleratedTaintsDoesNotMatter",
                  PodBuilder("pod1")
                      .toleration("cpu-type", Equal, "arm64", PreferNoSchedule)
                      .toleration("disk-type", Equal, "ssd", PreferNoSchedule),
                  {NodeBuilder("nodeA"), NodeBuilder("nodeB").taint("cpu-type", "arm64", PreferNoSchedule),
                   NodeBuilder("nodeC")
                       .taint("cpu-type", "arm64", PreferNoSchedule)
                       .taint("disk-type", "ssd", PreferNoSchedule)},
                  {100, 100, 100}},
        ScoreCase{"MoreIntolerableTaintsLowerScore",
                  PodBuilder("pod1").toleration("foo", Equal, "bar", PreferNoSchedule),
                  {NodeBuilder("nodeA"), NodeBuilder("nodeB").taint("cpu-type", "arm64", PreferNoSchedule),
                   NodeBuilder("nodeC")
                       .taint("cpu-type", "arm64", PreferNoSchedule)
                       .taint("disk-type", "ssd", PreferNoSchedule)},
                  {100, 50, 0}},
        ScoreCase{"OnlyPreferNoScheduleTaintsAndTolerationsCount",
                  PodBuilder("pod1")
                      .toleration("cpu-type", Equal, "arm64", NoSchedule)
                      .toleration("disk-type", Equal, "ssd", NoSchedule),
                  {NodeBuilder("nodeA"), NodeBuilder("nodeB").taint("cpu-type", "arm64", NoSchedule),
                   NodeBuilder("nodeC")
                       .taint("cpu-type", "arm64", PreferNoSchedule)
                       .taint("disk-type", "ssd", PreferNoSchedule)},
                  {100, 100, 0}},
        ScoreCase{"NoTolerationsPrefersUntaintedNode", PodBuilder("pod1"),
                  {NodeBuilder("nodeA"), NodeBuilder("nodeB").taint("cpu-type", "arm64", PreferNoSchedule)},
                  {100, 0}},
        ScoreCase{"EmptyEffectTolerationCountsForScore",
                  PodBuilder("pod1").toleration("cpu-type", Exists, "", AnyEffect),
                  {NodeBuilder("nodeA").taint("cpu-type", "arm64", PreferNoSchedule),
                   NodeBuilder("nodeB").taint("gpu", "x", PreferNoSchedule)},
                  {100, 0}},
        ScoreCase{"NoTaintsAnywhereAllMax", PodBuilder("pod1"), {NodeBuilder("nodeA"), NodeBuilder("nodeB")},
                  {100, 100}}),
    [](const auto& info) { return info.param.name; });

TEST(TaintTolerationArgs, AcceptsNoArgsOrEmptyObjectAndRejectsUnknownFields) {
  EXPECT_TRUE(newTaintToleration(nullptr).ok());
  EXPECT_TRUE(newTaintToleration(nlohmann::json::object()).ok());
  EXPECT_TRUE(newTaintToleration({{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "X"}}).ok());
  auto bad = newTaintToleration({{"foo", 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "TaintTolerationArgs.foo: unknown field");
  auto p = newTaintToleration(nullptr);
  EXPECT_EQ(p.value()->name(), names::kTaintToleration);
}

}  // namespace
}  // namespace placer
