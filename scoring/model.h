#pragma once
// The object model: the parts of v1.Node and v1.Pod that placer's plugins and
// accounting need, decoded from the JSON the API server serves. Nothing else
// is kept (no managedFields, no status beyond what is listed).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/json_value.h"
#include "scoring/resources.h"
#include "scoring/result.h"

namespace placer {

// Sorted by key, unique keys.
using Labels = std::vector<std::pair<std::string, std::string>>;
const std::string* findLabel(const Labels& labels, std::string_view key);

enum class TaintEffect : uint8_t { NoSchedule, PreferNoSchedule, NoExecute, All /* empty effect on a toleration */ };
std::string_view toString(TaintEffect effect);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::NoSchedule;
  bool operator==(const Taint&) const = default;
};

enum class TolerationOperator : uint8_t { Equal, Exists };

struct Toleration {
  std::string key;  // empty with Exists: tolerates every key
  TolerationOperator op = TolerationOperator::Equal;
  std::string value;
  TaintEffect effect = TaintEffect::All;  // All = empty effect: matches every effect
  std::optional<int64_t> tolerationSeconds;
  bool operator==(const Toleration&) const = default;
};

enum class SelectorOperator : uint8_t { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::In;
  std::vector<std::string> values;
  // A label selector's operator that is none of In, NotIn, Exists,
  // DoesNotExist, as written: decoding keeps it so that compiling the selector
  // reports it as upstream does (scoring/label_selector.h). Empty otherwise.
  std::string unknownOperator = "";
  bool operator==(const SelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> matchExpressions;
  std::vector<SelectorRequirement> matchFields;  // only key metadata.name is meaningful
  bool operator==(const NodeSelectorTerm&) const = default;
};

// v1.NodeSelector: the terms are ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool operator==(const NodeSelector&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

// metav1.LabelSelector (for PodTopologySpread / InterPodAffinity).
struct LabelSelector {
  Labels matchLabels;
  std::vector<SelectorRequirement> matchExpressions;  // In, NotIn, Exists, DoesNotExist
  bool operator==(const LabelSelector&) const = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> labelSelector;
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespaceSelector;
  std::string topologyKey;
  // The API server merges these into labelSelector when it stores the pod
  // (after mutating admission): see applyMatchLabelKeys().
  std::vector<std::string> matchLabelKeys;
  std::vector<std::string> mismatchLabelKeys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinityRules {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinityRules&) const = default;
};

enum class NodeInclusionPolicy : uint8_t { Unset, Honor, Ignore };

struct TopologySpreadConstraint {
  int32_t maxSkew = 1;
  std::string topologyKey;
  std::string whenUnsatisfiable;  // DoNotSchedule | ScheduleAnyway
  std::optional<LabelSelector> labelSelector;
  std::optional<int32_t> minDomains;
  std::vector<std::string> matchLabelKeys;
  NodeInclusionPolicy nodeAffinityPolicy = NodeInclusionPolicy::Unset;  // upstream default: Honor
  NodeInclusionPolicy nodeTaintsPolicy = NodeInclusionPolicy::Unset;    // upstream default: Ignore
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// One requested host port: (hostIP, protocol, hostPort). hostIP "" is
// normalised to "0.0.0.0", protocol "" to "TCP", as upstream does.
struct HostPort {
  std::string ip;
  std::string protocol;
  int32_t port = 0;
  bool operator==(const HostPort&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  Resources requests;  // as written; absent means zero
  bool hasCpuRequest = false;     // for the non-zero defaults of the scorers
  bool hasMemoryRequest = false;
  std::vector<HostPort> hostPorts;  // only ports with hostPort > 0
  bool restartableInit = false;     // init container with restartPolicy: Always (sidecar)
  // In-place resize (status.containerStatuses / initContainerStatuses of this
  // container): what the kubelet allocated (allocatedResources) and what is
  // actuated (resources.requests). kube-scheduler counts, per resource, the
  // maximum of the spec, allocated and actuated aggregates.
  struct StatusRequests {
    Resources requests;
    bool hasCpu = false;
    bool hasMemory = false;
    bool operator==(const StatusRequests&) const = default;
  };
  std::optional<StatusRequests> allocatedRequests;
  std::optional<StatusRequests> actuatedRequests;
  bool operator==(const Container&) const = default;
};

struct Pod {
  std::string namespace_;
  std::string name;
  std::string generateName;
  std::string uid;
  Labels labels;
  Labels annotations;
  std::string nodeName;
  std::string schedulerName;  // "default-scheduler" when absent
  Labels nodeSelector;
  std::optional<NodeAffinity> nodeAffinity;
  std::optional<PodAffinityRules> podAffinity;
  std::optional<PodAffinityRules> podAntiAffinity;
  std::vector<TopologySpreadConstraint> topologySpreadConstraints;
  std::vector<Toleration> tolerations;
  std::vector<Container> containers;
  std::vector<Container> initContainers;
  Resources overhead;
  // spec.resources.requests (pod-level resources): when set for cpu, memory or
  // hugepages-*, they replace the containers' aggregate for those resources.
  struct PodLevelRequests {
    Resources requests;  // cpu, memory and hugepages-* only
    bool hasCpu = false;
    bool hasMemory = false;
    bool operator==(const PodLevelRequests&) const = default;
  };
  std::optional<PodLevelRequests> podLevelRequests;
  int32_t priority = 0;
  int32_t schedulingGates = 0;     // count of spec.schedulingGates
  int32_t resourceClaims = 0;      // count of spec.resourceClaims (DynamicResources allocates them)
  bool hasPvcVolume = false;       // volumes[].persistentVolumeClaim
  bool hasEphemeralVolume = false; // volumes[].ephemeral (generic ephemeral volume)
  std::string phase;               // status.phase
  // Living beside kube-scheduler and the kubelet (status fields, none read by a plugin):
  std::string nominatedNodeName;   // status.nominatedNodeName: where preemption made room for it
  std::string statusReason;        // status.reason (a kubelet rejection: OutOfcpu, NodeAffinity, ...)
  std::string statusMessage;       // status.message
  bool terminating = false;        // metadata.deletionTimestamp set
  bool resizeInfeasible = false;   // condition PodResizePending with reason Infeasible
  // The controller ownerReference, if any (kind empty when none).
  std::string ownerKind;
  std::string ownerApiVersion;
  std::string ownerName;

  // Derived at decode time, exactly as kube-scheduler computes them
  // (resourcehelper.PodRequests): sum of containers, max with each init
  // container plus the sidecars started before it, sidecars added, overhead.
  Resources requests;
  // The same with the scorers' non-zero defaults (100m cpu / 200Mi memory) applied
  // per container where the request is absent; only milliCpu and memory are set.
  Resources nonZeroRequests;
  std::vector<HostPort> hostPorts;  // from containers and init containers

  std::string key() const { return namespace_ + "/" + (name.empty() ? generateName : name); }
  bool isTerminal() const { return phase == "Succeeded" || phase == "Failed"; }
  bool operator==(const Pod&) const = default;
};

// status.images: each image's names, normalised (":latest" added), and its
// size, in the node's order. A kubelet reports up to 50 images of about two
// names each; the names are kept one after the other in one block of text, so
// a node's images cost three allocations, not one per name (a 5,000-node list
// decodes 400,000 names).
class NodeImages {
 public:
  // One image: its size and names, read in place (valid while the
  // NodeImages is neither changed nor destroyed).
  class Image {
   public:
    int64_t sizeBytes() const { return images_->entries_[index_].sizeBytes; }
    size_t nameCount() const { return images_->entries_[index_].nameCount; }
    std::string_view name(size_t i) const { return images_->nameAt(images_->entries_[index_].firstName + i); }
    template <class F>
    void forEachName(F&& f) const {
      for (size_t i = 0; i < nameCount(); ++i) f(name(i));
    }

   private:
    friend class NodeImages;
    Image(const NodeImages* images, size_t index) : images_(images), index_(index) {}
    const NodeImages* images_;
    size_t index_;
  };

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  Image operator[](size_t i) const { return Image(this, i); }
  size_t nameCount() const { return nameEnds_.size(); }
  // Every name with its image's size, in order (what ImageLocality reads).
  template <class F>
  void forEachName(F&& f) const {
    for (const Entry& e : entries_)
      for (uint32_t n = e.firstName; n < e.firstName + e.nameCount; ++n) f(nameAt(n), e.sizeBytes);
  }

  // Building: an image is opened, given its names, then its size.
  void reserve(size_t images, size_t names, size_t textBytes);
  void openImage();
  // Appends a name of the open image, normalised (":latest" added).
  void addName(std::string_view name);
  void setSize(int64_t sizeBytes) { entries_.back().sizeBytes = sizeBytes; }
  // An image with these names (normalised as added) and size.
  void add(std::initializer_list<std::string_view> names, int64_t sizeBytes);
  void add(const std::vector<std::string>& names, int64_t sizeBytes);
  void clear();

  // The same names and sizes in the same order.
  bool operator==(const NodeImages&) const = default;

 private:
  struct Entry {
    uint32_t firstName = 0;  // index into nameEnds_
    uint32_t nameCount = 0;
    int64_t sizeBytes = 0;
    bool operator==(const Entry&) const = default;
  };
  std::string_view nameAt(size_t n) const {
    const uint32_t begin = n == 0 ? 0 : nameEnds_[n - 1];
    return std::string_view(text_).substr(begin, nameEnds_[n] - begin);
  }
  std::string text_;               // every name, one after the other
  std::vector<uint32_t> nameEnds_;  // where each name ends in text_
  std::vector<Entry> entries_;
};

struct Node {
  // What every decision reads comes first (NodeInfo keeps it in its first cache lines).
  Resources allocatable;  // status.allocatable (pods -> Resources::pods)
  std::vector<Taint> taints;
  bool unschedulable = false;
  std::string name;
  std::string uid;
  std::string resourceVersion;
  Labels labels;
  NodeImages images;
  bool operator==(const Node&) const = default;
};

// A Namespace as the view keeps it: its name and labels (namespaceSelector).
struct Namespace {
  std::string name;
  Labels labels;
  bool operator==(const Namespace&) const = default;
};

// What PodTopologySpread's default constraints read of the objects that
// select pods (upstream's helper.DefaultSelector): a Service's spec.selector
// (a nil map selects nothing, an empty one everything), a
// ReplicationController's spec.selector (a map), a ReplicaSet's or
// StatefulSet's spec.selector (a metav1.LabelSelector).
enum class WorkloadKind : uint8_t { Service, ReplicationController, ReplicaSet, StatefulSet };
std::string_view toString(WorkloadKind kind);
struct WorkloadSelector {
  WorkloadKind kind = WorkloadKind::Service;
  std::string namespace_;
  std::string name;
  std::optional<Labels> selectorMap;           // Service, ReplicationController
  std::optional<LabelSelector> labelSelector;  // ReplicaSet, StatefulSet
  bool operator==(const WorkloadSelector&) const = default;
};

// Decoding. Errors name the offending field path. Never throws.
// Each kind decodes from an nlohmann document or straight from parsed bytes
// (json_value.h) with the same code (model_decode.h): the same fields, the
// same semantics, the same errors.
Result<Pod> decodePod(const nlohmann::json& object);
Result<Pod> decodePod(const JsonValue& object);
Result<Node> decodeNode(const nlohmann::json& object);
Result<Node> decodeNode(const JsonValue& object);
Result<Namespace> decodeNamespace(const nlohmann::json& object);
Result<Namespace> decodeNamespace(const JsonValue& object);
Result<WorkloadSelector> decodeWorkloadSelector(WorkloadKind kind, const nlohmann::json& object);
Result<WorkloadSelector> decodeWorkloadSelector(WorkloadKind kind, const JsonValue& object);
// A list of v1.TopologySpreadConstraint (PodTopologySpreadArgs.defaultConstraints);
// errors name the field as "topologySpreadConstraints[i]...".
Result<std::vector<TopologySpreadConstraint>> decodeTopologySpreadConstraints(const nlohmann::json& list);

// What the API server does to a pod it stores (registry/core/pod strategy,
// PrepareForCreate, after mutating admission): each pod (anti-)affinity term's
// matchLabelKeys / mismatchLabelKeys, and each topology spread constraint's
// matchLabelKeys, become In / NotIn requirements on the term's labelSelector
// with the pod's own value of that label (nothing for a key the pod does not
// carry, nor for a term without a labelSelector). Idempotent in effect: a
// requirement added twice selects the same pods.
void applyMatchLabelKeys(Pod& pod);
// Whether applyMatchLabelKeys would change anything.
bool hasMatchLabelKeys(const Pod& pod);

// Upstream normalizedImageName: adds ":latest" when the name has neither tag nor digest.
std::string normalizedImageName(std::string_view name);

// Recomputes pod.requests, pod.nonZeroRequests and pod.hostPorts from the containers.
void computePodRequests(Pod& pod);

}  // namespace placer
