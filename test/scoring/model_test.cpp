#include "scoring/model.h"

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "placer_test_paths.h"

namespace placer {
namespace {

using json = nlohmann::json;

constexpr int64_t kMi = 1024 * 1024;

json loadObject(const std::string& name) {
  std::ifstream in(std::string(PLACER_SOURCE_DIR) + "/test/data/objects/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return json::parse(buffer.str());
}

// ---- a Deployment pod as the API server serves it ----

TEST(DecodePod, ReadsEveryFieldOfAServedPod) {
  auto decoded = decodePod(loadObject("pod_web.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const Pod& pod = *decoded;

  EXPECT_EQ(pod.namespace_, "shop");
  EXPECT_EQ(pod.name, "web-7c9d8f6b5d-x2x7q");
  EXPECT_EQ(pod.generateName, "web-7c9d8f6b5d-");
  EXPECT_EQ(pod.uid, "0f6c1a8e-93d3-4f0e-b0a4-5b2d1c7e9f30");
  EXPECT_EQ(pod.key(), "shop/web-7c9d8f6b5d-x2x7q");
  EXPECT_EQ(pod.labels, (Labels{{"app.kubernetes.io/name", "web"},
                                {"app.kubernetes.io/part-of", "shop"},
                                {"pod-template-hash", "7c9d8f6b5d"},
                                {"tier", "frontend"}}));
  ASSERT_NE(findLabel(pod.annotations, "prometheus.io/port"), nullptr);
  EXPECT_EQ(*findLabel(pod.annotations, "prometheus.io/port"), "9090");
  EXPECT_EQ(pod.nodeName, "ip-10-0-3-17.eu-west-1.compute.internal");
  EXPECT_EQ(pod.schedulerName, "default-scheduler");
  EXPECT_EQ(pod.nodeSelector, (Labels{{"kubernetes.io/os", "linux"}, {"workload", "web"}}));
  EXPECT_EQ(pod.priority, 1000);
  EXPECT_EQ(pod.schedulingGates, 0);
  EXPECT_TRUE(pod.hasPvcVolume);
  EXPECT_FALSE(pod.hasEphemeralVolume);
  EXPECT_EQ(pod.phase, "Running");
  EXPECT_FALSE(pod.terminating);
  EXPECT_FALSE(pod.isTerminal());
  EXPECT_EQ(pod.ownerKind, "ReplicaSet");

  // Node affinity: two ORed terms, one on labels and one on fields.
  ASSERT_TRUE(pod.nodeAffinity.has_value());
  ASSERT_TRUE(pod.nodeAffinity->required.has_value());
  const auto& terms = pod.nodeAffinity->required->terms;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].matchExpressions,
            (std::vector<SelectorRequirement>{{"kubernetes.io/arch", SelectorOperator::In, {"amd64", "arm64"}},
                                              {"node.kubernetes.io/instance-type", SelectorOperator::NotIn, {"t3.small"}}}));
  EXPECT_TRUE(terms[0].matchFields.empty());
  EXPECT_EQ(terms[1].matchFields, (std::vector<SelectorRequirement>{
                                      {"metadata.name", SelectorOperator::In, {"ip-10-0-3-17.eu-west-1.compute.internal"}}}));
  ASSERT_EQ(pod.nodeAffinity->preferred.size(), 2u);
  EXPECT_EQ(pod.nodeAffinity->preferred[0].weight, 80);
  EXPECT_EQ(pod.nodeAffinity->preferred[1].weight, 20);
  EXPECT_EQ(pod.nodeAffinity->preferred[1].preference.matchExpressions[0].op, SelectorOperator::Gt);

  // Pod anti-affinity.
  EXPECT_FALSE(pod.podAffinity.has_value());
  ASSERT_TRUE(pod.podAntiAffinity.has_value());
  ASSERT_EQ(pod.podAntiAffinity->required.size(), 1u);
  const PodAffinityTerm& required = pod.podAntiAffinity->required[0];
  EXPECT_EQ(required.topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(required.namespaces, (std::vector<std::string>{"shop", "shop-canary"}));
  ASSERT_TRUE(required.labelSelector.has_value());
  EXPECT_EQ(required.labelSelector->matchLabels, (Labels{{"app.kubernetes.io/name", "web"}}));
  EXPECT_FALSE(required.namespaceSelector.has_value());
  ASSERT_EQ(pod.podAntiAffinity->preferred.size(), 1u);
  EXPECT_EQ(pod.podAntiAffinity->preferred[0].weight, 100);
  EXPECT_EQ(pod.podAntiAffinity->preferred[0].term.topologyKey, "kubernetes.io/hostname");
  EXPECT_EQ(pod.podAntiAffinity->preferred[0].term.labelSelector->matchExpressions.size(), 1u);

  ASSERT_EQ(pod.topologySpreadConstraints.size(), 1u);
  EXPECT_EQ(pod.topologySpreadConstraints[0].maxSkew, 2);
  EXPECT_EQ(pod.topologySpreadConstraints[0].minDomains, 3);
  EXPECT_EQ(pod.topologySpreadConstraints[0].whenUnsatisfiable, "DoNotSchedule");

  // Tolerations: operator defaults to Equal, an empty effect matches all.
  ASSERT_EQ(pod.tolerations.size(), 4u);
  EXPECT_EQ(pod.tolerations[0], (Toleration{"node.kubernetes.io/not-ready", TolerationOperator::Exists, "",
                                            TaintEffect::NoExecute, 300}));
  EXPECT_EQ(pod.tolerations[2],
            (Toleration{"dedicated", TolerationOperator::Equal, "web", TaintEffect::All, std::nullopt}));
  EXPECT_EQ(pod.tolerations[3], (Toleration{"", TolerationOperator::Exists, "", TaintEffect::All, std::nullopt}));

  // Containers.
  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_EQ(pod.containers[0].name, "web");
  EXPECT_EQ(pod.containers[0].image, "registry.example.com/shop/web:1.42.0");
  EXPECT_EQ(pod.containers[0].requests.milliCpu, 500);
  EXPECT_EQ(pod.containers[0].requests.memory, 512 * kMi);
  EXPECT_TRUE(pod.containers[0].hasCpuRequest);
  EXPECT_TRUE(pod.containers[0].hasMemoryRequest);
  EXPECT_EQ(pod.containers[0].hostPorts, (std::vector<HostPort>{{"0.0.0.0", "TCP", 8080}}));
  EXPECT_FALSE(pod.containers[1].hasMemoryRequest);
  ASSERT_EQ(pod.initContainers.size(), 2u);
  EXPECT_FALSE(pod.initContainers[0].restartableInit);
  EXPECT_TRUE(pod.initContainers[1].restartableInit);
  EXPECT_EQ(pod.initContainers[1].requests.scalar("example.com/nic"), 1);

  // Requests: max(app 550m + sidecar 100m, migrate 1 cpu); memory 512Mi + 64Mi.
  EXPECT_EQ(pod.requests.milliCpu, 1000);
  EXPECT_EQ(pod.requests.memory, 576 * kMi);
  EXPECT_EQ(pod.requests.scalar("example.com/nic"), 1);
  EXPECT_EQ(pod.nonZeroRequests.milliCpu, 1000);
  EXPECT_EQ(pod.nonZeroRequests.memory, (512 + 200 + 64) * kMi);  // log-tailer counts the 200Mi default
  EXPECT_EQ(pod.hostPorts, (std::vector<HostPort>{{"10.0.3.17", "UDP", 15001}, {"0.0.0.0", "TCP", 8080}}));
}

TEST(DecodeNode, ReadsEveryFieldOfAServedNode) {
  auto decoded = decodeNode(loadObject("node_worker.json"));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  const Node& node = *decoded;
  EXPECT_EQ(node.name, "ip-10-0-3-17.eu-west-1.compute.internal");
  EXPECT_EQ(node.uid, "8d2b3c4e-1f5a-4b6c-9d7e-0a1b2c3d4e5f");
  EXPECT_EQ(node.resourceVersion, "48212904");
  EXPECT_EQ(node.labels.size(), 9u);
  ASSERT_NE(findLabel(node.labels, "topology.kubernetes.io/zone"), nullptr);
  EXPECT_EQ(*findLabel(node.labels, "topology.kubernetes.io/zone"), "eu-west-1a");
  EXPECT_EQ(findLabel(node.labels, "missing"), nullptr);
  EXPECT_TRUE(node.unschedulable);
  EXPECT_EQ(node.taints, (std::vector<Taint>{{"dedicated", "web", TaintEffect::NoSchedule},
                                             {"spot", "", TaintEffect::PreferNoSchedule},
                                             {"node.kubernetes.io/unreachable", "", TaintEffect::NoExecute}}));
  EXPECT_EQ(node.allocatable.milliCpu, 7910);
  EXPECT_EQ(node.allocatable.memory, 31792712LL * 1024);
  EXPECT_EQ(node.allocatable.ephemeralStorage, 95491281146LL);
  EXPECT_EQ(node.allocatable.pods, 58);
  EXPECT_EQ(node.allocatable.scalars,
            (std::vector<std::pair<std::string, int64_t>>{{"attachable-volumes-aws-ebs", 25},
                                                          {"example.com/nic", 4},
                                                          {"hugepages-1Gi", 0},
                                                          {"hugepages-2Mi", 0},
                                                          {"nvidia.com/gpu", 1}}));
  ASSERT_EQ(node.images.size(), 3u);
  EXPECT_EQ(node.images[0].sizeBytes(), 187654321);
  EXPECT_EQ(node.images[0].name(1), "registry.example.com/shop/web:1.42.0");
  EXPECT_EQ(node.images[1].name(1), "busybox:latest");
  EXPECT_EQ(node.images[2].name(0), "localhost:5000/tools:latest");
}

// ---- defaults the API server would apply or the scheduler assumes ----

TEST(DecodePod, MinimalPodGetsDefaults) {
  auto pod = decodePod(json::parse(R"({"metadata": {"generateName": "job-", "namespace": "batch"},
      "spec": {"containers": [{"name": "c", "image": "nginx",
               "ports": [{"containerPort": 80, "hostPort": 80}, {"containerPort": 81, "hostPort": 0}]}],
               "nodeSelector": null, "affinity": null, "tolerations": [{"key": "k"}]}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->schedulerName, "default-scheduler");
  EXPECT_EQ(pod->key(), "batch/job-");
  EXPECT_FALSE(pod->nodeAffinity.has_value());
  EXPECT_TRUE(pod->nodeSelector.empty());
  EXPECT_EQ(pod->tolerations[0].op, TolerationOperator::Equal);
  EXPECT_EQ(pod->tolerations[0].effect, TaintEffect::All);
  EXPECT_EQ(pod->requests, Resources{});
  EXPECT_EQ(pod->nonZeroRequests.milliCpu, kDefaultMilliCpuRequest);
  EXPECT_EQ(pod->nonZeroRequests.memory, kDefaultMemoryRequest);
  EXPECT_EQ(pod->hostPorts, (std::vector<HostPort>{{"0.0.0.0", "TCP", 80}}));
  EXPECT_TRUE(pod->phase.empty());
}

TEST(DecodePod, ReadsLifecycleAndPlacementHints) {
  auto pod = decodePod(json::parse(R"({
      "metadata": {"name": "p", "namespace": "d", "deletionTimestamp": "2026-11-21T09:00:00Z",
                   "ownerReferences": [{"kind": "Job", "name": "j", "controller": false},
                                       {"kind": "StatefulSet", "name": "s", "controller": true}]},
      "spec": {"schedulerName": "my-scheduler", "schedulingGates": [{"name": "a"}, {"name": "b"}],
               "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
               "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
               "overhead": {"cpu": "250m", "memory": "120Mi"},
               "resources": {"requests": {"cpu": "2", "memory": "1Gi", "ephemeral-storage": "1Gi"}},
               "containers": [{"name": "c", "resources": {"requests": {"cpu": 1, "memory": " 64Mi "}}}]},
      "status": {"phase": "Succeeded"}})"));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_TRUE(pod->terminating);
  EXPECT_EQ(pod->ownerKind, "StatefulSet");
  EXPECT_EQ(pod->schedulerName, "my-scheduler");
  EXPECT_EQ(pod->schedulingGates, 2);
  EXPECT_EQ(pod->resourceClaims, 1);
  EXPECT_TRUE(pod->hasEphemeralVolume);
  EXPECT_FALSE(pod->hasPvcVolume);
  EXPECT_TRUE(pod->isTerminal());
  EXPECT_EQ(pod->containers[0].requests.milliCpu, 1000);  // a bare number is a quantity too
  EXPECT_EQ(pod->containers[0].requests.memory, 64 * kMi);
  ASSERT_TRUE(pod->podLevelRequests.has_value());
  EXPECT_TRUE(pod->podLevelRequests->hasCpu);
  // Pod-level requests replace the containers' cpu and memory; overhead on top.
  EXPECT_EQ(pod->requests.milliCpu, 2250);
  EXPECT_EQ(pod->requests.memory, 1024 * kMi + 120 * kMi);
}

TEST(NormalizedImageName, AddsLatestOnlyWithoutTagOrDigest) {
  EXPECT_EQ(normalizedImageName("nginx"), "nginx:latest");
  EXPECT_EQ(normalizedImageName("nginx:1.27"), "nginx:1.27");
  EXPECT_EQ(normalizedImageName("registry:5000/team/app"), "registry:5000/team/app:latest");
  EXPECT_EQ(normalizedImageName("registry:5000/team/app:v2"), "registry:5000/team/app:v2");
  EXPECT_EQ(normalizedImageName("app@sha256:abc"), "app@sha256:abc");
  // Upstream's LastIndex(":") <= LastIndex("/") at the edges.
  EXPECT_EQ(normalizedImageName(""), ":latest");
  EXPECT_EQ(normalizedImageName(":"), ":");
  EXPECT_EQ(normalizedImageName("a:/"), "a:/:latest");
  EXPECT_EQ(normalizedImageName("host:5000/a"), "host:5000/a:latest");
}

// A node's images keep each image's names together, in order, with its size;
// two lists are equal only with the same names in the same images.
TEST(NodeImages, KeepEachImagesNamesAndSize) {
  const std::string text = R"({"metadata":{"name":"n"},"status":{"images":[
      {"names":["registry.example.com/app@sha256:abc","registry.example.com/app:v1"],"sizeBytes":500},
      {"names":["busybox"],"sizeBytes":7},
      {"names":null,"sizeBytes":1},
      {"sizeBytes":2},
      {"names":["registry:5000/tools","a:/"]}]}})";
  JsonParser parser;
  auto parsed = parser.parse(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto decoded = decodeNode(*parsed);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  auto fromDocument = decodeNode(json::parse(text));
  ASSERT_TRUE(fromDocument.ok()) << fromDocument.error().message;
  EXPECT_EQ(*fromDocument, *decoded);
  const NodeImages& images = decoded->images;
  ASSERT_EQ(images.size(), 5u);
  EXPECT_EQ(images.nameCount(), 5u);
  EXPECT_EQ(images[0].sizeBytes(), 500);
  ASSERT_EQ(images[0].nameCount(), 2u);
  EXPECT_EQ(images[0].name(0), "registry.example.com/app@sha256:abc");
  EXPECT_EQ(images[0].name(1), "registry.example.com/app:v1");
  EXPECT_EQ(images[1].name(0), "busybox:latest");
  EXPECT_EQ(images[2].nameCount(), 0u);
  EXPECT_EQ(images[2].sizeBytes(), 1);
  EXPECT_EQ(images[3].nameCount(), 0u);
  EXPECT_EQ(images[4].sizeBytes(), 0);
  EXPECT_EQ(images[4].name(0), "registry:5000/tools:latest");
  EXPECT_EQ(images[4].name(1), "a:/:latest");
  std::vector<std::pair<std::string, int64_t>> all;
  images.forEachName([&](std::string_view name, int64_t size) { all.emplace_back(name, size); });
  EXPECT_EQ(all, (std::vector<std::pair<std::string, int64_t>>{{"registry.example.com/app@sha256:abc", 500},
                                                               {"registry.example.com/app:v1", 500},
                                                               {"busybox:latest", 7},
                                                               {"registry:5000/tools:latest", 0},
                                                               {"a:/:latest", 0}}));

  NodeImages one, other;
  one.add({"ab"}, 1);
  other.add({"a", "b"}, 1);
  EXPECT_NE(one, other) << "one name \"ab\" is not the names \"a\" and \"b\"";
  one.clear();
  one.add({"a"}, 1);
  one.add({"b"}, 1);
  EXPECT_NE(one, other) << "two images of a name each are not one image of two names";
  one.clear();
  one.add({"a", "b"}, 2);
  EXPECT_NE(one, other) << "sizes differ";
  one.clear();
  one.add({"a", "b:latest"}, 1);
  EXPECT_EQ(one, other) << "names compare as normalised";
}

// ---- malformed objects: each error names the field ----

struct MalformedCase {
  std::string name;
  std::string object;  // "pod" or "node"
  std::string pointer;  // JSON pointer into the fixture ("" = whole document)
  json replacement;
  std::string wantError;
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.name; }

class MalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedTest, ErrorNamesTheField) {
  const MalformedCase& c = GetParam();
  json doc = loadObject(c.object == "pod" ? "pod_web.json" : "node_worker.json");
  if (c.pointer.empty())
    doc = c.replacement;
  else
    doc[json::json_pointer(c.pointer)] = c.replacement;
  std::string error;
  if (c.object == "pod") {
    auto r = decodePod(doc);
    ASSERT_FALSE(r.ok());
    error = r.error().message;
  } else {
    auto r = decodeNode(doc);
    ASSERT_FALSE(r.ok());
    error = r.error().message;
  }
  EXPECT_EQ(error, c.wantError);
}

INSTANTIATE_TEST_SUITE_P(
    Pods, MalformedTest,
    ::testing::Values(
        MalformedCase{"CpuNotAQuantity", "pod", "/spec/containers/1/resources/requests/cpu", "abc",
                      "spec.containers[1].resources.requests.cpu: invalid quantity \"abc\""},
        MalformedCase{"MemoryOverflows", "pod", "/spec/containers/0/resources/requests/memory", "99999999999999999999",
                      "spec.containers[0].resources.requests.memory: quantity \"99999999999999999999\" does not fit in "
                      "a 64-bit integer"},
        MalformedCase{"QuantityIsAnObject", "pod", "/spec/initContainers/1/resources/requests/memory", json::object(),
                      "spec.initContainers[1].resources.requests.memory: expected a quantity string, got an object"},
        MalformedCase{"ContainersNotAnArray", "pod", "/spec/containers", "web",
                      "spec.containers: expected an array, got a string"},
        MalformedCase{"ContainerNotAnObject", "pod", "/spec/containers/1", 42,
                      "spec.containers[1]: expected an object, got a number"},
        MalformedCase{"SpecIsAString", "pod", "/spec", "x", "spec: expected an object, got a string"},
        MalformedCase{"LabelIsANumber", "pod", "/metadata/labels/tier", 5,
                      "metadata.labels.tier: expected a string, got a number"},
        MalformedCase{"HostPortIsAString", "pod", "/spec/containers/0/ports/0/hostPort", "8080",
                      "spec.containers[0].ports[0].hostPort: expected an integer, got a string"},
        MalformedCase{"HostPortOutOfRange", "pod", "/spec/containers/0/ports/0/hostPort", 99999999999LL,
                      "spec.containers[0].ports[0].hostPort: number out of range for int32"},
        MalformedCase{"PriorityIsFractional", "pod", "/spec/priority", 1.5, "spec.priority: expected an integer"},
        MalformedCase{"UnknownTolerationOperator", "pod", "/spec/tolerations/2/operator", "Maybe",
                      "spec.tolerations[2].operator: unknown toleration operator \"Maybe\""},
        MalformedCase{"UnknownTolerationEffect", "pod", "/spec/tolerations/0/effect", "NoRun",
                      "spec.tolerations[0].effect: unknown taint effect \"NoRun\""},
        MalformedCase{"UnknownNodeSelectorOperator", "pod",
                      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/"
                      "matchExpressions/1/operator",
                      "Like",
                      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                      "matchExpressions[1].operator: unknown operator \"Like\""},
        MalformedCase{"SelectorValueIsANumber", "pod",
                      "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/"
                      "matchExpressions/0/values/1",
                      7,
                      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                      "matchExpressions[0].values[1]: expected a string, got a number"},
        MalformedCase{"BadOverhead", "pod", "/spec/overhead", json{{"memory", "lots"}},
                      "spec.overhead.memory: invalid quantity \"lots\""},
        MalformedCase{"TopologySpreadMaxSkewString", "pod", "/spec/topologySpreadConstraints/0/maxSkew", "2",
                      "spec.topologySpreadConstraints[0].maxSkew: expected an integer, got a string"},
        MalformedCase{"DeletionTimestampIsANumber", "pod", "/metadata/deletionTimestamp", 5,
                      "metadata.deletionTimestamp: expected a string, got a number"},
        MalformedCase{"ControllerIsAString", "pod", "/metadata/ownerReferences/0/controller", "true",
                      "metadata.ownerReferences[0].controller: expected a boolean, got a string"},
        MalformedCase{"NotAnObject", "pod", "", json::array(), "expected a Pod object, got an array"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Nodes, MalformedTest,
    ::testing::Values(
        MalformedCase{"UnknownTaintEffect", "node", "/spec/taints/1/effect", "Sometimes",
                      "spec.taints[1].effect: unknown taint effect \"Sometimes\""},
        MalformedCase{"TaintWithoutEffect", "node", "/spec/taints/0/effect", nullptr,
                      "spec.taints[0].effect: unknown taint effect \"\""},
        MalformedCase{"AllocatableCpuNotAQuantity", "node", "/status/allocatable/cpu", "eight",
                      "status.allocatable.cpu: invalid quantity \"eight\""},
        MalformedCase{"ImageSizeIsAString", "node", "/status/images/0/sizeBytes", "big",
                      "status.images[0].sizeBytes: expected an integer, got a string"},
        MalformedCase{"ImageNamesNotAnArray", "node", "/status/images/2/names", "tools",
                      "status.images[2].names: expected an array, got a string"},
        MalformedCase{"UnschedulableIsAString", "node", "/spec/unschedulable", "yes",
                      "spec.unschedulable: expected a boolean, got a string"},
        MalformedCase{"LabelsIsAList", "node", "/metadata/labels", json::array({"a"}),
                      "metadata.labels: expected an object, got an array"},
        MalformedCase{"NotAnObject", "node", "", "node", "expected a Node object, got a string"}),
    [](const auto& info) { return info.param.name; });

// ---- robustness: deterministic mutations of real objects never crash ----

void collectPointers(const json& v, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (at.to_string() == "/metadata/managedFields") return;  // never read; its inside is noise here
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) collectPointers(*it, at / it.key(), out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) collectPointers(v[i], at / i, out);
  }
}

void mutateEveryNode(const std::string& fixture, const std::function<bool(const json&, std::string&)>& decode) {
  json doc = loadObject(fixture);
  std::vector<json::json_pointer> pointers;
  collectPointers(doc, json::json_pointer(), pointers);
  const std::vector<json> replacements = {"x", 1.5, nullptr, json::array(), json::object()};
  int decoded = 0, rejected = 0;
  auto check = [&](const json& candidate, const std::string& where) {
    std::string error;
    bool ok = false;
    ASSERT_NO_THROW(ok = decode(candidate, error)) << where;
    if (ok) {
      ++decoded;
    } else {
      ++rejected;
      EXPECT_FALSE(error.empty()) << where;
    }
  };
  for (const json& replacement : replacements) check(replacement, "/");
  for (const auto& pointer : pointers) {
    if (pointer.empty()) continue;
    // Swap the replacement in and the original back, so the document is not copied per case.
    json original = std::move(doc[pointer]);
    for (const json& replacement : replacements) {
      doc[pointer] = replacement;
      check(doc, pointer.to_string());
    }
    doc[pointer] = std::move(original);
  }
  EXPECT_GT(decoded, 0);
  EXPECT_GT(rejected, 0);
}

TEST(DecodeRobustness, MutatedPodsDecodeOrFailCleanly) {
  mutateEveryNode("pod_web.json", [](const json& doc, std::string& error) {
    auto r = decodePod(doc);
    if (!r.ok()) error = r.error().message;
    return r.ok();
  });
}

TEST(DecodeRobustness, MutatedNodesDecodeOrFailCleanly) {
  mutateEveryNode("node_worker.json", [](const json& doc, std::string& error) {
    auto r = decodeNode(doc);
    if (!r.ok()) error = r.error().message;
    return r.ok();
  });
}

TEST(DecodeRobustness, DeeplyNestedGarbageIsRejected) {
  json deep = "x";
  for (int i = 0; i < 2000; ++i) {
    json wrapper = json::array();
    wrapper.push_back(std::move(deep));
    deep = std::move(wrapper);
  }
  json doc = loadObject("pod_web.json");
  doc["spec"]["affinity"] = deep;
  EXPECT_FALSE(decodePod(doc).ok());
  doc["spec"]["affinity"] = json{{"nodeAffinity", deep}};
  EXPECT_FALSE(decodePod(doc).ok());
}

}  // namespace
}  // namespace placer
