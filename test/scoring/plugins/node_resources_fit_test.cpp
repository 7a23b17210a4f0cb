// NodeResourcesFit, ported case by case from kube-scheduler's
// noderesources/fit_test.go, least_allocated_test.go, most_allocated_test.go
// and requested_to_capacity_ratio_test.go (pod-level resources and DRA cases
// left out: placer does not model them).

#include "scoring/plugins/node_resources_fit.h"

#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/yaml.h"
#include "test/support/plugin_harness.h"
#include "test/support/resource_builders.h"

namespace placer {
namespace {

using nlohmann::json;
using test::cores;
using test::cpuMem;
using test::Mi;
using test::nodeWith;
using test::resources;
using test::ResourcePod;

const std::string kExtendedA = "example.com/aaa";
const std::string kExtendedB = "example.com/bbb";
const std::string kKubernetesIoA = "kubernetes.io/something";
const std::string kKubernetesIoB = "subdomain.kubernetes.io/something";
const std::string kHugePageA = "hugepages-2Mi";

std::unique_ptr<Plugin> fitPlugin(const json& args = nullptr) {
  auto plugin = newNodeResourcesFit(args);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

// fit_test.go's makeAllocatableResources(10, 20, 32, 5, 20, 5).
Resources defaultAllocatable() {
  return resources(10, 20, {{kExtendedA, 5}, {kHugePageA, 5}}, /*pods=*/32, /*ephemeral=*/20);
}

// newResourcePod(framework.Resource{...}): one container per argument.
ResourcePod podRequesting(std::vector<test::ContainerRequests> containers) {
  ResourcePod pod;
  for (auto& c : containers) pod.container(std::move(c));
  return pod;
}

test::ContainerRequests req(int64_t milliCpu, int64_t memory, std::vector<std::pair<std::string, int64_t>> scalars = {},
                            int64_t ephemeral = 0) {
  return test::ContainerRequests{milliCpu, memory, ephemeral, std::move(scalars)};
}

struct FilterCase {
  FilterCase(std::string name, Pod pod, Resources used, json args = nullptr, Code wantCode = Code::Success,
             std::vector<std::string> wantReasons = {})
      : name(std::move(name)),
        pod(std::move(pod)),
        used(std::move(used)),
        args(std::move(args)),
        wantCode(wantCode),
        wantReasons(std::move(wantReasons)) {}

  std::string name;
  Pod pod;
  Resources used;  // requests of the pod already on the node
  json args;
  Code wantCode;
  std::vector<std::string> wantReasons;
};

void runFilterCases(const std::vector<FilterCase>& cases, const Resources& allocatable) {
  for (const FilterCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = fitPlugin(tc.args);
    ASSERT_NE(plugin, nullptr);
    Pod existing = ResourcePod("existing").obj();
    existing.requests = tc.used;
    NodeInfo node = nodeWith("node", allocatable, {existing});
    test::FilterOutcome out = test::runFilter(*plugin, tc.pod, node);
    EXPECT_TRUE(out.preFilter.isSuccess());
    EXPECT_EQ(toString(out.filter.code()), toString(tc.wantCode));
    EXPECT_THAT(out.filter.reasons(), ::testing::ElementsAreArray(tc.wantReasons));
  }
}

// TestEnoughRequests.
TEST(NodeResourcesFitFilter, EnoughRequests) {
  const std::vector<FilterCase> cases = {
      {"no resources requested always fits", ResourcePod(), resources(10, 20)},
      {"too many resources fails", podRequesting({req(1, 1)}), resources(10, 20), nullptr, Code::Unschedulable,
       {"Insufficient cpu", "Insufficient memory"}},
      {"too many resources fails due to init container cpu",
       podRequesting({req(1, 1)}).initContainer(req(3, 1)), resources(8, 19), nullptr, Code::Unschedulable,
       {"Insufficient cpu"}},
      {"too many resources fails due to highest init container cpu",
       podRequesting({req(1, 1)}).initContainer(req(3, 1)).initContainer(req(2, 1)), resources(8, 19), nullptr,
       Code::Unschedulable, {"Insufficient cpu"}},
      {"too many resources fails due to init container memory",
       podRequesting({req(1, 1)}).initContainer(req(1, 3)), resources(9, 19), nullptr, Code::Unschedulable,
       {"Insufficient memory"}},
      {"too many resources fails due to highest init container memory",
       podRequesting({req(1, 1)}).initContainer(req(1, 3)).initContainer(req(1, 2)), resources(9, 19), nullptr,
       Code::Unschedulable, {"Insufficient memory"}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       podRequesting({req(1, 1)}).initContainer(req(1, 1)), resources(9, 19)},
      {"multiple init containers fit because it's the max, not sum, of containers and init containers",
       podRequesting({req(1, 1)}).initContainer(req(1, 1)).initContainer(req(1, 1)), resources(9, 19)},
      {"both resources fit", podRequesting({req(1, 1)}), resources(5, 5)},
      {"one resource memory fits", podRequesting({req(2, 1)}), resources(9, 5), nullptr, Code::Unschedulable,
       {"Insufficient cpu"}},
      {"one resource cpu fits", podRequesting({req(1, 2)}), resources(5, 19), nullptr, Code::Unschedulable,
       {"Insufficient memory"}},
      {"equal edge case", podRequesting({req(5, 1)}), resources(5, 19)},
      {"equal edge case for init container", podRequesting({req(4, 1)}).initContainer(req(5, 1)),
       resources(5, 19)},
      {"extended resource fits", podRequesting({req(0, 0, {{kExtendedA, 1}})}), resources(0, 0)},
      {"extended resource fits for init container",
       podRequesting({req(0, 0)}).initContainer(req(0, 0, {{kExtendedA, 1}})), resources(0, 0)},
      {"extended resource capacity enforced", podRequesting({req(1, 1, {{kExtendedA, 10}})}),
       resources(0, 0, {{kExtendedA, 0}}), nullptr, Code::UnschedulableAndUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource capacity enforced for init container",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kExtendedA, 10}})), resources(0, 0, {{kExtendedA, 0}}),
       nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced", podRequesting({req(1, 1, {{kExtendedA, 1}})}),
       resources(0, 0, {{kExtendedA, 5}}), nullptr, Code::Unschedulable, {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for init container",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kExtendedA, 1}})), resources(0, 0, {{kExtendedA, 5}}),
       nullptr, Code::Unschedulable, {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for multiple containers",
       podRequesting({req(1, 1, {{kExtendedA, 3}}), req(1, 1, {{kExtendedA, 3}})}),
       resources(0, 0, {{kExtendedA, 2}}), nullptr, Code::UnschedulableAndUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable admits multiple init containers",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kExtendedA, 3}})).initContainer(req(1, 1, {{kExtendedA, 3}})),
       resources(0, 0, {{kExtendedA, 2}})},
      {"extended resource allocatable enforced for multiple init containers",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kExtendedA, 6}})).initContainer(req(1, 1, {{kExtendedA, 3}})),
       resources(0, 0, {{kExtendedA, 2}}), nullptr, Code::UnschedulableAndUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for unknown resource", podRequesting({req(1, 1, {{kExtendedB, 1}})}),
       resources(0, 0), nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient example.com/bbb"}},
      {"extended resource allocatable enforced for unknown resource for init container",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kExtendedB, 1}})), resources(0, 0), nullptr,
       Code::UnschedulableAndUnresolvable, {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced", podRequesting({req(1, 1, {{kKubernetesIoA, 10}})}),
       resources(0, 0), nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient kubernetes.io/something"}},
      {"kubernetes.io resource capacity enforced for init container",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kKubernetesIoB, 10}})), resources(0, 0), nullptr,
       Code::UnschedulableAndUnresolvable, {"Insufficient subdomain.kubernetes.io/something"}},
      {"hugepages resource capacity enforced", podRequesting({req(1, 1, {{kHugePageA, 10}})}),
       resources(0, 0, {{kHugePageA, 0}}), nullptr, Code::UnschedulableAndUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource capacity enforced for init container",
       podRequesting({req(0, 0)}).initContainer(req(1, 1, {{kHugePageA, 10}})), resources(0, 0, {{kHugePageA, 0}}),
       nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced for multiple containers",
       podRequesting({req(1, 1, {{kHugePageA, 3}}), req(1, 1, {{kHugePageA, 3}})}),
       resources(0, 0, {{kHugePageA, 2}}), nullptr, Code::UnschedulableAndUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"skip checking ignored extended resource", podRequesting({req(1, 1, {{kExtendedB, 1}})}), resources(0, 0),
       json{{"ignoredResources", {"example.com/bbb"}}}},
      {"resources + pod overhead fits", podRequesting({req(1, 1)}).overhead(resources(3, 13)), resources(5, 5)},
      {"requests + overhead does not fit for memory", podRequesting({req(1, 1)}).overhead(resources(1, 15)),
       resources(5, 5), nullptr, Code::Unschedulable, {"Insufficient memory"}},
      {"skip checking ignored extended resource via resource groups",
       podRequesting({req(1, 1, {{kExtendedB, 1}, {kKubernetesIoA, 1}})}), resources(0, 0),
       json{{"ignoredResourceGroups", {"example.com"}}}, Code::UnschedulableAndUnresolvable,
       {"Insufficient kubernetes.io/something"}},
      {"skip checking extended resource request with quantity zero via resource groups",
       podRequesting({req(1, 1, {{kExtendedA, 0}})}), resources(0, 0, {{kExtendedA, 6}})},
      {"skip checking resource request with quantity zero", podRequesting({req(0, 0, {{kExtendedA, 1}})}),
       resources(20, 30, {{kExtendedA, 1}})},
  };
  runFilterCases(cases, defaultAllocatable());
}

// TestNotEnoughRequests: the node allows one pod and already runs one.
TEST(NodeResourcesFitFilter, TooManyPods) {
  const std::vector<FilterCase> cases = {
      {"even without specified resources, predicate fails when there's no space for additional pod", ResourcePod(),
       resources(10, 20), nullptr, Code::Unschedulable, {"Too many pods"}},
      {"even if both resources fit, predicate fails when there's no space for additional pod",
       podRequesting({req(1, 1)}), resources(5, 5), nullptr, Code::Unschedulable, {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod",
       podRequesting({req(5, 1)}), resources(5, 19), nullptr, Code::Unschedulable, {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod due to init container",
       podRequesting({req(5, 1)}).initContainer(req(5, 1)), resources(5, 19), nullptr, Code::Unschedulable,
       {"Too many pods"}},
      // Not upstream: every reason is kept, pods first; one request larger than
      // the node makes the whole verdict unresolvable.
      {"too many pods and a request larger than the node", podRequesting({req(11, 1)}), resources(5, 5), nullptr,
       Code::UnschedulableAndUnresolvable, {"Too many pods", "Insufficient cpu"}},
  };
  runFilterCases(cases, resources(10, 20, {}, /*pods=*/1));
}

// TestStorageRequests.
TEST(NodeResourcesFitFilter, EphemeralStorage) {
  const std::vector<FilterCase> cases = {
      {"empty storage requested, and pod fits", podRequesting({req(1, 1)}), resources(2, 10)},
      {"storage ephemeral local storage request exceeds allocatable", podRequesting({req(0, 0, {}, 25)}),
       resources(2, 2), nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient ephemeral-storage"}},
      {"ephemeral local storage is sufficient", podRequesting({req(0, 0, {}, 5)}),
       resources(2, 2, {}, 0, /*ephemeral=*/10)},
      {"pod fits", podRequesting({req(0, 0, {}, 10)}), resources(2, 2)},
      // Not upstream: storage already in use on the node.
      {"ephemeral storage in use leaves too little", podRequesting({req(0, 0, {}, 11)}),
       resources(2, 2, {}, 0, /*ephemeral=*/10), nullptr, Code::Unschedulable, {"Insufficient ephemeral-storage"}},
  };
  runFilterCases(cases, defaultAllocatable());
}

// TestRestartableInitContainers (SidecarContainers is GA): the sidecar's
// request adds to the regular containers'. The pod's totals are what the
// decoder computes: 1m + 1m fits a 2m node, 1m + 2m does not.
TEST(NodeResourcesFitFilter, RestartableInitContainers) {
  Pod fits = ResourcePod();
  fits.requests = resources(2, 0);
  Pod tooBig = ResourcePod();
  tooBig.requests = resources(3, 0);
  const std::vector<FilterCase> cases = {
      {"allow pod if the total requested resources do not exceed the node's allocatable resources", fits,
       resources(0, 0)},
      {"not allow pod if the total requested resources do exceed the node's allocatable resources", tooBig,
       resources(0, 0), nullptr, Code::UnschedulableAndUnresolvable, {"Insufficient cpu"}},
  };
  for (const FilterCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = fitPlugin();
    NodeInfo node = nodeWith("node", resources(2, 0, {}, /*pods=*/1));
    test::FilterOutcome out = test::runFilter(*plugin, tc.pod, node);
    EXPECT_EQ(toString(out.filter.code()), toString(tc.wantCode));
    EXPECT_THAT(out.filter.reasons(), ::testing::ElementsAreArray(tc.wantReasons));
  }
}

// TestPreFilterDisabled.
TEST(NodeResourcesFitFilter, FilterWithoutPreFilterIsAnError) {
  auto plugin = fitPlugin();
  const auto* filter = dynamic_cast<const FilterPlugin*>(plugin.get());
  ASSERT_NE(filter, nullptr);
  CycleState state;
  Status status = filter->filter(state, ResourcePod(), nodeWith("node", resources(0, 0)));
  EXPECT_EQ(status.code(), Code::Error);
}

// A pod may request tens of thousands of distinct extended resources (a legal
// pod of 1.4 MB): a node is then checked from its own side, and the reasons
// list the first 16 shortfalls and count the rest.
TEST(NodeResourcesFitFilter, ManyExtendedResources) {
  constexpr int kCount = 40000;
  auto nameOf = [](int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "example.com/r-%05d", i);
    return std::string(buf);
  };
  std::vector<std::pair<std::string, int64_t>> wanted;
  for (int i = 0; i < kCount; ++i) wanted.emplace_back(nameOf(i), 1);
  const Pod pod = podRequesting({req(1, 1, wanted)});
  auto plugin = fitPlugin();
  ASSERT_NE(plugin, nullptr);

  {
    SCOPED_TRACE("a node with none of them: unresolvable, 16 listed and the rest counted");
    test::FilterOutcome out = test::runFilter(*plugin, pod, nodeWith("bare", resources(10, 20, {}, 32)));
    EXPECT_EQ(toString(out.filter.code()), toString(Code::UnschedulableAndUnresolvable));
    ASSERT_EQ(out.filter.reasons().size(), 17u);
    EXPECT_EQ(out.filter.reasons()[0], "Insufficient example.com/r-00000");
    EXPECT_EQ(out.filter.reasons()[15], "Insufficient example.com/r-00015");
    EXPECT_EQ(out.filter.reasons()[16], "and 39984 more insufficient resources");
  }
  {
    SCOPED_TRACE("a node with all of them fits");
    test::FilterOutcome out = test::runFilter(*plugin, pod, nodeWith("rich", resources(10, 20, wanted, 32)));
    EXPECT_TRUE(out.filter.isSuccess());
  }
  {
    SCOPED_TRACE("a node with all of them, one in use: that one is short, and evicting would help");
    Pod existing = ResourcePod("existing").obj();
    existing.requests = resources(0, 0, {{nameOf(7), 1}});
    test::FilterOutcome out = test::runFilter(*plugin, pod, nodeWith("busy", resources(10, 20, wanted, 32), {existing}));
    EXPECT_EQ(toString(out.filter.code()), toString(Code::Unschedulable));
    EXPECT_THAT(out.filter.reasons(), ::testing::ElementsAre("Insufficient example.com/r-00007"));
  }
}

// Checking a node from its own side gives the verdict and the reasons that
// checking every requested resource gives, on nodes that have some of the
// names, all, none, or use more than they have.
TEST(NodeResourcesFitFilter, NodeSideCheckEqualsEveryResourceChecked) {
  std::mt19937 random(15);  // fixed seed: the same cases every run
  std::vector<std::string> universe;
  for (int i = 0; i < 60; ++i) universe.push_back("example.com/n" + std::to_string(100 + i));
  auto plugin = fitPlugin();
  ASSERT_NE(plugin, nullptr);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::pair<std::string, int64_t>> wanted, allocatable, used;
    for (const std::string& name : universe) {
      if (random() % 3 != 0) wanted.emplace_back(name, int64_t(random() % 4));
      if (random() % 4 == 0) allocatable.emplace_back(name, int64_t(random() % 5));
      if (random() % 6 == 0) used.emplace_back(name, int64_t(random() % 3));
    }
    const Pod pod = podRequesting({req(0, 0, wanted)});
    Pod existing = ResourcePod("existing").obj();
    existing.requests = resources(0, 0, used);
    const NodeInfo node = nodeWith("node", resources(10, 20, allocatable, 32), {existing});

    std::vector<std::string> reasons;
    bool unresolvable = false;
    for (const auto& [name, quantity] : wanted) {
      if (quantity == 0) continue;
      const int64_t alloc = node.allocatable().scalar(name);
      if (quantity > alloc - node.requested.scalar(name)) {
        reasons.push_back("Insufficient " + name);
        unresolvable = unresolvable || quantity > alloc;
      }
    }
    if (reasons.size() > 16) {
      const size_t more = reasons.size() - 16;
      reasons.resize(16);
      reasons.push_back("and " + std::to_string(more) + " more insufficient resources");
    }
    const Code want = reasons.empty() ? Code::Success
                      : unresolvable  ? Code::UnschedulableAndUnresolvable
                                      : Code::Unschedulable;
    test::FilterOutcome out = test::runFilter(*plugin, pod, node);
    EXPECT_EQ(toString(out.filter.code()), toString(want));
    EXPECT_THAT(out.filter.reasons(), ::testing::ElementsAreArray(reasons));
  }
}

TEST(NodeResourcesFit, NameAndExtensionPoints) {
  auto plugin = fitPlugin();
  EXPECT_EQ(plugin->name(), names::kNodeResourcesFit);
  EXPECT_NE(dynamic_cast<const PreFilterPlugin*>(plugin.get()), nullptr);
  EXPECT_NE(dynamic_cast<const FilterPlugin*>(plugin.get()), nullptr);
  EXPECT_NE(dynamic_cast<const PreScorePlugin*>(plugin.get()), nullptr);
  EXPECT_NE(dynamic_cast<const ScorePlugin*>(plugin.get()), nullptr);
}

// ---------------------------------------------------------------------------
// Scoring.

struct ScoreCase {
  ScoreCase(std::string name, Pod pod, std::vector<NodeInfo> nodes, std::vector<int64_t> want, json args = nullptr,
            bool runPreScore = true)
      : name(std::move(name)),
        pod(std::move(pod)),
        nodes(std::move(nodes)),
        want(std::move(want)),
        args(std::move(args)),
        runPreScore(runPreScore) {}

  std::string name;
  Pod pod;
  std::vector<NodeInfo> nodes;
  std::vector<int64_t> want;
  json args;         // NodeResourcesFitArgs
  bool runPreScore;  // false: Score computes the pod's requests itself
};

void runScoreCases(const std::vector<ScoreCase>& cases) {
  for (const ScoreCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = fitPlugin(tc.args);
    ASSERT_NE(plugin, nullptr);
    std::vector<int64_t> got;
    if (tc.runPreScore) {
      test::ScoreOutcome out = test::runScore(*plugin, tc.pod, test::pointers(tc.nodes));
      EXPECT_TRUE(out.preScore.isSuccess());
      got = out.scores;
    } else {
      CycleState state;
      const auto* scorer = dynamic_cast<const ScorePlugin*>(plugin.get());
      for (const NodeInfo& n : tc.nodes) got.push_back(scorer->score(state, tc.pod, n));
    }
    EXPECT_THAT(got, ::testing::ElementsAreArray(tc.want));
  }
}

json strategy(std::string type, json resources = nullptr, json shape = nullptr) {
  json s = {{"type", type}};
  if (!resources.is_null()) s["resources"] = resources;
  if (!shape.is_null()) s["requestedToCapacityRatio"] = {{"shape", shape}};
  return json{{"scoringStrategy", s}};
}

const json kDefaultResources = json::array({{{"name", "cpu"}, {"weight", 1}}, {{"name", "memory"}, {"weight", 1}}});
const std::string kExtendedRes = "abc.com/xyz";
const json kExtendedResourceSet = json::array(
    {{{"name", "cpu"}, {"weight", 1}}, {{"name", "memory"}, {"weight", 1}}, {{"name", kExtendedRes}, {"weight", 1}}});

// st.MakeNode().Capacity({"cpu": c, "memory": m}).
NodeInfo node(std::string name, int64_t milliCpu, int64_t memory, std::vector<Pod> pods = {},
              std::vector<std::pair<std::string, int64_t>> scalars = {}) {
  return nodeWith(std::move(name), resources(milliCpu, memory, std::move(scalars)), pods);
}

ResourcePod reqPod(int64_t milliCpu, int64_t memory) { return ResourcePod().container(cpuMem(milliCpu, memory)); }
// Req({"cpu": "1000", "memory": "2000"}).Req({"cpu": "2000", "memory": "3000"}).
ResourcePod twoContainerPod() {
  return ResourcePod().container(cpuMem(cores(1000), 2000)).container(cpuMem(cores(2000), 3000));
}

// TestLeastAllocatedScoringStrategy.
TEST(NodeResourcesFitScore, LeastAllocated) {
  const json args = strategy("LeastAllocated", kDefaultResources);
  const json extended = strategy("LeastAllocated", kExtendedResourceSet);
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", ResourcePod(),
       {node("node1", cores(4000), 10000), node("node2", cores(4000), 10000)}, {100, 100}, args},
      {"nothing scheduled, resources requested, differently sized nodes", twoContainerPod(),
       {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {37, 50}, args},
      {"no resources requested, pods scheduled", ResourcePod(),
       {node("node1", cores(4000), 10000, {ResourcePod(), ResourcePod()}),
        node("node2", cores(4000), 10000, {ResourcePod(), ResourcePod()})},
       {100, 100}, args},
      {"no resources requested, pods scheduled with resources", ResourcePod(),
       {node("node1", cores(10000), 20000, {reqPod(cores(3000), 0), reqPod(cores(3000), 0)}),
        node("node2", cores(10000), 20000, {reqPod(cores(3000), 0), reqPod(cores(3000), 5000)})},
       {70, 57}, args},
      {"resources requested, pods scheduled with resources", twoContainerPod(),
       {node("node1", cores(10000), 20000, {reqPod(cores(3000), 0)}),
        node("node2", cores(10000), 20000, {reqPod(cores(3000), 5000)})},
       {57, 45}, args},
      {"resources requested, pods scheduled with resources, differently sized nodes", twoContainerPod(),
       {node("node1", cores(10000), 20000, {reqPod(cores(3000), 0)}),
        node("node2", cores(10000), 50000, {reqPod(cores(3000), 5000)})},
       {57, 60}, args},
      {"requested resources exceed node capacity", reqPod(cores(3000), 0),
       {node("node1", cores(4000), 10000, {reqPod(cores(3000), 0)}),
        node("node2", cores(4000), 10000, {reqPod(cores(3000), 5000)})},
       {50, 25}, args},
      {"zero node resources, pods scheduled with resources", ResourcePod(),
       {node("node1", 0, 0, {reqPod(cores(3000), 0)}), node("node2", 0, 0, {reqPod(cores(3000), 5000)})}, {0, 0},
       args},
      {"nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
       twoContainerPod(), {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {41, 50},
       strategy("LeastAllocated", json::array({{{"name", "memory"}, {"weight", 2}}, {{"name", "cpu"}, {"weight", 1}}}))},
      {"bypass extended resource if the pod does not request", twoContainerPod(),
       {node("node1", cores(6000), 10000), node("node2", cores(6000), 10000, {}, {{kExtendedRes, 4}})}, {50, 50},
       extended},
      {"honor extended resource if the pod requests",
       ResourcePod().container({cores(3000), 5000, 0, {{kExtendedRes, 2}}}),
       {node("node1", cores(6000), 10000, {}, {{kExtendedRes, 4}}),
        node("node2", cores(6000), 10000, {}, {{kExtendedRes, 10}})},
       {50, 60}, extended},
      {"if the node doesn't have a resource", reqPod(cores(3000), 4000),
       {node("node1", cores(6000), 10000), node("node2", cores(6000), 10000, {}, {{kExtendedRes, 4}})}, {55, 55},
       strategy("LeastAllocated", json::array({{{"name", kExtendedRes}, {"weight", 2}},
                                               {{"name", "cpu"}, {"weight", 1}},
                                               {{"name", "memory"}, {"weight", 1}}}))},
      // Through the v1 args a weight of 0 (or none) defaults to 1.
      {"a zero weight is defaulted to 1", twoContainerPod(),
       {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {37, 50},
       strategy("LeastAllocated", json::array({{{"name", "cpu"}, {"weight", 0}}, {{"name", "memory"}}}))},
      {"no scoringStrategy is LeastAllocated on cpu and memory", twoContainerPod(),
       {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {37, 50}},
  };
  runScoreCases(cases);
}

// TestMostAllocatedScoringStrategy.
TEST(NodeResourcesFitScore, MostAllocated) {
  const json args = strategy("MostAllocated", kDefaultResources);
  const json extended = strategy("MostAllocated", kExtendedResourceSet);
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", ResourcePod(),
       {node("node1", cores(4000), 10000), node("node2", cores(4000), 10000)}, {0, 0}, args},
      {"nothing scheduled, resources requested, differently sized nodes", twoContainerPod(),
       {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {62, 50}, args},
      {"no resources requested, pods scheduled with resources", ResourcePod(),
       {node("node1", cores(10000), 20000, {reqPod(cores(3000), 0), reqPod(cores(3000), 0)}),
        node("node2", cores(10000), 20000, {reqPod(cores(3000), 0), reqPod(cores(3000), 5000)})},
       {30, 42}, args},
      {"resources requested, pods scheduled with resources", twoContainerPod(),
       {node("node1", cores(10000), 20000, {reqPod(cores(3000), 0)}),
        node("node2", cores(10000), 20000, {reqPod(cores(3000), 5000)})},
       {42, 55}, args},
      {"resources requested equal node capacity",
       ResourcePod().container(cpuMem(cores(2000), 4000)).container(cpuMem(cores(3000), 5000)),
       {node("node1", cores(5000), 10000), node("node2", cores(10000), 9000)}, {95, 75}, args},
      {"nothing scheduled, resources requested, differently sized nodes, memory weighted", twoContainerPod(),
       {node("node1", cores(4000), 10000), node("node2", cores(6000), 10000)}, {58, 50},
       strategy("MostAllocated", json::array({{{"name", "memory"}, {"weight", 2}}, {{"name", "cpu"}, {"weight", 1}}}))},
      {"no resources requested, pods scheduled, nonzero request for resource", ResourcePod().emptyContainer(),
       {node("node1", 250, Mi(1000), {ResourcePod().emptyContainer(), ResourcePod().emptyContainer()}),
        node("node2", 250, Mi(1000))},
       {80, 30}, args},
      {"bypass extended resource if the pod does not request", twoContainerPod(),
       {node("node1", cores(6000), 10000), node("node2", cores(6000), 10000, {}, {{kExtendedRes, 4}})}, {50, 50},
       extended},
      {"honor extended resource if the pod request",
       ResourcePod().container({cores(3000), 5000, 0, {{kExtendedRes, 2}}}),
       {node("node1", cores(6000), 10000, {}, {{kExtendedRes, 4}}),
        node("node2", cores(6000), 10000, {}, {{kExtendedRes, 10}})},
       {50, 40}, extended},
      {"if the node doesn't have a resource", reqPod(cores(3000), 4000),
       {node("node1", cores(6000), 10000), node("node2", cores(6000), 10000, {}, {{kExtendedRes, 4}})}, {45, 45},
       strategy("MostAllocated", json::array({{{"name", kExtendedRes}, {"weight", 2}},
                                              {{"name", "cpu"}, {"weight", 1}},
                                              {{"name", "memory"}, {"weight", 1}}}))},
  };
  runScoreCases(cases);
}

const json kLeastShape = json::array({{{"utilization", 0}, {"score", 10}}, {{"utilization", 100}, {"score", 0}}});
const json kMostShape = json::array({{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}});
const json kBinPackShape = json::array({{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 1}}});

// TestRequestedToCapacityRatioScoringStrategy.
TEST(NodeResourcesFitScore, RequestedToCapacityRatio) {
  const json args = strategy("RequestedToCapacityRatio", kDefaultResources, kLeastShape);
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested (default - least requested nodes have priority)", ResourcePod(),
       {node("node1", cores(4000), 10000, {ResourcePod(), ResourcePod()}), node("node2", cores(4000), 10000)},
       {100, 100}, args},
      {"nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
       "priority)",
       twoContainerPod(),
       {node("node1", cores(4000), 10000, {ResourcePod(), ResourcePod()}), node("node2", cores(6000), 10000)},
       {38, 50}, args},
      {"no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
       ResourcePod(),
       {node("node1", cores(4000), 10000, {reqPod(cores(3000), 5000)}),
        node("node2", cores(6000), 10000, {reqPod(cores(3000), 5000)})},
       {38, 50}, args},
  };
  runScoreCases(cases);
}

// TestResourceBinPackingSingleExtended.
TEST(NodeResourcesFitScore, BinPackingSingleExtendedResource) {
  const json args = strategy("RequestedToCapacityRatio", json::array({{{"name", "intel.com/foo"}, {"weight", 1}}}),
                             kBinPackShape);
  auto foo = [](int64_t n) { return ResourcePod().container({std::nullopt, std::nullopt, 0, {{"intel.com/foo", n}}}); };
  auto nodes = [](std::vector<Pod> onNode2) {
    return std::vector<NodeInfo>{node("node1", 4000, Mi(10000), {}, {{"intel.com/foo", 8}}),
                                 node("node2", 4000, Mi(10000), onNode2, {{"intel.com/foo", 4}})};
  };
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", ResourcePod(), nodes({}), {0, 0}, args},
      {"resources requested, pods scheduled with less resources", foo(2), nodes({}), {2, 5}, args},
      {"resources requested, pods scheduled with resources, on node with existing pod running", foo(2),
       nodes({foo(2)}), {2, 10}, args},
      {"resources requested, pods scheduled with more resources", foo(4), nodes({}), {5, 10}, args},
  };
  runScoreCases(cases);
}

// TestResourceBinPackingMultipleExtended.
TEST(NodeResourcesFitScore, BinPackingMultipleExtendedResources) {
  const json args = strategy(
      "RequestedToCapacityRatio",
      json::array({{{"name", "intel.com/foo"}, {"weight", 3}}, {{"name", "intel.com/bar"}, {"weight", 5}}}),
      kBinPackShape);
  auto pod = [](int64_t foo, int64_t bar) {
    return ResourcePod().container({std::nullopt, std::nullopt, 0, {{"intel.com/foo", foo}, {"intel.com/bar", bar}}});
  };
  auto nodes = [](std::vector<Pod> onNode2) {
    return std::vector<NodeInfo>{
        node("node1", 4000, Mi(10000), {}, {{"intel.com/foo", 8}, {"intel.com/bar", 4}}),
        node("node2", 4000, Mi(10000), onNode2, {{"intel.com/foo", 4}, {"intel.com/bar", 8}})};
  };
  const std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested", ResourcePod(), nodes({}), {0, 0}, args},
      {"resources requested, pods scheduled with less resources", pod(2, 2), nodes({}), {4, 3}, args},
      {"resources requested, pods scheduled with resources, on node with existing pod running", pod(2, 2),
       nodes({pod(4, 2)}), {4, 7}, args},
      {"resources requested, pods scheduled with more resources", pod(4, 2), nodes({}), {5, 5}, args},
  };
  runScoreCases(cases);
}

// TestFitScore.
TEST(NodeResourcesFitScore, Strategies) {
  auto nodes = [] {
    return std::vector<NodeInfo>{node("node1", cores(4000), 10000, {reqPod(cores(2000), 4000)}),
                                 node("node2", cores(6000), 10000, {reqPod(cores(1000), 2000)})};
  };
  // An existing pod with a sidecar: Req(1000, 2000) plus SidecarReq(1000, 2000).
  Pod withSidecar = ResourcePod().container(cpuMem(cores(1000), 2000)).container(cpuMem(cores(1000), 2000));
  auto sidecarNodes = [&] {
    return std::vector<NodeInfo>{node("node1", cores(4000), 10000, {withSidecar}),
                                 node("node2", cores(4000), 10000, {reqPod(cores(1000), 2000)})};
  };
  const json rtcrLeast = strategy("RequestedToCapacityRatio", kDefaultResources, kLeastShape);
  const json rtcrMost = strategy("RequestedToCapacityRatio", kDefaultResources, kMostShape);
  const json most = strategy("MostAllocated", kDefaultResources);
  const json least = strategy("LeastAllocated", kDefaultResources);
  const std::vector<ScoreCase> cases = {
      {"test case for ScoringStrategy RequestedToCapacityRatio case1", reqPod(cores(3000), 5000), nodes(), {10, 32},
       rtcrLeast},
      {"test case for ScoringStrategy RequestedToCapacityRatio case2", reqPod(cores(3000), 5000), nodes(), {95, 68},
       rtcrMost},
      {"test case for ScoringStrategy MostAllocated", reqPod(cores(1000), 2000), nodes(), {67, 36}, most},
      {"test case for ScoringStrategy LeastAllocated", reqPod(cores(1000), 2000), nodes(), {32, 63}, least},
      {"test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
       reqPod(cores(3000), 5000), nodes(), {10, 32}, rtcrLeast, false},
      {"test case for ScoringStrategy MostAllocated if PreScore is not called", reqPod(cores(1000), 2000), nodes(),
       {67, 36}, most, false},
      {"test case for ScoringStrategy LeastAllocated if PreScore is not called", reqPod(cores(1000), 2000), nodes(),
       {32, 63}, least, false},
      {"test case for ScoringStrategy MostAllocated with sidecar container", reqPod(cores(1000), 2000),
       sidecarNodes(), {67, 45}, most},
      {"test case for ScoringStrategy LeastAllocated with sidecar container", reqPod(cores(1000), 2000),
       sidecarNodes(), {32, 55}, least},
  };
  runScoreCases(cases);
}

// Not upstream's tables, but upstream's rules: ephemeral-storage scores on
// real requests, and resources that are never in a node's allocatable
// ("pods") are left out.
TEST(NodeResourcesFitScore, EphemeralStorageAndUnscoredResources) {
  NodeInfo n1 = nodeWith("node1", resources(1000, 1000, {}, 110, 1000), {reqPod(500, 500)});
  Pod pod = ResourcePod().container({100, 100, 250, {}});
  const std::vector<ScoreCase> cases = {
      {"ephemeral-storage alone", pod, {n1}, {75},
       strategy("LeastAllocated", json::array({{{"name", "ephemeral-storage"}, {"weight", 1}}}))},
      {"pods is never scored", pod, {n1}, {60},
       strategy("MostAllocated", json::array({{{"name", "pods"}, {"weight", 5}}, {{"name", "cpu"}, {"weight", 1}}}))},
  };
  runScoreCases(cases);
}

// Hostile quantities near the int64 limits must neither crash nor trip the
// sanitizers; upstream's Go arithmetic wraps, and so does ours.
TEST(NodeResourcesFitScore, ExtremeQuantitiesAreSafe) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Pod hugePod = ResourcePod().container({kMax, kMax, kMax, {{"example.com/gpu", kMax}}});
  std::vector<NodeInfo> nodes = {
      nodeWith("max", resources(kMax, kMax, {{"example.com/gpu", kMax}}, kMax, kMax), {hugePod}),
      nodeWith("min", resources(kMin, kMin, {{"example.com/gpu", kMin}}, kMin, kMin), {hugePod}),
      nodeWith("neg", resources(-1, -1, {{"example.com/gpu", -1}}, 0, -1)),
  };
  const json resourcesAll = json::array({{{"name", "cpu"}, {"weight", 100}},
                                         {{"name", "memory"}, {"weight", 100}},
                                         {{"name", "ephemeral-storage"}, {"weight", 100}},
                                         {{"name", "example.com/gpu"}, {"weight", 100}}});
  for (const json& args : {strategy("LeastAllocated", resourcesAll), strategy("MostAllocated", resourcesAll),
                           strategy("RequestedToCapacityRatio", resourcesAll, kLeastShape)}) {
    auto plugin = fitPlugin(args);
    test::ScoreOutcome out = test::runScore(*plugin, hugePod, test::pointers(nodes));
    EXPECT_EQ(out.scores.size(), nodes.size());
    for (const NodeInfo& n : nodes) (void)test::runFilter(*plugin, hugePod, n);
  }
}

// TestBrokenLinearFunction.
TEST(ResourceAllocation, BrokenLinearFunction) {
  struct Case {
    std::vector<ShapePoint> points;
    std::vector<std::pair<int64_t, int64_t>> assertions;  // utilization -> score
  };
  const std::vector<Case> cases = {
      {{{10, 1}, {90, 9}},
       {{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}}, {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}}, {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    for (const auto& [p, expected] : cases[i].assertions)
      EXPECT_EQ(brokenLinear(cases[i].points, p), expected) << "case " << i << " p=" << p;
  }
}

// What the engine calls (leastAllocatedAll, balancedAll) answers exactly as
// the per-node scorers checked above, where its fast path for cpu and memory
// applies and where it leaves off: a resource the node lacks, requests past
// capacity, capacities at the bound of exact floating-point quotients,
// hostile amounts, other resource lists.
TEST(ResourceAllocation, BatchScoresEqualPerNodeScores) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kExactBound = (int64_t{1} << 53) / 100;  // capacities below it divide in floating point
  struct NodeCase {
    std::string name;
    int64_t cpu, memory, usedCpu, usedMemory;
  };
  const std::vector<NodeCase> nodeCases = {
      {"half used", 4000, int64_t{8} << 30, 2000, int64_t{4} << 30},
      {"no cpu", 0, int64_t{8} << 30, 0, int64_t{1} << 30},
      {"no memory", 4000, 0, 100, 0},
      {"nothing allocatable", 0, 0, 0, 0},
      {"overcommitted", 1000, 1000, 3000, 5000},
      {"full to the unit", 1000, 3000, 500, 2000},
      {"capacity one below the exact bound", kExactBound - 1, kExactBound - 1, 7, 3},
      {"capacity at the exact bound", kExactBound, kExactBound, 7, 3},
      {"a quotient one short of an integer", 3, 999999999999, 1, 1},
      {"near the int64 limit", kMax, kMax, kMax - 5, 12345},
      {"negative allocatable", -1, -1, 0, 0},
      {"negative usage", 1000, 1000, -5000, kMin},
  };
  std::vector<NodeInfo> nodes;
  for (const NodeCase& c : nodeCases) {
    NodeInfo n;
    n.node.name = c.name;
    n.node.allocatable.milliCpu = c.cpu;
    n.node.allocatable.memory = c.memory;
    n.node.allocatable.ephemeralStorage = 1000;
    n.requested.milliCpu = c.usedCpu;
    n.requested.memory = c.usedMemory;
    n.nonZeroRequested = {c.usedCpu / 2, c.usedMemory};  // differs from requested: the basis matters
    nodes.push_back(std::move(n));
  }
  const std::vector<const NodeInfo*> pointers = test::pointers(nodes);
  struct ResourceList {
    std::string name;
    std::vector<ResourceSpec> specs;
  };
  const std::vector<ResourceList> lists = {
      {"cpu and memory (the default)", defaultResourceSpecs()},
      {"cpu and memory weighted 3 and 7", {{"cpu", 3}, {"memory", 7}}},
      {"memory, then cpu", {{"memory", 1}, {"cpu", 1}}},
      {"with ephemeral storage", {{"cpu", 1}, {"memory", 1}, {"ephemeral-storage", 2}}},
  };
  const std::vector<std::pair<int64_t, int64_t>> podRequests = {{0, 0}, {500, int64_t{1} << 20}, {1, 1}, {kMax, kMax}};
  for (const ResourceList& list : lists) {
    for (RequestBasis basis : {RequestBasis::NonZero, RequestBasis::Actual}) {
      const ResourceAllocation allocation(list.specs, basis);
      for (const auto& [cpu, memory] : podRequests) {
        std::vector<int64_t> requests;
        for (const ResourceSpec& spec : list.specs)
          requests.push_back(spec.name == "cpu" ? cpu : spec.name == "memory" ? memory : 100);
        std::vector<int64_t> least(nodes.size());
        std::vector<int64_t> balanced(nodes.size());
        allocation.leastAllocatedAll(pointers, requests, least);
        allocation.balancedAll(pointers, requests, balanced);
        for (size_t i = 0; i < nodes.size(); ++i) {
          SCOPED_TRACE(list.name + (basis == RequestBasis::NonZero ? ", non-zero basis" : ", actual basis") +
                       ", pod " + std::to_string(cpu) + "m/" + std::to_string(memory) + ", node " + nodes[i].name());
          EXPECT_EQ(least[i], allocation.leastAllocated(nodes[i], requests));
          EXPECT_EQ(balanced[i], allocation.balanced(nodes[i], requests));
        }
      }
    }
  }
  // The integer quotient right below an integer: (3 - 2) * 100 / 3 = 33.
  EXPECT_EQ(leastRequestedScore(2, 3), 33);
}

// ---------------------------------------------------------------------------
// Args: defaults and upstream validation, errors naming the field.

TEST(NodeResourcesFitArgs, Defaults) {
  for (const json& args : {json(nullptr), json::object(), json{{"scoringStrategy", nullptr}},
                           json{{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "NodeResourcesFitArgs"}}}) {
    SCOPED_TRACE(args.dump());
    auto decoded = decodeNodeResourcesFitArgs(args);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(decoded->strategy, ScoringStrategyType::LeastAllocated);
    EXPECT_EQ(decoded->resources, defaultResourceSpecs());
    EXPECT_TRUE(decoded->ignoredResources.empty());
  }
  auto mostNoResources = decodeNodeResourcesFitArgs(json{{"scoringStrategy", {{"type", "MostAllocated"}}}});
  ASSERT_TRUE(mostNoResources.ok());
  EXPECT_EQ(mostNoResources->strategy, ScoringStrategyType::MostAllocated);
  EXPECT_EQ(mostNoResources->resources, defaultResourceSpecs());
}

// Args as users write them in a KubeSchedulerConfiguration file.
TEST(NodeResourcesFitArgs, FromYaml) {
  auto args = parseYaml(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: NodeResourcesFitArgs
ignoredResourceGroups: [example.com]
scoringStrategy:
  type: RequestedToCapacityRatio
  resources:
  - name: intel.com/foo
    weight: 3
  - name: intel.com/bar
    weight: 5
  requestedToCapacityRatio:
    shape:
    - utilization: 0
      score: 0
    - utilization: 100
      score: 10
)");
  ASSERT_TRUE(args.ok()) << args.error().message;
  auto decoded = decodeNodeResourcesFitArgs(*args);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(decoded->strategy, ScoringStrategyType::RequestedToCapacityRatio);
  EXPECT_EQ(decoded->resources, (std::vector<ResourceSpec>{{"intel.com/foo", 3}, {"intel.com/bar", 5}}));
  EXPECT_EQ(decoded->shape, (std::vector<ShapePoint>{{0, 0}, {100, 10}}));
  EXPECT_EQ(decoded->ignoredResourceGroups, std::vector<std::string>{"example.com"});
}

TEST(NodeResourcesFitArgs, ValidConfigurations) {
  const std::vector<json> cases = {
      json{{"ignoredResources", {"example.com/foo", "foo"}}, {"ignoredResourceGroups", {"example.com"}}},
      strategy("RequestedToCapacityRatio", kDefaultResources,
               json::array({{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}})),
      strategy("RequestedToCapacityRatio", nullptr, json::array({{{"utilization", 50}, {"score", 5}}})),
      strategy("MostAllocated", json::array({{{"name", "cpu"}, {"weight", 100}}})),
  };
  for (const json& args : cases) {
    SCOPED_TRACE(args.dump());
    auto decoded = decodeNodeResourcesFitArgs(args);
    EXPECT_TRUE(decoded.ok()) << decoded.error().message;
  }
}

TEST(NodeResourcesFitArgs, InvalidConfigurations) {
  struct Case {
    std::string name;
    json args;
    std::string wantError;
  };
  const std::string shapePath = "NodeResourcesFitArgs.scoringStrategy.requestedToCapacityRatio.shape";
  const std::vector<Case> cases = {
      {"negative weight", strategy("LeastAllocated", json::array({{{"name", "memory"}, {"weight", -1}}, {{"name", "cpu"}, {"weight", 1}}})),
       "NodeResourcesFitArgs.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in "
       "valid range (0, 100]"},
      {"weight larger than MaxNodeScore",
       strategy("MostAllocated", json::array({{{"name", "memory"}, {"weight", 1}}, {{"name", "cpu"}, {"weight", 101}}})),
       "NodeResourcesFitArgs.scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in "
       "valid range (0, 100]"},
      {"unknown strategy type", strategy("Balanced"),
       "NodeResourcesFitArgs.scoringStrategy.type: Unsupported value: \"Balanced\": supported values: "
       "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"strategy without type", json{{"scoringStrategy", {{"resources", kDefaultResources}}}},
       "NodeResourcesFitArgs.scoringStrategy.type: Unsupported value: \"\": supported values: \"LeastAllocated\", "
       "\"MostAllocated\", \"RequestedToCapacityRatio\""},
      {"ratio without shape params", strategy("RequestedToCapacityRatio"),
       "NodeResourcesFitArgs.scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type "
       "is RequestedToCapacityRatio"},
      {"ratio with empty shape", strategy("RequestedToCapacityRatio", nullptr, json::array()),
       shapePath + ": Required value: at least one point must be specified"},
      {"shape not increasing",
       strategy("RequestedToCapacityRatio", nullptr,
                json::array({{{"utilization", 10}, {"score", 1}}, {{"utilization", 10}, {"score", 2}}})),
       shapePath + "[1].utilization: Invalid value: 10: values must be sorted in increasing order"},
      {"shape utilization out of range",
       strategy("RequestedToCapacityRatio", nullptr,
                json::array({{{"utilization", 0}, {"score", 1}}, {{"utilization", 110}, {"score", 2}}})),
       shapePath + "[1].utilization: Invalid value: 110: not in valid range [0, 100]"},
      {"shape score out of range",
       strategy("RequestedToCapacityRatio", nullptr, json::array({{{"utilization", 0}, {"score", 11}}})),
       shapePath + "[0].score: Invalid value: 11: not in valid range [0, 10]"},
      {"several shape errors are all reported",
       strategy("RequestedToCapacityRatio", nullptr,
                json::array({{{"utilization", 50}, {"score", -1}}, {{"utilization", 20}, {"score", 2}}})),
       "[" + shapePath + "[1].utilization: Invalid value: 20: values must be sorted in increasing order, " +
           shapePath + "[0].score: Invalid value: -1: not in valid range [0, 10]]"},
      {"shape given for another strategy", strategy("LeastAllocated", nullptr, kLeastShape),
       "NodeResourcesFitArgs.scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not "
       "RequestedToCapacityRatio"},
      {"resource group with a slash", json{{"ignoredResourceGroups", {"example.com/aa"}}},
       "NodeResourcesFitArgs.ignoredResourceGroups[0]: Invalid value: \"example.com/aa\": resource group name can't "
       "contain '/'"},
      {"ignored resource that is not a label name", json{{"ignoredResources", {"ok", "-bad"}}},
       "NodeResourcesFitArgs.ignoredResources[1]: Invalid value: \"-bad\": name part must consist of alphanumeric "
       "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
       "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
      {"unknown field", json{{"ignoredResource", {"a"}}}, "NodeResourcesFitArgs.ignoredResource: unknown field"},
      {"wrong type", strategy("LeastAllocated", json::array({{{"name", "cpu"}, {"weight", "1"}}})),
       "NodeResourcesFitArgs.scoringStrategy.resources[0].weight: must be an integer"},
      {"args not an object", json::array(), "NodeResourcesFitArgs: must be an object"},
      {"utilization not an integer",
       strategy("RequestedToCapacityRatio", nullptr, json::array({{{"utilization", 1.5}, {"score", 1}}})),
       shapePath + "[0].utilization: must be an integer"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto decoded = decodeNodeResourcesFitArgs(tc.args);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.error().message, tc.wantError);
    EXPECT_FALSE(newNodeResourcesFit(tc.args).ok());
  }
}

}  // namespace
}  // namespace placer
