#pragma once
// The in-memory view of the cluster: compact per-node accounting fed
// incrementally by the watch (or a snapshot), plus in-flight reservations.
//
// Thread-safety: ClusterState is safe to call from any thread. Readers
// (read()) share a lock; writers (upserts, removals, reservations, update())
// are exclusive, so a decision always sees one consistent state and
// "decide + reserve" inside update() is one atomic step. NodeInfo and
// ClusterView are plain data, only valid inside the callback that received them.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scoring/model.h"

namespace placer {

inline constexpr std::string_view kReservationAnnotation = "placer.io/reservation";

// What the accounting keeps of a pod that occupies a node: compact, no JSON.
struct PodRecord {
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string nodeName;
  Labels labels;             // kept for PodTopologySpread / InterPodAffinity
  Resources requests;
  Resources nonZeroRequests;
  std::vector<HostPort> hostPorts;
  std::string reservationId;  // placer.io/reservation annotation, if any
};
PodRecord toPodRecord(const Pod& pod);

struct NodeInfo {
  Node node;
  Resources requested;        // sum of pod requests (bound pods + reservations)
  Resources nonZeroRequested; // with the scorers' non-zero defaults; milliCpu and memory only
  int32_t podCount = 0;       // bound pods + reservations
  std::vector<HostPort> usedPorts;  // multiset: one entry per pod port
  std::vector<uint32_t> podSlots;   // indices into the pod table (for topology plugins)

  const std::string& name() const { return node.name; }
  const Resources& allocatable() const { return node.allocatable; }

  // Accounting primitives, shared by bound pods and reservations.
  void addUsage(const Resources& requests, const Resources& nonZero, std::span<const HostPort> ports);
  void removeUsage(const Resources& requests, const Resources& nonZero, std::span<const HostPort> ports);
};

// The read side plugins see. Nodes are contiguous for fast iteration; their
// order is stable between mutations but not meaningful.
class ClusterView {
 public:
  std::span<const NodeInfo> nodes() const { return nodes_; }
  const NodeInfo* findNode(std::string_view name) const;
  // How many nodes hold an image (normalised name); 0 when none.
  int32_t imageNodeCount(std::string_view normalizedImage) const;
  size_t podCount() const;  // bound pods counted
  const PodRecord* pod(uint32_t slot) const;

 protected:
  std::vector<NodeInfo> nodes_;
  std::unordered_map<std::string, uint32_t> nodeIndex_;
  std::unordered_map<std::string, int32_t> imageNodeCounts_;
  std::vector<std::optional<PodRecord>> podTable_;
  std::vector<uint32_t> freePodSlots_;
  std::unordered_map<std::string, uint32_t> podByUid_;
};

struct Reservation {
  std::string id;       // admission request uid
  std::string nodeName;
  std::string podKey;   // namespace/name-or-generateName, for logs
  Resources requests;
  Resources nonZeroRequests;
  std::vector<HostPort> hostPorts;
  std::chrono::steady_clock::time_point expires;
};

// Mutations, used by ClusterState under its exclusive lock and by tests directly.
class MutableClusterView : public ClusterView {
 public:
  void upsertNode(Node node);
  void removeNode(std::string_view name);
  // A pod that is bound (nodeName set) and non-terminal is counted on its node;
  // otherwise it is removed from the accounting. A pod whose reservation
  // annotation names an active reservation releases it in the same step.
  void upsertPod(const Pod& pod);
  void removePod(std::string_view uid);

  // Reservations: counted on the node like a pod until released or expired.
  bool reserve(Reservation reservation);  // false if the node is unknown or the id is taken
  bool release(std::string_view id);
  size_t expireReservations(std::chrono::steady_clock::time_point now);  // returns how many expired
  size_t reservationCount() const { return reservations_.size(); }
  const Reservation* findReservation(std::string_view id) const;

 private:
  std::unordered_map<std::string, Reservation> reservations_;
  std::unordered_map<std::string, std::string> podUidByReservation_;
};

class ClusterState {
 public:
  template <class F>
  auto read(F&& f) const {
    std::shared_lock lock(mutex_);
    return f(static_cast<const ClusterView&>(view_));
  }
  template <class F>
  auto update(F&& f) {
    std::unique_lock lock(mutex_);
    return f(view_);
  }

  void upsertNode(Node node) { update([&](MutableClusterView& v) { v.upsertNode(std::move(node)); }); }
  void removeNode(std::string_view name) { update([&](MutableClusterView& v) { v.removeNode(name); }); }
  void upsertPod(const Pod& pod) { update([&](MutableClusterView& v) { v.upsertPod(pod); }); }
  void removePod(std::string_view uid) { update([&](MutableClusterView& v) { v.removePod(uid); }); }

 private:
  mutable std::shared_mutex mutex_;
  MutableClusterView view_;
};

}  // namespace placer
