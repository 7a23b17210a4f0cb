#include "scoring/placement.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "scoring/pod_affinity.h"

namespace placer {
namespace {

bool anyTermSelects(const PodAffinityInfo& info, const Labels& labels) {
  for (const auto& kind : info.terms)
    for (const AffinityTerm& term : kind)
      if (term.selector.matches(labels)) return true;
  return false;
}

// Whether a pod reserved after a pod-dependent decision was made could have
// changed that decision, had the decision counted it. A superset of the pods
// InterPodAffinity and PodTopologySpread count for `pod`:
//  - its own terms select the reserved pod's labels (any namespace);
//  - the reserved pod's terms select `pod`'s labels (any namespace);
//  - same namespace, and one of `pod`'s own spread constraints selects it
//    (matchLabelKeys only narrow a selector), or, without constraints of its
//    own, every selector the default constraints are built from selects it:
//    the controller's and those of the Services selecting `pod`.
// Hard constraints do not rest on this: the confirm step re-runs every filter
// against the view as it is at the moment of reserving.
class Relevance {
 public:
  Relevance(const Pod& pod, const ClusterView& view) : pod_(pod), own_(compilePodAffinity(pod)) {
    if (!pod.topologySpreadConstraints.empty()) {
      anyOf_ = true;
      for (const TopologySpreadConstraint& c : pod.topologySpreadConstraints) {
        auto selector = CompiledSelector::compile(c.labelSelector);
        if (selector) spread_.push_back(std::move(*selector));
        else wholeNamespace_ = true;  // the decision failed PreScore; be safe
      }
      return;
    }
    view.forEachServiceSelecting(pod.namespace_, pod.labels, [&](std::string_view, const Labels* selector) {
      CompiledSelector s = CompiledSelector::fromSet(*selector);
      if (s.matches(pod.labels)) spread_.push_back(std::move(s));
    });
    if (pod.ownerKind.empty()) return;
    if (pod.ownerApiVersion == "v1" && pod.ownerKind == "ReplicationController") {
      if (const auto* rc = view.workload(WorkloadKind::ReplicationController, pod.namespace_, pod.ownerName))
        if (rc->selectorMap) spread_.push_back(CompiledSelector::fromSet(*rc->selectorMap));
    } else if (pod.ownerApiVersion == "apps/v1" && (pod.ownerKind == "ReplicaSet" || pod.ownerKind == "StatefulSet")) {
      const WorkloadKind kind = pod.ownerKind == "ReplicaSet" ? WorkloadKind::ReplicaSet : WorkloadKind::StatefulSet;
      if (const auto* w = view.workload(kind, pod.namespace_, pod.ownerName)) spread_.push_back(w->selector);
    }
  }

  bool affects(const ReservedPod& r) const {
    if (own_ && anyTermSelects(*own_, r.labels)) return true;
    if (r.affinity && anyTermSelects(*r.affinity, pod_.labels)) return true;
    if (r.namespace_ != pod_.namespace_) return false;
    if (wholeNamespace_) return true;
    if (spread_.empty()) return false;
    auto selects = [&](const CompiledSelector& s) { return s.matches(r.labels); };
    return anyOf_ ? std::any_of(spread_.begin(), spread_.end(), selects)
                  : std::all_of(spread_.begin(), spread_.end(), selects);
  }

  // Whether `now` holds a reservation `seen` did not that affects the pod.
  bool changedSince(const ReservedPods& seen, const ReservedPods& now) const {
    if (now.version == seen.version) return false;
    std::vector<const ReservedPod*> before;
    before.reserve(seen.pods.size());
    for (const auto& p : seen.pods) before.push_back(p.get());
    std::sort(before.begin(), before.end());
    for (const auto& p : now.pods)
      if (!std::binary_search(before.begin(), before.end(), p.get()) && affects(*p)) return true;
    return false;
  }

 private:
  const Pod& pod_;
  std::shared_ptr<const PodAffinityInfo> own_;
  std::vector<CompiledSelector> spread_;
  bool anyOf_ = false;           // own constraints: any selects; defaults: all select (one merged selector)
  bool wholeNamespace_ = false;
};

void recordAccounting(Placement& p, const NodeInfo& node) {
  p.accounting.allocatable = node.allocatable();
  p.accounting.requested = node.requested;
  p.accounting.podCount = node.podCount;
}

void record(Placement& p, const Decision& d) {
  p.nodeCount = d.nodeCount;
  p.feasibleCount = d.feasibleCount;
  if (d.selected != nullptr) {
    p.node = d.selected->name();
    p.score = d.selectedTotal;
    p.reason.clear();
  } else {
    p.node.clear();
    p.score = 0;
    p.reason = d.unschedulableMessage();
  }
}

// The outcome of a decision that was followed by an attempt to reserve its
// node: none chosen, reserved, or refused by the book (the node is cleared).
void settle(Placement& p, bool reserved) {
  if (p.node.empty()) {
    p.outcome = Placement::Outcome::Unschedulable;
  } else if (reserved) {
    p.outcome = Placement::Outcome::Reserved;
  } else {
    p.outcome = Placement::Outcome::Refused;
    p.reason = "reservation refused on the chosen node";
    p.node.clear();
  }
}

}  // namespace

Placement LocalReservationBook::decide(const Pod& pod) {
  Placement p;
  state_.readForDecision([&](const ClusterView& view) { record(p, engine_.place(pod, view)); });
  p.rounds = 1;
  p.outcome = p.node.empty() ? Placement::Outcome::Unschedulable : Placement::Outcome::Decided;
  return p;
}

Placement LocalReservationBook::placeAndReserve(const Pod& pod, std::string_view key,
                                                std::chrono::steady_clock::time_point expires) {
  Placement p;
  const Reservation reservation = reservationFor(pod, std::string(key), "", expires);
  auto at = [&](const std::string& node) {
    Reservation r = reservation;
    r.nodeName = node;
    return r;
  };
  // A pod-dependent decision stands only if no reservation made since it
  // read the view could have changed it (see Relevance): so that replicas
  // admitted together spread as if admitted one by one, while unrelated
  // admissions do not wait for each other.
  std::optional<Relevance> relevance;
  std::shared_ptr<const ReservedPods> seen;
  auto confirm = [&](const ClusterView& view, const NodeInfo& chosen) {
    if (seen != nullptr) {
      if (!relevance) relevance.emplace(pod, view);
      if (relevance->changedSince(*seen, *view.reservedPods())) return false;
    }
    const NodeInfo* candidates[] = {&chosen};
    if (engine_.evaluate(pod, view, candidates, Detail::FilterOnly).selected == nullptr) return false;
    recordAccounting(p, chosen);
    return true;
  };

  constexpr int kOptimisticRounds = 2;
  for (int round = 0; round < kOptimisticRounds; ++round) {
    bool podDependent = false;
    std::shared_ptr<const ReservedPods> read;
    state_.readForDecision([&](const ClusterView& view) {
      read = view.reservedPods();
      Decision d = engine_.place(pod, view);
      podDependent = d.podDependent;
      record(p, d);
    });
    ++p.rounds;
    if (p.node.empty()) {
      p.outcome = Placement::Outcome::Unschedulable;
      return p;
    }
    seen = podDependent ? std::move(read) : nullptr;
    auto outcome = state_.reserve(at(p.node), 0, confirm);
    if (outcome == ClusterState::ReserveOutcome::Reserved) {
      p.outcome = Placement::Outcome::Reserved;
      return p;
    }
    if (outcome == ClusterState::ReserveOutcome::NeedsExclusive) break;
    if (round + 1 < kOptimisticRounds) continue;
    // Last round: decide with every other reservation held off.
    auto last = state_.decideAndReserve([&](const ClusterView& view) -> std::optional<Reservation> {
      Decision d = engine_.place(pod, view);
      record(p, d);
      ++p.rounds;
      if (p.node.empty()) return std::nullopt;
      recordAccounting(p, *d.selected);
      return at(p.node);
    });
    if (last == ClusterState::ReserveOutcome::Reserved) {
      p.outcome = Placement::Outcome::Reserved;
      return p;
    }
    if (p.node.empty()) {
      p.outcome = Placement::Outcome::Unschedulable;
      return p;
    }
    if (last != ClusterState::ReserveOutcome::NeedsExclusive) {
      p.outcome = Placement::Outcome::Refused;
      p.reason = "reservation refused on the chosen node";
      p.node.clear();
      return p;
    }
  }

  // The id is taken (a review sent again): release the earlier reservation and
  // decide again, all under the exclusive lock.
  bool reserved = false;
  state_.update([&](MutableClusterView& view) {
    if (view.findReservation(key) != nullptr) view.release(key);
    Decision d = engine_.place(pod, view);
    record(p, d);
    ++p.rounds;
    if (p.node.empty()) return;
    recordAccounting(p, *d.selected);
    reserved = view.reserve(at(p.node));
  });
  settle(p, reserved);
  return p;
}

Placement LocalReservationBook::reserveOn(const Pod& pod, std::string_view node, std::string_view key,
                                          std::chrono::steady_clock::time_point expires) {
  Placement p;
  p.rounds = 1;
  p.node = std::string(node);
  Reservation reservation = reservationFor(pod, std::string(key), std::string(node), expires);
  std::string rejection;
  auto confirm = [&](const ClusterView& view, const NodeInfo& chosen) {
    const NodeInfo* candidates[] = {&chosen};
    Decision d = engine_.evaluate(pod, view, candidates, Detail::FilterOnly);
    p.nodeCount = p.feasibleCount = d.selected != nullptr ? 1 : 0;
    if (d.selected == nullptr) {
      rejection = d.unschedulableMessage();
      return false;
    }
    recordAccounting(p, chosen);
    return true;
  };
  auto outcome = state_.reserve(reservation, 0, confirm);
  if (outcome == ClusterState::ReserveOutcome::NeedsExclusive) {
    // The key is held (a bind sent again): give it back and confirm again, all at once.
    state_.update([&](MutableClusterView& view) {
      view.release(key);
      const NodeInfo* chosen = view.findNode(node);
      if (chosen == nullptr) {
        outcome = ClusterState::ReserveOutcome::UnknownNode;
      } else if (!confirm(view, *chosen)) {
        outcome = ClusterState::ReserveOutcome::NotConfirmed;
      } else {
        outcome = view.reserve(std::move(reservation)) ? ClusterState::ReserveOutcome::Reserved
                                                       : ClusterState::ReserveOutcome::NotConfirmed;
      }
    });
  }
  switch (outcome) {
    case ClusterState::ReserveOutcome::Reserved: p.outcome = Placement::Outcome::Reserved; break;
    case ClusterState::ReserveOutcome::UnknownNode:
      p.outcome = Placement::Outcome::Unschedulable;
      p.reason = "node \"" + std::string(node) + "\" is not in placer's view";
      break;
    default:
      p.outcome = Placement::Outcome::Refused;
      p.reason = rejection.empty() ? "reservation refused on the chosen node" : rejection;
      break;
  }
  if (p.outcome != Placement::Outcome::Reserved) p.node.clear();
  return p;
}

Placement LocalReservationBook::recheck(const Pod& pod, std::string_view node, std::string_view key,
                                        std::chrono::steady_clock::time_point expires, bool reserve) {
  Placement p;
  auto decideOn = [&](const ClusterView& view) {
    p.rounds = 1;
    if (const NodeInfo* held = view.findNode(node)) {
      const NodeInfo* candidates[] = {held};
      if (engine_.evaluate(pod, view, candidates, Detail::FilterOnly).selected != nullptr) {
        p.node = std::string(node);
        p.nodeCount = p.feasibleCount = 1;
        recordAccounting(p, *held);
        return;
      }
    }
    ++p.rounds;
    Decision d = engine_.place(pod, view);
    record(p, d);
    if (d.selected != nullptr) recordAccounting(p, *d.selected);
  };
  if (!reserve) {
    state_.readForDecision([&](const ClusterView& view) { decideOn(view); });
    p.outcome = p.node.empty() ? Placement::Outcome::Unschedulable : Placement::Outcome::Decided;
    return p;
  }
  bool held = false;
  bool reserved = false;
  state_.update([&](MutableClusterView& view) {
    const Reservation* r = view.findReservation(key);
    if (r == nullptr || r->nodeName != node) return;
    held = true;
    view.release(key);
    decideOn(view);
    if (!p.node.empty()) reserved = view.reserve(reservationFor(pod, std::string(key), p.node, expires));
  });
  if (!held) {
    p.outcome = Placement::Outcome::Refused;
    p.reason = "no reservation " + std::string(key) + " held on node " + std::string(node);
  } else {
    settle(p, reserved);
  }
  return p;
}

bool LocalReservationBook::release(std::string_view key) {
  return state_.update([&](MutableClusterView& view) { return view.release(key); });
}

}  // namespace placer
