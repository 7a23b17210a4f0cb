// Per-node cost of the PLUGINS-A plugins (NodeUnschedulable, NodeName,
// TaintToleration, NodeAffinity, NodePorts, ImageLocality, LabelPriority) on a
// generated 5,000-node cluster: one PreFilter/PreScore per iteration, then
// Filter or Score on every node, as the engine runs them.
//
//   build-*/test/bench/filter_plugins_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// The ns_per_node counter is what matters; figures are in test/bench/RESULTS.md.
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/framework.h"
#include "scoring/registry.h"
#include "test/support/builders.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

constexpr int kNodes = 5000;

const MutableClusterView& view() {
  static const auto* v = [] {
    auto* view = new MutableClusterView();
    GeneratorParams params;
    params.nodes = kNodes;
    params.podsPerNode = 4;
    fillClusterView(*view, params);
    return view;
  }();
  return *v;
}

// 0: a plain pod (nothing to check: the fast path);
// 1: tolerations, required zone affinity, a preferred term, a host port and a node selector.
Pod podOf(int kind) {
  test::PodBuilder b("bench");
  b.container("registry.example.com/team/app:1.4.2");
  if (kind == 1) {
    b.toleration("dedicated", TolerationOperator::Equal, "highmem", TaintEffect::NoSchedule)
        .toleration("node.kubernetes.io/not-ready", TolerationOperator::Exists, "", TaintEffect::NoExecute)
        .requiredTerms({test::matchExpressions(
            {test::req("topology.kubernetes.io/zone", SelectorOperator::In, {"zone-a", "zone-b", "zone-c"})})})
        .preferredTerm(10, test::matchExpressions({test::req("node.kubernetes.io/instance-type",
                                                             SelectorOperator::In, {"m5.2xlarge"})}))
        .nodeSelector({{"kubernetes.io/os", "linux"}})
        .container("registry.example.com/team/sidecar:2", {"TCP/0.0.0.0/8080"});
  }
  return b;
}

std::unique_ptr<Plugin> make(std::string_view name) {
  nlohmann::json args;
  if (name == "LabelPriority") args = {{"label", "placer.io/priority"}, {"filterNodesWithoutLabel", false}};
  auto p = builtinPlugins().find(name)->second(args);
  return std::move(p).value();
}

const char* const kPlugins[] = {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                "NodePorts",         "ImageLocality", "LabelPriority"};

void perNode(benchmark::State& state) {
  state.counters["ns_per_node"] = benchmark::Counter(
      static_cast<double>(view().nodes().size()), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// range(0): plugin index; range(1): pod kind.
void BM_Filter(benchmark::State& state) {
  auto plugin = make(kPlugins[state.range(0)]);
  Pod pod = podOf(static_cast<int>(state.range(1)));
  const auto* pre = dynamic_cast<const PreFilterPlugin*>(plugin.get());
  const auto* filter = dynamic_cast<const FilterPlugin*>(plugin.get());
  if (filter == nullptr) {
    state.SkipWithError("not a filter plugin");
    return;
  }
  const auto nodes = view().nodes();
  size_t feasible = 0;
  for (auto _ : state) {
    CycleState cycle;
    feasible = 0;
    if (pre != nullptr) {
      Status s = pre->preFilter(cycle, pod, view());
      if (s.isSkip()) {
        feasible = nodes.size();
        continue;
      }
    }
    for (const NodeInfo& node : nodes) feasible += filter->filter(cycle, pod, node).isSuccess();
  }
  benchmark::DoNotOptimize(feasible);
  state.SetLabel(std::string(kPlugins[state.range(0)]) + (state.range(1) ? "/rich-pod" : "/plain-pod"));
  state.counters["feasible"] = static_cast<double>(feasible);
  perNode(state);
}

void BM_Score(benchmark::State& state) {
  auto plugin = make(kPlugins[state.range(0)]);
  Pod pod = podOf(static_cast<int>(state.range(1)));
  const auto* pre = dynamic_cast<const PreScorePlugin*>(plugin.get());
  const auto* scorer = dynamic_cast<const ScorePlugin*>(plugin.get());
  if (scorer == nullptr) {
    state.SkipWithError("not a score plugin");
    return;
  }
  std::vector<const NodeInfo*> nodes;
  for (const NodeInfo& n : view().nodes()) nodes.push_back(&n);
  std::vector<int64_t> scores(nodes.size());
  for (auto _ : state) {
    CycleState cycle;
    if (pre != nullptr && pre->preScore(cycle, pod, nodes, view()).isSkip()) continue;
    for (uint32_t i = 0; i < nodes.size(); ++i) scores[i] = scorer->score(cycle, pod, *nodes[i]);
    scorer->normalizeScores(cycle, pod, scores);
  }
  benchmark::DoNotOptimize(scores.data());
  state.SetLabel(std::string(kPlugins[state.range(0)]) + (state.range(1) ? "/rich-pod" : "/plain-pod"));
  perNode(state);
}

BENCHMARK(BM_Filter)->ArgsProduct({{0, 1, 2, 3, 4, 6}, {0, 1}});
BENCHMARK(BM_Score)->ArgsProduct({{2, 3, 5, 6}, {0, 1}});

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
