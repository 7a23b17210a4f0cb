// One scheduling decision with the default profile over every node of a
// generated cluster (30 pods per node), and the memory the cluster view takes.
// BM_Place* run the engine without its decision cache (every node computed);
// BM_Cache* measure the cache: replicas of one template decided one after the
// other while each decision's reservation changes a node, and the cost of a
// miss when more pod shapes cycle than the cache holds.
//
//   build-*/test/bench/engine_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Figures and the exact command are recorded in test/bench/RESULTS.md.
#include <malloc.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "scoring/cluster_state.h"
#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

constexpr int kPodsPerNode = 30;

GeneratorParams paramsFor(int nodes) {
  GeneratorParams params;
  params.nodes = nodes;
  params.podsPerNode = kPodsPerNode;
  return params;
}

// Views are built once per size and kept for the whole run.
const MutableClusterView& viewOf(int nodes) {
  static std::map<int, std::unique_ptr<MutableClusterView>> views;
  auto& view = views[nodes];
  if (!view) {
    view = std::make_unique<MutableClusterView>();
    fillClusterView(*view, paramsFor(nodes));
  }
  return *view;
}

// range(0): nodes; range(1): which pending pod of the generator's mix of nine
// (0 plain Deployment pod under system default spreading, 1 preferred zone
// affinity and anti-affinity to its own replicas, 2 highmem pool, 3 init
// container + sidecar, 4 GPU, 5 best effort with a toleration, 6 required
// anti-affinity on the hostname, 7 required affinity on the zone, 8 a
// DoNotSchedule zone spread).
void BM_PlaceDefaultProfile(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const MutableClusterView& view = viewOf(nodes);
  Pod pod = generatePendingPodObject(paramsFor(nodes), static_cast<int>(state.range(1)));
  Engine engine(Profile::defaults(), 0);
  size_t feasible = 0;
  for (auto _ : state) {
    Decision decision = engine.place(pod, view);
    feasible = decision.feasibleCount;
    benchmark::DoNotOptimize(decision.selected);
  }
  state.counters["nodes"] = nodes;
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["ns_per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                        benchmark::Counter::kInvert);
}
BENCHMARK(BM_PlaceDefaultProfile)
    ->ArgsProduct({{500, 5000, 15000}, {0}})
    ->ArgsProduct({{5000}, {1, 2, 3, 4, 5, 6, 7, 8}})
    ->Unit(benchmark::kMicrosecond);

// The same decision with Detail::Full (what explain and the extender ask for).
void BM_PlaceFullDetail(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const MutableClusterView& view = viewOf(nodes);
  Pod pod = generatePendingPodObject(paramsFor(nodes), 0);
  Engine engine(Profile::defaults(), 0);
  for (auto _ : state) {
    Decision decision = engine.place(pod, view, Detail::Full);
    benchmark::DoNotOptimize(decision.selected);
  }
}
BENCHMARK(BM_PlaceFullDetail)->Arg(5000)->Unit(benchmark::kMicrosecond);

// A cluster of alike nodes (5,000 copies of one generated node, empty, in an
// order other than their names'): every node scores the same, so the
// decision ends in a tie among all of them, broken by the smallest name.
void BM_PlaceAlikeNodes(benchmark::State& state) {
  static const std::unique_ptr<MutableClusterView> view = [] {
    auto v = std::make_unique<MutableClusterView>();
    const Node like = generateNodeObject(paramsFor(5000), 0);
    for (int i = 0; i < 5000; ++i) {
      Node node = like;
      node.name = "node-" + std::to_string(i * 761 % 5000);  // 761 is prime to 5,000: each name once
      node.uid = node.name;
      for (auto& [key, value] : node.labels)
        if (key == "kubernetes.io/hostname") value = node.name;
      v->upsertNode(std::move(node));
    }
    return v;
  }();
  Pod pod = generatePendingPodObject(paramsFor(5000), 0);
  Engine engine(Profile::defaults(), 0);
  size_t feasible = 0;
  for (auto _ : state) {
    Decision decision = engine.place(pod, *view);
    feasible = decision.feasibleCount;
    benchmark::DoNotOptimize(decision.selected);
  }
  state.counters["feasible"] = static_cast<double>(feasible);
}
BENCHMARK(BM_PlaceAlikeNodes)->Unit(benchmark::kMicrosecond);

// Admission's confirm step: the filters on the chosen node alone
// (Detail::FilterOnly over one candidate), run while that node's accounting
// stripe is held exclusively. range(0): which pending pod, as above.
void BM_ConfirmOneNode(benchmark::State& state) {
  const MutableClusterView& view = viewOf(5000);
  Pod pod = generatePendingPodObject(paramsFor(5000), static_cast<int>(state.range(0)));
  Engine engine(Profile::defaults());
  const NodeInfo* chosen = engine.place(pod, view).selected;
  if (chosen == nullptr) chosen = &view.nodes()[0];
  const NodeInfo* candidates[] = {chosen};
  for (auto _ : state) {
    Decision decision = engine.evaluate(pod, view, candidates, Detail::FilterOnly);
    benchmark::DoNotOptimize(decision.selected);
  }
}
BENCHMARK(BM_ConfirmOneNode)->DenseRange(0, 8)->Unit(benchmark::kMicrosecond);

// Replicas of one template admitted one after the other, as a scaling
// ReplicaSet's are: each decision is followed by its reservation on the chosen
// node, which the watch later replaces by the bound pod (release + attach: the
// node changes twice). range(0): which pending pod, as above; range(1): the
// cache's capacity (0: no cache, every node computed).
void BM_CacheReplicasWithReservations(benchmark::State& state) {
  auto view = std::make_unique<MutableClusterView>();
  fillClusterView(*view, paramsFor(5000));
  Pod pod = generatePendingPodObject(paramsFor(5000), static_cast<int>(state.range(0)));
  Engine engine(Profile::defaults(), static_cast<size_t>(state.range(1)));
  int64_t n = 0;
  for (auto _ : state) {
    Decision decision = engine.place(pod, *view);
    benchmark::DoNotOptimize(decision.selected);
    state.PauseTiming();
    if (decision.selected != nullptr) {
      Reservation r = reservationFor(pod, "r" + std::to_string(n++), decision.selected->name(),
                                     std::chrono::steady_clock::time_point::max());
      view->reserve(r);
      view->release(r.id);  // the watch's pod takes its place: the node changes again
    }
    state.ResumeTiming();
  }
  if (const DecisionCache* cache = engine.cache()) {
    state.counters["hits"] = static_cast<double>(cache->stats().hits);
    state.counters["misses"] = static_cast<double>(cache->stats().misses);
  }
}
BENCHMARK(BM_CacheReplicasWithReservations)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {0, 64}})
    ->Unit(benchmark::kMicrosecond);

// The admission load generator's mix (admission_loadgen --route mutate):
// its 512 pending pods of the nine kinds, in turn, each decision reserved on
// its node and then released (the watch's bound pod takes its place), so
// that between two decisions of one pod ~1,000 nodes changed. range(0): the
// cache's capacity (0: no cache; 512: an entry for every pod, all hits once
// warm). The engine's part of issue 16's throughput, without the transport.
void BM_CacheMixWithReservations(benchmark::State& state) {
  auto view = std::make_unique<MutableClusterView>();
  fillClusterView(*view, paramsFor(5000));
  std::vector<Pod> pods;
  for (int i = 0; i < 512; ++i) pods.push_back(generatePendingPodObject(paramsFor(5000), i));
  Engine engine(Profile::defaults(), static_cast<size_t>(state.range(0)));
  int64_t n = 0;
  for (auto _ : state) {
    const Pod& pod = pods[static_cast<size_t>(n % 512)];
    Decision decision = engine.place(pod, *view);
    benchmark::DoNotOptimize(decision.selected);
    state.PauseTiming();
    if (decision.selected != nullptr) {
      Reservation r = reservationFor(pod, "r" + std::to_string(n), decision.selected->name(),
                                     std::chrono::steady_clock::time_point::max());
      view->reserve(r);
      view->release(r.id);
    }
    ++n;
    state.ResumeTiming();
  }
  if (const DecisionCache* cache = engine.cache()) {
    state.counters["hits"] = static_cast<double>(cache->stats().hits);
    state.counters["misses"] = static_cast<double>(cache->stats().misses);
  }
}
BENCHMARK(BM_CacheMixWithReservations)->Arg(0)->Arg(512)->MinWarmUpTime(2)->Unit(benchmark::kMicrosecond);

// The worst case for a cache: more pod shapes than it holds (96 for 64
// entries), in turn, on a view that does not change. A plain LRU would evict
// every entry before its next use and pay a miss on every decision; the cache
// admits only every eighth new shape while it is full of current results.
// range(0): the cache's capacity (0: no cache, the baseline).
void BM_CacheMoreShapesThanEntries(benchmark::State& state) {
  const MutableClusterView& view = viewOf(5000);
  std::vector<Pod> pods;
  for (int i = 0; i < 96; ++i) {
    Pod pod = generatePendingPodObject(paramsFor(5000), 0);
    pod.containers.front().requests.milliCpu += i;  // 96 shapes
    computePodRequests(pod);
    pods.push_back(std::move(pod));
  }
  Engine engine(Profile::defaults(), static_cast<size_t>(state.range(0)));
  size_t i = 0;
  for (auto _ : state) {
    Decision decision = engine.place(pods[i++ % pods.size()], view);
    benchmark::DoNotOptimize(decision.selected);
  }
  if (const DecisionCache* cache = engine.cache()) {
    const DecisionCache::Stats stats = cache->stats();
    const double total = static_cast<double>(stats.hits + stats.misses + stats.bypassed);
    state.counters["hit_ratio"] = static_cast<double>(stats.hits) / total;
    state.counters["miss_ratio"] = static_cast<double>(stats.misses) / total;
  }
}
BENCHMARK(BM_CacheMoreShapesThanEntries)->Arg(0)->Arg(64)->Unit(benchmark::kMicrosecond);

// Heap bytes the decision cache holds when full: 64 pod shapes decided once
// each on 5,000 nodes (mallinfo2 before/after, the view built beforehand).
void BM_CacheMemory(benchmark::State& state) {
  const MutableClusterView& view = viewOf(5000);
  double megabytes = 0;
  for (auto _ : state) {
    malloc_trim(0);
    const size_t before = mallinfo2().uordblks;
    auto engine = std::make_unique<Engine>(Profile::defaults(), Engine::kDefaultCacheCapacity);
    for (size_t i = 0; i < Engine::kDefaultCacheCapacity; ++i) {
      Pod pod = generatePendingPodObject(paramsFor(5000), 0);
      pod.containers.front().requests.milliCpu += static_cast<int64_t>(i);
      computePodRequests(pod);
      benchmark::DoNotOptimize(engine->place(pod, view).selected);
    }
    megabytes = static_cast<double>(mallinfo2().uordblks - before) / (1024.0 * 1024.0);
    state.counters["entries"] = static_cast<double>(engine->cache()->size());
  }
  state.counters["MB"] = megabytes;
}
BENCHMARK(BM_CacheMemory)->Iterations(1)->Unit(benchmark::kMillisecond);

// Heap bytes the view holds for 5,000 nodes and 150,000 pods (mallinfo2 before/after).
void BM_ViewMemory(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  double megabytes = 0;
  double bytesPerPod = 0;
  for (auto _ : state) {
    malloc_trim(0);
    size_t before = mallinfo2().uordblks;
    auto view = std::make_unique<MutableClusterView>();
    fillClusterView(*view, paramsFor(nodes));
    size_t afterAll = mallinfo2().uordblks;
    megabytes = static_cast<double>(afterAll - before) / (1024.0 * 1024.0);

    // Pods alone: the same nodes without pods.
    auto nodesOnly = std::make_unique<MutableClusterView>();
    size_t beforeNodes = mallinfo2().uordblks;
    for (int i = 0; i < nodes; ++i) nodesOnly->upsertNode(generateNodeObject(paramsFor(nodes), i));
    size_t nodeBytes = mallinfo2().uordblks - beforeNodes;
    bytesPerPod = static_cast<double>((afterAll - before) - nodeBytes) / (static_cast<double>(nodes) * kPodsPerNode);
    benchmark::DoNotOptimize(view->podCount());
  }
  state.counters["MB"] = megabytes;
  state.counters["bytes_per_pod"] = bytesPerPod;
  state.counters["pods"] = static_cast<double>(nodes) * kPodsPerNode;
}
BENCHMARK(BM_ViewMemory)->Arg(5000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
