#include "webhook/demo_cluster.h"

#include <string>
#include <vector>

namespace placer {
namespace {

using nlohmann::json;

struct NodeShape {
  std::string pool;
  std::string instanceType;
  std::string arch;
  std::string cpu;     // allocatable
  std::string memory;  // allocatable
  int count;
  json taints = json::array();
  json extra = json::object();  // extra allocatable (GPUs)
  bool cordonFirst = false;
};

const char* kZones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};

json node(const NodeShape& shape, int index) {
  std::string zone = kZones[index % 3];
  std::string name = shape.pool + "-" + zone.substr(zone.size() - 1) + "-" + std::to_string(index);
  json allocatable = {{"cpu", shape.cpu}, {"memory", shape.memory}, {"pods", "110"},
                      {"ephemeral-storage", "95551679124"}, {"hugepages-1Gi", "0"}, {"hugepages-2Mi", "0"}};
  for (const auto& [k, v] : shape.extra.items()) allocatable[k] = v;
  json labels = {{"kubernetes.io/hostname", name},
                 {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", shape.arch},
                 {"beta.kubernetes.io/arch", shape.arch},
                 {"beta.kubernetes.io/os", "linux"},
                 {"topology.kubernetes.io/region", "us-east-1"},
                 {"topology.kubernetes.io/zone", zone},
                 {"node.kubernetes.io/instance-type", shape.instanceType},
                 {"placer.io/pool", shape.pool}};
  if (shape.pool == "control-plane") labels["node-role.kubernetes.io/control-plane"] = "";
  json spec = {{"podCIDR", "10.244." + std::to_string(index) + ".0/24"},
               {"providerID", "aws:///" + zone + "/i-0demo" + std::to_string(1000 + index)}};
  if (!shape.taints.empty()) spec["taints"] = shape.taints;
  if (shape.cordonFirst && index % shape.count == 0) {
    spec["unschedulable"] = true;
    json t = spec.value("taints", json::array());
    t.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"},
                 {"timeAdded", "2026-11-20T08:00:00Z"}});
    spec["taints"] = t;
  }
  json images = json::array({
      {{"names", {"registry.k8s.io/kube-proxy@sha256:4bcb707da9898d2625f5d4edc6d0c96519a24f16db914fc673aa8f97e41dbabf",
                  "registry.k8s.io/kube-proxy:v1.30.2"}},
       {"sizeBytes", 29035454}},
  });
  if (index % 2 == 0)
    images.push_back({{"names", {"docker.io/library/nginx:1.27"}}, {"sizeBytes", 71026532}});
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "5f1c9a9e-0000-4000-8000-" + std::to_string(100000000000 + index)},
            {"resourceVersion", std::to_string(1000 + index)},
            {"creationTimestamp", "2026-11-01T08:00:00Z"},
            {"labels", labels},
            {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}}}}},
          {"spec", spec},
          {"status",
           {{"capacity", allocatable},
            {"allocatable", allocatable},
            {"conditions",
             json::array({{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"},
                           {"lastHeartbeatTime", "2026-11-21T10:00:00Z"}}})},
            {"images", images},
            {"nodeInfo", {{"architecture", shape.arch}, {"kubeletVersion", "v1.30.2"}, {"operatingSystem", "linux"}}}}}};
}

json boundPod(const std::string& nodeName, int index, const std::string& app, const std::string& cpu,
              const std::string& memory, const json& tolerations) {
  std::string name = app + "-6c9f8d7b5-" + std::to_string(10000 + index);
  json container = {{"name", app},
                    {"image", "docker.io/library/" + app + ":1.27"},
                    {"resources", {{"requests", {{"cpu", cpu}, {"memory", memory}}}}},
                    {"ports", json::array({{{"containerPort", 8080}, {"protocol", "TCP"}}})}};
  json spec = {{"nodeName", nodeName},
               {"schedulerName", "default-scheduler"},
               {"restartPolicy", "Always"},
               {"containers", json::array({container})}};
  if (!tolerations.empty()) spec["tolerations"] = tolerations;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "shop"},
            {"uid", "8a2b0c6e-0000-4000-9000-" + std::to_string(100000000000 + index)},
            {"labels", {{"app", app}, {"pod-template-hash", "6c9f8d7b5"}}},
            {"ownerReferences",
             json::array({{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", app + "-6c9f8d7b5"},
                           {"uid", "0d6c7a42-0000-4000-a000-000000000001"}, {"controller", true}}})}}},
          {"spec", spec},
          {"status", {{"phase", "Running"}, {"qosClass", "Burstable"}}}};
}

}  // namespace

json demoSnapshot() {
  std::vector<NodeShape> shapes;
  shapes.push_back({"general-small", "m6i.xlarge", "amd64", "3920m", "14Gi", 6});
  shapes.push_back({"general-medium", "m6i.2xlarge", "amd64", "7910m", "29Gi", 9, json::array(), json::object(), true});
  shapes.push_back({"general-large", "m6i.4xlarge", "amd64", "15890m", "59Gi", 6});
  shapes.push_back({"general-arm", "m7g.2xlarge", "arm64", "7910m", "29Gi", 3});
  shapes.push_back({"highmem", "r6i.4xlarge", "amd64", "15890m", "122Gi", 3,
                    json::array({{{"key", "dedicated"}, {"value", "highmem"}, {"effect", "NoSchedule"}}})});
  shapes.push_back({"gpu", "g5.8xlarge", "amd64", "31850m", "118Gi", 3,
                    json::array({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}),
                    json{{"nvidia.com/gpu", "1"}}});
  shapes.push_back({"control-plane", "m6i.large", "amd64", "1930m", "6Gi", 3,
                    json::array({{{"key", "node-role.kubernetes.io/control-plane"}, {"effect", "NoSchedule"}}})});

  json nodes = json::array();
  json pods = json::array();
  int podIndex = 0;
  const char* apps[] = {"nginx", "redis", "api", "worker"};
  const char* cpus[] = {"250m", "500m", "1", "1500m"};
  const char* mems[] = {"256Mi", "1Gi", "2Gi", "3Gi"};
  for (const NodeShape& shape : shapes) {
    for (int i = 0; i < shape.count; ++i) {
      json n = node(shape, i);
      std::string name = n["metadata"]["name"];
      nodes.push_back(std::move(n));
      // Some pods already running: more on the first nodes of each pool, none on cordoned ones.
      if (shape.pool == "control-plane" || (shape.cordonFirst && i == 0)) continue;
      int count = (i % 3 == 0) ? 3 : (i % 3 == 1 ? 1 : 0);
      for (int k = 0; k < count; ++k, ++podIndex) {
        json tolerations = shape.taints.empty() ? json::array()
                                                : json::array({{{"key", shape.taints[0]["key"]},
                                                                {"operator", "Exists"},
                                                                {"effect", "NoSchedule"}}});
        pods.push_back(boundPod(name, podIndex, apps[podIndex % 4], cpus[podIndex % 4], mems[podIndex % 4],
                                tolerations));
      }
    }
  }
  return {{"nodes", nodes}, {"pods", pods}};
}

json demoAdmissionReview() {
  json pod = {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"generateName", "web-5d8f6b7c9d-"},
        {"namespace", "demo"},
        {"creationTimestamp", nullptr},
        {"labels", {{"app", "web"}, {"pod-template-hash", "5d8f6b7c9d"}}},
        {"ownerReferences",
         json::array({{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web-5d8f6b7c9d"},
                       {"uid", "b7e1c5a0-3f7e-4a53-9c1e-2f6d0a9b8c71"}, {"controller", true},
                       {"blockOwnerDeletion", true}}})},
        {"managedFields",
         json::array({{{"manager", "kube-controller-manager"}, {"operation", "Update"}, {"apiVersion", "v1"},
                       {"time", "2026-11-21T10:00:00Z"}, {"fieldsType", "FieldsV1"},
                       {"fieldsV1", {{"f:metadata", {{"f:generateName", json::object()}}}}}}})}}},
      {"spec",
       {{"volumes",
         json::array({{{"name", "kube-api-access-7xk2p"},
                       {"projected",
                        {{"sources",
                          json::array({{{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}},
                                       {{"configMap",
                                         {{"name", "kube-root-ca.crt"},
                                          {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}}})},
                         {"defaultMode", 420}}}}})},
        {"containers",
         json::array({{{"name", "web"},
                       {"image", "docker.io/library/nginx:1.27"},
                       {"ports", json::array({{{"containerPort", 80}, {"protocol", "TCP"}}})},
                       {"resources",
                        {{"requests", {{"cpu", "500m"}, {"memory", "512Mi"}}},
                         {"limits", {{"memory", "512Mi"}}}}},
                       {"volumeMounts",
                        json::array({{{"name", "kube-api-access-7xk2p"}, {"readOnly", true},
                                      {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}})},
                       {"terminationMessagePath", "/dev/termination-log"},
                       {"terminationMessagePolicy", "File"},
                       {"imagePullPolicy", "IfNotPresent"}}})},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "default"},
        {"serviceAccount", "default"},
        {"securityContext", json::object()},
        {"schedulerName", "default-scheduler"},
        {"tolerations",
         json::array({{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"},
                       {"tolerationSeconds", 300}},
                      {{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"}, {"effect", "NoExecute"},
                       {"tolerationSeconds", 300}}})},
        {"priority", 0},
        {"enableServiceLinks", true},
        {"preemptionPolicy", "PreemptLowerPriority"}}},
      {"status", json::object()}};
  return {{"kind", "AdmissionReview"},
          {"apiVersion", "admission.k8s.io/v1"},
          {"request",
           {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "demo"},
            {"operation", "CREATE"},
            {"userInfo",
             {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
              {"uid", "f3a5b6c1-1b2c-4d5e-8f90-a1b2c3d4e5f6"},
              {"groups", json::array({"system:serviceaccounts", "system:serviceaccounts:kube-system",
                                      "system:authenticated"})}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false},
            {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}}}};
}

json demoExtenderArgs() {
  json pod = demoAdmissionReview()["request"]["object"];
  pod["metadata"]["name"] = "web-5d8f6b7c9d-x7k2p";
  pod["metadata"]["uid"] = "3c9a4f1e-8b2d-4e6f-a1c3-5d7e9f0b2a4c";
  pod["status"] = {{"phase", "Pending"}};
  const json snapshot = demoSnapshot();
  json names = json::array();
  for (const json& node : snapshot["nodes"]) names.push_back(node["metadata"]["name"]);
  return {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}};
}

}  // namespace placer
