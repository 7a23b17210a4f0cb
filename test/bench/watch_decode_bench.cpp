// What the JSON library costs when the live view decodes lists and watch
// events, and what the streaming filtered decode (webhook/kube/json_stream.h)
// saves. Pods are the realistic ~6 KB generated ones (managedFields, probes,
// env, full status) from test/support/cluster_generator.h.
//
//   watch_decode_bench --benchmark_min_time=1
// bytes/s = JSON throughput, items/s = pods decoded per second.

#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "scoring/model.h"
#include "test/support/cluster_generator.h"
#include "webhook/kube/json_stream.h"

namespace placer {
namespace {

using nlohmann::json;

const std::vector<std::string>& pods() {
  static const std::vector<std::string> texts = [] {
    GeneratorParams params;
    params.nodes = 20;
    params.podsPerNode = 30;
    std::vector<std::string> out;
    for (int64_t i = 0; i < generatedPodCount(params); i += 3) out.push_back(generatePod(params, i).dump());
    return out;
  }();
  return texts;
}

size_t totalBytes() {
  size_t n = 0;
  for (const auto& p : pods()) n += p.size();
  return n;
}

// A PodList page as the API server serves it.
const std::string& listBody() {
  static const std::string body = [] {
    std::string b = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"12345"},"items":[)";
    for (size_t i = 0; i < pods().size(); ++i) b += (i ? "," : "") + pods()[i];
    return b + "]}";
  }();
  return body;
}

void BM_DomParseThenDecode(benchmark::State& state) {
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto pod = decodePod(json::parse(text));
      benchmark::DoNotOptimize(pod);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * totalBytes());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_DomParseThenDecode);

// nlohmann's own parser callback, discarding what the model never reads: the
// tokenizer still runs over every byte and every kept string is allocated.
void BM_CallbackFilteredParseThenDecode(benchmark::State& state) {
  static const std::vector<std::string> dropped = {
      "managedFields", "env", "livenessProbe", "readinessProbe", "startupProbe", "volumeMounts", "conditions",
      "containerStatuses", "initContainerStatuses", "command", "args", "securityContext", "lifecycle"};
  auto callback = [](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key)
      for (const auto& d : dropped)
        if (parsed == d) return false;
    return true;
  };
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto pod = decodePod(json::parse(text, callback));
      benchmark::DoNotOptimize(pod);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * totalBytes());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_CallbackFilteredParseThenDecode);

// What placer does: skip unlisted fields without tokenizing them into values,
// build a small DOM of the listed ones, decode that.
void BM_SkipFilteredParseThenDecode(benchmark::State& state) {
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto slim = kube::parseFiltered(text, kube::podFilter());
      auto pod = decodePod(*slim);
      benchmark::DoNotOptimize(pod);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * totalBytes());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_SkipFilteredParseThenDecode);

void BM_SkipFilteredParseOnly(benchmark::State& state) {
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto slim = kube::parseFiltered(text, kube::podFilter());
      benchmark::DoNotOptimize(slim);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * totalBytes());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_SkipFilteredParseOnly);

// The whole list path: the stream scanner splits a list body fed in 16 KB
// pieces into items, each filtered and decoded.
void BM_ListStreamScanFilterDecode(benchmark::State& state) {
  const std::string& body = listBody();
  for (auto _ : state) {
    size_t decoded = 0;
    kube::JsonStreamScanner scanner(kube::JsonStreamScanner::Mode::ListItems, [&](std::string_view item) {
      auto slim = kube::parseFiltered(item, kube::podFilter());
      auto pod = decodePod(*slim);
      decoded += pod.ok();
      return Outcome();
    });
    for (size_t i = 0; i < body.size(); i += 16384) (void)scanner.feed(std::string_view(body).substr(i, 16384));
    (void)scanner.finish();
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * body.size());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_ListStreamScanFilterDecode);

void BM_ListStreamScanOnly(benchmark::State& state) {
  const std::string& body = listBody();
  for (auto _ : state) {
    size_t items = 0;
    kube::JsonStreamScanner scanner(kube::JsonStreamScanner::Mode::ListItems, [&](std::string_view) {
      ++items;
      return Outcome();
    });
    for (size_t i = 0; i < body.size(); i += 16384) (void)scanner.feed(std::string_view(body).substr(i, 16384));
    (void)scanner.finish();
    benchmark::DoNotOptimize(items);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * body.size());
}
BENCHMARK(BM_ListStreamScanOnly);

}  // namespace
}  // namespace placer

BENCHMARK_MAIN();
