// Decoding straight from bytes (JsonParser + decodePod(JsonValue), the list
// and watch path) equals decoding an nlohmann document (decodePod(json), the
// snapshot and admission path): the same object for every generated and
// served object, and the same error, naming the same field, for every
// malformed one.

#include "scoring/json_value.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/model.h"
#include "test/support/cluster_generator.h"
#include "placer_test_paths.h"

namespace placer {
namespace {

using json = nlohmann::json;

std::string readObjectFile(const std::string& name) {
  std::ifstream in(std::string(PLACER_SOURCE_DIR) + "/test/data/objects/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Both decoders on the same text: the nlohmann document parsed from it, and
// the bytes parsed by simdjson. Results compare whole (every field).
template <class T, class DecodeJson, class DecodeBytes>
void expectSameDecode(const std::string& text, DecodeJson fromJson, DecodeBytes fromBytes, const std::string& what) {
  SCOPED_TRACE(what);
  json document = json::parse(text);
  Result<T> old = fromJson(document);
  JsonParser parser;
  auto parsed = parser.parse(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  Result<T> fresh = fromBytes(*parsed);
  ASSERT_EQ(old.ok(), fresh.ok()) << (old.ok() ? fresh.error().message : old.error().message);
  if (old.ok())
    EXPECT_TRUE(*old == *fresh);
  else
    EXPECT_EQ(old.error().message, fresh.error().message);
}

void expectSamePod(const std::string& text, const std::string& what) {
  expectSameDecode<Pod>(
      text, [](const json& j) { return decodePod(j); }, [](const JsonValue& v) { return decodePod(v); }, what);
}
void expectSameNode(const std::string& text, const std::string& what) {
  expectSameDecode<Node>(
      text, [](const json& j) { return decodeNode(j); }, [](const JsonValue& v) { return decodeNode(v); }, what);
}

TEST(DecodeFromBytes, EveryGeneratedObjectDecodesAsFromADocument) {
  GeneratorParams params;
  params.nodes = 60;
  params.podsPerNode = 30;
  params.affinityFraction = 0.5;  // more affinity and spread terms to compare
  for (int i = 0; i < params.nodes; ++i) expectSameNode(generateNode(params, i).dump(), "node " + std::to_string(i));
  for (int64_t i = 0; i < generatedPodCount(params); ++i)
    expectSamePod(generatePod(params, i).dump(), "pod " + std::to_string(i));
  for (int i = 0; i < 3 * kPendingShapes; ++i)
    expectSamePod(generatePendingPod(params, i).dump(), "pending pod " + std::to_string(i));
  for (const json& object : generateWorkloadObjects(params)) {
    const std::string kind = object["kind"];
    const std::string text = object.dump();
    if (kind == "Namespace") {
      expectSameDecode<Namespace>(
          text, [](const json& j) { return decodeNamespace(j); },
          [](const JsonValue& v) { return decodeNamespace(v); }, text);
      continue;
    }
    const WorkloadKind workload = kind == "Service"      ? WorkloadKind::Service
                                  : kind == "ReplicaSet" ? WorkloadKind::ReplicaSet
                                                         : WorkloadKind::StatefulSet;
    expectSameDecode<WorkloadSelector>(
        text, [&](const json& j) { return decodeWorkloadSelector(workload, j); },
        [&](const JsonValue& v) { return decodeWorkloadSelector(workload, v); }, text);
  }
}

TEST(DecodeFromBytes, ServedObjectsDecodeAsFromADocument) {
  // As the API server writes them (indented here), with managedFields and full status.
  expectSamePod(readObjectFile("pod_web.json"), "pod_web.json");
  expectSameNode(readObjectFile("node_worker.json"), "node_worker.json");
}

// One pod with one thing changed, in a table.
struct PodCase {
  const char* name;
  const char* text;  // a Pod, as JSON
};

class DecodeFromBytesPodCases : public testing::TestWithParam<PodCase> {};

TEST_P(DecodeFromBytesPodCases, SameObjectOrSameError) { expectSamePod(GetParam().text, GetParam().name); }

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodeFromBytesPodCases,
    testing::Values(
        // Accepted, with what only one representation could get wrong.
        PodCase{"DuplicateKeysTheLastWins",
                R"({"metadata":{"name":"a","name":"b","labels":{"z":"1","a":"2","z":"3"}},
                    "spec":{"nodeName":"n1","nodeName":"n2"}})"},
        PodCase{"DuplicateLabelKeyWhoseFirstValueIsNotAString", R"({"metadata":{"labels":{"a":1,"a":"x"}}})"},
        PodCase{"LabelsOutOfOrder", R"({"metadata":{"labels":{"b":"1","a":"2","c":"3"}}})"},
        PodCase{"NullsAreAbsent",
                R"({"metadata":{"name":null,"labels":null},"spec":{"nodeName":null,"containers":null},"status":null})"},
        PodCase{"QuantitiesAsNumbers",
                R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":1.5,"memory":1e3,
                    "ephemeral-storage":12345678901234,"example.com/dev":2}}}]}})"},
        PodCase{"QuantityWithSpaces", R"({"spec":{"containers":[{"resources":{"requests":{"cpu":" 250m "}}}]}})"},
        PodCase{"IntegersWrittenAsFloats",
                R"({"spec":{"priority":1.0,"tolerations":[{"key":"k","operator":"Exists","tolerationSeconds":30.0}]}})"},
        PodCase{"EscapedStrings", R"({"metadata":{"name":"caf\u00e9","labels":{"k\"q":"v\\w\n"}}})"},
        PodCase{"ControllerOwnerAfterItsKind",
                R"({"metadata":{"ownerReferences":[{"kind":"X","name":"x"},
                    {"kind":"ReplicaSet","apiVersion":"apps/v1","name":"rs","controller":true}]}})"},
        PodCase{"ResizeStatus",
                R"({"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"1"}}}]},
                    "status":{"conditions":[{"type":"PodResizePending","reason":"Infeasible"}],
                    "containerStatuses":[{"name":"a","allocatedResources":{"cpu":"2"},
                    "resources":{"requests":{"cpu":"3"}}}]}})"},
        PodCase{"UnknownLabelSelectorOperatorIsKept",
                R"({"spec":{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
                    {"labelSelector":{"matchExpressions":[{"key":"a","operator":"Near"}]},"topologyKey":"z"}]}}}})"},
        // Refused, with the same message naming the same field.
        PodCase{"NotAnObject", R"(["a"])"},
        PodCase{"MetadataNotAnObject", R"({"metadata":"x"})"},
        PodCase{"LabelValueNotAString", R"({"metadata":{"labels":{"a":"1","b":2}}})"},
        PodCase{"TwoBadLabelValuesTheFirstByKeyIsNamed", R"({"metadata":{"labels":{"z":1,"a":true}}})"},
        PodCase{"NodeNameNotAString", R"({"spec":{"nodeName":7}})"},
        PodCase{"BadQuantity", R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}})"},
        PodCase{"QuantityNotAStringOrNumber", R"({"spec":{"overhead":{"memory":[1]}}})"},
        PodCase{"PriorityOutOfInt32", R"({"spec":{"priority":4294967296}})"},
        PodCase{"PriorityNotAnInteger", R"({"spec":{"priority":1.5}})"},
        PodCase{"PriorityUnsignedOutOfInt64", R"({"spec":{"priority":18446744073709551615}})"},
        PodCase{"UnknownTaintEffectOnAToleration",
                R"({"spec":{"tolerations":[{"key":"k","effect":"Sometimes"}]}})"},
        PodCase{"UnknownTolerationOperator", R"({"spec":{"tolerations":[{"key":"k","operator":"Like"}]}})"},
        PodCase{"UnknownNodeSelectorOperator",
                R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Near"}]}]}}}}})"},
        PodCase{"ContainerNotAnObject", R"({"spec":{"containers":["c"]}})"},
        PodCase{"HostPortNotAnInteger", R"({"spec":{"containers":[{"ports":[{"hostPort":"80"}]}]}})"},
        PodCase{"SpreadPolicyUnknown",
                R"({"spec":{"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"z","nodeTaintsPolicy":"Maybe"}]}})"},
        PodCase{"DeletionTimestampNotAString", R"({"metadata":{"deletionTimestamp":5}})"},
        PodCase{"ControllerNotABoolean", R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})"},
        PodCase{"VolumesNotAnArray", R"({"spec":{"volumes":{}}})"},
        PodCase{"ConditionsNotObjects", R"({"status":{"conditions":[1]}})"},
        PodCase{"AllocatedResourcesBad",
                R"({"status":{"containerStatuses":[{"name":"a","allocatedResources":{"cpu":"x"}}]}})"}),
    [](const testing::TestParamInfo<PodCase>& info) { return std::string(info.param.name); });

struct NodeCase {
  const char* name;
  const char* text;
};

class DecodeFromBytesNodeCases : public testing::TestWithParam<NodeCase> {};

TEST_P(DecodeFromBytesNodeCases, SameObjectOrSameError) { expectSameNode(GetParam().text, GetParam().name); }

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodeFromBytesNodeCases,
    testing::Values(
        NodeCase{"ImagesNormalised", R"({"metadata":{"name":"n"},"status":{"images":[{"names":["a","b:1"],"sizeBytes":5}]}})"},
        NodeCase{"AllocatableOutOfOrder", R"({"status":{"allocatable":{"pods":"110","cpu":"4","memory":"8Gi"}}})"},
        NodeCase{"UnknownTaintEffect", R"({"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})"},
        NodeCase{"TaintEffectMissing", R"({"spec":{"taints":[{"key":"k"}]}})"},
        NodeCase{"UnschedulableNotABoolean", R"({"spec":{"unschedulable":"true"}})"},
        NodeCase{"ImageSizeNotAnInteger", R"({"status":{"images":[{"names":["a"],"sizeBytes":"5"}]}})"},
        NodeCase{"BadAllocatable", R"({"status":{"allocatable":{"cpu":"four"}}})"},
        NodeCase{"NotAnObject", R"("node")"}),
    [](const testing::TestParamInfo<NodeCase>& info) { return std::string(info.param.name); });

// What the bytes path refuses before decoding: text that is not JSON. The
// nlohmann path never sees such text (its parse refuses it first).
TEST(JsonParser, RefusesMalformedJsonWithAReason) {
  JsonParser parser;
  for (const char* text : {"{\"a\":", "{\"a\" 1}", "[1,]", "\"\\ud800\"", "{\"a\":\"\xff\"}", "", "nul"}) {
    auto parsed = parser.parse(text);
    EXPECT_FALSE(parsed) << text;
    if (!parsed) {
      EXPECT_EQ(parsed.error().message.rfind("malformed JSON: ", 0), 0u) << parsed.error().message;
    }
  }
}

TEST(JsonParser, ReusesItselfAcrossDocumentsOfAnySize) {
  JsonParser parser;
  GeneratorParams params;
  const std::string big = generateNode(params, 0).dump();
  for (const std::string& text : {std::string(R"({"metadata":{"name":"small"}})"), big, std::string(R"({"x":1})")}) {
    auto parsed = parser.parse(text);
    ASSERT_TRUE(parsed) << parsed.error().message;
    EXPECT_EQ(json::parse(parsed->text()), json::parse(text));
  }
}

TEST(JsonValue, ReadsEnvelopeMembers) {
  JsonParser parser;
  auto event = parser.parse(R"({"type":"ERROR","object":{"code":410,"message":"too old","metadata":null}})");
  ASSERT_TRUE(event);
  ASSERT_TRUE(event->isObject());
  EXPECT_EQ(event->member("type")->string(), "ERROR");
  auto object = event->member("object");
  ASSERT_TRUE(object);
  EXPECT_EQ(object->member("code")->integer(), 410);
  EXPECT_EQ(object->member("message")->string(), "too old");
  EXPECT_FALSE(object->member("metadata"));   // null is absent
  EXPECT_FALSE(object->member("missing"));
  EXPECT_FALSE(object->member("code")->string());  // a number is not a string
  EXPECT_FALSE(event->member("type")->member("x"));  // a string has no members
}

}  // namespace
}  // namespace placer
