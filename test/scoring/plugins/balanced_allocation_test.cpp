// NodeResourcesBalancedAllocation, ported case by case from kube-scheduler's
// noderesources/balanced_allocation_test.go (DRA cases left out).

#include "scoring/plugins/balanced_allocation.h"

#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "test/support/plugin_harness.h"
#include "test/support/resource_builders.h"

namespace placer {
namespace {

using nlohmann::json;
using test::cpuMem;
using test::nodeWith;
using test::resources;
using test::ResourcePod;

std::unique_ptr<Plugin> balancedPlugin(const json& args = nullptr) {
  auto plugin = newNodeResourcesBalancedAllocation(args);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

// makeNode(name, milliCPU, memory, scalars).
NodeInfo node(std::string name, int64_t milliCpu, int64_t memory, std::vector<Pod> pods = {},
              std::vector<std::pair<std::string, int64_t>> scalars = {}) {
  return nodeWith(std::move(name), resources(milliCpu, memory, std::move(scalars)), pods);
}

// The pod specs of the upstream test.
Pod cpuAndMemory() { return ResourcePod().container(cpuMem(1000, 2000)).container(cpuMem(2000, 3000)); }
Pod cpuOnly() { return ResourcePod().container(cpuMem(1000, 0)).container(cpuMem(2000, 0)); }
Pod cpuAndMemoryAndGpu() {
  return ResourcePod().container(cpuMem(1000, 2000)).container({2000, 3000, 0, {{"nvidia.com/gpu", 3}}});
}

const json kWithGpu = json{{"resources",
                            {{{"name", "cpu"}, {"weight", 1}},
                             {{"name", "memory"}, {"weight", 1}},
                             {{"name", "nvidia.com/gpu"}, {"weight", 1}}}}};

struct Case {
  Case(std::string name, Pod pod, std::vector<NodeInfo> nodes, std::vector<int64_t> want, json args = nullptr,
       bool runPreScore = true, Code wantPreScore = Code::Success)
      : name(std::move(name)),
        pod(std::move(pod)),
        nodes(std::move(nodes)),
        want(std::move(want)),
        args(std::move(args)),
        runPreScore(runPreScore),
        wantPreScore(wantPreScore) {}

  std::string name;
  Pod pod;
  std::vector<NodeInfo> nodes;
  std::vector<int64_t> want;
  json args;
  bool runPreScore;
  Code wantPreScore;
};

TEST(NodeResourcesBalancedAllocation, Scores) {
  const std::vector<Case> cases = {
      {"nothing scheduled, nothing requested, skip in PreScore", ResourcePod(),
       {node("node1", 4000, 10000), node("node2", 4000, 10000)}, {0, 0}, nullptr, true, Code::Skip},
      // std (0.75 - 0.5) / 2 = 0.125 -> 87; equal fractions -> 100.
      {"nothing scheduled, resources requested, differently sized nodes", cpuAndMemory(),
       {node("node1", 4000, 10000), node("node2", 6000, 10000)}, {87, 100}},
      {"resources requested, pods scheduled with resources", cpuAndMemory(),
       {node("node1", 10000, 20000, {cpuOnly()}), node("node2", 10000, 20000, {cpuAndMemory()})}, {82, 95}},
      {"resources requested, pods scheduled with resources, differently sized nodes", cpuAndMemory(),
       {node("node1", 10000, 20000, {cpuOnly()}), node("node2", 10000, 50000, {cpuAndMemory()})}, {82, 80}},
      // Fractions are capped at 1.
      {"requested resources at node capacity", cpuOnly(),
       {node("node1", 6000, 10000, {cpuOnly()}), node("node2", 6000, 10000, {cpuAndMemory()})}, {50, 75}},
      // Three resources: the general standard deviation.
      {"include scalar resource on a node for balanced resource allocation",
       ResourcePod().container({std::nullopt, 0, 0, {{"nvidia.com/gpu", 1}}}),
       {node("node1", 3500, 40000, {cpuAndMemoryAndGpu()}, {{"nvidia.com/gpu", 8}}),
        node("node2", 3500, 40000, {cpuAndMemory()}, {{"nvidia.com/gpu", 8}})},
       {70, 65}, kWithGpu},
      {"node without the scalar resource should skip the scalar resource", cpuAndMemory(),
       {node("node1", 3500, 40000, {}, {{"nvidia.com/gpu", 8}}), node("node2", 3500, 40000)}, {63, 63}, kWithGpu},
      {"resources requested, pods scheduled with resources if PreScore not called", cpuAndMemory(),
       {node("node1", 10000, 20000, {cpuOnly()}), node("node2", 10000, 20000, {cpuAndMemory()})}, {82, 95}, nullptr,
       false},
      // Not upstream's table, upstream's rules: balance counts real requests,
      // so containers without requests make a best-effort pod.
      {"containers without requests are best-effort", ResourcePod().emptyContainer().emptyContainer(),
       {node("node1", 4000, 10000)}, {0}, nullptr, true, Code::Skip},
      {"a pod requesting none of the configured resources is skipped", cpuAndMemory(),
       {node("node1", 4000, 10000, {}, {{"nvidia.com/gpu", 8}})}, {0},
       json{{"resources", {{{"name", "nvidia.com/gpu"}}}}}, true, Code::Skip},
      {"a single scored resource is always balanced", ResourcePod().container({std::nullopt, std::nullopt, 0,
                                                                              {{"nvidia.com/gpu", 2}}}),
       {node("node1", 4000, 10000, {}, {{"nvidia.com/gpu", 8}})}, {100},
       json{{"resources", {{{"name", "nvidia.com/gpu"}}}}}},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = balancedPlugin(tc.args);
    ASSERT_NE(plugin, nullptr);
    std::vector<int64_t> got;
    if (tc.runPreScore) {
      test::ScoreOutcome out = test::runScore(*plugin, tc.pod, test::pointers(tc.nodes));
      EXPECT_EQ(toString(out.preScore.code()), toString(tc.wantPreScore));
      got = out.scores;
    } else {
      CycleState state;
      const auto* scorer = dynamic_cast<const ScorePlugin*>(plugin.get());
      for (const NodeInfo& n : tc.nodes) got.push_back(scorer->score(state, tc.pod, n));
    }
    EXPECT_THAT(got, ::testing::ElementsAreArray(tc.want));
  }
}

// Hostile quantities must neither crash nor trip the sanitizers.
TEST(NodeResourcesBalancedAllocation, ExtremeQuantitiesAreSafe) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Pod hugePod = ResourcePod().container({kMax, kMax, 0, {{"nvidia.com/gpu", kMax}}});
  std::vector<NodeInfo> nodes = {
      node("max", kMax, kMax, {hugePod}, {{"nvidia.com/gpu", kMax}}),
      node("min", kMin, kMin, {hugePod}, {{"nvidia.com/gpu", kMin}}),
      node("neg", -1, -1, {}, {{"nvidia.com/gpu", -1}}),
  };
  auto plugin = balancedPlugin(kWithGpu);
  test::ScoreOutcome out = test::runScore(*plugin, hugePod, test::pointers(nodes));
  EXPECT_EQ(out.scores.size(), nodes.size());
}

TEST(NodeResourcesBalancedAllocation, NameAndExtensionPoints) {
  auto plugin = balancedPlugin();
  EXPECT_EQ(plugin->name(), names::kNodeResourcesBalancedAllocation);
  EXPECT_NE(dynamic_cast<const PreScorePlugin*>(plugin.get()), nullptr);
  EXPECT_NE(dynamic_cast<const ScorePlugin*>(plugin.get()), nullptr);
  EXPECT_EQ(dynamic_cast<const FilterPlugin*>(plugin.get()), nullptr);
}

TEST(NodeResourcesBalancedAllocationArgs, Defaults) {
  for (const json& args : {json(nullptr), json::object(), json{{"resources", json::array()}},
                           json{{"kind", "NodeResourcesBalancedAllocationArgs"}, {"resources", nullptr}}}) {
    SCOPED_TRACE(args.dump());
    auto decoded = decodeNodeResourcesBalancedAllocationArgs(args);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(decoded->resources, defaultResourceSpecs());
  }
  auto zeroWeight = decodeNodeResourcesBalancedAllocationArgs(
      json{{"resources", {{{"name", "cpu"}, {"weight", 0}}, {{"name", "example.com/foo"}}}}});
  ASSERT_TRUE(zeroWeight.ok()) << zeroWeight.error().message;
  EXPECT_EQ(zeroWeight->resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"example.com/foo", 1}}));
}

TEST(NodeResourcesBalancedAllocationArgs, Invalid) {
  struct InvalidCase {
    std::string name;
    json args;
    std::string wantError;
  };
  const std::vector<InvalidCase> cases = {
      {"weight other than 1", json{{"resources", {{{"name", "cpu"}, {"weight", 2}}}}},
       "NodeResourcesBalancedAllocationArgs.resources[0].weight: Invalid value: 2: must be 1"},
      {"repeated resource", json{{"resources", {{{"name", "cpu"}, {"weight", 1}}, {{"name", "cpu"}, {"weight", 1}}}}},
       "NodeResourcesBalancedAllocationArgs.resources[1].name: Duplicate value: \"cpu\""},
      {"several errors",
       json{{"resources", {{{"name", "memory"}, {"weight", 3}}, {{"name", "memory"}, {"weight", 1}}}}},
       "[NodeResourcesBalancedAllocationArgs.resources[0].weight: Invalid value: 3: must be 1, "
       "NodeResourcesBalancedAllocationArgs.resources[1].name: Duplicate value: \"memory\"]"},
      {"unknown field", json{{"resource", json::array()}}, "NodeResourcesBalancedAllocationArgs.resource: unknown field"},
      {"resources not a list", json{{"resources", "cpu"}},
       "NodeResourcesBalancedAllocationArgs.resources: must be a list"},
      {"name not a string", json{{"resources", {{{"name", 1}}}}},
       "NodeResourcesBalancedAllocationArgs.resources[0].name: must be a string"},
  };
  for (const InvalidCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto decoded = decodeNodeResourcesBalancedAllocationArgs(tc.args);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.error().message, tc.wantError);
    EXPECT_FALSE(newNodeResourcesBalancedAllocation(tc.args).ok());
  }
}

}  // namespace
}  // namespace placer
