// The generator's objects as decoded structs, without the JSON round trip.
#include <algorithm>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "test/support/cluster_generator.h"
#include "test/support/cluster_generator_spec.h"

namespace placer {
namespace {

using namespace generator;

Labels sortedLabels(const StringPairs& pairs) {
  Labels labels(pairs.begin(), pairs.end());
  std::sort(labels.begin(), labels.end());
  return labels;
}

TaintEffect effectOf(const std::string& effect) {
  if (effect == "NoSchedule") return TaintEffect::NoSchedule;
  if (effect == "PreferNoSchedule") return TaintEffect::PreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::NoExecute;
  return TaintEffect::All;
}

Container containerObject(const ContainerSpec& c) {
  Container out;
  out.name = c.name;
  out.image = imageName(c.image);
  if (c.milliCpu >= 0) {
    out.requests.milliCpu = c.milliCpu;
    out.hasCpuRequest = true;
  }
  if (c.memoryMi >= 0) {
    out.requests.memory = c.memoryMi * 1024 * 1024;
    out.hasMemoryRequest = true;
  }
  if (c.ephemeralMi >= 0) out.requests.ephemeralStorage = c.ephemeralMi * 1024 * 1024;
  if (c.gpus > 0) out.requests.setScalar("nvidia.com/gpu", c.gpus);
  if (c.hostPort > 0) out.hostPorts.push_back(HostPort{"0.0.0.0", "TCP", c.hostPort});
  out.restartableInit = c.restartable;
  return out;
}

Pod podObject(const PodSpec& s) {
  Pod pod;
  pod.namespace_ = s.namespace_;
  if (!s.pending) {
    pod.name = s.name;
    pod.uid = s.uid;
    pod.phase = "Running";
  }
  pod.generateName = s.generateName;
  pod.labels = sortedLabels(s.labels);
  pod.annotations = sortedLabels(s.annotations);
  pod.nodeName = s.nodeName;
  pod.schedulerName = "default-scheduler";
  pod.nodeSelector = sortedLabels(s.nodeSelector);
  if (!s.requiredKey.empty() || !s.preferred.empty()) {
    NodeAffinity affinity;
    if (!s.requiredKey.empty()) {
      NodeSelectorTerm term;
      SelectorRequirement req{s.requiredKey, SelectorOperator::In, s.requiredValues};
      (s.requiredOnFields ? term.matchFields : term.matchExpressions).push_back(req);
      affinity.required = NodeSelector{{term}};
    }
    for (const PreferredSpec& p : s.preferred) {
      NodeSelectorTerm term;
      term.matchExpressions.push_back({p.key, SelectorOperator::In, p.values});
      affinity.preferred.push_back({p.weight, term});
    }
    pod.nodeAffinity = affinity;
  }
  auto instanceTerm = [&](const char* topologyKey) {
    PodAffinityTerm term;
    Labels selector = {{"app.kubernetes.io/instance", s.instance}, {"app.kubernetes.io/name", s.app}};
    term.labelSelector = LabelSelector{selector, {}};
    term.topologyKey = topologyKey;
    return term;
  };
  if (s.antiAffinityByApp || s.requiredAntiAffinity) {
    PodAffinityRules rules;
    if (s.requiredAntiAffinity) rules.required.push_back(instanceTerm("kubernetes.io/hostname"));
    if (s.antiAffinityByApp) rules.preferred.push_back({100, instanceTerm("kubernetes.io/hostname")});
    pod.podAntiAffinity = rules;
  }
  if (s.requiredZoneAffinity) {
    PodAffinityRules rules;
    rules.required.push_back(instanceTerm("topology.kubernetes.io/zone"));
    pod.podAffinity = rules;
  }
  if (s.zoneSpread) {
    TopologySpreadConstraint c;
    c.maxSkew = 1;
    c.topologyKey = "topology.kubernetes.io/zone";
    c.whenUnsatisfiable = "DoNotSchedule";
    c.labelSelector = LabelSelector{{{"app.kubernetes.io/instance", s.instance}, {"app.kubernetes.io/name", s.app}}, {}};
    pod.topologySpreadConstraints.push_back(c);
  }
  for (const TolerationSpec& t : s.tolerations) {
    Toleration tol;
    tol.key = t.key;
    tol.op = t.op == "Exists" ? TolerationOperator::Exists : TolerationOperator::Equal;
    tol.value = t.value;
    tol.effect = effectOf(t.effect);
    tol.tolerationSeconds = t.seconds;
    pod.tolerations.push_back(tol);
  }
  for (const ContainerSpec& c : s.containers) pod.containers.push_back(containerObject(c));
  for (const ContainerSpec& c : s.initContainers) pod.initContainers.push_back(containerObject(c));
  if (s.overheadMilliCpu > 0) {
    pod.overhead.milliCpu = s.overheadMilliCpu;
    pod.overhead.memory = s.overheadMemoryMi * 1024 * 1024;
  }
  pod.priority = s.priority;
  pod.ownerKind = s.ownerKind;
  pod.ownerApiVersion = s.ownerApiVersion;
  pod.ownerName = s.ownerName;
  computePodRequests(pod);
  return pod;
}

}  // namespace

Node generateNodeObject(const GeneratorParams& params, int nodeIndex) {
  NodeSpec s = nodeSpec(params, nodeIndex);
  Node node;
  node.name = s.name;
  node.labels = sortedLabels(s.labels);
  for (const TaintSpec& t : s.taints) node.taints.push_back(Taint{t.key, t.value, effectOf(t.effect)});
  node.unschedulable = s.cordoned;
  node.allocatable.milliCpu = s.allocatableMilliCpu;
  node.allocatable.memory = s.allocatableMemoryKi * 1024;
  node.allocatable.ephemeralStorage = s.allocatableEphemeral;
  node.allocatable.pods = s.maxPods;
  node.allocatable.setScalar("attachable-volumes-aws-ebs", s.ebsVolumes);
  node.allocatable.setScalar("hugepages-1Gi", 0);
  node.allocatable.setScalar("hugepages-2Mi", 0);
  if (s.gpus > 0) node.allocatable.setScalar("nvidia.com/gpu", s.gpus);
  for (int i : s.images) {
    const ImageSpec& img = imageCatalog()[i];
    node.images.add({img.repository + "@sha256:" + img.digest, img.repository + ":" + img.tag}, img.sizeBytes);
  }
  return node;
}

Pod generatePodObject(const GeneratorParams& params, int64_t podIndex) {
  return podObject(podSpec(params, podIndex));
}

Pod generatePendingPodObject(const GeneratorParams& params, int index) {
  return podObject(pendingPodSpec(params, index));
}

void fillClusterView(MutableClusterView& view, const GeneratorParams& params) {
  for (const nlohmann::json& o : generateWorkloadObjects(params)) {
    const std::string kind = o["kind"];
    if (kind == "Namespace") {
      view.upsertNamespace(decodeNamespace(o).value());
    } else {
      const WorkloadKind k = kind == "Service" ? WorkloadKind::Service
                             : kind == "ReplicaSet" ? WorkloadKind::ReplicaSet
                                                    : WorkloadKind::StatefulSet;
      view.upsertWorkload(decodeWorkloadSelector(k, o).value());
    }
  }
  for (int i = 0; i < params.nodes; ++i) view.upsertNode(generateNodeObject(params, i));
  int64_t pods = generatedPodCount(params);
  for (int64_t i = 0; i < pods; ++i) view.upsertPod(generatePodObject(params, i));
}

}  // namespace placer
