#include "scoring/placement.h"

#include <optional>

namespace placer {
namespace {

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
  auto confirm = [&](const ClusterView& view, const NodeInfo& chosen) {
    const NodeInfo* candidates[] = {&chosen};
    return engine_.evaluate(pod, view, candidates, Detail::FilterOnly).selected != nullptr;
  };

  constexpr int kOptimisticRounds = 2;
  for (int round = 0; round < kOptimisticRounds; ++round) {
    uint64_t version = 0;
    bool podDependent = false;
    state_.readForDecision([&](const ClusterView& view) {
      version = view.reservedPods()->version;
      Decision d = engine_.place(pod, view);
      podDependent = d.podDependent;
      record(p, d);
    });
    ++p.rounds;
    if (p.node.empty()) {
      p.outcome = Placement::Outcome::Unschedulable;
      return p;
    }
    auto outcome = state_.reserve(at(p.node), podDependent ? version : 0, confirm);
    if (outcome == ClusterState::ReserveOutcome::Reserved) {
      p.outcome = Placement::Outcome::Reserved;
      return p;
    }
    if (outcome == ClusterState::ReserveOutcome::NeedsExclusive) break;
    if (round + 1 < kOptimisticRounds) continue;
    // Last round: decide with every other reservation held off.
    auto last = state_.decideAndReserve([&](const ClusterView& view) -> std::optional<Reservation> {
      record(p, engine_.place(pod, view));
      ++p.rounds;
      if (p.node.empty()) return std::nullopt;
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
    record(p, engine_.place(pod, view));
    ++p.rounds;
    if (!p.node.empty()) reserved = view.reserve(at(p.node));
  });
  if (p.node.empty()) {
    p.outcome = Placement::Outcome::Unschedulable;
  } else if (reserved) {
    p.outcome = Placement::Outcome::Reserved;
  } else {
    p.outcome = Placement::Outcome::Refused;
    p.reason = "reservation refused on the chosen node";
    p.node.clear();
  }
  return p;
}

bool LocalReservationBook::release(std::string_view key) {
  return state_.update([&](MutableClusterView& view) { return view.release(key); });
}

}  // namespace placer
