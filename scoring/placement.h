#pragma once
// Placing a pod: decide and reserve as one step, behind the narrow interface
// that admission and the extender's /bind use (ReservationBook).
//
// The protocol (LocalReservationBook, over one process's ClusterState):
//  1. decide on the shared view, so decisions run in parallel;
//  2. reserve the chosen node one reservation at a time (ClusterState's
//     commit lock): confirm the node as it is now (the engine's filters on it
//     alone, against every reservation made before) and count the pod there;
//     a decision that depends on other pods (InterPodAffinity,
//     PodTopologySpread took part) is also refused when any reservation was
//     made since it read the view, so replicas admitted together land exactly
//     where one-by-one placement would put them;
//  3. when that fails, decide again: one more optimistic round, then a last
//     one that decides while holding every other reservation off, so it
//     always ends;
//  4. a reservation id already held (a review sent again) is replaced under
//     the view's exclusive lock.
//
// Thread-safety: every method may be called from any thread at once.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "scoring/cluster_state.h"
#include "scoring/engine.h"

namespace placer {

struct Placement {
  enum class Outcome : uint8_t {
    Reserved,       // node chosen and reserved
    Decided,        // node chosen, nothing reserved (dry run)
    Unschedulable,  // no node fits: `reason` is kube-scheduler's FitError message
    Refused,        // a node was chosen but could not be reserved: `reason` says why
  };
  Outcome outcome = Outcome::Unschedulable;
  std::string node;
  int64_t score = 0;
  size_t nodeCount = 0;
  size_t feasibleCount = 0;
  std::string reason;
  int rounds = 0;  // decisions made (1 when the first one held)
  // The chosen node's accounting as the reservation found it, before this
  // pod counted there (Reserved only): what a kubelet rejection is logged with.
  struct NodeAccounting {
    Resources allocatable;
    Resources requested;
    int32_t podCount = 0;
  };
  NodeAccounting accounting;
};

class ReservationBook {
 public:
  virtual ~ReservationBook() = default;
  // Decides where the pod goes and reserves it there under `key` until
  // `expires` (or until the pod appears in the view carrying the key in its
  // placer.io/reservation annotation).
  virtual Placement placeAndReserve(const Pod& pod, std::string_view key,
                                    std::chrono::steady_clock::time_point expires) = 0;
  // Decides only (dry run).
  virtual Placement decide(const Pod& pod) = 0;
  // Gives a reservation back; false when there was none.
  virtual bool release(std::string_view key) = 0;
  // Reserves the pod on `node` under `key` (the node kube-scheduler chose,
  // for the extender's /bind) when every filter still passes there against
  // the view as it is now, nominated pods and other reservations counted.
  // Reserved, or Refused with the filters' reasons, or Unschedulable when the
  // node is unknown. A key already held is replaced.
  virtual Placement reserveOn(const Pod& pod, std::string_view node, std::string_view key,
                              std::chrono::steady_clock::time_point expires) = 0;
  // A pod this book placed on `node` under `key`, as it is now (a mutating
  // webhook after placer changed it; pod.nodeName must be empty). With
  // `reserve`, only while that reservation is held (else Refused: not this
  // book's decision): it is given back, the pod confirmed on `node` against
  // the view and every other reservation, and reserved there again when it
  // still fits (Reserved, same node); else decided again and reserved where
  // it fits now (Reserved, another node) or nowhere (Unschedulable), all as
  // one step. Without `reserve` (dry run): the same, reserving nothing
  // (Decided / Unschedulable).
  virtual Placement recheck(const Pod& pod, std::string_view node, std::string_view key,
                            std::chrono::steady_clock::time_point expires, bool reserve) = 0;
};

class LocalReservationBook final : public ReservationBook {
 public:
  LocalReservationBook(const Engine& engine, ClusterState& state) : engine_(engine), state_(state) {}
  Placement placeAndReserve(const Pod& pod, std::string_view key, std::chrono::steady_clock::time_point expires) override;
  Placement decide(const Pod& pod) override;
  bool release(std::string_view key) override;
  Placement reserveOn(const Pod& pod, std::string_view node, std::string_view key,
                      std::chrono::steady_clock::time_point expires) override;
  Placement recheck(const Pod& pod, std::string_view node, std::string_view key,
                    std::chrono::steady_clock::time_point expires, bool reserve) override;

 private:
  const Engine& engine_;
  ClusterState& state_;
};

}  // namespace placer
