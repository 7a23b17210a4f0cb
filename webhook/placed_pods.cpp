#include "webhook/placed_pods.h"

#include <nlohmann/json.hpp>

#include "webhook/admission.h"
#include "webhook/log.h"

namespace placer {
namespace {

// The reasons of the kubelet's predicate admit handler (pkg/kubelet/lifecycle):
// InsufficientResourceError -> "OutOf<resource>", a failed predicate -> its
// name; the admit handlers beside it set the others.
constexpr std::string_view kPredicateReasons[] = {
    "NodeAffinity",  "NodePorts",        "NodeName",          "TaintToleration",
    "InvalidNodeInfo", "UnexpectedAdmissionError", "TopologyAffinityError", "PodOSNotSupported",
    "PodOSSelectorNodeLabelDoesNotMatch", "SysctlForbidden", "InitContainerRestartPolicyForbidden",
};

nlohmann::json accountingJson(const Resources& r) {
  nlohmann::json out = {{"cpuMilli", r.milliCpu}, {"memoryBytes", r.memory}};
  if (r.ephemeralStorage != 0) out["ephemeralStorageBytes"] = r.ephemeralStorage;
  for (const auto& [name, value] : r.scalars) out[name] = value;
  return out;
}

}  // namespace

bool isKubeletAdmissionRejection(std::string_view reason) {
  if (reason.size() > 5 && reason.substr(0, 5) == "OutOf") return true;
  for (std::string_view known : kPredicateReasons)
    if (reason == known) return true;
  return false;
}

bool PlacedPods::BoundedSet::insert(const std::string& key) {
  if (!set_.insert(key).second) return false;
  order_.push_back(key);
  if (order_.size() > capacity_) {
    set_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

PlacedPods::PlacedPods(MetricsRegistry& metrics, EventSink* events, size_t capacity)
    : metrics_(metrics), events_(events), capacity_(capacity), rejected_(capacity), toldDeclined_(capacity) {
  // Present (at 0) from the start, so that an operator sees it is 0.
  metrics_.counter("placer_kubelet_rejections_total",
                   "Pods placer assigned that the kubelet then rejected at admission, by the pod's status.reason.",
                   {{"reason", "OutOfcpu"}});
}

void PlacedPods::assigned(const std::string& reservationId, const std::string& podKey, const std::string& node,
                          const Placement::NodeAccounting& accounting) {
  std::lock_guard lock(mutex_);
  auto [it, added] = assigned_.try_emplace(reservationId, Assigned{podKey, node, accounting, false});
  if (!added) {  // moved on reinvocation
    it->second.node = node;
    it->second.accounting = accounting;
    return;
  }
  assignedOrder_.push_back(reservationId);
  if (assignedOrder_.size() > capacity_) {
    assigned_.erase(assignedOrder_.front());
    assignedOrder_.pop_front();
  }
}

void PlacedPods::declined(const std::string& podKey, const std::string& reason) {
  std::lock_guard lock(mutex_);
  Declined& d = declined_[podKey];
  d.reason = reason;
  ++d.pending;
  declinedOrder_.push_back(podKey);
  if (declinedOrder_.size() > capacity_) {
    auto it = declined_.find(declinedOrder_.front());
    if (it != declined_.end() && --it->second.pending == 0) declined_.erase(it);
    declinedOrder_.pop_front();
  }
}

void PlacedPods::observed(const Pod& pod) {
  const std::string* node = findLabel(pod.annotations, kAssignedNodeAnnotation);
  if (node != nullptr) {
    if (pod.phase == "Failed" && isKubeletAdmissionRejection(pod.statusReason)) noteRejection(pod, *node);
    const std::string* reservation = findLabel(pod.annotations, kReservationAnnotation);
    if (events_ == nullptr || reservation == nullptr || pod.name.empty() || pod.nodeName.empty()) return;
    {
      std::lock_guard lock(mutex_);
      auto it = assigned_.find(*reservation);
      if (it == assigned_.end() || it->second.told) return;
      it->second.told = true;
    }
    events_->emit(PodEvent{pod.namespace_, pod.name, pod.uid, "Scheduled", "Binding",
                           "Successfully assigned " + pod.namespace_ + "/" + pod.name + " to " + pod.nodeName});
    return;
  }
  if (events_ == nullptr || !pod.nodeName.empty() || pod.uid.empty()) return;
  const std::string* reason = findLabel(pod.annotations, kUnassignedReasonAnnotation);
  if (reason == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    if (declined_.empty()) return;
    auto it = declined_.find(pod.namespace_ + "/" + pod.name);
    if (it == declined_.end() && !pod.generateName.empty()) it = declined_.find(pod.namespace_ + "/" + pod.generateName);
    if (it == declined_.end() || !toldDeclined_.insert(pod.uid)) return;
    if (--it->second.pending == 0) declined_.erase(it);
  }
  events_->emit(PodEvent{pod.namespace_, pod.name, pod.uid, "NotPlaced", "Scheduling", *reason});
}

void PlacedPods::noteRejection(const Pod& pod, const std::string& node) {
  Rejection r;
  r.pod = pod.namespace_ + "/" + pod.name;
  r.node = node;
  r.reason = pod.statusReason;
  r.message = pod.statusMessage;
  {
    std::lock_guard lock(mutex_);
    if (!rejected_.insert(pod.uid.empty() ? r.pod : pod.uid)) return;
    if (const std::string* reservation = findLabel(pod.annotations, kReservationAnnotation)) {
      if (auto it = assigned_.find(*reservation); it != assigned_.end()) {
        r.decidedHere = true;
        r.accounting = it->second.accounting;
      }
    }
    rejections_.push_back(r);
    if (rejections_.size() > capacity_ / 64) rejections_.pop_front();
  }
  metrics_
      .counter("placer_kubelet_rejections_total",
               "Pods placer assigned that the kubelet then rejected at admission, by the pod's status.reason.",
               {{"reason", r.reason}})
      .inc();
  nlohmann::json fields = {{"pod", r.pod}, {"node", r.node}, {"reason", r.reason}, {"message", r.message}};
  if (r.decidedHere) {
    fields["nodeAllocatableAtDecision"] = accountingJson(r.accounting.allocatable);
    fields["nodeRequestedAtDecision"] = accountingJson(r.accounting.requested);
    fields["nodePodsAtDecision"] = r.accounting.podCount;
  } else {
    fields["decision"] = "not made by this process (restarted since, or another replica)";
  }
  logEvent(LogLevel::Error, "kubelet rejected a pod placer assigned", fields);
}

std::vector<PlacedPods::Rejection> PlacedPods::rejections() const {
  std::lock_guard lock(mutex_);
  return {rejections_.begin(), rejections_.end()};
}

}  // namespace placer
