#pragma once
// The in-memory view of the cluster: compact per-node accounting fed
// incrementally by the watch (or a snapshot), plus in-flight reservations.
//
// Thread-safety: ClusterState is safe to call from any thread. Readers
// (read()) share a lock; writers (upserts, removals, reservations, update())
// are exclusive, so a decision always sees one consistent state and
// "decide + reserve" inside update() is one atomic step. NodeInfo and
// ClusterView are plain data, only valid inside the callback that received them.
//
// Accounting follows kube-scheduler's cache (pkg/scheduler/backend/cache):
//  - a pod counts on its node while it is bound (spec.nodeName set) and not
//    terminal (phase Succeeded/Failed); a terminating pod (deletionTimestamp)
//    still counts until it is deleted, as upstream keeps it until removal;
//  - pods may arrive before their node, and a node may be deleted while pods
//    still name it: such pods are kept, keyed by uid, and their usage is
//    attached when a node of that name appears (again);
//  - an update is applied exactly: the old usage is removed, the new added.
// Pods are keyed by metadata.uid, or "namespace/name" when the uid is empty
// (snapshot pods); podKey() gives the key removePod() expects.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include <pthread.h>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scoring/model.h"

namespace placer {

inline constexpr std::string_view kReservationAnnotation = "placer.io/reservation";

// Hash maps keyed by std::string that can be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// Reference-counted interned strings (namespaces, node names, pod label keys
// and values), so that 150,000 pods do not hold 150,000 copies of
// "app.kubernetes.io/name". Ids are reused once released.
class StringTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t acquire(std::string_view text);
  void release(uint32_t id);
  std::string_view text(uint32_t id) const { return id == kNone ? std::string_view() : entries_[id].text; }
  // The id of a string currently held, or kNone.
  uint32_t find(std::string_view text) const;
  // How many acquisitions hold the string (0 for kNone).
  uint32_t refs(uint32_t id) const { return id == kNone ? 0 : entries_[id].refs; }
  size_t size() const { return index_.size(); }
  // One more than the largest id ever handed out.
  size_t bound() const { return entries_.size(); }

 private:
  struct Entry {
    std::string text;
    uint32_t refs = 0;
  };
  std::deque<Entry> entries_;  // a deque: index_ views stay valid when it grows
  std::vector<uint32_t> free_;
  std::unordered_map<std::string_view, uint32_t> index_;
};

// What the accounting keeps of a pod that occupies a node: compact, no JSON.
// Strings are ids into the view's StringTable (ClusterView::text()).
struct PodRecord {
  std::string name;
  uint32_t namespaceId = StringTable::kNone;
  uint32_t nodeNameId = StringTable::kNone;
  uint32_t generation = 0;  // resync mark
  bool attached = false;    // usage is counted on a node of that name
  std::vector<std::pair<uint32_t, uint32_t>> labels;  // (key id, value id), for topology plugins
  Resources requests;
  int64_t nonZeroMilliCpu = 0;
  int64_t nonZeroMemory = 0;
  std::vector<HostPort> hostPorts;
};

// The key a pod is stored under: uid, or "namespace/name" when uid is empty.
std::string podKey(const Pod& pod);

// Members are ordered so that what a decision reads of every node (usage,
// allocatable, taints, the cordon flag, the image index) shares the first four
// cache lines: at 15,000 nodes the filter and score passes are bound by memory.
// The scorers' view of usage: cpu and memory with the non-zero defaults.
struct NonZeroUsage {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  bool operator==(const NonZeroUsage&) const = default;
};

struct alignas(64) NodeInfo {
  Resources requested;            // sum of pod requests (bound pods + reservations)
  NonZeroUsage nonZeroRequested;  // with the scorers' non-zero defaults
  int32_t podCount = 0;           // bound pods + reservations
  // Dense id, stable while the node is in the view (reused after it leaves):
  // an index for per-node arrays a plugin builds in PreScore.
  uint32_t id = 0;
  // Nodes of a pool share their taints: the view gives each distinct list of
  // taints an id (ClusterView::taintSetBound()), so TaintToleration decides
  // once per list instead of reading every node's taints. Trusted only while
  // taintSetData == node.taints.data(): a NodeInfo copied or edited outside
  // the view falls back to reading its taints.
  uint32_t taintSet = UINT32_MAX;
  const Taint* taintSetData = nullptr;
  Node node;  // allocatable, taints and the cordon flag first
  // (image id, size in bytes) per image name the node holds, sorted by id;
  // ids from ClusterView::imageId(). Upstream's NodeInfo.ImageStates.
  std::vector<std::pair<uint32_t, int64_t>> imageSizes;
  // Labels are indexed by the view (ClusterView::nodeLabel) while this is the
  // node's own labels array and labelsIndexed is set; see ClusterView::labelsIndexed().
  const std::pair<std::string, std::string>* labelsData = nullptr;
  bool labelsIndexed = false;
  std::vector<HostPort> usedPorts;  // multiset: one entry per pod port
  std::vector<uint32_t> podSlots;   // bound pods here: slots for ClusterView::pod() (topology plugins)
  uint32_t generation = 0;          // resync mark

  const std::string& name() const { return node.name; }
  // The size of an image on this node, or -1 when the node does not hold it.
  int64_t imageSize(uint32_t imageId) const;
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
  // How many nodes hold an image (normalised name, as in NodeImage::names); 0 when none.
  int32_t imageNodeCount(std::string_view normalizedImage) const;
  // The id of an image name some node holds (for NodeInfo::imageSize), or StringTable::kNone.
  uint32_t imageId(std::string_view normalizedImage) const { return images_.find(normalizedImage); }
  // (NodeInfo::id, size) of every node holding an image, in no particular order:
  // image-major, so a pod's images are scored over all nodes with sequential reads.
  std::span<const std::pair<uint32_t, int64_t>> imageHolders(uint32_t imageId) const {
    if (imageId >= imageHolders_.size()) return {};
    return imageHolders_[imageId];
  }
  // Whether a NodeInfo is one of this view's (not a copy): ids and indexes apply.
  bool holds(const NodeInfo& node) const {
    return !nodes_.empty() && &node >= nodes_.data() && &node < nodes_.data() + nodes_.size();
  }
  // Node labels, column by column: for each label key some node has, the value
  // id per NodeInfo::id. Lets selectors match view nodes by integer compares.
  // Valid only for a NodeInfo for which labelsIndexed() is true.
  static bool labelsIndexed(const NodeInfo& node) {
    return node.labelsIndexed && node.labelsData == node.node.labels.data();
  }
  uint32_t nodeLabelKeyId(std::string_view key) const { return labelKeys_.find(key); }
  uint32_t nodeLabelValueId(std::string_view value) const { return labelValues_.find(value); }
  std::string_view nodeLabelValue(uint32_t valueId) const { return labelValues_.text(valueId); }
  // The value id of label keyId on the node, or StringTable::kNone when absent.
  uint32_t nodeLabel(uint32_t keyId, uint32_t nodeId) const {
    if (keyId >= labelColumns_.size()) return StringTable::kNone;
    const std::vector<uint32_t>& column = labelColumns_[keyId];
    return nodeId < column.size() ? column[nodeId] : StringTable::kNone;
  }
  // One more than the largest NodeInfo::taintSet in use.
  uint32_t taintSetBound() const { return static_cast<uint32_t>(taintSets_.bound()); }
  // One more than the largest NodeInfo::id in use.
  uint32_t nodeIdBound() const { return nodeIdBound_; }
  size_t podCount() const { return podByKey_.size(); }  // pods kept (bound, non-terminal)
  const PodRecord* pod(uint32_t slot) const;
  const PodRecord* findPod(std::string_view key) const;
  // Interned strings of PodRecord.
  std::string_view text(uint32_t id) const { return strings_.text(id); }
  // The value of a pod's label, if set.
  std::optional<std::string_view> podLabel(const PodRecord& pod, std::string_view key) const;

 protected:
  std::vector<NodeInfo> nodes_;
  StringMap<uint32_t> nodeIndex_;
  std::vector<PodRecord> podTable_;  // slots; a free slot has nodeNameId == kNone and an empty name
  std::vector<uint32_t> freePodSlots_;
  StringMap<uint32_t> podByKey_;
  // Pods bound to a node name that is not (or no longer) in the view.
  StringMap<std::vector<uint32_t>> orphanSlots_;
  StringTable strings_;
  // Image names; a name's reference count is the number of nodes holding it.
  StringTable images_;
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> imageHolders_;  // by image id
  StringTable taintSets_;  // by the encoded taint list; a count of nodes per set
  StringTable labelKeys_;    // node label keys; refs = nodes with the key
  StringTable labelValues_;  // node label values; refs = (node, key) pairs with the value
  std::vector<std::vector<uint32_t>> labelColumns_;  // [key id][node id] -> value id
  std::vector<uint32_t> freeNodeIds_;
  uint32_t nodeIdBound_ = 0;
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

enum class ResyncKind : uint8_t { Nodes, Pods };

// Mutations, used by ClusterState under its exclusive lock and by tests directly.
class MutableClusterView : public ClusterView {
 public:
  void upsertNode(Node node);
  // The node leaves the view; its pods stay and are attached again if it comes back.
  // Reservations on it are dropped (their pods, if created, arrive through the watch).
  void removeNode(std::string_view name);
  // A pod that is bound (nodeName set) and non-terminal is counted on its node;
  // otherwise it is removed from the accounting. A pod whose reservation
  // annotation names an active reservation releases it in the same step.
  void upsertPod(const Pod& pod);
  void removePod(std::string_view key);  // key as podKey(): uid, or namespace/name

  // Relist after a watch expired (410 Gone): beginResync(kind), then upsert every
  // listed object, then finishResync(kind) removes every object of that kind that
  // was not upserted since beginResync. Returns how many were removed.
  void beginResync(ResyncKind kind);
  size_t finishResync(ResyncKind kind);

  // Reservations: counted on the node like a pod until released or expired.
  bool reserve(Reservation reservation);  // false if the node is unknown or the id is taken
  bool release(std::string_view id);
  size_t expireReservations(std::chrono::steady_clock::time_point now);  // returns how many expired
  size_t reservationCount() const { return reservations_.size(); }
  const Reservation* findReservation(std::string_view id) const;

 private:
  void attach(uint32_t slot, NodeInfo& node);
  void detach(uint32_t slot);
  void forgetPod(uint32_t slot);
  void indexImages(NodeInfo& info);
  void unindexImages(NodeInfo& info);
  void indexTaints(NodeInfo& info);
  void indexLabels(NodeInfo& info);
  void unindexLabels(NodeInfo& info);
  void unindexTaints(NodeInfo& info);

  StringMap<Reservation> reservations_;
  uint32_t nodeGeneration_ = 0;
  uint32_t podGeneration_ = 0;
};

// A reader-writer lock that prefers writers: once a writer waits, new readers
// queue behind it. Decisions read for a few hundred microseconds each while
// reservations and watch updates write briefly; with the default (reader
// preference) overlapping decisions could hold a writer off indefinitely,
// which is what admission latency tails are made of.
class WriterPreferringLock {
 public:
  WriterPreferringLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPreferringLock() { pthread_rwlock_destroy(&lock_); }
  WriterPreferringLock(const WriterPreferringLock&) = delete;
  WriterPreferringLock& operator=(const WriterPreferringLock&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
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
  void removePod(std::string_view key) { update([&](MutableClusterView& v) { v.removePod(key); }); }
  void beginResync(ResyncKind kind) { update([&](MutableClusterView& v) { v.beginResync(kind); }); }
  size_t finishResync(ResyncKind kind) {
    return update([&](MutableClusterView& v) { return v.finishResync(kind); });
  }

 private:
  mutable WriterPreferringLock mutex_;  // not recursive: a callback must not call back in
  MutableClusterView view_;
};

}  // namespace placer
