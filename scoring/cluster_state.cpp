#include "scoring/cluster_state.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace placer {

// ---- FlatStringIndex ----

uint32_t FlatStringIndex::hashOf(std::string_view text) {
  return static_cast<uint32_t>(std::hash<std::string_view>{}(text));
}

void FlatStringIndex::grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(std::max<size_t>(64, old.size() * 2), kEmptySlot);
  const size_t mask = slots_.size() - 1;
  for (const uint64_t slot : old) {
    if (slot == kEmptySlot) continue;
    size_t i = static_cast<uint32_t>(slot >> 32) & mask;
    while (slots_[i] != kEmptySlot) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

void FlatStringIndex::eraseAt(size_t hole) {
  // Backward-shift deletion: every later slot of the probe run that may sit
  // in the freed slot moves up, so that no probe stops early at a hole.
  const size_t mask = slots_.size() - 1;
  for (size_t i = (hole + 1) & mask; slots_[i] != kEmptySlot; i = (i + 1) & mask) {
    const size_t home = static_cast<uint32_t>(slots_[i] >> 32) & mask;
    // The slot stays when its home lies cyclically in (hole, i].
    if (((i - home) & mask) < ((i - hole) & mask)) continue;
    slots_[hole] = slots_[i];
    hole = i;
  }
  slots_[hole] = kEmptySlot;
  --size_;
}

// ---- StringTable ----

uint32_t StringTable::acquire(std::string_view text) {
  index_.reserveOne();
  const uint32_t hash = FlatStringIndex::hashOf(text);
  const size_t at = index_.probe(text, hash, textOf());
  if (const uint32_t held = index_.idAt(at); held != kNone) {
    ++entries_[held].refs;
    return held;
  }
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    entries_[id].text.assign(text);
  } else {
    id = static_cast<uint32_t>(entries_.size());
    entries_.push_back(Entry{std::string(text), 0, 0});
  }
  entries_[id].refs = 1;
  entries_[id].hash = hash;
  index_.fill(at, hash, id);
  return id;
}

void StringTable::release(uint32_t id) {
  if (id == kNone) return;
  Entry& e = entries_[id];
  if (--e.refs > 0) return;
  index_.eraseAt(index_.probe(e.text, e.hash, textOf()));
  e.text.clear();
  e.text.shrink_to_fit();
  free_.push_back(id);
}

uint32_t StringTable::find(std::string_view text) const {
  return index_.find(text, FlatStringIndex::hashOf(text), textOf());
}

// ---- NodeInfo ----

std::string podKey(const Pod& pod) {
  if (!pod.uid.empty()) return pod.uid;
  std::string key;
  key.reserve(pod.namespace_.size() + 1 + pod.name.size());
  key.append(pod.namespace_).append("/").append(pod.name);
  return key;
}

namespace {

struct HostPortHash {
  size_t operator()(const HostPort* p) const {
    return std::hash<std::string_view>{}(p->ip) * 31 + std::hash<std::string_view>{}(p->protocol) * 7 +
           static_cast<size_t>(p->port);
  }
};
struct HostPortEqual {
  bool operator()(const HostPort* a, const HostPort* b) const { return *a == *b; }
};

// Removes one entry of `used` per entry of `ports` (a multiset: equal entries
// of other pods stay). A few ports are found one by one; more are counted in a
// hash table first, so the work is linear in both lists, never their product:
// it runs under the accounting's exclusive lock.
void removePorts(std::vector<HostPort>& used, std::span<const HostPort> ports) {
  if (ports.size() <= 8) {
    for (const HostPort& port : ports) {
      auto it = std::find(used.begin(), used.end(), port);
      if (it != used.end()) used.erase(it);
    }
    return;
  }
  std::unordered_map<const HostPort*, size_t, HostPortHash, HostPortEqual> leaving;
  leaving.reserve(ports.size());
  for (const HostPort& port : ports) ++leaving[&port];
  auto kept = std::remove_if(used.begin(), used.end(), [&](const HostPort& port) {
    auto it = leaving.find(&port);
    if (it == leaving.end() || it->second == 0) return false;
    --it->second;
    return true;
  });
  used.erase(kept, used.end());
}

}  // namespace

void NodeInfo::addUsage(const Resources& requests, const Resources& nonZero, std::span<const HostPort> ports) {
  requested.add(requests);
  nonZeroRequested.milliCpu = wrapAdd(nonZeroRequested.milliCpu, nonZero.milliCpu);
  nonZeroRequested.memory = wrapAdd(nonZeroRequested.memory, nonZero.memory);
  ++podCount;
  usedPorts.insert(usedPorts.end(), ports.begin(), ports.end());
}

void NodeInfo::removeUsage(const Resources& requests, const Resources& nonZero, std::span<const HostPort> ports) {
  requested.subtract(requests);
  nonZeroRequested.milliCpu = wrapSub(nonZeroRequested.milliCpu, nonZero.milliCpu);
  nonZeroRequested.memory = wrapSub(nonZeroRequested.memory, nonZero.memory);
  --podCount;
  removePorts(usedPorts, ports);
}

int64_t NodeInfo::imageSize(uint32_t imageId) const {
  auto it = std::lower_bound(imageSizes.begin(), imageSizes.end(), imageId,
                             [](const auto& entry, uint32_t id) { return entry.first < id; });
  return it != imageSizes.end() && it->first == imageId ? it->second : -1;
}

// ---- Accounting stripes ----

namespace {
// What this thread holds: one stripe exclusively (ClusterState::reserve, so
// that the confirming decision it runs meanwhile does not wait on itself),
// or every stripe shared (ClusterState::read, so that a decision run inside
// it does not lock again: a std::shared_mutex may not be locked twice by
// one thread).
thread_local const AccountingStripes* exclusiveOwner = nullptr;
thread_local size_t exclusiveStripe = 0;
thread_local const AccountingStripes* allSharedOwner = nullptr;

uint64_t toLock(const AccountingStripes* stripes, uint64_t mask) {
  if (allSharedOwner == stripes) return 0;
  return exclusiveOwner == stripes ? mask & ~(uint64_t{1} << exclusiveStripe) : mask;
}
}  // namespace

void AccountingStripes::lockShared(uint64_t mask) const {
  for (mask = toLock(this, mask); mask != 0; mask &= mask - 1) stripes_[std::countr_zero(mask)].lock.lock_shared();
}

void AccountingStripes::unlockShared(uint64_t mask) const {
  for (mask = toLock(this, mask); mask != 0; mask &= mask - 1) stripes_[std::countr_zero(mask)].lock.unlock_shared();
}

void AccountingStripes::lockAllShared() const {
  lockShared(~uint64_t{0});
  allSharedOwner = this;
}

void AccountingStripes::unlockAllShared() const {
  allSharedOwner = nullptr;
  unlockShared(~uint64_t{0});
}

void AccountingStripes::lockExclusive(size_t stripe) const {
  stripes_[stripe].lock.lock();
  exclusiveOwner = this;
  exclusiveStripe = stripe;
}

void AccountingStripes::unlockExclusive(size_t stripe) const {
  exclusiveOwner = nullptr;
  stripes_[stripe].lock.unlock();
}

AccountingReadGuard::AccountingReadGuard(const ClusterView& view, std::span<const NodeInfo* const> nodes)
    : stripes_(view.stripes()), mask_(stripes_ ? view.stripeMask(nodes) : 0) {
  if (mask_ != 0) stripes_->lockShared(mask_);
}

AccountingReadGuard::~AccountingReadGuard() {
  if (mask_ != 0) stripes_->unlockShared(mask_);
}

// ---- ClusterView ----

uint64_t ClusterView::stripeMask(std::span<const NodeInfo* const> nodes) const {
  if (stripes_ == nullptr) return 0;
  uint64_t mask = 0;
  for (const NodeInfo* node : nodes)
    if (holds(*node)) mask |= uint64_t{1} << AccountingStripes::stripeOfIndex(static_cast<size_t>(node - nodes_.data()));
  return mask;
}

const NodeInfo* ClusterView::findNode(std::string_view name) const {
  uint32_t at = nodeIndex_.position(name);
  return at == NodeNameIndex::kNotFound ? nullptr : &nodes_[at];
}

void ClusterView::findNodes(std::span<const std::string_view> names, std::vector<const NodeInfo*>& out) const {
  out.resize(names.size());
  uint32_t positions[256];
  for (size_t base = 0; base < names.size(); base += std::size(positions)) {
    const size_t count = std::min(std::size(positions), names.size() - base);
    nodeIndex_.findAll(names.subspan(base, count), std::span<uint32_t>(positions, count));
    for (size_t i = 0; i < count; ++i)
      out[base + i] = positions[i] == NodeNameIndex::kNotFound ? nullptr : &nodes_[positions[i]];
  }
}

int32_t ClusterView::imageNodeCount(std::string_view normalizedImage) const {
  return static_cast<int32_t>(images_.refs(images_.find(normalizedImage)));
}

const PodRecord* ClusterView::pod(uint32_t slot) const {
  if (slot >= podTable_.size() || podTable_[slot].nodeNameId == StringTable::kNone) return nullptr;
  return &podTable_[slot];
}

const PodRecord* ClusterView::findPod(std::string_view key) const {
  const uint32_t slot = podSlotOf(key);
  return slot == FlatStringIndex::kNone ? nullptr : &podTable_[slot];
}

std::optional<std::string_view> ClusterView::podLabel(const PodRecord& pod, std::string_view key) const {
  uint32_t id = strings_.find(key);
  if (id == StringTable::kNone) return std::nullopt;
  for (const PodLabel& l : pod.labels)
    if (l.key == id) return strings_.text(l.value);
  return std::nullopt;
}

namespace {
uint64_t postingKey(uint32_t key, uint32_t value) { return uint64_t{key} << 32 | value; }
}  // namespace

std::span<const uint32_t> ClusterView::podsWithLabel(uint32_t keyId, uint32_t valueId) const {
  if (keyId == StringTable::kNone || valueId == StringTable::kNone) return {};
  auto it = labelPostings_.find(postingKey(keyId, valueId));
  return it == labelPostings_.end() ? std::span<const uint32_t>() : std::span<const uint32_t>(it->second);
}

std::span<const uint32_t> ClusterView::podsInNamespace(uint32_t namespaceId) const {
  auto it = namespacePods_.find(namespaceId);
  return it == namespacePods_.end() ? std::span<const uint32_t>() : std::span<const uint32_t>(it->second);
}

const Labels* ClusterView::namespaceLabels(std::string_view ns) const {
  auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? nullptr : &it->second.labels;
}

const ClusterView::Workload* ClusterView::workload(WorkloadKind kind, std::string_view ns,
                                                   std::string_view name) const {
  if (kind == WorkloadKind::Service) return nullptr;
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  const auto& table = workloads_[static_cast<size_t>(kind) - 1];
  auto it = table.find(key);
  return it == table.end() ? nullptr : &it->second;
}

std::shared_ptr<const ReservedPods> ClusterView::reservedPods() const {
  std::lock_guard lock(reservedPodsMutex_);
  return reservedPods_;
}

Reservation reservationFor(const Pod& pod, std::string id, std::string nodeName,
                           std::chrono::steady_clock::time_point expires) {
  Reservation r;
  r.id = std::move(id);
  r.nodeName = std::move(nodeName);
  r.podKey = pod.key();
  r.requests = pod.requests;
  r.nonZeroRequests = pod.nonZeroRequests;
  r.hostPorts = pod.hostPorts;
  r.expires = expires;
  r.namespace_ = pod.namespace_;
  r.labels = pod.labels;
  if (hasMatchLabelKeys(pod)) {
    Pod stored = pod;  // as the API server will store it
    applyMatchLabelKeys(stored);
    r.affinity = compilePodAffinity(stored);
  } else {
    r.affinity = compilePodAffinity(pod);
  }
  return r;
}

ResyncKind resyncKindOf(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Service: return ResyncKind::Services;
    case WorkloadKind::ReplicationController: return ResyncKind::ReplicationControllers;
    case WorkloadKind::ReplicaSet: return ResyncKind::ReplicaSets;
    case WorkloadKind::StatefulSet: return ResyncKind::StatefulSets;
  }
  return ResyncKind::Services;
}

// ---- MutableClusterView: nodes ----

void MutableClusterView::indexImages(NodeInfo& info) {
  // One entry per name; a name listed twice keeps the last size, as upstream's map does.
  std::vector<std::pair<std::string_view, int64_t>> names;
  names.reserve(info.node.images.nameCount());
  info.node.images.forEachName([&](std::string_view name, int64_t size) { names.emplace_back(name, size); });
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  info.imageSizes.clear();
  for (size_t i = 0; i < names.size(); ++i) {
    if (i + 1 < names.size() && names[i + 1].first == names[i].first) continue;
    uint32_t id = images_.acquire(names[i].first);
    info.imageSizes.emplace_back(id, names[i].second);
    if (id >= imageHolders_.size()) imageHolders_.resize(id + 1);
    imageHolders_[id].emplace_back(info.id, names[i].second);
  }
  std::sort(info.imageSizes.begin(), info.imageSizes.end());
  info.imageSizes.shrink_to_fit();
}

void MutableClusterView::unindexImages(NodeInfo& info) {
  for (const auto& [id, size] : info.imageSizes) {
    auto& holders = imageHolders_[id];
    auto it = std::find_if(holders.begin(), holders.end(), [&](const auto& h) { return h.first == info.id; });
    if (it != holders.end()) {
      *it = holders.back();
      holders.pop_back();
    }
    if (holders.empty()) std::vector<std::pair<uint32_t, int64_t>>().swap(holders);
    images_.release(id);
  }
  info.imageSizes.clear();
}

void MutableClusterView::indexTaints(NodeInfo& info) {
  info.taintSetData = info.node.taints.data();
  if (info.node.taints.empty()) {
    info.taintSet = StringTable::kNone;
    return;
  }
  std::string key;
  for (const Taint& t : info.node.taints) {
    key.append(t.key).push_back('\0');
    key.append(t.value).push_back('\0');
    key.push_back(static_cast<char>('0' + static_cast<int>(t.effect)));
  }
  info.taintSet = taintSets_.acquire(key);
}

void MutableClusterView::unindexTaints(NodeInfo& info) {
  if (info.taintSet != StringTable::kNone) taintSets_.release(info.taintSet);
  info.taintSet = StringTable::kNone;
  info.taintSetData = nullptr;
}

void MutableClusterView::indexLabels(NodeInfo& info) {
  for (const auto& [key, value] : info.node.labels) {
    uint32_t keyId = labelKeys_.acquire(key);
    if (keyId >= labelColumns_.size()) labelColumns_.resize(keyId + 1);
    std::vector<uint32_t>& column = labelColumns_[keyId];
    if (info.id >= column.size()) column.resize(std::max<size_t>(info.id + 1, nodeIdBound_), StringTable::kNone);
    column[info.id] = labelValues_.acquire(value);
  }
  info.labelsData = info.node.labels.data();
  info.labelsIndexed = true;
}

void MutableClusterView::unindexLabels(NodeInfo& info) {
  if (!info.labelsIndexed) return;
  for (const auto& [key, value] : info.node.labels) {
    uint32_t keyId = labelKeys_.find(key);
    if (keyId == StringTable::kNone) continue;
    uint32_t& slot = labelColumns_[keyId][info.id];
    labelValues_.release(slot);
    slot = StringTable::kNone;
    labelKeys_.release(keyId);
    if (labelKeys_.refs(keyId) == 0) labelColumns_[keyId].clear();
  }
  info.labelsIndexed = false;
  info.labelsData = nullptr;
}

uint64_t ClusterView::Generation::next() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

void MutableClusterView::upsertNode(Node node) {
  if (auto it = nodeIndex_.find(node.name); it != nodeIndex_.end()) {
    NodeInfo& info = nodes_[it->second];
    touch(info);
    info.generation = nodeGeneration_;
    // Most updates of a node leave what the indexes and the decision cache
    // rely on as it was (the kubelet's status reports): keep those fields,
    // and the indexes, as they are.
    if (info.node.labels == node.labels && info.node.taints == node.taints &&
        info.node.unschedulable == node.unschedulable && info.node.images == node.images) {
      info.node.allocatable = std::move(node.allocatable);
      info.node.uid = std::move(node.uid);
      info.node.resourceVersion = std::move(node.resourceVersion);
      return;
    }
    staticGeneration_.bump();
    unindexTaints(info);
    unindexLabels(info);
    if (info.node.images == node.images) {
      info.node = std::move(node);
    } else {
      unindexImages(info);
      info.node = std::move(node);
      indexImages(info);
    }
    indexTaints(info);
    indexLabels(info);
    return;
  }
  staticGeneration_.bump();
  nodes_.emplace_back();
  nodeVersions_.push_back(nodeVersionCounter_.next());
  NodeInfo& info = nodes_.back();
  info.node = std::move(node);
  info.generation = nodeGeneration_;
  if (!freeNodeIds_.empty()) {
    info.id = freeNodeIds_.back();
    freeNodeIds_.pop_back();
  } else {
    info.id = nodeIdBound_++;
  }
  nodeIndex_.append(info.node.name);
  if (info.id >= nodePositionById_.size()) nodePositionById_.resize(info.id + 1, StringTable::kNone);
  nodePositionById_[info.id] = static_cast<uint32_t>(nodes_.size() - 1);
  if (info.id != nodes_.size() - 1) ++idsOffPosition_;
  indexImages(info);
  indexTaints(info);
  indexLabels(info);
  if (auto orphans = orphanSlots_.find(info.node.name); orphans != orphanSlots_.end()) {
    std::vector<uint32_t> slots = std::move(orphans->second);
    orphanSlots_.erase(orphans);
    for (uint32_t slot : slots) attach(slot, info);
  }
}

void MutableClusterView::removeNode(std::string_view nameView) {
  std::string name(nameView);  // the argument may point into the node being removed
  auto it = nodeIndex_.find(name);
  if (it == nodeIndex_.end()) return;
  uint32_t index = it->second;
  NodeInfo& info = nodes_[index];
  unindexImages(info);
  unindexTaints(info);
  unindexLabels(info);
  freeNodeIds_.push_back(info.id);
  nodePositionById_[info.id] = StringTable::kNone;
  std::vector<uint32_t>& orphans = orphanSlots_[name];
  for (uint32_t slot : info.podSlots) {
    PodRecord& record = podTable_[slot];
    countTerms(record, info.id, -1);
    record.attached = false;
    record.nodeId = StringTable::kNone;
    orphans.push_back(slot);
  }
  if (orphans.empty()) orphanSlots_.erase(name);
  {
    std::lock_guard lock(reservationsMutex_);
    if (std::erase_if(reservations_, [&](const auto& entry) { return entry.second.nodeName == name; }) > 0)
      publishReservedPods();
  }

  nodeIndex_.swapRemove(index);  // moves the last name into `index`, as below
  if (info.id != index) --idsOffPosition_;
  if (index + 1 != nodes_.size()) {
    const uint32_t last = static_cast<uint32_t>(nodes_.size() - 1);
    if (nodes_.back().id != last) --idsOffPosition_;
    nodes_[index] = std::move(nodes_.back());
    nodeVersions_[index] = nodeVersions_.back();
    nodePositionById_[nodes_[index].id] = index;
    if (nodes_[index].id != index) ++idsOffPosition_;
  }
  nodes_.pop_back();
  nodeVersions_.pop_back();
  staticGeneration_.bump();
}

// ---- MutableClusterView: pods ----

void MutableClusterView::attach(uint32_t slot, NodeInfo& node) {
  PodRecord& record = podTable_[slot];
  Resources nonZero;
  nonZero.milliCpu = record.nonZeroMilliCpu;
  nonZero.memory = record.nonZeroMemory;
  node.addUsage(record.requests, nonZero, record.hostPorts);
  touch(node);
  node.podSlots.push_back(slot);
  record.attached = true;
  record.nodeId = node.id;
  countTerms(record, node.id, +1);
}

void MutableClusterView::detach(uint32_t slot) {
  PodRecord& record = podTable_[slot];
  std::string_view nodeName = strings_.text(record.nodeNameId);
  if (record.attached) {
    NodeInfo& node = nodes_[nodeIndex_.find(nodeName)->second];
    Resources nonZero;
    nonZero.milliCpu = record.nonZeroMilliCpu;
    nonZero.memory = record.nonZeroMemory;
    node.removeUsage(record.requests, nonZero, record.hostPorts);
    touch(node);
    auto pos = std::find(node.podSlots.begin(), node.podSlots.end(), slot);
    if (pos != node.podSlots.end()) {
      *pos = node.podSlots.back();
      node.podSlots.pop_back();
    }
    countTerms(record, node.id, -1);
    record.attached = false;
    record.nodeId = StringTable::kNone;
    return;
  }
  auto orphans = orphanSlots_.find(nodeName);
  if (orphans == orphanSlots_.end()) return;
  std::erase(orphans->second, slot);
  if (orphans->second.empty()) orphanSlots_.erase(orphans);
}

void MutableClusterView::forgetPod(uint32_t slot) {
  detach(slot);
  unindexPod(slot);
  PodRecord& record = podTable_[slot];
  if (record.requiredAntiAffinity()) --podsWithRequiredAntiAffinity_;
  strings_.release(record.namespaceId);
  strings_.release(record.nodeNameId);
  for (const PodLabel& l : record.labels) {
    strings_.release(l.key);
    strings_.release(l.value);
  }
  record = PodRecord{};
  freePodSlots_.push_back(slot);
}

namespace {

// Makes the whole pages inside [data, data + bytes) resident ahead of their
// first write: one madvise(MADV_POPULATE_WRITE) instead of a page fault per
// page, which costs several microseconds in a VM (apply_bench's
// BM_FirstTouch). Fails harmlessly (EINVAL) on a kernel without it: the
// pages are then faulted in on use, as before. Contents are not changed.
void prefault(const void* data, size_t bytes) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

// The pod table fills from empty during an initial sync (150,000 records of
// ~250 bytes): its fresh pages are populated a block of records at a time,
// just before the first record of the block is written.
constexpr size_t kPrefaultRecords = 1024;

// Grown four-fold, not two: each growth moves every record into fresh pages.
// Capacity not yet used is address space only (its pages are not touched
// until a block of it is about to be filled), not memory. The pages the
// records move into are populated first, in one call.
void growPodTable(std::vector<PodRecord>& table) {
  std::vector<PodRecord> grown;
  grown.reserve(std::max<size_t>(kPrefaultRecords, table.capacity() * 4));
  prefault(grown.data(), table.size() * sizeof(PodRecord));
  for (PodRecord& record : table) grown.push_back(std::move(record));
  table = std::move(grown);
}

}  // namespace

std::string bindReservationId(std::string_view podUid) {
  std::string id = "bind:";
  id.append(podUid);
  return id;
}

namespace {
// Whether the watch's pod ends a /bind reservation: it is bound (then it
// counts as itself), or terminal.
bool endsBindReservation(const Pod& pod) { return !pod.uid.empty() && (!pod.nodeName.empty() || pod.isTerminal()); }
}  // namespace

bool isNominated(const Pod& pod) {
  return pod.nodeName.empty() && !pod.nominatedNodeName.empty() && !pod.isTerminal();
}

namespace {
NominatedPod nominatedOf(const Pod& pod, std::string key, uint32_t generation) {
  NominatedPod n;
  n.key = std::move(key);
  n.uid = pod.uid;
  n.podName = pod.namespace_ + "/" + pod.name;
  n.nodeName = pod.nominatedNodeName;
  n.priority = pod.priority;
  n.requests = pod.requests;
  n.nonZeroRequests = pod.nonZeroRequests;
  n.hostPorts = pod.hostPorts;
  n.namespace_ = pod.namespace_;
  n.labels = pod.labels;
  n.affinity = compilePodAffinity(pod);
  n.generation = generation;
  return n;
}
}  // namespace

void MutableClusterView::forgetNominated(std::string_view key) {
  auto at = nominatedNodeOf_.find(key);
  if (at == nominatedNodeOf_.end()) return;
  auto list = nominatedByNode_.find(at->second);
  if (list != nominatedByNode_.end()) {
    std::erase_if(list->second, [&](const NominatedPod& n) { return n.key == key; });
    if (list->second.empty()) nominatedByNode_.erase(list);
  }
  nominatedNodeOf_.erase(at);
}

void MutableClusterView::updateNominated(const Pod& pod, const std::string& key) {
  if (nominatedNodeOf_.empty() && !isNominated(pod)) return;  // the usual case: nothing nominated
  forgetNominated(key);
  if (!isNominated(pod)) return;
  nominatedByNode_[pod.nominatedNodeName].push_back(nominatedOf(pod, key, podGeneration_));
  nominatedNodeOf_.emplace(key, pod.nominatedNodeName);
}

bool MutableClusterView::nominatedUnchanged(const Pod& pod, const std::string& key) const {
  auto at = nominatedNodeOf_.find(key);
  if (!isNominated(pod)) return at == nominatedNodeOf_.end();
  if (at == nominatedNodeOf_.end() || at->second != pod.nominatedNodeName) return false;
  auto list = nominatedByNode_.find(at->second);
  if (list == nominatedByNode_.end()) return false;
  for (const NominatedPod& n : list->second)
    if (n.key == key) return n.generation == podGeneration_ && n.sameAs(nominatedOf(pod, key, podGeneration_));
  return false;
}

void MutableClusterView::upsertPod(const Pod& pod) {
  if (const std::string* id = findLabel(pod.annotations, kReservationAnnotation)) release(*id);
  if (!reservations_.empty() && endsBindReservation(pod)) release(bindReservationId(pod.uid));

  std::string key = podKey(pod);
  updateNominated(pod, key);
  const uint32_t hash = FlatStringIndex::hashOf(key);
  podIndex_.reserveOne();
  const size_t at = podIndex_.probe(key, hash, podKeyOf());
  const uint32_t existing = podIndex_.idAt(at);
  bool counted = !pod.nodeName.empty() && !pod.isTerminal();
  if (!counted) {
    if (existing != FlatStringIndex::kNone) {
      podIndex_.eraseAt(at);
      forgetPod(existing);
    }
    return;
  }

  // The new record is built before the old one lets go of its strings, so an
  // unchanged label is never dropped from the table and interned again.
  PodRecord record;
  record.name = pod.name;
  record.namespaceId = strings_.acquire(pod.namespace_);
  record.nodeNameId = strings_.acquire(pod.nodeName);
  record.generation = podGeneration_;
  record.labels.reserve(pod.labels.size());
  for (const auto& [k, v] : pod.labels) record.labels.push_back(PodLabel{strings_.acquire(k), strings_.acquire(v), 0});
  record.terminating = pod.terminating;
  record.affinity = compilePodAffinity(pod);
  record.requests = pod.requests;
  record.nonZeroMilliCpu = pod.nonZeroRequests.milliCpu;
  record.nonZeroMemory = pod.nonZeroRequests.memory;
  record.hostPorts = pod.hostPorts;

  // The index keeps the slot of a pod it holds (its key stays the same);
  // a new pod's slot is filled in where the probe above stopped.
  uint32_t slot;
  if (existing != FlatStringIndex::kNone) {
    slot = existing;
    forgetPod(slot);
    freePodSlots_.pop_back();  // forgetPod freed exactly this slot; keep it
  } else if (!freePodSlots_.empty()) {
    slot = freePodSlots_.back();
    freePodSlots_.pop_back();
    podIndex_.fill(at, hash, slot);
  } else {
    slot = static_cast<uint32_t>(podTable_.size());
    if (podTable_.size() == podTable_.capacity()) growPodTable(podTable_);
    if (slot % kPrefaultRecords == 0)
      prefault(podTable_.data() + slot, std::min(kPrefaultRecords, podTable_.capacity() - slot) * sizeof(PodRecord));
    podTable_.emplace_back();
    podIndex_.fill(at, hash, slot);
  }
  record.key = std::move(key);
  podTable_[slot] = std::move(record);
  indexPod(slot);
  if (podTable_[slot].requiredAntiAffinity()) ++podsWithRequiredAntiAffinity_;

  if (auto node = nodeIndex_.find(pod.nodeName); node != nodeIndex_.end())
    attach(slot, nodes_[node->second]);
  else
    orphanSlots_[pod.nodeName].push_back(slot);
}

bool MutableClusterView::podUpsertChangesNothing(const Pod& pod) const {
  if (const std::string* id = findLabel(pod.annotations, kReservationAnnotation)) {
    std::lock_guard lock(reservationsMutex_);
    if (reservations_.contains(*id)) return false;
  }
  if (endsBindReservation(pod)) {
    std::lock_guard lock(reservationsMutex_);
    if (!reservations_.empty() && reservations_.contains(bindReservationId(pod.uid))) return false;
  }
  const std::string key = podKey(pod);
  if ((!nominatedNodeOf_.empty() || isNominated(pod)) && !nominatedUnchanged(pod, key)) return false;
  const uint32_t slot = podSlotOf(key);
  const bool counted = !pod.nodeName.empty() && !pod.isTerminal();
  if (slot == FlatStringIndex::kNone) return !counted;
  if (!counted) return false;
  const PodRecord& r = podTable_[slot];
  if (r.generation != podGeneration_) return false;  // a resync in progress marks it
  if (r.name != pod.name || strings_.text(r.namespaceId) != pod.namespace_ ||
      strings_.text(r.nodeNameId) != pod.nodeName || r.labels.size() != pod.labels.size())
    return false;
  for (size_t i = 0; i < r.labels.size(); ++i)
    if (strings_.text(r.labels[i].key) != pod.labels[i].first || strings_.text(r.labels[i].value) != pod.labels[i].second)
      return false;
  if (r.terminating != pod.terminating) return false;
  if (r.affinity || hasPodAffinity(pod)) {
    std::shared_ptr<const PodAffinityInfo> now = compilePodAffinity(pod);
    if ((r.affinity == nullptr) != (now == nullptr)) return false;
    if (now && now->terms != r.affinity->terms) return false;
  }
  return r.requests == pod.requests && r.nonZeroMilliCpu == pod.nonZeroRequests.milliCpu &&
         r.nonZeroMemory == pod.nonZeroRequests.memory && r.hostPorts == pod.hostPorts;
}

void MutableClusterView::removePod(std::string_view key) {
  forgetNominated(key);
  if (!reservations_.empty()) release(bindReservationId(key));
  if (podIndex_.size() == 0) return;
  const size_t at = podIndex_.probe(key, FlatStringIndex::hashOf(key), podKeyOf());
  const uint32_t slot = podIndex_.idAt(at);
  if (slot == FlatStringIndex::kNone) return;
  podIndex_.eraseAt(at);
  forgetPod(slot);
}

// ---- MutableClusterView: resync ----

void MutableClusterView::beginResync(ResyncKind kind) {
  switch (kind) {
    case ResyncKind::Nodes: ++nodeGeneration_; break;
    case ResyncKind::Pods: ++podGeneration_; break;
    case ResyncKind::Namespaces: ++namespaceGeneration_; break;
    case ResyncKind::Services: ++workloadGenerations_[0]; break;
    case ResyncKind::ReplicationControllers: ++workloadGenerations_[1]; break;
    case ResyncKind::ReplicaSets: ++workloadGenerations_[2]; break;
    case ResyncKind::StatefulSets: ++workloadGenerations_[3]; break;
  }
}

size_t MutableClusterView::finishResync(ResyncKind kind) {
  std::vector<std::string> stale;
  if (kind == ResyncKind::Namespaces) {
    for (const auto& [name, entry] : namespaces_)
      if (entry.generation != namespaceGeneration_) stale.push_back(name);
    for (const std::string& name : stale) namespaces_.erase(name);
    return stale.size();
  }
  if (kind == ResyncKind::Services) {
    size_t removed = 0;
    for (auto it = services_.begin(); it != services_.end();) {
      NamespaceServices& services = it->second;
      removed += std::erase_if(services.byName, [&](const auto& e) {
        if (e.second.generation == workloadGenerations_[0]) return false;
        services.unindex(e.first, e.second);
        return true;
      });
      it = services.byName.empty() ? services_.erase(it) : std::next(it);
    }
    return removed;
  }
  if (kind == ResyncKind::ReplicationControllers || kind == ResyncKind::ReplicaSets || kind == ResyncKind::StatefulSets) {
    const size_t k = kind == ResyncKind::ReplicationControllers ? 0 : kind == ResyncKind::ReplicaSets ? 1 : 2;
    return std::erase_if(workloads_[k], [&](const auto& e) { return e.second.generation != workloadGenerations_[k + 1]; });
  }
  if (kind == ResyncKind::Nodes) {
    for (const NodeInfo& info : nodes_)
      if (info.generation != nodeGeneration_) stale.push_back(info.node.name);
    for (const std::string& name : stale) removeNode(name);
  } else {
    for (const PodRecord& record : podTable_)
      if (record.nodeNameId != StringTable::kNone && record.generation != podGeneration_) stale.push_back(record.key);
    for (const auto& [node, list] : nominatedByNode_)
      for (const NominatedPod& n : list)
        if (n.generation != podGeneration_ && podSlotOf(n.key) == FlatStringIndex::kNone) stale.push_back(n.key);
    for (const std::string& key : stale) removePod(key);
  }
  return stale.size();
}

// ---- MutableClusterView: reservations ----

MutableClusterView::ReserveResult MutableClusterView::tryReserve(Reservation reservation) {
  auto node = nodeIndex_.find(reservation.nodeName);
  if (node == nodeIndex_.end()) return ReserveResult::UnknownNode;
  std::lock_guard lock(reservationsMutex_);
  if (reservations_.contains(reservation.id)) return ReserveResult::IdTaken;
  nodes_[node->second].addUsage(reservation.requests, reservation.nonZeroRequests, reservation.hostPorts);
  touch(nodes_[node->second]);
  std::string id = reservation.id;
  reservations_.emplace(std::move(id), std::move(reservation));
  publishReservedPods();
  return ReserveResult::Reserved;
}

bool MutableClusterView::release(std::string_view id) {
  auto it = reservations_.find(id);
  if (it == reservations_.end()) return false;
  const Reservation& r = it->second;
  if (auto node = nodeIndex_.find(r.nodeName); node != nodeIndex_.end()) {
    nodes_[node->second].removeUsage(r.requests, r.nonZeroRequests, r.hostPorts);
    touch(nodes_[node->second]);
  }
  reservations_.erase(it);
  std::lock_guard lock(reservationsMutex_);
  publishReservedPods();
  return true;
}

size_t MutableClusterView::expireReservations(std::chrono::steady_clock::time_point now) {
  std::vector<std::string> expired;
  for (const auto& [id, r] : reservations_)
    if (r.expires <= now) expired.push_back(id);
  for (const std::string& id : expired) release(id);
  return expired.size();
}

bool MutableClusterView::anyReservationExpired(std::chrono::steady_clock::time_point now) const {
  std::lock_guard lock(reservationsMutex_);
  return std::any_of(reservations_.begin(), reservations_.end(),
                     [&](const auto& entry) { return entry.second.expires <= now; });
}

const Reservation* MutableClusterView::findReservation(std::string_view id) const {
  auto it = reservations_.find(id);
  return it == reservations_.end() ? nullptr : &it->second;
}

// ---- MutableClusterView: topology indexes ----

void MutableClusterView::indexPod(uint32_t slot) {
  PodRecord& record = podTable_[slot];
  for (PodLabel& l : record.labels) {
    std::vector<uint32_t>& posting = labelPostings_[postingKey(l.key, l.value)];
    l.posting = static_cast<uint32_t>(posting.size());
    posting.push_back(slot);
  }
  std::vector<uint32_t>& inNamespace = namespacePods_[record.namespaceId];
  record.namespacePosting = static_cast<uint32_t>(inNamespace.size());
  inNamespace.push_back(slot);
  record.termClasses.clear();
  if (record.affinity) {
    for (size_t k = 0; k < kTermKinds; ++k)
      for (const AffinityTerm& term : record.affinity->terms[k])
        record.termClasses.push_back(acquireTermClass(static_cast<TermKind>(k), term));
  }
}

void MutableClusterView::unindexPod(uint32_t slot) {
  PodRecord& record = podTable_[slot];
  // Swap-remove from each list, and tell the pod moved into the gap its new place.
  for (const PodLabel& l : record.labels) {
    auto it = labelPostings_.find(postingKey(l.key, l.value));
    if (it == labelPostings_.end()) continue;
    std::vector<uint32_t>& posting = it->second;
    const uint32_t moved = posting.back();
    posting[l.posting] = moved;
    posting.pop_back();
    if (moved != slot)
      for (PodLabel& m : podTable_[moved].labels)
        if (m.key == l.key) m.posting = l.posting;
    if (posting.empty()) labelPostings_.erase(it);
  }
  if (auto it = namespacePods_.find(record.namespaceId); it != namespacePods_.end()) {
    std::vector<uint32_t>& inNamespace = it->second;
    const uint32_t moved = inNamespace.back();
    inNamespace[record.namespacePosting] = moved;
    inNamespace.pop_back();
    if (moved != slot) podTable_[moved].namespacePosting = record.namespacePosting;
    if (inNamespace.empty()) namespacePods_.erase(it);
  }
  for (uint32_t id : record.termClasses) releaseTermClass(id);
  record.termClasses.clear();
}

void MutableClusterView::countTerms(const PodRecord& record, uint32_t nodeId, int delta) {
  for (uint32_t id : record.termClasses) {
    auto& nodes = termClasses_[id].nodes;
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& e) { return e.first == nodeId; });
    if (delta > 0) {
      if (it == nodes.end())
        nodes.emplace_back(nodeId, 1);
      else
        ++it->second;
    } else if (it != nodes.end() && --it->second == 0) {
      *it = nodes.back();
      nodes.pop_back();
    }
  }
}

std::vector<std::string> ClusterView::termClassIndexKeys(const AffinityTerm& term) {
  const auto& requirements = term.selector.requirements();
  auto in = std::find_if(requirements.begin(), requirements.end(),
                         [](const CompiledSelector::Requirement& r) { return r.op == SelectorOperator::In; });
  std::vector<std::string> keys;
  for (const std::string& ns : term.namespaces) {
    if (in == requirements.end() || term.selector.nothing()) {
      termClassIndexKey(ns, nullptr, keys.emplace_back());
      continue;
    }
    for (const std::string& value : in->values) {
      const std::pair<std::string, std::string> label(in->key, value);
      termClassIndexKey(ns, &label, keys.emplace_back());
    }
  }
  return keys;
}

uint32_t MutableClusterView::acquireTermClass(TermKind kind, const AffinityTerm& term) {
  std::string key = term.canonical(kind);
  if (auto it = termClassByKey_.find(key); it != termClassByKey_.end()) {
    ++termClasses_[it->second].refs;
    return it->second;
  }
  uint32_t id;
  if (!freeTermClasses_.empty()) {
    id = freeTermClasses_.back();
    freeTermClasses_.pop_back();
  } else {
    id = static_cast<uint32_t>(termClasses_.size());
    termClasses_.emplace_back();
  }
  TermClass& c = termClasses_[id];
  c.kind = kind;
  c.term = term;
  c.refs = 1;
  c.nodes.clear();
  termClassByKey_.emplace(std::move(key), id);
  for (const std::string& key : termClassIndexKeys(term)) termClassesByNamespace_[key].push_back(id);
  if (!term.namespaceSelector.nothing()) termClassesWithNamespaceSelector_.push_back(id);
  return id;
}

void MutableClusterView::releaseTermClass(uint32_t id) {
  TermClass& c = termClasses_[id];
  if (--c.refs > 0) return;
  termClassByKey_.erase(c.term.canonical(c.kind));
  for (const std::string& key : termClassIndexKeys(c.term)) {
    auto it = termClassesByNamespace_.find(key);
    if (it == termClassesByNamespace_.end()) continue;
    std::erase(it->second, id);
    if (it->second.empty()) termClassesByNamespace_.erase(it);
  }
  if (!c.term.namespaceSelector.nothing()) std::erase(termClassesWithNamespaceSelector_, id);
  c = TermClass{};
  freeTermClasses_.push_back(id);
}

void MutableClusterView::publishReservedPods() {
  auto next = std::make_shared<ReservedPods>();
  next->pods.reserve(reservations_.size());
  for (auto& [id, r] : reservations_) {
    if (r.counted == nullptr) {
      auto node = nodeIndex_.find(r.nodeName);
      if (node == nodeIndex_.end()) continue;
      auto pod = std::make_shared<ReservedPod>();
      pod->id = id;
      pod->nodeId = nodes_[node->second].id;  // stable: a node's reservations leave with it
      pod->namespace_ = r.namespace_;
      pod->labels = r.labels;
      pod->affinity = r.affinity;
      r.counted = std::move(pod);
    }
    next->pods.push_back(r.counted);
  }
  std::lock_guard lock(reservedPodsMutex_);
  next->version = reservedPods_->version + 1;
  reservedPods_ = std::move(next);
}

void MutableClusterView::upsertNamespace(Namespace ns) {
  NamespaceEntry& entry = namespaces_[ns.name];
  entry.labels = std::move(ns.labels);
  entry.generation = namespaceGeneration_;
}

void MutableClusterView::removeNamespace(std::string_view name) {
  if (auto it = namespaces_.find(name); it != namespaces_.end()) namespaces_.erase(it);
}

void ClusterView::NamespaceServices::index(const std::string& name, const ServiceEntry& entry) {
  if (!entry.selectorMap) return;
  std::string key;
  if (!entry.selectorMap->empty()) serviceIndexKey(entry.selectorMap->front().first, entry.selectorMap->front().second, key);
  byIndexKey[key].push_back(name);
}

void ClusterView::NamespaceServices::unindex(const std::string& name, const ServiceEntry& entry) {
  if (!entry.selectorMap) return;
  std::string key;
  if (!entry.selectorMap->empty()) serviceIndexKey(entry.selectorMap->front().first, entry.selectorMap->front().second, key);
  auto bucket = byIndexKey.find(key);
  if (bucket == byIndexKey.end()) return;
  std::erase(bucket->second, name);
  if (bucket->second.empty()) byIndexKey.erase(bucket);
}

void MutableClusterView::upsertWorkload(WorkloadSelector workload) {
  if (workload.kind == WorkloadKind::Service) {
    NamespaceServices& services = services_[workload.namespace_];
    auto [it, added] = services.byName.try_emplace(workload.name);
    if (!added) services.unindex(it->first, it->second);
    it->second.selectorMap = std::move(workload.selectorMap);
    it->second.generation = workloadGenerations_[0];
    services.index(it->first, it->second);
    return;
  }
  const size_t k = static_cast<size_t>(workload.kind) - 1;
  Workload& entry = workloads_[k][workload.namespace_ + "/" + workload.name];
  entry.generation = workloadGenerations_[k + 1];
  if (workload.kind == WorkloadKind::ReplicationController) {
    entry.selectorMap = std::move(workload.selectorMap);
  } else {
    auto compiled = CompiledSelector::compile(workload.labelSelector);
    entry.selector = compiled ? std::move(*compiled) : CompiledSelector();  // upstream skips one that fails
  }
}

void MutableClusterView::removeWorkload(WorkloadKind kind, std::string_view ns, std::string_view name) {
  if (kind == WorkloadKind::Service) {
    auto it = services_.find(ns);
    if (it == services_.end()) return;
    if (auto s = it->second.byName.find(name); s != it->second.byName.end()) {
      it->second.unindex(s->first, s->second);
      it->second.byName.erase(s);
    }
    if (it->second.byName.empty()) services_.erase(it);
    return;
  }
  std::string key(ns);
  key.append("/").append(name);
  auto& table = workloads_[static_cast<size_t>(kind) - 1];
  if (auto it = table.find(key); it != table.end()) table.erase(it);
}

}  // namespace placer
