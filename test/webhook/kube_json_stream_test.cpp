// The field filters that keep only what the object model decodes. (Splitting
// streamed bodies: test/scoring/json_stream_scanner_test.cpp.)
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
