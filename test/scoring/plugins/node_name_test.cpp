// Ported from kube-scheduler plugins/nodename/node_name_test.go.
#include "scoring/plugins/node_name.h"

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

class NodeNameFilter : public testing::TestWithParam<Case> {};

TEST_P(NodeNameFilter, Verdict) {
  const Case& c = GetParam();
  auto p = newNodeName(nullptr);
  ASSERT_TRUE(p.ok());
  Status got = test::runFilter(**p, c.pod, test::nodeInfo(c.node)).filter;
  if (c.fits) {
    EXPECT_TRUE(got.isSuccess());
  } else {
    EXPECT_EQ(got.code(), Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(got.reasons(), std::vector<std::string>{"node(s) didn't match the requested node name"});
  }
}

INSTANTIATE_TEST_SUITE_P(Upstream, NodeNameFilter,
                         testing::Values(Case{"NoHostSpecified", PodBuilder(), NodeBuilder(""), true},
                                         Case{"HostMatches", PodBuilder().nodeName("foo"), NodeBuilder("foo"), true},
                                         Case{"HostDoesNotMatch", PodBuilder().nodeName("bar"), NodeBuilder("foo"),
                                              false}),
                         [](const auto& info) { return info.param.name; });

TEST(NodeName, FilterAgreesWhenPreFilterDidNotRun) {
  auto p = newNodeName(nullptr);
  ASSERT_TRUE(p.ok());
  const auto* filter = dynamic_cast<const FilterPlugin*>(p->get());
  ASSERT_NE(filter, nullptr);
  CycleState state;
  EXPECT_TRUE(filter->filter(state, PodBuilder(), test::nodeInfo(NodeBuilder("a"))).isSuccess());
  EXPECT_FALSE(filter->filter(state, PodBuilder().nodeName("b"), test::nodeInfo(NodeBuilder("a"))).isSuccess());
}

}  // namespace
}  // namespace placer
