// Per-node cost of the resource plugins over a 5,000-node cluster: the loops
// the engine runs for every decision (Filter on every node, Score on every
// feasible node), after one PreFilter / PreScore. Reported as time per node.
//
//   ./node_resources_bench --benchmark_min_time=0.5

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/framework.h"
#include "scoring/plugins/balanced_allocation.h"
#include "scoring/plugins/node_resources_fit.h"
#include "test/support/resource_builders.h"

namespace placer {
namespace {

constexpr size_t kNodes = 5000;

std::vector<NodeInfo> makeCluster(bool withGpus) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int64_t> used(0, 90);
  std::vector<NodeInfo> nodes;
  nodes.reserve(kNodes);
  for (size_t i = 0; i < kNodes; ++i) {
    NodeInfo n;
    n.node.name = "node-" + std::to_string(i);
    n.node.allocatable = test::resources(16000, 64LL << 30, {}, 110, 100LL << 30);
    if (withGpus && i % 4 == 0) n.node.allocatable.setScalar("nvidia.com/gpu", 8);
    n.requested = test::resources(16000 * used(rng) / 100, (64LL << 30) * used(rng) / 100);
    n.nonZeroRequested = {n.requested.milliCpu, n.requested.memory};
    n.podCount = static_cast<int32_t>(used(rng));
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Pod makePod(bool withGpu) {
  test::ContainerRequests c = test::cpuMem(500, 1LL << 30);
  if (withGpu) c.scalars.emplace_back("nvidia.com/gpu", 1);
  return test::ResourcePod().container(c);
}

void BM_FitFilter(benchmark::State& state) {
  const bool gpu = state.range(0) != 0;
  auto plugin = std::move(newNodeResourcesFit(nullptr)).value();
  const auto& pre = dynamic_cast<const PreFilterPlugin&>(*plugin);
  const auto& filter = dynamic_cast<const FilterPlugin&>(*plugin);
  std::vector<NodeInfo> nodes = makeCluster(gpu);
  Pod pod = makePod(gpu);
  ClusterView view;
  for (auto _ : state) {
    CycleState cycle;
    benchmark::DoNotOptimize(pre.preFilter(cycle, pod, view));
    size_t feasible = 0;
    for (const NodeInfo& n : nodes) feasible += filter.filter(cycle, pod, n).isSuccess();
    benchmark::DoNotOptimize(feasible);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kNodes));
}
BENCHMARK(BM_FitFilter)->Arg(0)->Arg(1)->ArgName("gpu");

void runScore(benchmark::State& state, const Plugin& plugin, const Pod& pod, const std::vector<NodeInfo>& nodes) {
  const auto& pre = dynamic_cast<const PreScorePlugin&>(plugin);
  const auto& scorer = dynamic_cast<const ScorePlugin&>(plugin);
  std::vector<const NodeInfo*> feasible;
  for (const NodeInfo& n : nodes) feasible.push_back(&n);
  ClusterView view;
  for (auto _ : state) {
    CycleState cycle;
    benchmark::DoNotOptimize(pre.preScore(cycle, pod, feasible, view));
    int64_t total = 0;
    for (const NodeInfo* n : feasible) total += scorer.score(cycle, pod, *n);
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * nodes.size()));
}

void BM_FitScore(benchmark::State& state) {
  static const char* kStrategies[] = {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"};
  nlohmann::json strategy = {{"type", kStrategies[state.range(0)]}};
  if (state.range(0) == 2)
    strategy["requestedToCapacityRatio"] = {
        {"shape", {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}}};
  auto plugin = std::move(newNodeResourcesFit(nlohmann::json{{"scoringStrategy", strategy}})).value();
  runScore(state, *plugin, makePod(false), makeCluster(false));
}
BENCHMARK(BM_FitScore)->Arg(0)->Arg(1)->Arg(2)->ArgName("strategy");

void BM_BalancedScore(benchmark::State& state) {
  const bool gpu = state.range(0) != 0;
  nlohmann::json args = nullptr;
  if (gpu) args = {{"resources", {{{"name", "cpu"}}, {{"name", "memory"}}, {{"name", "nvidia.com/gpu"}}}}};
  auto plugin = std::move(newNodeResourcesBalancedAllocation(args)).value();
  runScore(state, *plugin, makePod(gpu), makeCluster(gpu));
}
BENCHMARK(BM_BalancedScore)->Arg(0)->Arg(1)->ArgName("gpu");

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
