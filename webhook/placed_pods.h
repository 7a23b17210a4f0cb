#pragma once
// What becomes of the pods placer decided for, as the pod watch shows them
// (a PodObserver on the live feed):
//  - kubelet rejections: a pod carrying placer.io/assigned-node that turns
//    Failed with a kubelet admission reason (OutOfcpu, OutOfmemory,
//    OutOfpods, OutOf<resource>, NodeAffinity, NodePorts,
//    UnexpectedAdmissionError, ...) is counted once in
//    placer_kubelet_rejections_total{reason} and logged with the node's
//    accounting at the moment of the decision (when this process made it);
//  - Events: an assigned pod gets one Scheduled event once it appears
//    (at admission it has no name or uid), a declined pod one NotPlaced
//    event with its unassigned reason, both only for decisions this process
//    made (never for dry runs), each once.
// Everything kept is bounded: decisions by count (oldest first out), pods
// already counted or told about likewise.
//
// Thread-safety: every method may be called from any thread at once (one
// internal lock, held for a few lookups; the Events themselves are sent by
// the EventSink on its own thread).

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scoring/placement.h"
#include "webhook/cluster_feed.h"
#include "webhook/metrics.h"

namespace placer {

// One events.k8s.io/v1 Event about a pod (webhook/event_recorder.h sends them).
struct PodEvent {
  std::string podNamespace;
  std::string podName;
  std::string podUid;
  std::string reason;  // Scheduled | NotPlaced
  std::string action;  // Binding | Scheduling
  std::string note;
  std::string type = "Normal";
};

// Where PlacedPods hands its Events. emit() must not block.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(PodEvent event) = 0;
};

// The kubelet's admission rejection reasons (kubelet lifecycle predicate
// admit handler): "OutOf" + a resource name, or a failed predicate's name.
bool isKubeletAdmissionRejection(std::string_view reason);

class PlacedPods final : public PodObserver {
 public:
  static constexpr size_t kDefaultCapacity = 65536;
  // events may be null (no Events are sent).
  PlacedPods(MetricsRegistry& metrics, EventSink* events, size_t capacity = kDefaultCapacity);

  // A decision of this process (not a dry run). podKey is "namespace/name",
  // or "namespace/generateName" for a pod created without a name.
  void assigned(const std::string& reservationId, const std::string& podKey, const std::string& node,
                const Placement::NodeAccounting& accounting);
  void declined(const std::string& podKey, const std::string& reason);

  void observed(const Pod& pod) override;

  // The rejections seen so far (the last kDefaultCapacity / 64), for tests and logs.
  struct Rejection {
    std::string pod;  // namespace/name
    std::string node;
    std::string reason;
    std::string message;
    bool decidedHere = false;  // the decision (and its accounting) is known
    Placement::NodeAccounting accounting;
  };
  std::vector<Rejection> rejections() const;

 private:
  struct Assigned {
    std::string podKey;
    std::string node;
    Placement::NodeAccounting accounting;
    bool told = false;  // the Scheduled event went out
  };
  struct Declined {
    std::string reason;
    uint32_t pending = 0;  // declined admissions not yet seen as pods
  };
  // A set of strings that forgets its oldest entries past a capacity.
  class BoundedSet {
   public:
    explicit BoundedSet(size_t capacity) : capacity_(capacity) {}
    bool insert(const std::string& key);  // false when present
   private:
    size_t capacity_;
    std::unordered_set<std::string> set_;
    std::deque<std::string> order_;
  };
  void noteRejection(const Pod& pod, const std::string& node);

  MetricsRegistry& metrics_;
  EventSink* events_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Assigned> assigned_;  // by reservation id
  std::deque<std::string> assignedOrder_;
  std::unordered_map<std::string, Declined> declined_;  // by pod key
  std::deque<std::string> declinedOrder_;
  BoundedSet rejected_;  // pod uids counted
  BoundedSet toldDeclined_;  // pod uids told NotPlaced
  std::deque<Rejection> rejections_;
};

}  // namespace placer
