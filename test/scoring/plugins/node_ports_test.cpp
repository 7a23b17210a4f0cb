// Ported from kube-scheduler plugins/nodeports/node_ports_test.go.
#include "scoring/plugins/node_ports.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;

// A pod whose one container asks for the given host ports ("protocol/ip/port").
Pod podWithPorts(std::vector<std::string> ports) { return PodBuilder().container("app:1", std::move(ports)); }

// A node already running pods that use these host ports.
NodeInfo nodeUsing(std::vector<std::string> ports) {
  NodeInfo info = test::nodeInfo(NodeBuilder("m1"));
  for (const std::string& p : ports) info.usedPorts.push_back(test::hostPort(p));
  return info;
}

struct Case {
  std::string name;
  Pod pod;
  NodeInfo node;
  Code preFilter;
  bool fits;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class NodePortsFilter : public testing::TestWithParam<Case> {};

TEST_P(NodePortsFilter, Verdict) {
  const Case& c = GetParam();
  auto p = newNodePorts(nullptr);
  ASSERT_TRUE(p.ok());
  test::FilterOutcome got = test::runFilter(**p, c.pod, c.node);
  EXPECT_EQ(got.preFilter.code(), c.preFilter);
  if (c.fits) {
    EXPECT_TRUE(got.filter.isSuccess());
  } else {
    EXPECT_EQ(got.filter.code(), Code::Unschedulable);
    EXPECT_EQ(got.filter.reasons(),
              std::vector<std::string>{"node(s) didn't have free ports for the requested pod ports"});
  }
}

const Code Ok = Code::Success;

INSTANTIATE_TEST_SUITE_P(
    Upstream, NodePortsFilter,
    testing::Values(
        Case{"SkipFilter", PodBuilder(), nodeUsing({}), Code::Skip, true},
        Case{"OtherPort", podWithPorts({"UDP/127.0.0.1/8080"}), nodeUsing({"UDP/127.0.0.1/9090"}), Ok, true},
        Case{"SameUdpPort", podWithPorts({"UDP/127.0.0.1/8080"}), nodeUsing({"UDP/127.0.0.1/8080"}), Ok, false},
        Case{"SameTcpPort", podWithPorts({"TCP/127.0.0.1/8080"}), nodeUsing({"TCP/127.0.0.1/8080"}), Ok, false},
        Case{"DifferentHostIp", podWithPorts({"TCP/127.0.0.1/8080"}), nodeUsing({"TCP/127.0.0.2/8080"}), Ok, true},
        Case{"DifferentProtocol", podWithPorts({"UDP/127.0.0.1/8080"}), nodeUsing({"TCP/127.0.0.1/8080"}), Ok, true},
        Case{"SecondUdpPortConflict", podWithPorts({"UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"}),
             nodeUsing({"UDP/127.0.0.1/8080"}), Ok, false},
        Case{"FirstTcpPortConflict", podWithPorts({"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"}),
             nodeUsing({"TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"}), Ok, false},
        Case{"FirstTcpPortConflictDueToBindAllHostIp", podWithPorts({"TCP/0.0.0.0/8001"}),
             nodeUsing({"TCP/127.0.0.1/8001"}), Ok, false},
        Case{"TcpHostPortConflictDueToBindAllHostIp", podWithPorts({"TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"}),
             nodeUsing({"TCP/127.0.0.1/8001"}), Ok, false},
        Case{"SecondTcpPortConflictToBindAllHostIp", podWithPorts({"TCP/127.0.0.1/8001"}),
             nodeUsing({"TCP/0.0.0.0/8001"}), Ok, false},
        Case{"SecondDifferentProtocol", podWithPorts({"UDP/127.0.0.1/8001"}), nodeUsing({"TCP/0.0.0.0/8001"}), Ok,
             true},
        Case{"UdpHostPortConflictDueToBindAllHostIp", podWithPorts({"UDP/127.0.0.1/8001"}),
             nodeUsing({"TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"}), Ok, false}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Defaults, NodePortsFilter,
    testing::Values(
        Case{"EmptyHostIpMeansBindAll", podWithPorts({"TCP//8080"}), nodeUsing({"TCP/10.0.0.1/8080"}), Ok, false},
        Case{"EmptyProtocolMeansTcp", podWithPorts({"/10.0.0.1/8080"}), nodeUsing({"TCP/10.0.0.1/8080"}), Ok, false},
        Case{"EmptyUsedProtocolMeansTcp", podWithPorts({"TCP/10.0.0.1/8080"}), nodeUsing({"//8080"}), Ok, false},
        Case{"SctpDoesNotConflictWithTcp", podWithPorts({"SCTP/0.0.0.0/8080"}), nodeUsing({"TCP/0.0.0.0/8080"}), Ok,
             true},
        Case{"ZeroHostPortIsNotAHostPort", podWithPorts({"TCP/0.0.0.0/0"}), nodeUsing({"TCP/0.0.0.0/8080"}),
             Code::Skip, true},
        Case{"SidecarPortsCount",
             PodBuilder().initContainer("proxy:1", {"TCP/0.0.0.0/15001"}, /*restartable=*/true).container("app:1"),
             nodeUsing({"TCP/0.0.0.0/15001"}), Ok, false},
        Case{"PlainInitContainerPortsDoNotCount",
             PodBuilder().initContainer("setup:1", {"TCP/0.0.0.0/15001"}).container("app:1"),
             nodeUsing({"TCP/0.0.0.0/15001"}), Code::Skip, true},
        Case{"FreeNode", podWithPorts({"TCP/0.0.0.0/80"}), nodeUsing({}), Ok, true}),
    [](const auto& info) { return info.param.name; });

TEST(NodePorts, FilterWithoutPreFilterComputesThePorts) {
  auto p = newNodePorts(nullptr);
  ASSERT_TRUE(p.ok());
  CycleState empty;
  const auto& filter = dynamic_cast<const FilterPlugin&>(**p);
  EXPECT_FALSE(filter.filter(empty, podWithPorts({"TCP/0.0.0.0/80"}), nodeUsing({"TCP/1.2.3.4/80"})).isSuccess());
  EXPECT_TRUE(filter.filter(empty, podWithPorts({"TCP/0.0.0.0/81"}), nodeUsing({"TCP/1.2.3.4/80"})).isSuccess());
  EXPECT_EQ((*p)->name(), names::kNodePorts);
}

}  // namespace
}  // namespace placer
