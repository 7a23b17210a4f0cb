// The initial sync's apply step alone: every generated bound pod of a cluster
// upserted into a view that already holds its nodes, as the list's decode
// threads apply them (Handler::listedBatch in webhook/kube/kube_feed.cpp):
// beginResync(Pods), batches of 256 freshly decoded pods in list order (by
// namespace, then name, as the API server lists them: a workload's replicas
// come one after the other), finishResync(Pods). The pods of a batch are built (and the batch freed)
// outside the timed region, so the figure is the view's own work: records,
// interned strings, the topology indexes and the node accounting.
// Linked with jemalloc, the allocator `placer` runs with (allocator.h).
//
// BM_FirstTouch: what a first write to fresh anonymous memory costs per 4 KB
// page, faulted in one page at a time (as a growing view does) or populated
// by one madvise(MADV_POPULATE_WRITE) call first. Most of the apply's memory
// is fresh, so this sets a floor under it.
//
//   build/test/bench/apply_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Figures and the exact command are recorded in test/bench/RESULTS.md.
#include <sys/mman.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

constexpr size_t kBatch = 256;  // kube_feed.cpp's kListBatch

// range(0): nodes (30 pods per node).
void BM_ApplyListedPods(benchmark::State& state) {
  GeneratorParams params;
  params.nodes = static_cast<int>(state.range(0));
  params.podsPerNode = 30;
  const int64_t pods = generatedPodCount(params);
  std::vector<Node> nodes;
  for (int i = 0; i < params.nodes; ++i) nodes.push_back(generateNodeObject(params, i));
  std::vector<std::pair<std::string, int64_t>> listOrder;  // (namespace/name, generator index)
  for (int64_t i = 0; i < pods; ++i) {
    const Pod pod = generatePodObject(params, i);
    listOrder.emplace_back(pod.namespace_ + "/" + pod.name, i);
  }
  std::sort(listOrder.begin(), listOrder.end());
  std::vector<Pod> batch;
  batch.reserve(kBatch);
  for (auto _ : state) {
    state.PauseTiming();
    auto view = std::make_unique<MutableClusterView>();
    for (const Node& node : nodes) view->upsertNode(node);
    view->beginResync(ResyncKind::Pods);
    for (int64_t first = 0; first < pods; first += kBatch) {
      batch.clear();
      for (int64_t i = first; i < std::min<int64_t>(pods, first + kBatch); ++i)
        batch.push_back(generatePodObject(params, listOrder[static_cast<size_t>(i)].second));
      state.ResumeTiming();
      for (const Pod& pod : batch) view->upsertPod(pod);
      state.PauseTiming();
    }
    batch.clear();
    state.ResumeTiming();
    benchmark::DoNotOptimize(view->finishResync(ResyncKind::Pods));
    state.PauseTiming();
    if (view->podCount() != static_cast<size_t>(pods)) state.SkipWithError("not every pod was kept");
    view.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * pods);
  state.counters["pods"] = static_cast<double>(pods);
}
BENCHMARK(BM_ApplyListedPods)->Arg(500)->Arg(5000)->Unit(benchmark::kMillisecond)->Iterations(1);

// range(0): 0 faulted page by page, 1 populated first. 64 MB a round.
void BM_FirstTouch(benchmark::State& state) {
  constexpr size_t kBytes = size_t{64} << 20;
  constexpr size_t kPage = 4096;
  const bool populate = state.range(0) == 1;
  for (auto _ : state) {
    state.PauseTiming();
    void* memory = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return state.SkipWithError("mmap failed");
    char* bytes = static_cast<char*>(memory);
    state.ResumeTiming();
    if (populate && madvise(memory, kBytes, MADV_POPULATE_WRITE) != 0) state.SkipWithError("MADV_POPULATE_WRITE failed");
    for (size_t at = 0; at < kBytes; at += kPage) bytes[at] = 1;
    benchmark::ClobberMemory();
    state.PauseTiming();
    munmap(memory, kBytes);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kBytes / kPage));  // pages
}
BENCHMARK(BM_FirstTouch)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
