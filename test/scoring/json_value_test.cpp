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
#include "scoring/pod_decode_into.h"
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

// decodePodInto (the list path's decode into the pods of an earlier batch):
// whatever the object held before, the pod decoded equals a fresh decode, and
// an error is the same error.

// A pod with every field the model keeps set, most lists longer than the
// pods that follow it in these cases.
constexpr const char* kEveryField = R"({
  "metadata": {"namespace": "team-a", "name": "everything", "generateName": "every-", "uid": "u-1",
    "labels": {"app": "web", "tier": "front", "version": "v1-with-a-long-value-here"},
    "annotations": {"a": "1", "b": "2"}, "deletionTimestamp": "2026-01-01T00:00:00Z",
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "controller": true}]},
  "spec": {"nodeName": "node-1", "schedulerName": "my-scheduler", "nodeSelector": {"disk": "ssd", "zone": "z1"},
    "affinity": {
      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 3, "preference": {"matchFields": [
          {"key": "metadata.name", "operator": "NotIn", "values": ["n"]}]}}]},
      "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "zone", "namespaces": ["x"], "matchLabelKeys": ["app"]}]},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "topologyKey": "host",
        "namespaceSelector": {}}}]}},
    "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
      "labelSelector": {"matchLabels": {"app": "web"}}, "minDomains": 3, "matchLabelKeys": ["version"],
      "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor"}],
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
      {"key": "dedicated", "value": "team-a-long-toleration-value", "effect": "PreferNoSchedule"}],
    "containers": [
      {"name": "web-container-with-a-long-name", "image": "registry.example.com/web:1.0",
       "resources": {"requests": {"cpu": "250m", "memory": "64Mi", "ephemeral-storage": "1Gi", "example.com/gpu": "1"}},
       "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 53, "hostPort": 53, "protocol": "UDP",
         "hostIP": "10.0.0.1"}]},
      {"name": "sidecar", "image": "sidecar:2", "resources": {"requests": {"cpu": "1"}}},
      {"name": "third", "image": "third"}],
    "initContainers": [{"name": "proxy", "image": "proxy:1", "restartPolicy": "Always",
        "resources": {"requests": {"memory": "32Mi"}}, "ports": [{"hostPort": 9090}]},
      {"name": "setup", "image": "setup:1", "resources": {"requests": {"cpu": "2"}}}],
    "overhead": {"cpu": "100m", "memory": "10Mi"},
    "resources": {"requests": {"cpu": "3", "memory": "1Gi", "hugepages-2Mi": "4Mi"}},
    "priority": 1000, "schedulingGates": [{"name": "g"}], "resourceClaims": [{"name": "c"}, {"name": "d"}],
    "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "pvc"}}, {"name": "e", "ephemeral": {}}]},
  "status": {"phase": "Running", "nominatedNodeName": "node-2", "reason": "OutOfcpu", "message": "no room",
    "conditions": [{"type": "PodResizePending", "reason": "Infeasible"}],
    "containerStatuses": [{"name": "web-container-with-a-long-name", "allocatedResources": {"cpu": "500m"},
      "resources": {"requests": {"cpu": "400m", "memory": "80Mi"}}}],
    "initContainerStatuses": [{"name": "proxy", "allocatedResources": {"memory": "48Mi"}}]}
})";

struct ReuseCase {
  const char* name;
  const char* before;  // what the object held (a Pod that decodes, or one that fails part way)
  const char* text;    // the pod decoded into it
};

class DecodePodInto : public testing::TestWithParam<ReuseCase> {};

TEST_P(DecodePodInto, EqualsAFreshDecodeWhateverTheObjectHeld) {
  const ReuseCase& c = GetParam();
  JsonParser parser;
  Pod pod;
  auto before = parser.parse(c.before);
  ASSERT_TRUE(before) << before.error().message;
  (void)decodePodInto(*before, pod);
  auto parsed = parser.parse(c.text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  Outcome into = decodePodInto(*parsed, pod);
  Result<Pod> fresh = decodePod(*parsed);
  ASSERT_EQ(into.ok(), fresh.ok()) << (into.ok() ? fresh.error().message : into.error().message);
  if (fresh.ok())
    EXPECT_TRUE(pod == *fresh);
  else
    EXPECT_EQ(into.error().message, fresh.error().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodePodInto,
    testing::Values(
        ReuseCase{"TheSamePodAgain", kEveryField, kEveryField},
        ReuseCase{"FewerLabelsContainersAndTolerations", kEveryField,
                  R"({"metadata":{"name":"small","labels":{"app":"x"}},
                      "spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}],
                              "tolerations":[{"key":"k","operator":"Exists"}]}})"},
        ReuseCase{"OptionalFieldsAbsent", kEveryField,
                  R"({"metadata":{"name":"p","namespace":"n"},"spec":{"containers":[{"name":"c"}]},
                      "status":{"phase":"Pending"}})"},
        ReuseCase{"NoMetadata", kEveryField, R"({"spec":{"containers":[{"name":"c"}]}})"},
        ReuseCase{"NoSpec", kEveryField, R"({"metadata":{"name":"p"}})"},
        ReuseCase{"NoStatus", kEveryField, R"({"metadata":{"name":"p"},"spec":{"nodeName":"n"}})"},
        ReuseCase{"EmptyObject", kEveryField, "{}"},
        ReuseCase{"EmptyListsAndMaps", kEveryField,
                  R"({"metadata":{"labels":{},"annotations":{}},"spec":{"nodeSelector":{},"tolerations":[],
                      "containers":[],"initContainers":[]}})"},
        ReuseCase{"ContainersWithoutRequestsOrPorts", kEveryField,
                  R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}],"initContainers":[{"name":"i"}]}})"},
        ReuseCase{"MoreThanBefore", R"({"spec":{"containers":[{"name":"a"}]}})", kEveryField},
        ReuseCase{"AfterAPodThatFailedPartWay",
                  R"({"metadata":{"name":"bad","labels":{"a":"1"}},"spec":{"tolerations":[{"key":"t"}],
                      "containers":[{"name":"a","resources":{"requests":{"cpu":"1"}}},{"name":"b","ports":[{"hostPort":"x"}]}]}})",
                  R"({"metadata":{"name":"good"},"spec":{"containers":[{"name":"c"}]}})"},
        ReuseCase{"AnErrorAfterAFullPod", kEveryField,
                  R"({"metadata":{"name":"bad"},"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"lots"}}}]}})"},
        ReuseCase{"NotAnObject", kEveryField, "[]"}),
    [](const testing::TestParamInfo<ReuseCase>& info) { return std::string(info.param.name); });

TEST(DecodePodIntoSequence, EveryGeneratedPodDecodedOverItsPredecessorEqualsAFreshDecode) {
  GeneratorParams params;
  params.nodes = 20;
  params.podsPerNode = 30;
  params.affinityFraction = 0.5;
  JsonParser parser;
  std::vector<std::string> texts;
  for (int64_t i = 0; i < generatedPodCount(params); ++i) texts.push_back(generatePod(params, i).dump());
  for (int i = 0; i < 3 * kPendingShapes; ++i) texts.push_back(generatePendingPod(params, i).dump());
  // Forwards and backwards, so that each pod follows a different one each way.
  for (bool reverse : {false, true}) {
    Pod pod;
    for (size_t k = 0; k < texts.size(); ++k) {
      const std::string& text = texts[reverse ? texts.size() - 1 - k : k];
      auto parsed = parser.parse(text);
      ASSERT_TRUE(parsed) << parsed.error().message;
      ASSERT_TRUE(decodePodInto(*parsed, pod));
      Result<Pod> fresh = decodePod(*parsed);
      ASSERT_TRUE(fresh);
      ASSERT_TRUE(pod == *fresh) << (reverse ? "backwards, " : "") << "pod " << k;
    }
  }
}

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
