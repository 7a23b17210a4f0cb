// Ported from kube-scheduler plugins/nodeunschedulable/node_unschedulable_test.go.
#include "scoring/plugins/node_unschedulable.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;

struct Case {
  std::string name;
  Pod pod;
  Node node;
  bool fits;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NodeUnschedulableFilter : public testing::TestWithParam<Case> {};

TEST_P(NodeUnschedulableFilter, Verdict) {
  const Case& c = GetParam();
  auto p = newNodeUnschedulable(nullptr);
  ASSERT_TRUE(p.ok());
  Status got = test::runFilter(**p, c.pod, test::nodeInfo(c.node)).filter;
  if (c.fits) {
    EXPECT_TRUE(got.isSuccess());
  } else {
    EXPECT_EQ(got.code(), Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(got.reasons(), std::vector<std::string>{"node(s) were unschedulable"});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, NodeUnschedulableFilter,
    testing::Values(
        Case{"DoesNotSchedulePodToUnschedulableNode", PodBuilder(), NodeBuilder().unschedulable(), false},
        Case{"SchedulesPodToNormalNode", PodBuilder(), NodeBuilder(), true},
        Case{"SchedulesPodWithTolerationToUnschedulableNode",
             PodBuilder().toleration("node.kubernetes.io/unschedulable", TolerationOperator::Equal, "",
                                     TaintEffect::NoSchedule),
             NodeBuilder().unschedulable(), true},
        Case{"ExistsTolerationForTheKey",
             PodBuilder().toleration("node.kubernetes.io/unschedulable", TolerationOperator::Exists, "",
                                     TaintEffect::All),
             NodeBuilder().unschedulable(), true},
        Case{"TolerateEverything",
             PodBuilder().toleration("", TolerationOperator::Exists, "", TaintEffect::All),
             NodeBuilder().unschedulable(), true},
        Case{"NoExecuteTolerationDoesNotCover",
             PodBuilder().toleration("node.kubernetes.io/unschedulable", TolerationOperator::Exists, "",
                                     TaintEffect::NoExecute),
             NodeBuilder().unschedulable(), false},
        Case{"TolerationWithValueDoesNotCover",
             PodBuilder().toleration("node.kubernetes.io/unschedulable", TolerationOperator::Equal, "true",
                                     TaintEffect::NoSchedule),
             NodeBuilder().unschedulable(), false}),
    [](const auto& info) { return info.param.name; });

TEST(NodeUnschedulableArgs, RejectsNonObjectArgs) {
  auto bad = newNodeUnschedulable(nlohmann::json::array());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "NodeUnschedulableArgs: must be an object");
}

}  // namespace
}  // namespace placer
