// What the JSON library costs when the live view, admission and the
// extender decode objects: a DOM parse (nlohmann) and simdjson's DOM with the
// model decoded straight from it (scoring/json_value.h, every object path
// now). The hand-written filtered parser these were measured against until
// session 8 is gone; its figures stay in RESULTS.md. Pods are the realistic
// ~6 KB generated ones (managedFields, probes, env, full status) and nodes the
// ~8 KB ones with 40 images, from test/support/cluster_generator.h.
//
//   watch_decode_bench --benchmark_min_time=1
// bytes/s = JSON throughput, items/s = objects decoded per second.
// "Simdjson" = JsonParser + decodePod(JsonValue).

#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "scoring/json_value.h"
#include "scoring/model.h"
#include "scoring/pod_decode_into.h"
#include "test/support/cluster_generator.h"
#include "scoring/json_stream_scanner.h"

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

const std::vector<std::string>& nodes() {
  static const std::vector<std::string> texts = [] {
    GeneratorParams params;
    params.nodes = 200;
    std::vector<std::string> out;
    for (int i = 0; i < params.nodes; ++i) out.push_back(generateNode(params, i).dump());
    return out;
  }();
  return texts;
}

size_t bytesOf(const std::vector<std::string>& texts) {
  size_t n = 0;
  for (const auto& t : texts) n += t.size();
  return n;
}

std::string listOf(const std::vector<std::string>& items, const char* kind) {
  std::string b = std::string(R"({"kind":")") + kind + R"(","apiVersion":"v1","metadata":{"resourceVersion":"12345"},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) b += (i ? "," : "") + items[i];
  return b + "]}";
}

// A PodList page as the API server serves it.
const std::string& listBody() {
  static const std::string body = listOf(pods(), "PodList");
  return body;
}
const std::string& nodeListBody() {
  static const std::string body = listOf(nodes(), "NodeList");
  return body;
}

// A watch stream: one MODIFIED event per pod, newline-separated.
const std::string& podEvents() {
  static const std::string body = [] {
    std::string b;
    for (const auto& p : pods()) b += R"({"type":"MODIFIED","object":)" + p + "}\n";
    return b;
  }();
  return body;
}

// AdmissionReview bodies: each generated pod, unscheduled, as a CREATE request.
const std::vector<std::string>& admissionReviews() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const auto& p : pods()) {
      json pod = json::parse(p);
      pod["spec"].erase("nodeName");
      pod.erase("status");
      json review = {{"apiVersion", "admission.k8s.io/v1"},
                     {"kind", "AdmissionReview"},
                     {"request",
                      {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                       {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                       {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                       {"namespace", pod["metadata"]["namespace"]},
                       {"operation", "CREATE"},
                       {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"}}},
                       {"object", pod},
                       {"dryRun", false}}}};
      out.push_back(review.dump());
    }
    return out;
  }();
  return texts;
}

// Feeds `body` to a scanner in 16 KB pieces, as the socket hands it over.
template <class OnItem>
void scanInPieces(JsonStreamScanner::Mode mode, const std::string& body, OnItem onItem) {
  JsonStreamScanner scanner(mode, [&](std::string_view item) {
    onItem(item);
    return Outcome();
  });
  for (size_t i = 0; i < body.size(); i += 16384) (void)scanner.feed(std::string_view(body).substr(i, 16384));
  (void)scanner.finish();
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

// The list path now: the same framing, each item parsed by simdjson and decoded straight from it.
void BM_ListStreamScanSimdjsonDecode(benchmark::State& state) {
  const std::string& body = listBody();
  JsonParser parser;
  for (auto _ : state) {
    size_t decoded = 0;
    scanInPieces(JsonStreamScanner::Mode::ListItems, body, [&](std::string_view item) {
      auto pod = decodePod(*parser.parse(item));
      decoded += pod.ok();
    });
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * body.size());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_ListStreamScanSimdjsonDecode);

void BM_PodItemsSimdjson(benchmark::State& state) {
  JsonParser parser;
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto pod = decodePod(*parser.parse(text));
      benchmark::DoNotOptimize(pod);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(pods()));
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodItemsSimdjson);

// As the list path decodes (kube_feed.cpp's Decoded): each pod into the slot
// a pod of an earlier batch held (decodePodInto), ~150 slots a batch.
void BM_PodItemsSimdjsonInto(benchmark::State& state) {
  JsonParser parser;
  std::vector<Pod> slots(150);
  size_t next = 0;
  for (auto _ : state)
    for (const auto& text : pods()) {
      Outcome decoded = decodePodInto(*parser.parse(text), slots[next]);
      next = next + 1 == slots.size() ? 0 : next + 1;
      benchmark::DoNotOptimize(decoded);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(pods()));
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodItemsSimdjsonInto);

void BM_PodItemsSimdjsonParseOnly(benchmark::State& state) {
  JsonParser parser;
  for (auto _ : state)
    for (const auto& text : pods()) {
      auto parsed = parser.parse(text);
      benchmark::DoNotOptimize(parsed);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(pods()));
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodItemsSimdjsonParseOnly);

// Issue 18 item 2's other arm, at its floor: simdjson On-Demand over the same
// pods, reading nothing but the keys of the pod's objects (metadata, spec,
// status) and skipping every value. Any On-Demand decode costs at least
// this; against BM_PodItemsSimdjsonPaddedParseOnly (the DOM parse the list
// path makes) it bounds what On-Demand could save on the parse.
const std::vector<simdjson::padded_string>& paddedPods() {
  static const std::vector<simdjson::padded_string> texts = [] {
    std::vector<simdjson::padded_string> out;
    for (const auto& p : pods()) out.emplace_back(p);
    return out;
  }();
  return texts;
}

void BM_PodItemsOnDemandFloor(benchmark::State& state) {
  simdjson::ondemand::parser parser;
  for (auto _ : state)
    for (const auto& text : paddedPods()) {
      size_t keys = 0;
      auto document = parser.iterate(text);
      for (auto top : document.get_object()) {
        auto value = top.value();
        if (value.type() != simdjson::ondemand::json_type::object) continue;
        for (auto field : value.get_object()) keys += !field.unescaped_key().error();
      }
      benchmark::DoNotOptimize(keys);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(pods()));
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodItemsOnDemandFloor);

// The DOM parse as the list path makes it (padded input, nothing copied).
void BM_PodItemsSimdjsonPaddedParseOnly(benchmark::State& state) {
  JsonParser parser;
  for (auto _ : state)
    for (const auto& text : paddedPods()) {
      auto parsed = parser.parse(std::string_view(text.data(), text.size()), /*padded=*/true);
      benchmark::DoNotOptimize(parsed);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(pods()));
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodItemsSimdjsonPaddedParseOnly);

void BM_NodeListStreamSimdjson(benchmark::State& state) {
  const std::string& body = nodeListBody();
  JsonParser parser;
  for (auto _ : state) {
    size_t decoded = 0;
    scanInPieces(JsonStreamScanner::Mode::ListItems, body, [&](std::string_view item) {
      decoded += decodeNode(*parser.parse(item)).ok();
    });
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * body.size());
  state.SetItemsProcessed(int64_t(state.iterations()) * nodes().size());
}
BENCHMARK(BM_NodeListStreamSimdjson);

void BM_PodWatchEventsSimdjson(benchmark::State& state) {
  const std::string& body = podEvents();
  JsonParser parser;
  for (auto _ : state) {
    size_t decoded = 0;
    scanInPieces(JsonStreamScanner::Mode::TopLevelValues, body, [&](std::string_view event) {
      auto parsed = parser.parse(event);
      decoded += decodePod(*parsed->member("object")).ok();
    });
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * body.size());
  state.SetItemsProcessed(int64_t(state.iterations()) * pods().size());
}
BENCHMARK(BM_PodWatchEventsSimdjson);

void BM_AdmissionReviewSimdjson(benchmark::State& state) {
  JsonParser parser;
  for (auto _ : state)
    for (const auto& text : admissionReviews()) {
      auto review = parser.parse(text);
      auto pod = decodePod(*review->member("request")->member("object"));
      benchmark::DoNotOptimize(pod);
    }
  state.SetBytesProcessed(int64_t(state.iterations()) * bytesOf(admissionReviews()));
  state.SetItemsProcessed(int64_t(state.iterations()) * admissionReviews().size());
}
BENCHMARK(BM_AdmissionReviewSimdjson);

void BM_ListStreamScanOnly(benchmark::State& state) {
  const std::string& body = listBody();
  for (auto _ : state) {
    size_t items = 0;
    JsonStreamScanner scanner(JsonStreamScanner::Mode::ListItems, [&](std::string_view) {
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
