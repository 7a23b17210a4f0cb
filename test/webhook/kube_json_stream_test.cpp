// Streaming decode of API responses: watch streams framed without newlines,
// lists split into items as they arrive, and the field filters that keep only
// what the object model decodes.
#include "webhook/kube/json_stream.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scoring/model.h"
#include "test/support/cluster_generator.h"

namespace placer::kube {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Collected {
  std::vector<std::string> values;
  std::vector<std::string> metadata;
};

// Feeds `body` in pieces of `step` bytes (0: all at once).
Outcome scan(JsonStreamScanner::Mode mode, std::string_view body, size_t step, Collected& out) {
  JsonStreamScanner scanner(
      mode,
      [&](std::string_view v) {
        out.values.emplace_back(v);
        return Outcome();
      },
      [&](std::string_view m) {
        out.metadata.emplace_back(m);
        return Outcome();
      });
  if (step == 0) step = body.size() ? body.size() : 1;
  for (size_t i = 0; i < body.size(); i += step)
    if (Outcome r = scanner.feed(body.substr(i, step)); !r) return r;
  return scanner.finish();
}

const std::string kEventA = R"({"type":"ADDED","object":{"metadata":{"name":"a}{\"","resourceVersion":"5"}}})";
const std::string kEventB = R"({"type":"MODIFIED","object":{"s":"\\","n":[1,{"x":"]"}],"u":"\u00e9"}})";
const std::string kEventC = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";

struct SplitCase {
  const char* name;
  std::string body;
  std::vector<std::string> values;
};

class WatchFramingTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(WatchFramingTest, YieldsEachEventWhereverThePiecesBreak) {
  for (size_t step : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(7), size_t(64)}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::TopLevelValues, GetParam().body, step, got);
    ASSERT_TRUE(r) << "step " << step << ": " << r.error().message;
    EXPECT_EQ(got.values, GetParam().values) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WatchFramingTest,
    ::testing::Values(SplitCase{"Empty", "", {}},
                      SplitCase{"OneEvent", kEventA, {kEventA}},
                      SplitCase{"ConcatenatedWithoutNewlines", kEventA + kEventB + kEventC, {kEventA, kEventB, kEventC}},
                      SplitCase{"NewlineDelimited", kEventA + "\n" + kEventB + "\r\n", {kEventA, kEventB}},
                      SplitCase{"WhitespaceBetween", "  \n" + kEventC + " \t " + kEventA, {kEventC, kEventA}}),
    [](const auto& info) { return info.param.name; });

// Backslash runs of every parity next to quotes and brackets, cut at every
// byte: whether a quote ends a string depends on bytes of the previous piece.
TEST(WatchEscapeTest, BackslashRunsAcrossEveryPieceBoundary) {
  const std::string a = R"({"type":"ADDED","object":{"a":"\\","b":"\\\"}","c":"x\\\\","d":"\"{[","e":["\\\\\\\"]"]}})";
  const std::string b = R"({"type":"DELETED","object":{"k\\\"":"}\\\\\\","z":{}}})";
  const std::string body = a + "\n" + b;
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    Collected got;
    JsonStreamScanner scanner(JsonStreamScanner::Mode::TopLevelValues, [&](std::string_view v) -> Outcome {
      got.values.emplace_back(v);
      return {};
    });
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(0, cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.finish()) << "cut " << cut;
    EXPECT_THAT(got.values, ElementsAre(a, b)) << "cut " << cut;
  }
  for (size_t step = 1; step < 10; ++step) {
    Collected got;
    ASSERT_TRUE(scan(JsonStreamScanner::Mode::TopLevelValues, body, step, got));
    EXPECT_THAT(got.values, ElementsAre(a, b)) << "step " << step;
    ASSERT_TRUE(parseFiltered(got.values[0], keepEverything()));
  }
}

struct BadStream {
  const char* name;
  JsonStreamScanner::Mode mode;
  std::string body;
  const char* error;
};

class StreamErrorTest : public ::testing::TestWithParam<BadStream> {};

TEST_P(StreamErrorTest, IsAnErrorNotACrash) {
  for (size_t step : {size_t(0), size_t(1)}) {
    Collected got;
    Outcome r = scan(GetParam().mode, GetParam().body, step, got);
    ASSERT_FALSE(r) << "step " << step;
    EXPECT_THAT(r.error().message, HasSubstr(GetParam().error));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StreamErrorTest,
    ::testing::Values(
        BadStream{"CutMidEvent", JsonStreamScanner::Mode::TopLevelValues, kEventA + kEventB.substr(0, 20),
                  "ended inside a value"},
        BadStream{"CutInString", JsonStreamScanner::Mode::TopLevelValues, R"({"a":"x)", "ended inside a value"},
        BadStream{"TopLevelScalar", JsonStreamScanner::Mode::TopLevelValues, "42", "expected an object"},
        BadStream{"StrayClose", JsonStreamScanner::Mode::TopLevelValues, kEventA + "}", "unbalanced"},
        BadStream{"ListNotObject", JsonStreamScanner::Mode::ListItems, "[1,2]", "a list must be an object"},
        BadStream{"ItemsNotArray", JsonStreamScanner::Mode::ListItems, R"({"items":{"a":1}})", "items must be an array"},
        BadStream{"ItemNotObject", JsonStreamScanner::Mode::ListItems, R"({"items":[1]})", "items must be objects"},
        BadStream{"ListCut", JsonStreamScanner::Mode::ListItems, R"({"metadata":{},"items":[{"a":1})",
                  "ended inside a value"},
        BadStream{"EmptyListBody", JsonStreamScanner::Mode::ListItems, "", "ended before the list"}),
    [](const auto& info) { return info.param.name; });

TEST(ListScanTest, YieldsItemsAndMetadataWhereverThePiecesBreak) {
  const std::string item1 = R"({"metadata":{"name":"p1","labels":{"items":"x"}},"items":[{"metadata":{}}]})";
  const std::string item2 = R"({"metadata":{"name":"p\"2"},"spec":{}})";
  const std::string meta = R"({"resourceVersion":"123","continue":"abc"})";
  const std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":)" + meta + R"(,"items":[ )" + item1 +
                           " ,\n" + item2 + R"(],"extra":{"items":[{"no":1}]}})";
  for (size_t step : {size_t(0), size_t(1), size_t(5), size_t(13)}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::ListItems, body, step, got);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_THAT(got.values, ElementsAre(item1, item2)) << "step " << step;
    EXPECT_THAT(got.metadata, ElementsAre(meta)) << "step " << step;
  }
}

TEST(ListScanTest, EmptyAndNullItems) {
  for (const char* body : {R"({"metadata":{"resourceVersion":"1"},"items":[]})",
                           R"({"metadata":{"resourceVersion":"1"},"items":null})"}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::ListItems, body, 1, got);
    ASSERT_TRUE(r) << body << ": " << r.error().message;
    EXPECT_TRUE(got.values.empty());
    EXPECT_EQ(got.metadata.size(), 1u);
  }
}

TEST(ListScanTest, ASinkErrorStopsTheStream) {
  JsonStreamScanner scanner(JsonStreamScanner::Mode::TopLevelValues,
                            [](std::string_view) { return Outcome(Error{"stop here"}); });
  Outcome r = scanner.feed(kEventA + kEventB);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("stop here"));
  EXPECT_FALSE(scanner.feed(kEventC));
}

// --- Field filters -----------------------------------------------------------

struct FilterCase {
  const char* name;
  const char* filter;
  std::string input;
  json expected;
};

class FilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterTest, KeepsOnlyTheListedFields) {
  auto got = parseFiltered(GetParam().input, FieldFilter::parse(GetParam().filter));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FilterTest,
    ::testing::Values(
        FilterCase{"DropsManagedFields", "metadata{name,labels}",
                   R"({"metadata":{"name":"a","managedFields":[{"f:x":{"}":"{"}}],"labels":{"k":"v"}},"status":{"big":[1,2,3]}})",
                   json{{"metadata", {{"name", "a"}, {"labels", {{"k", "v"}}}}}}},
        FilterCase{"FiltersEveryArrayElement", "spec{containers{name,resources}}",
                   R"({"spec":{"containers":[{"name":"c1","env":[{"name":"A"}],"resources":{"requests":{"cpu":"1"}}},{"name":"c2"}]}})",
                   json{{"spec", {{"containers", json::array({{{"name", "c1"}, {"resources", {{"requests", {{"cpu", "1"}}}}}},
                                                                {{"name", "c2"}}})}}}}},
        FilterCase{"KeepsScalarsWhereObjectsWereExpected", "status{phase}", R"({"status":"Failure","code":410})",
                   json{{"status", "Failure"}}},
        FilterCase{"DecodesEscapedKeysAndStrings", "metadata{annotations{placer.io/reservation}}",
                   R"({"metadata":{"annotations":{"placer.io\/reservation":"r-\u00e9\"1","other":"x"}}})",
                   json{{"metadata", {{"annotations", {{"placer.io/reservation", "r-\u00e9\"1"}}}}}}},
        FilterCase{"KeepsNumbersAndLiterals", "a,b,c,d", R"( {"a":-1.5e3,"b":true,"c":null,"d":18446744073709551615,"e":1} )",
                   json{{"a", -1500.0}, {"b", true}, {"c", nullptr}, {"d", 18446744073709551615ull}}},
        FilterCase{"EmptyObjectsAndArrays", "a{x},b{y}", R"({"a":{},"b":[]})", json{{"a", json::object()}, {"b", json::array()}}}),
    [](const auto& info) { return info.param.name; });

struct BadJson {
  const char* name;
  std::string input;
  const char* error;
};

class FilterErrorTest : public ::testing::TestWithParam<BadJson> {};

TEST_P(FilterErrorTest, SaysWhereTheJsonIsBroken) {
  auto got = parseFiltered(GetParam().input, podFilter());
  ASSERT_FALSE(got);
  EXPECT_THAT(got.error().message, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FilterErrorTest,
    ::testing::Values(BadJson{"Truncated", R"({"metadata":{"name":"a")", "invalid JSON at offset"},
                      BadJson{"BadKeptValue", R"({"metadata":{"name":tru}})", "malformed value"},
                      BadJson{"MissingColon", R"({"spec" {}})", "expected ':'"},
                      BadJson{"UnterminatedSkipped", R"({"junk":"abc)", "unterminated string"},
                      BadJson{"TrailingData", R"({} {})", "unexpected data after the value"},
                      BadJson{"Empty", "", "unexpected end"},
                      BadJson{"BadNumber", R"({"spec":{"priority":1-2}})", "malformed number"},
                      BadJson{"NestedTooDeeply", "{\"metadata\":{\"labels\":" + std::string(100, '[') + std::string(100, ']') + "}}",
                              "nested too deeply"}),
    [](const auto& info) { return info.param.name; });

// The filters keep every field the object model reads: decoding the filtered
// object gives exactly what decoding the whole object gives.
TEST(ModelFilterTest, FilteredPodsAndNodesDecodeTheSame) {
  GeneratorParams params;
  params.nodes = 20;
  params.podsPerNode = 10;
  params.gpuNodeFraction = 0.2;
  params.taintedNodeFraction = 0.2;
  for (int n = 0; n < params.nodes; ++n) {
    json node = generateNode(params, n);
    auto filtered = parseFiltered(node.dump(), nodeFilter());
    ASSERT_TRUE(filtered) << filtered.error().message;
    auto full = decodeNode(node);
    auto slim = decodeNode(*filtered);
    ASSERT_TRUE(full && slim);
    EXPECT_EQ(slim->name, full->name);
    EXPECT_EQ(slim->labels, full->labels);
    EXPECT_EQ(slim->taints, full->taints);
    EXPECT_EQ(slim->allocatable, full->allocatable);
    EXPECT_EQ(slim->unschedulable, full->unschedulable);
    EXPECT_EQ(slim->images.size(), full->images.size());
  }
  for (int64_t i = 0; i < generatedPodCount(params); i += 7) {
    json pod = generatePod(params, i);
    std::string text = pod.dump();
    auto filtered = parseFiltered(text, podFilter());
    ASSERT_TRUE(filtered) << filtered.error().message;
    EXPECT_LT(filtered->dump().size() * 3, text.size()) << "the filter should drop most of a realistic pod";
    auto full = decodePod(pod);
    auto slim = decodePod(*filtered);
    ASSERT_TRUE(full) << full.error().message;
    ASSERT_TRUE(slim) << slim.error().message;
    EXPECT_EQ(slim->uid, full->uid);
    EXPECT_EQ(slim->namespace_, full->namespace_);
    EXPECT_EQ(slim->nodeName, full->nodeName);
    EXPECT_EQ(slim->labels, full->labels);
    EXPECT_EQ(slim->requests, full->requests);
    EXPECT_EQ(slim->nonZeroRequests, full->nonZeroRequests);
    EXPECT_EQ(slim->hostPorts, full->hostPorts);
    EXPECT_EQ(slim->tolerations, full->tolerations);
    EXPECT_EQ(slim->nodeAffinity, full->nodeAffinity);
    EXPECT_EQ(slim->phase, full->phase);
    EXPECT_EQ(slim->ownerKind, full->ownerKind);
    EXPECT_EQ(slim->priority, full->priority);
    EXPECT_EQ(slim->terminating, full->terminating);
  }
}

TEST(ModelFilterTest, KeepsWhatAnInPlaceResizeChanges) {
  GeneratorParams params;
  json pod = generatePod(params, 1);
  const std::string name = pod["spec"]["containers"][0]["name"];
  pod["status"]["containerStatuses"] = json::array(
      {{{"name", name}, {"allocatedResources", {{"cpu", "3"}, {"memory", "5Gi"}}},
        {"resources", {{"requests", {{"cpu", "3"}, {"memory", "5Gi"}}}}}, {"image", "x"}, {"ready", true}}});
  pod["status"]["conditions"] = json::array({{{"type", "PodResizePending"}, {"reason", "Infeasible"}, {"status", "True"}}});
  auto filtered = parseFiltered(pod.dump(), podFilter());
  ASSERT_TRUE(filtered) << filtered.error().message;
  auto full = decodePod(pod);
  auto slim = decodePod(*filtered);
  ASSERT_TRUE(full && slim);
  EXPECT_EQ(slim->requests, full->requests);
  EXPECT_EQ(slim->nonZeroRequests, full->nonZeroRequests);
}

}  // namespace
}  // namespace placer::kube
