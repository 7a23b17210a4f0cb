#include "scoring/model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "scoring/model_decode.h"

namespace placer {

using json = nlohmann::json;

const std::string* findLabel(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  return (it != labels.end() && it->first == key) ? &it->second : nullptr;
}

std::string_view toString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::NoSchedule: return "NoSchedule";
    case TaintEffect::PreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::NoExecute: return "NoExecute";
    case TaintEffect::All: return "";
  }
  return "";
}

namespace {

// imagelocality.normalizedImageName: no ':' after the last '/' means no tag.
// The usual name has a tag or digest: one backwards search for its ':' and a
// short forward one for a '/' after it (a registry port).
bool hasTag(std::string_view name) {
  if (name.empty()) return false;
  const void* colon = memrchr(name.data(), ':', name.size());
  if (colon == nullptr) return false;
  const size_t at = static_cast<size_t>(static_cast<const char*>(colon) - name.data());
  return std::memchr(name.data() + at, '/', name.size() - at) == nullptr;
}

// Appends `name` to `out`, normalised.
void appendNormalizedImageName(std::string& out, std::string_view name) {
  out.append(name);
  if (!hasTag(name)) out.append(":latest");
}

}  // namespace

std::string normalizedImageName(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 7);
  appendNormalizedImageName(out, name);
  return out;
}

void NodeImages::reserve(size_t images, size_t names, size_t textBytes) {
  entries_.reserve(images);
  nameEnds_.reserve(names);
  text_.reserve(textBytes);
}

void NodeImages::openImage() {
  entries_.push_back(Entry{static_cast<uint32_t>(nameEnds_.size()), 0, 0});
}

void NodeImages::addName(std::string_view name) {
  appendNormalizedImageName(text_, name);
  nameEnds_.push_back(static_cast<uint32_t>(text_.size()));
  ++entries_.back().nameCount;
}

void NodeImages::add(std::initializer_list<std::string_view> names, int64_t sizeBytes) {
  openImage();
  for (std::string_view name : names) addName(name);
  setSize(sizeBytes);
}

void NodeImages::add(const std::vector<std::string>& names, int64_t sizeBytes) {
  openImage();
  for (const std::string& name : names) addName(name);
  setSize(sizeBytes);
}

void NodeImages::clear() {
  text_.clear();
  nameEnds_.clear();
  entries_.clear();
}

namespace {

using model_decode::JsonKind;

// model_decode.h's view of an nlohmann::json value.
class NlohmannValue {
 public:
  explicit NlohmannValue(const json& v) : v_(&v) {}

  JsonKind kind() const {
    switch (v_->type()) {
      case json::value_t::object: return JsonKind::Object;
      case json::value_t::array: return JsonKind::Array;
      case json::value_t::string: return JsonKind::String;
      case json::value_t::boolean: return JsonKind::Bool;
      case json::value_t::number_integer: return JsonKind::Signed;
      case json::value_t::number_unsigned: return JsonKind::Unsigned;
      case json::value_t::number_float: return JsonKind::Float;
      default: return JsonKind::Null;
    }
  }
  std::optional<NlohmannValue> member(std::string_view key) const {
    auto it = v_->find(key);
    if (it == v_->end() || it->is_null()) return std::nullopt;
    return NlohmannValue(*it);
  }
  std::string_view string() const { return v_->get_ref<const std::string&>(); }
  bool boolean() const { return v_->get<bool>(); }
  int64_t int64() const { return v_->get<int64_t>(); }
  uint64_t uint64() const { return v_->get<uint64_t>(); }
  double float64() const { return v_->get<double>(); }
  std::string numberText() const { return v_->dump(); }
  size_t size() const { return v_->size(); }

  model_decode::ElementRange<NlohmannValue, json::const_iterator> elements() const {
    return {v_->cbegin(), v_->cend()};
  }

  // A member is a map look-up: nothing to gather in advance.
  struct Picks {};
  NlohmannValue picking(std::span<const std::string_view> /*keys*/, Picks& /*picks*/) const { return *this; }

  // nlohmann keeps an object's members sorted by key, each key once.
  template <class F>
  Outcome forEachMember(F&& f) const {
    for (auto it = v_->begin(); it != v_->end(); ++it)
      if (auto o = f(std::string_view(it.key()), NlohmannValue(*it)); !o) return o;
    return {};
  }

 private:
  const json* v_;
};

// ---- the request computation ----

// Which view of a container's requests an aggregate uses (resourcehelper:
// containerSpecRequests / containerAllocatedRequests / containerActuatedRequests).
enum class Source { Spec, Allocated, Actuated };

struct ContainerList {
  const Resources* requests = nullptr;  // nullptr: no list at all (nothing requested)
  bool hasCpu = false;
  bool hasMemory = false;
};

ContainerList requestList(const Container& c, Source source, bool resizeInfeasible) {
  const ContainerList spec{&c.requests, c.hasCpuRequest, c.hasMemoryRequest};
  auto fromStatus = [](const Container::StatusRequests& s) {
    return ContainerList{&s.requests, s.hasCpu, s.hasMemory};
  };
  switch (source) {
    case Source::Spec:
      return spec;
    case Source::Actuated:
      if (c.actuatedRequests) return fromStatus(*c.actuatedRequests);
      [[fallthrough]];
    case Source::Allocated:
      if (c.allocatedRequests) return fromStatus(*c.allocatedRequests);
      if (resizeInfeasible) return ContainerList{};
      return spec;
  }
  return spec;
}

// One container's contribution, either as listed or with the scorers'
// non-zero defaults for a cpu / memory request missing from the list.
Resources containerRequests(const Container& c, Source source, bool resizeInfeasible, bool nonZero,
                            bool defaultCpu, bool defaultMemory) {
  const ContainerList list = requestList(c, source, resizeInfeasible);
  static const Resources kNothing;
  const Resources& requests = list.requests ? *list.requests : kNothing;
  if (!nonZero) return requests;
  Resources r;
  r.milliCpu = (!list.hasCpu && defaultCpu) ? kDefaultMilliCpuRequest : requests.milliCpu;
  r.memory = (!list.hasMemory && defaultMemory) ? kDefaultMemoryRequest : requests.memory;
  return r;
}

// aggregateContainerResourcesByFn: regular containers summed; each init
// container runs alongside the sidecars (restartable init containers) started
// before it; sidecars keep running and add to the total.
Resources aggregateContainers(const Pod& pod, Source source, bool nonZero, bool defaultCpu, bool defaultMemory) {
  const bool infeasible = pod.resizeInfeasible;
  Resources result;
  for (const Container& c : pod.containers)
    result.addSaturating(containerRequests(c, source, infeasible, nonZero, defaultCpu, defaultMemory));

  Resources sidecars;
  Resources initPeak;
  for (const Container& c : pod.initContainers) {
    const Resources own = containerRequests(c, source, infeasible, nonZero, defaultCpu, defaultMemory);
    if (c.restartableInit) {
      result.addSaturating(own);
      sidecars.addSaturating(own);
      initPeak.setMax(sidecars);
    } else {
      Resources combined = own;
      combined.addSaturating(sidecars);
      initPeak.setMax(combined);
    }
  }
  result.setMax(initPeak);
  return result;
}

bool anyContainer(const Pod& pod, bool (*has)(const Container&)) {
  return std::any_of(pod.containers.begin(), pod.containers.end(), has) ||
         std::any_of(pod.initContainers.begin(), pod.initContainers.end(), has);
}

bool hasStatusRequests(const Container& c) { return c.allocatedRequests || c.actuatedRequests; }

// resourcehelper.PodRequests with UseStatusResources (in-place resize on, as
// kube-scheduler runs it): the per-resource maximum of the spec, allocated and
// actuated aggregates (spec left out while a resize is infeasible); then
// pod-level requests replace cpu / memory / hugepages; then overhead.
Resources podRequests(const Pod& pod, bool nonZero, bool defaultCpu, bool defaultMemory) {
  Resources result;
  const bool statuses = pod.resizeInfeasible || anyContainer(pod, hasStatusRequests);
  if (!statuses) {
    result = aggregateContainers(pod, Source::Spec, nonZero, defaultCpu, defaultMemory);
  } else {
    if (!pod.resizeInfeasible) result = aggregateContainers(pod, Source::Spec, nonZero, defaultCpu, defaultMemory);
    result.setMax(aggregateContainers(pod, Source::Allocated, nonZero, defaultCpu, defaultMemory));
    result.setMax(aggregateContainers(pod, Source::Actuated, nonZero, defaultCpu, defaultMemory));
  }

  if (pod.podLevelRequests) {
    const auto& level = *pod.podLevelRequests;
    if (level.hasCpu) result.milliCpu = level.requests.milliCpu;
    if (level.hasMemory) result.memory = level.requests.memory;
    if (!nonZero)
      for (const auto& [name, value] : level.requests.scalars) result.setScalar(name, value);
  }
  if (nonZero) {
    Resources overhead;
    overhead.milliCpu = pod.overhead.milliCpu;
    overhead.memory = pod.overhead.memory;
    result.addSaturating(overhead);
  } else {
    result.addSaturating(pod.overhead);
  }
  return result;
}

}  // namespace

void computePodRequests(Pod& pod) {
  pod.requests = podRequests(pod, false, false, false);

  // Without pod-level requests every container missing a cpu / memory request
  // counts the default. With them, the default applies only to a resource
  // requested nowhere (no container, no pod-level value, no overhead).
  bool defaultCpu = true;
  bool defaultMemory = true;
  if (pod.podLevelRequests) {
    defaultCpu = !pod.podLevelRequests->hasCpu && pod.overhead.milliCpu == 0 &&
                 !anyContainer(pod, [](const Container& c) {
                   return c.hasCpuRequest || (c.allocatedRequests && c.allocatedRequests->hasCpu) ||
                          (c.actuatedRequests && c.actuatedRequests->hasCpu);
                 });
    defaultMemory = !pod.podLevelRequests->hasMemory && pod.overhead.memory == 0 &&
                    !anyContainer(pod, [](const Container& c) {
                      return c.hasMemoryRequest || (c.allocatedRequests && c.allocatedRequests->hasMemory) ||
                             (c.actuatedRequests && c.actuatedRequests->hasMemory);
                    });
  }
  const Resources nonZero = podRequests(pod, true, defaultCpu, defaultMemory);
  pod.nonZeroRequests = Resources{};
  pod.nonZeroRequests.milliCpu = nonZero.milliCpu;
  pod.nonZeroRequests.memory = nonZero.memory;

  // schedutil.GetHostPorts: sidecars first, then regular containers; other
  // init containers have finished before the pod runs.
  pod.hostPorts.clear();
  for (const Container& c : pod.initContainers)
    if (c.restartableInit) pod.hostPorts.insert(pod.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
  for (const Container& c : pod.containers)
    pod.hostPorts.insert(pod.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
}

Result<Pod> decodePod(const json& object) { return model_decode::decodePodAs(NlohmannValue(object)); }

Result<Node> decodeNode(const json& object) { return model_decode::decodeNodeAs(NlohmannValue(object)); }

Result<Namespace> decodeNamespace(const json& object) {
  return model_decode::decodeNamespaceAs(NlohmannValue(object));
}

Result<WorkloadSelector> decodeWorkloadSelector(WorkloadKind kind, const json& object) {
  return model_decode::decodeWorkloadSelectorAs(kind, NlohmannValue(object));
}

Result<std::vector<TopologySpreadConstraint>> decodeTopologySpreadConstraints(const json& list) {
  json holder = json::object();
  holder["topologySpreadConstraints"] = list;
  std::vector<TopologySpreadConstraint> out;
  if (auto o = model_decode::readTopologySpread(NlohmannValue(holder), model_decode::Path(), out); !o)
    return o.error();
  return out;
}

std::string_view toString(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Service: return "Service";
    case WorkloadKind::ReplicationController: return "ReplicationController";
    case WorkloadKind::ReplicaSet: return "ReplicaSet";
    case WorkloadKind::StatefulSet: return "StatefulSet";
  }
  return "Service";
}

bool hasMatchLabelKeys(const Pod& pod) {
  auto termHas = [](const PodAffinityTerm& t) { return !t.matchLabelKeys.empty() || !t.mismatchLabelKeys.empty(); };
  for (const std::optional<PodAffinityRules>* rules : {&pod.podAffinity, &pod.podAntiAffinity}) {
    if (!*rules) continue;
    for (const PodAffinityTerm& t : (*rules)->required)
      if (termHas(t)) return true;
    for (const WeightedPodAffinityTerm& t : (*rules)->preferred)
      if (termHas(t.term)) return true;
  }
  for (const TopologySpreadConstraint& c : pod.topologySpreadConstraints)
    if (!c.matchLabelKeys.empty()) return true;
  return false;
}

void applyMatchLabelKeys(Pod& pod) {
  auto addRequirements = [&](std::optional<LabelSelector>& selector, const std::vector<std::string>& keys,
                             SelectorOperator op) {
    if (!selector) return;  // a nil selector matches nothing, and stays nil
    for (const std::string& key : keys)
      if (const std::string* value = findLabel(pod.labels, key))
        selector->matchExpressions.push_back(SelectorRequirement{key, op, {*value}, {}});
  };
  auto applyTerm = [&](PodAffinityTerm& term) {
    addRequirements(term.labelSelector, term.matchLabelKeys, SelectorOperator::In);
    addRequirements(term.labelSelector, term.mismatchLabelKeys, SelectorOperator::NotIn);
  };
  for (std::optional<PodAffinityRules>* rules : {&pod.podAffinity, &pod.podAntiAffinity}) {
    if (!*rules) continue;
    for (PodAffinityTerm& term : (*rules)->required) applyTerm(term);
    for (WeightedPodAffinityTerm& term : (*rules)->preferred) applyTerm(term.term);
  }
  for (TopologySpreadConstraint& c : pod.topologySpreadConstraints)
    addRequirements(c.labelSelector, c.matchLabelKeys, SelectorOperator::In);
}

}  // namespace placer
