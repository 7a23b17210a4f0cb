#pragma once
// The in-memory view of the cluster: compact per-node accounting fed
// incrementally by the watch (or a snapshot), plus in-flight reservations.
//
// Thread-safety: ClusterState is safe to call from any thread. Readers
// (read(), readForDecision()) share a lock; writers (upserts, removals,
// update()) are exclusive. reserve() confirms and reserves on one node as one
// atomic step while decisions go on: node accounting is also guarded by
// accounting stripes (AccountingStripes), which decisions hold per tile of
// nodes and a reservation holds for its node only. NodeInfo and
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

#include <algorithm>
#include <atomic>
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
#include "scoring/label_selector.h"
#include "scoring/node_name_index.h"
#include "scoring/pod_affinity.h"

namespace placer {

inline constexpr std::string_view kReservationAnnotation = "placer.io/reservation";
// The id of the reservation the extender's /bind holds for a pod (by uid)
// until the watch sees it bound, terminal or deleted.
std::string bindReservationId(std::string_view podUid);

class ClusterView;
struct NodeInfo;

// Hash maps keyed by std::string that can be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// Ids by string, for an owner that keeps each id's string (textOf(id) ->
// std::string_view): open addressing with linear probing, at most half full.
// A slot holds the string's hash (high half) and id (low half), so that a
// probe reads the owner's string only when the hashes agree; an empty slot is
// kEmptySlot. A view holds ~150,000 distinct pod label values and 150,000 pod
// keys at 150,000 pods: one flat array of 8-byte slots each, instead of a
// heap node per string and a rehash walk over scattered nodes. Erasing mends
// the probe run by backward shift (no tombstones).
// Thread-safety: none (the owner's).
class FlatStringIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static uint32_t hashOf(std::string_view text);

  // Ids held.
  size_t size() const { return size_; }
  // The id of `text` (hash: hashOf(text)), or kNone.
  template <class TextOf>
  uint32_t find(std::string_view text, uint32_t hash, const TextOf& textOf) const {
    return size_ == 0 ? kNone : idAt(probe(text, hash, textOf));
  }
  // Makes room for one more id; before a probe() whose empty slot is filled.
  void reserveOne() {
    if ((size_ + 1) * 2 > slots_.size()) grow();
  }
  // `text`'s slot: where its id is, or the empty slot where it would go.
  // Needs a slot at least (reserveOne() or size() > 0).
  template <class TextOf>
  size_t probe(std::string_view text, uint32_t hash, const TextOf& textOf) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == kEmptySlot) return i;
      if (static_cast<uint32_t>(slot >> 32) == hash && textOf(static_cast<uint32_t>(slot)) == text) return i;
    }
  }
  // The id in a slot from probe(), kNone when it is empty.
  uint32_t idAt(size_t slot) const {
    return slots_[slot] == kEmptySlot ? kNone : static_cast<uint32_t>(slots_[slot]);
  }
  // Fills the empty slot probe() just returned (nothing changed in between).
  void fill(size_t slot, uint32_t hash, uint32_t id) {
    slots_[slot] = static_cast<uint64_t>(hash) << 32 | id;
    ++size_;
  }
  // Empties a slot of probe() that holds an id.
  void eraseAt(size_t slot);

 private:
  static constexpr uint64_t kEmptySlot = UINT64_MAX;
  void grow();
  std::vector<uint64_t> slots_;  // size 0 or a power of two
  size_t size_ = 0;
};

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
    uint32_t hash = 0;  // FlatStringIndex::hashOf(text)
  };
  auto textOf() const {
    return [this](uint32_t id) { return std::string_view(entries_[id].text); };
  }
  std::deque<Entry> entries_;  // a deque: entries stay in place when it grows
  std::vector<uint32_t> free_;
  FlatStringIndex index_;  // the held entries (a StatefulSet's pod-name label: one per pod)
};

// One label of a pod in the view: interned key and value (ClusterView::text()),
// and the pod's place in the view's list of pods carrying that label.
struct PodLabel {
  uint32_t key = StringTable::kNone;
  uint32_t value = StringTable::kNone;
  uint32_t posting = 0;
};

// What the accounting keeps of a pod that occupies a node: compact, no JSON.
// Strings are ids into the view's StringTable (ClusterView::text()).
struct PodRecord {
  std::string key;  // podKey(): the uid, or namespace/name (ClusterView's index of pods)
  std::string name;
  uint32_t namespaceId = StringTable::kNone;
  uint32_t nodeNameId = StringTable::kNone;
  uint32_t nodeId = StringTable::kNone;  // NodeInfo::id while attached
  uint32_t namespacePosting = 0;         // place in the view's list of the namespace's pods
  uint32_t generation = 0;  // resync mark
  bool attached = false;    // usage is counted on a node of that name
  bool terminating = false;  // metadata.deletionTimestamp set (PodTopologySpread skips it)
  std::vector<PodLabel> labels;  // sorted by key text, as Pod::labels
  // Compiled pod (anti-)affinity terms (null: none), and the view's term class
  // of each, in PodAffinityInfo order (InterPodAffinity reads existing pods' terms by class).
  std::shared_ptr<const PodAffinityInfo> affinity;
  std::vector<uint32_t> termClasses;
  Resources requests;
  int64_t nonZeroMilliCpu = 0;
  int64_t nonZeroMemory = 0;
  std::vector<HostPort> hostPorts;

  bool requiredAntiAffinity() const { return affinity && !affinity->of(TermKind::RequiredAntiAffinity).empty(); }
};

// Pods' (anti-)affinity terms, grouped: replicas of one workload carry the
// same terms, so InterPodAffinity matches an incoming pod against each
// distinct term once and counts the pods holding it per node.
struct TermClass {
  TermKind kind = TermKind::RequiredAffinity;
  AffinityTerm term;
  uint32_t refs = 0;  // pods holding it (attached or not); 0: a free slot
  std::vector<std::pair<uint32_t, uint32_t>> nodes;  // (NodeInfo::id, attached pods there holding it)
};

// A reservation as the topology plugins see it: a pod that is not in the
// watch yet, on its node, with its namespace, labels and affinity terms.
struct ReservedPod {
  std::string id;          // the reservation id (admission request uid)
  uint32_t nodeId = 0;     // NodeInfo::id
  std::string namespace_;
  Labels labels;
  std::shared_ptr<const PodAffinityInfo> affinity;
};

// Every reservation of the view at one moment: immutable, shared by the
// decisions that read it while reservations change. `version` grows with
// every reservation made or released.
struct ReservedPods {
  std::vector<std::shared_ptr<const ReservedPod>> pods;
  uint64_t version = 0;
};

// The key a pod is stored under: uid, or "namespace/name" when uid is empty.
std::string podKey(const Pod& pod);

// A pending pod that kube-scheduler's preemption made room for
// (status.nominatedNodeName, spec.nodeName empty, not terminal). As in
// kube-scheduler (RunFilterPluginsWithNominatedPods), it counts on that node
// for an incoming pod of lower or equal priority: filters run once with the
// node's nominated pods of priority >= the incoming pod's added, and, when
// that passes, once without; the pod must pass both. It stops counting when
// the pod is bound, deleted, terminal or no longer nominated.
struct NominatedPod {
  std::string key;  // podKey(): the uid (a pod is never its own nominee)
  std::string uid;
  std::string podName;  // namespace/name, for logs and explain
  std::string nodeName;
  int32_t priority = 0;
  Resources requests;
  Resources nonZeroRequests;
  std::vector<HostPort> hostPorts;
  // What InterPodAffinity and PodTopologySpread count of it (their AddPod).
  std::string namespace_;
  Labels labels;
  std::shared_ptr<const PodAffinityInfo> affinity;  // compiled (anti-)affinity terms; null: none
  uint32_t generation = 0;  // resync mark
  bool sameAs(const NominatedPod& o) const {
    const bool sameAffinity = affinity == o.affinity || (affinity && o.affinity && affinity->terms == o.affinity->terms);
    return uid == o.uid && podName == o.podName && nodeName == o.nodeName && priority == o.priority &&
           requests == o.requests && nonZeroRequests == o.nonZeroRequests && hostPorts == o.hostPorts &&
           namespace_ == o.namespace_ && labels == o.labels && sameAffinity;
  }
};
// Whether a pod is one that counts as nominated (see NominatedPod).
bool isNominated(const Pod& pod);

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

// A reader-writer lock that prefers writers: once a writer waits, new readers
// queue behind it. Decisions read for a few hundred microseconds each while
// watch batches and the reservation sweeper write briefly; with the default
// (reader preference) overlapping decisions could hold a writer off indefinitely.
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

// Accounting stripes. A reservation changes one node's accounting (requested,
// nonZeroRequested, podCount, usedPorts) while decisions read the whole view:
// instead of excluding every decision (a view-wide exclusive lock waits for
// all decisions in flight, and new ones queue behind it), it excludes only
// the decisions currently reading that node's stripe. The node at position i
// of ClusterView::nodes() belongs to stripe (i / kNodesPerStripe) % kCount;
// a stripe is as many nodes as the engine's tile, so a decision over every
// node takes each tile's one stripe for the few microseconds it reads it.
class AccountingStripes {
 public:
  static constexpr size_t kCount = 64;
  static constexpr size_t kNodesPerStripe = 64;
  static size_t stripeOfIndex(size_t index) { return (index / kNodesPerStripe) % kCount; }

  // Shared, in increasing stripe order; what this thread holds already (one
  // stripe exclusively, or all of them through lockAllShared) is skipped, as
  // std::shared_mutex may not be locked again by a thread that holds it.
  void lockShared(uint64_t mask) const;
  void unlockShared(uint64_t mask) const;
  void lockAllShared() const;
  void unlockAllShared() const;
  // One stripe at a time per thread; while held, this thread's shared locks skip it.
  void lockExclusive(size_t stripe) const;
  void unlockExclusive(size_t stripe) const;

 private:
  // Reader-preferring (glibc's default for std::shared_mutex): readers hold a
  // stripe for one tile, a few microseconds, so a reservation finds it free
  // between them; but a waiting writer that held new readers back would make
  // every decision queue behind any reader preempted in mid-tile.
  struct alignas(64) Stripe {
    std::shared_mutex lock;
  };
  mutable Stripe stripes_[kCount];
};

// Holds, for its lifetime, the stripes of the view's nodes among `nodes`
// shared: the engine takes one around each tile it filters or scores. Does
// nothing for copies of nodes and for a view without stripes.
class AccountingReadGuard {
 public:
  AccountingReadGuard(const ClusterView& view, std::span<const NodeInfo* const> nodes);
  ~AccountingReadGuard();
  AccountingReadGuard(const AccountingReadGuard&) = delete;
  AccountingReadGuard& operator=(const AccountingReadGuard&) = delete;

 private:
  const AccountingStripes* stripes_;
  uint64_t mask_;
};

// The read side plugins see. Nodes are contiguous for fast iteration; their
// order is stable between mutations but not meaningful.
class ClusterView {
 public:
  std::span<const NodeInfo> nodes() const { return nodes_; }
  const NodeInfo* findNode(std::string_view name) const;
  // out[i] = findNode(names[i]) for every name (nullptr when unknown), with the
  // lookups of a block of names overlapped: for requests that name every node.
  void findNodes(std::span<const std::string_view> names, std::vector<const NodeInfo*>& out) const;
  // The place of a node's name among the view's node names sorted byte-wise
  // (0 .. nodes().size() - 1): nodes ordered by it are ordered by name. Only
  // for the view's own nodes (holds(node)).
  uint32_t nameRank(const NodeInfo& node) const {
    return nodeIndex_.rank(static_cast<uint32_t>(&node - nodes_.data()));
  }
  // How many nodes hold an image (normalised name, as in NodeImages); 0 when none.
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
  // The value ids of label keyId by NodeInfo::id (kNone where absent; ids
  // past its end have no value either); empty for a key no node has.
  std::span<const uint32_t> nodeLabelColumn(uint32_t keyId) const {
    if (keyId >= labelColumns_.size()) return {};
    return labelColumns_[keyId];
  }
  // One more than the largest node label value id (nodeLabelValueId()).
  uint32_t nodeLabelValueBound() const { return static_cast<uint32_t>(labelValues_.bound()); }
  // One more than the largest pod slot (pod(slot) is null for free slots).
  uint32_t podSlotBound() const { return static_cast<uint32_t>(podTable_.size()); }
  // One more than the largest NodeInfo::taintSet in use.
  uint32_t taintSetBound() const { return static_cast<uint32_t>(taintSets_.bound()); }
  // One more than the largest NodeInfo::id in use.
  uint32_t nodeIdBound() const { return nodeIdBound_; }
  // The accounting stripes of this view's nodes among `nodes` as a bit mask
  // (0 for copies, and for a view without stripes, used by one thread).
  uint64_t stripeMask(std::span<const NodeInfo* const> nodes) const;
  const AccountingStripes* stripes() const { return stripes_; }
  // What the engine's decision cache checks before it reuses a node's results
  // (scoring/decision_cache.h). staticGeneration() changes whenever the node
  // set or any node's labels, taints, images or cordon flag change, and no two
  // views share one; nodeVersions()[i] changes whenever anything of the node
  // at position i changes, its accounting included (so read it under the
  // node's accounting stripe, as the accounting itself). Versions come from
  // one counter per view: lastNodeVersion() is the last one given, so every
  // node changed after it was read has a larger version (a node changing
  // meanwhile may have one too, but never a smaller one once its stripe is
  // taken).
  uint64_t staticGeneration() const { return staticGeneration_.value; }
  std::span<const uint64_t> nodeVersions() const { return nodeVersions_; }
  uint64_t lastNodeVersion() const { return nodeVersionCounter_.value.load(std::memory_order_acquire); }
  size_t podCount() const { return podIndex_.size(); }  // pods kept (bound, non-terminal)
  // Pods kept that carry required pod anti-affinity terms.
  size_t podsWithRequiredAntiAffinity() const { return podsWithRequiredAntiAffinity_; }

  // ---- For the topology plugins (InterPodAffinity, PodTopologySpread) ----
  // Whether every node's NodeInfo::id is its position in nodes(): true from
  // the start, and again whenever the nodes that left or came back put every
  // id at its position (a node other than the last leaving moves the last
  // one to its place, which makes it false). Then a view node's id is read
  // from its address alone (viewNodeId), without touching the node.
  bool idsArePositions() const { return idsOffPosition_ == 0; }
  // The node with NodeInfo::id `id`, or null.
  const NodeInfo* nodeById(uint32_t id) const {
    return id < nodePositionById_.size() && nodePositionById_[id] != StringTable::kNone
               ? &nodes_[nodePositionById_[id]]
               : nullptr;
  }
  uint32_t stringId(std::string_view text) const { return strings_.find(text); }
  // Slots (for pod()) of the kept pods carrying label key=value, attached or
  // not; ids from stringId(). Empty when none.
  std::span<const uint32_t> podsWithLabel(uint32_t keyId, uint32_t valueId) const;
  // Slots of the kept pods of a namespace (id from stringId()).
  std::span<const uint32_t> podsInNamespace(uint32_t namespaceId) const;
  // The value id of a pod's label (kNone when absent).
  static uint32_t podLabelId(const PodRecord& pod, uint32_t keyId) {
    for (const PodLabel& l : pod.labels)
      if (l.key == keyId) return l.value;
    return StringTable::kNone;
  }
  // Term classes that may apply to a pod of namespace `ns` with labels
  // `podLabels`: those listing the namespace whose selector may select those
  // labels (every one that does, and few others: the caller matches the whole
  // term), and those with a namespaceSelector; each once. O(pod labels + the
  // classes visited), not O(classes of the namespace).
  template <class F>
  void forEachTermClassFor(std::string_view ns, const Labels& podLabels, F&& f) const {
    std::string key;
    auto visit = [&] {
      if (auto it = termClassesByNamespace_.find(key); it != termClassesByNamespace_.end())
        for (uint32_t id : it->second) f(termClasses_[id]);
    };
    termClassIndexKey(ns, nullptr, key);
    visit();
    for (const auto& label : podLabels) {
      termClassIndexKey(ns, &label, key);
      visit();
    }
    for (uint32_t id : termClassesWithNamespaceSelector_) {
      const TermClass& c = termClasses_[id];
      if (!std::binary_search(c.term.namespaces.begin(), c.term.namespaces.end(), ns, std::less<>())) f(c);
    }
  }
  // Namespaces (list+watch): labels by name; null when the view has no such namespace.
  const Labels* namespaceLabels(std::string_view ns) const;
  template <class F>
  void forEachNamespace(F&& f) const {
    for (const auto& [name, entry] : namespaces_) f(std::string_view(name), entry.labels);
  }
  // Services of a namespace, as (name, selector: null for a nil selector).
  template <class F>
  void forEachService(std::string_view ns, F&& f) const {
    if (auto it = services_.find(ns); it != services_.end())
      for (const auto& [name, entry] : it->second.byName)
        f(std::string_view(name), entry.selectorMap ? &*entry.selectorMap : nullptr);
  }
  // The Services of a namespace that may select a pod with labels
  // `podLabels`, as (name, selector): every one that does, and few that do
  // not (the caller matches the whole selector). Each once; never one with a
  // nil selector. O(pod labels), not O(Services of the namespace).
  template <class F>
  void forEachServiceSelecting(std::string_view ns, const Labels& podLabels, F&& f) const {
    auto it = services_.find(ns);
    if (it == services_.end()) return;
    const NamespaceServices& services = it->second;
    auto visit = [&](std::string_view indexKey) {
      auto bucket = services.byIndexKey.find(indexKey);
      if (bucket == services.byIndexKey.end()) return;
      for (const std::string& name : bucket->second) {
        auto entry = services.byName.find(name);
        f(std::string_view(name), &*entry->second.selectorMap);
      }
    };
    visit(std::string_view());  // empty selectors
    std::string key;
    for (const auto& [k, v] : podLabels) {
      serviceIndexKey(k, v, key);
      visit(key);
    }
  }
  // A ReplicationController, ReplicaSet or StatefulSet the view knows, or null.
  struct Workload {
    std::optional<Labels> selectorMap;  // ReplicationController: spec.selector
    CompiledSelector selector;          // ReplicaSet, StatefulSet: Nothing when nil or invalid
    uint32_t generation = 0;
  };
  const Workload* workload(WorkloadKind kind, std::string_view ns, std::string_view name) const;
  // The reservations as they are now (see ReservedPods).
  std::shared_ptr<const ReservedPods> reservedPods() const;
  // Nominated pods (see NominatedPod), by node name; stable while a read
  // (shared lock) lasts. Empty in almost every view.
  const StringMap<std::vector<NominatedPod>>& nominatedPods() const { return nominatedByNode_; }
  const PodRecord* pod(uint32_t slot) const;
  // Hints for a walk over pods by slot (forEachCandidatePod), whose visits
  // wait on memory: the slots are scattered over a table of 150,000 records.
  // prefetchPod fetches what a visit reads of the record (its fields past
  // the key and name); prefetchPodLabels its labels, reading the record (so
  // call it a few visits after prefetchPod on the same slot). A slot out of
  // range is ignored.
  void prefetchPod(uint32_t slot) const {
    if (slot >= podTable_.size()) return;
    __builtin_prefetch(&podTable_[slot].namespaceId);
    __builtin_prefetch(&podTable_[slot].affinity);
  }
  void prefetchPodLabels(uint32_t slot) const {
    if (slot < podTable_.size()) __builtin_prefetch(podTable_[slot].labels.data());
  }
  const PodRecord* findPod(std::string_view key) const;
  // Interned strings of PodRecord.
  std::string_view text(uint32_t id) const { return strings_.text(id); }
  // The value of a pod's label, if set.
  std::optional<std::string_view> podLabel(const PodRecord& pod, std::string_view key) const;

 protected:
  std::vector<NodeInfo> nodes_;
  NodeNameIndex nodeIndex_;  // name -> position in nodes_
  std::vector<PodRecord> podTable_;  // slots; a free slot has nodeNameId == kNone and an empty name
  std::vector<uint32_t> freePodSlots_;
  // Slots by PodRecord::key.
  FlatStringIndex podIndex_;
  auto podKeyOf() const {
    return [this](uint32_t slot) { return std::string_view(podTable_[slot].key); };
  }
  uint32_t podSlotOf(std::string_view key) const {
    return podIndex_.find(key, FlatStringIndex::hashOf(key), podKeyOf());
  }
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
  const AccountingStripes* stripes_ = nullptr;  // set by ClusterState
  // Unique across views and copies: a copy starts a generation of its own.
  struct Generation {
    Generation() : value(next()) {}
    Generation(const Generation&) : value(next()) {}
    Generation& operator=(const Generation&) {
      value = next();
      return *this;
    }
    void bump() { value = next(); }
    static uint64_t next();
    uint64_t value;
  };
  Generation staticGeneration_;
  std::vector<uint64_t> nodeVersions_;  // parallel to nodes_
  // Gives node versions; atomic: reservations on different stripes touch nodes at once.
  struct VersionCounter {
    VersionCounter() = default;
    VersionCounter(const VersionCounter& other) : value(other.value.load()) {}
    VersionCounter& operator=(const VersionCounter& other) {
      value.store(other.value.load());
      return *this;
    }
    uint64_t next() { return value.fetch_add(1, std::memory_order_acq_rel) + 1; }
    std::atomic<uint64_t> value{0};
  };
  VersionCounter nodeVersionCounter_;
  size_t podsWithRequiredAntiAffinity_ = 0;
  std::vector<uint32_t> nodePositionById_;  // NodeInfo::id -> position in nodes_ (kNone: free id)
  uint32_t idsOffPosition_ = 0;  // nodes whose NodeInfo::id is not their position in nodes_

  // Topology indexes (see the queries above).
  std::unordered_map<uint64_t, std::vector<uint32_t>> labelPostings_;  // key id << 32 | value id -> slots
  std::unordered_map<uint32_t, std::vector<uint32_t>> namespacePods_;  // namespace id -> slots
  std::vector<TermClass> termClasses_;
  std::vector<uint32_t> freeTermClasses_;
  std::unordered_map<std::string, uint32_t> termClassByKey_;
  // Term classes by namespace listed and by one label their selector
  // requires: termClassIndexKey(ns, &{key, value}) for each value of the
  // selector's first In requirement, or termClassIndexKey(ns, nullptr) for a
  // selector without one.
  StringMap<std::vector<uint32_t>> termClassesByNamespace_;
  static void termClassIndexKey(std::string_view ns, const std::pair<std::string, std::string>* label, std::string& out) {
    out.assign(ns);
    if (label == nullptr) return;
    out.push_back('\0');
    out.append(label->first).push_back('\0');
    out.append(label->second);
  }
  static std::vector<std::string> termClassIndexKeys(const AffinityTerm& term);
  std::vector<uint32_t> termClassesWithNamespaceSelector_;

  struct NamespaceEntry {
    Labels labels;
    uint32_t generation = 0;
  };
  StringMap<NamespaceEntry> namespaces_;
  struct ServiceEntry {
    std::optional<Labels> selectorMap;
    uint32_t generation = 0;
  };
  // A namespace's Services by name, and indexed by one pair of their
  // selector (serviceIndexKey of its first key and value; "" for an empty
  // selector): a pod can only be selected by those indexed under one of its
  // labels, or under "". Nil selectors are not indexed.
  struct NamespaceServices {
    StringMap<ServiceEntry> byName;
    StringMap<std::vector<std::string>> byIndexKey;
    void index(const std::string& name, const ServiceEntry& entry);
    void unindex(const std::string& name, const ServiceEntry& entry);
  };
  static void serviceIndexKey(std::string_view key, std::string_view value, std::string& out) {
    out.assign(key).push_back('\0');
    out.append(value);
  }
  StringMap<NamespaceServices> services_;  // namespace -> its Services
  // ReplicationController, ReplicaSet, StatefulSet: "namespace/name" -> entry.
  StringMap<Workload> workloads_[3];

  StringMap<std::vector<NominatedPod>> nominatedByNode_;  // node name -> its nominated pods
  StringMap<std::string> nominatedNodeOf_;                 // pod key -> node name in nominatedByNode_

  mutable std::mutex reservedPodsMutex_;  // guards the pointer only
  std::shared_ptr<const ReservedPods> reservedPods_ = std::make_shared<ReservedPods>();

  friend class ClusterState;
};

struct Reservation {
  std::string id;       // admission request uid
  std::string nodeName;
  std::string podKey;   // namespace/name-or-generateName, for logs
  Resources requests;
  Resources nonZeroRequests;
  std::vector<HostPort> hostPorts;
  std::chrono::steady_clock::time_point expires;
  // What the topology plugins count of the reserved pod (ReservedPod).
  std::string namespace_;
  Labels labels;
  std::shared_ptr<const PodAffinityInfo> affinity;
  // The ReservedPod this reservation is published as, made once when it is
  // counted: a snapshot of the reservations shares it instead of copying.
  std::shared_ptr<const ReservedPod> counted;
};

// A reservation for `pod` on `nodeName`, expiring at `expires`.
Reservation reservationFor(const Pod& pod, std::string id, std::string nodeName,
                           std::chrono::steady_clock::time_point expires);

enum class ResyncKind : uint8_t { Nodes, Pods, Namespaces, Services, ReplicationControllers, ReplicaSets, StatefulSets };
ResyncKind resyncKindOf(WorkloadKind kind);

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
  // Whether upsertPod(pod) would leave the view exactly as it is: the same
  // record (node, labels, requests, ports, not terminal), or a pod that is
  // not counted and not kept, and no reservation to release. Most watch
  // events are such (a pod's status changed); they need no exclusive lock.
  bool podUpsertChangesNothing(const Pod& pod) const;

  // Namespaces and the objects that select pods (PodTopologySpread's default
  // constraints). They change no node: decisions read them fresh.
  void upsertNamespace(Namespace ns);
  void removeNamespace(std::string_view name);
  void upsertWorkload(WorkloadSelector workload);
  void removeWorkload(WorkloadKind kind, std::string_view ns, std::string_view name);

  // Relist after a watch expired (410 Gone): beginResync(kind), then upsert every
  // listed object, then finishResync(kind) removes every object of that kind that
  // was not upserted since beginResync. Returns how many were removed.
  void beginResync(ResyncKind kind);
  size_t finishResync(ResyncKind kind);

  // Reservations: counted on the node like a pod until released or expired.
  // reserve() may run concurrently with decisions and other reserve() calls
  // when the caller holds the reserved node's accounting stripe exclusively
  // (ClusterState::reserve); everything else here needs exclusive access.
  enum class ReserveResult : uint8_t { Reserved, UnknownNode, IdTaken };
  ReserveResult tryReserve(Reservation reservation);
  bool reserve(Reservation reservation) { return tryReserve(std::move(reservation)) == ReserveResult::Reserved; }
  bool release(std::string_view id);
  size_t expireReservations(std::chrono::steady_clock::time_point now);  // returns how many expired
  // Whether expireReservations(now) would release anything. Safe under shared
  // access, alongside reserve(): the sweeper asks first, so that a tick with
  // nothing to expire takes no exclusive lock (which would stall decisions).
  bool anyReservationExpired(std::chrono::steady_clock::time_point now) const;
  size_t reservationCount() const { return reservations_.size(); }
  const Reservation* findReservation(std::string_view id) const;

 private:
  // The node's fields or accounting changed (see nodeVersions()).
  void touch(const NodeInfo& node) {
    nodeVersions_[static_cast<size_t>(&node - nodes_.data())] = nodeVersionCounter_.next();
  }
  void attach(uint32_t slot, NodeInfo& node);
  void detach(uint32_t slot);
  void forgetPod(uint32_t slot);
  void indexImages(NodeInfo& info);
  void unindexImages(NodeInfo& info);
  void indexTaints(NodeInfo& info);
  void indexLabels(NodeInfo& info);
  void unindexLabels(NodeInfo& info);
  void unindexTaints(NodeInfo& info);
  void indexPod(uint32_t slot);
  void unindexPod(uint32_t slot);
  void countTerms(const PodRecord& record, uint32_t nodeId, int delta);
  uint32_t acquireTermClass(TermKind kind, const AffinityTerm& term);
  void releaseTermClass(uint32_t id);
  void publishReservedPods();  // under reservationsMutex_
  // Keeps the pod's nominated entry as the pod says (added, changed, dropped).
  void updateNominated(const Pod& pod, const std::string& key);
  void forgetNominated(std::string_view key);
  bool nominatedUnchanged(const Pod& pod, const std::string& key) const;
  uint32_t namespaceGeneration_ = 0;
  uint32_t workloadGenerations_[4] = {};

  mutable std::mutex reservationsMutex_;  // reservations_ among concurrent reserve() calls
  StringMap<Reservation> reservations_;
  uint32_t nodeGeneration_ = 0;
  uint32_t podGeneration_ = 0;
};

class ClusterState {
 public:
  ClusterState() { view_.stripes_ = &stripes_; }
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // A consistent read: nothing changes while f runs.
  template <class F>
  auto read(F&& f) const {
    std::shared_lock lock(mutex_);
    AllStripesShared all(stripes_);
    return f(static_cast<const ClusterView&>(view_));
  }
  // A read for decisions: nodes and pods stay put while f runs, but
  // reserve() may change a node's accounting (requested, nonZeroRequested,
  // podCount, usedPorts) meanwhile, so those are read only under an
  // AccountingReadGuard, as the engine does around each tile of nodes.
  // f may take the view as MutableClusterView for its read-only questions
  // (podUpsertChangesNothing, which the feed asks).
  template <class F>
  auto readForDecision(F&& f) const {
    std::shared_lock lock(mutex_);
    return f(static_cast<const MutableClusterView&>(view_));
  }
  template <class F>
  auto update(F&& f) {
    std::unique_lock lock(mutex_);
    return f(view_);
  }

  // Confirm and reserve as one step, without excluding decisions on other
  // nodes: with the node's accounting stripe held exclusively,
  // confirm(view, node) checks the chosen node as it is now (the engine's
  // filters on it alone) and, if it holds, the reservation is counted.
  // Reservations are made one at a time (the commit lock), so a confirm sees
  // every reservation made before it. expectedVersion, when not 0, is the
  // ReservedPods::version the decision read: if a reservation was made or
  // released since, the decision is Stale (for decisions whose outcome
  // depends on other pods, so that they are made as if one by one).
  // NeedsExclusive: a reservation with this id exists already (a review sent
  // again); releasing it touches another node, so do it inside update().
  enum class ReserveOutcome : uint8_t { Reserved, NotConfirmed, UnknownNode, NeedsExclusive, Stale };
  template <class Confirm>
  ReserveOutcome reserve(Reservation reservation, uint64_t expectedVersion, Confirm&& confirm) {
    std::lock_guard commit(commitMutex_);
    std::shared_lock lock(mutex_);
    if (expectedVersion != 0 && view_.reservedPods()->version != expectedVersion) return ReserveOutcome::Stale;
    const NodeInfo* node = view_.findNode(reservation.nodeName);
    if (node == nullptr) return ReserveOutcome::UnknownNode;
    StripeExclusive stripe(stripes_, AccountingStripes::stripeOfIndex(static_cast<size_t>(node - view_.nodes().data())));
    if (!confirm(static_cast<const ClusterView&>(view_), *node)) return ReserveOutcome::NotConfirmed;
    return reserveHeld(std::move(reservation));
  }
  // The pessimistic round: decide(view) runs with every other reservation
  // held off and returns the reservation to make (nullopt: none), which is
  // then made as decided: nothing can have changed in between.
  template <class Decide>
  ReserveOutcome decideAndReserve(Decide&& decide) {
    std::lock_guard commit(commitMutex_);
    std::shared_lock lock(mutex_);
    std::optional<Reservation> reservation = decide(static_cast<const ClusterView&>(view_));
    if (!reservation) return ReserveOutcome::NotConfirmed;
    const NodeInfo* node = view_.findNode(reservation->nodeName);
    if (node == nullptr) return ReserveOutcome::UnknownNode;
    StripeExclusive stripe(stripes_, AccountingStripes::stripeOfIndex(static_cast<size_t>(node - view_.nodes().data())));
    return reserveHeld(std::move(*reservation));
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
  struct AllStripesShared {
    explicit AllStripesShared(const AccountingStripes& s) : stripes(s) { stripes.lockAllShared(); }
    ~AllStripesShared() { stripes.unlockAllShared(); }
    const AccountingStripes& stripes;
  };
  struct StripeExclusive {
    StripeExclusive(const AccountingStripes& s, size_t i) : stripes(s), index(i) { stripes.lockExclusive(index); }
    ~StripeExclusive() { stripes.unlockExclusive(index); }
    const AccountingStripes& stripes;
    size_t index;
  };

  ReserveOutcome reserveHeld(Reservation reservation) {
    switch (view_.tryReserve(std::move(reservation))) {
      case MutableClusterView::ReserveResult::Reserved: return ReserveOutcome::Reserved;
      case MutableClusterView::ReserveResult::UnknownNode: return ReserveOutcome::UnknownNode;
      case MutableClusterView::ReserveResult::IdTaken: break;
    }
    return ReserveOutcome::NeedsExclusive;
  }

  // Lock order: commitMutex_, then mutex_, then stripes (shared in increasing
  // order, or one exclusive), then MutableClusterView's reservations mutex.
  std::mutex commitMutex_;  // one reservation at a time (reserve, decideAndReserve)
  mutable WriterPreferringLock mutex_;  // not recursive: a callback must not call back in
  AccountingStripes stripes_;
  MutableClusterView view_;
};

}  // namespace placer
