// Decode speed of the object model: placer decodes every pod and node at
// start-up (150,000 pods in a large cluster) and one pod per admission.
//
//   decode_bench --benchmark_filter=.   (items/s = objects/s, bytes/s = JSON MB/s)

#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "scoring/model.h"
#include "scoring/quantity.h"

#ifndef PLACER_SOURCE_DIR
#define PLACER_SOURCE_DIR "."
#endif

namespace placer {
namespace {

std::string readFixture(const std::string& name) {
  std::ifstream in(std::string(PLACER_SOURCE_DIR) + "/test/data/objects/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The served pod fixture without managedFields and annotations: ~6 KB, the
// size of a typical Deployment pod in a watch event.
std::string typicalPodJson() {
  nlohmann::json pod = nlohmann::json::parse(readFixture("pod_web.json"));
  pod["metadata"].erase("managedFields");
  return pod.dump();
}

void BM_ParseAndDecodePod(benchmark::State& state) {
  const std::string text = typicalPodJson();
  for (auto _ : state) {
    auto decoded = decodePod(nlohmann::json::parse(text));
    if (!decoded.ok()) state.SkipWithError(decoded.error().message.c_str());
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["json_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseAndDecodePod);

void BM_ParseAndDecodeServedPodWithManagedFields(benchmark::State& state) {
  const std::string text = readFixture("pod_web.json");
  for (auto _ : state) {
    auto decoded = decodePod(nlohmann::json::parse(text));
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  state.counters["json_bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_ParseAndDecodeServedPodWithManagedFields);

// The decode step alone, from an already parsed document.
void BM_DecodePodOnly(benchmark::State& state) {
  const nlohmann::json doc = nlohmann::json::parse(typicalPodJson());
  for (auto _ : state) {
    auto decoded = decodePod(doc);
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodePodOnly);

void BM_ParseAndDecodeNode(benchmark::State& state) {
  const std::string text = readFixture("node_worker.json");
  for (auto _ : state) {
    auto decoded = decodeNode(nlohmann::json::parse(text));
    benchmark::DoNotOptimize(decoded);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseAndDecodeNode);

void BM_ParseQuantity(benchmark::State& state) {
  const char* inputs[] = {"100m", "512Mi", "1.5Gi", "2", "16308988Ki", "0.25"};
  size_t i = 0;
  for (auto _ : state) {
    auto q = parseMilliQuantity(inputs[i++ % 6]);
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseQuantity);

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
