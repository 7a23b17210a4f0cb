#include "scoring/decision_cache.h"

#include <functional>
#include <optional>

#include "scoring/pod_fields.h"

namespace placer {

bool sameSchedulingFields(const Pod& a, const Pod& b) {
  // The shape fields of the field table (scoring/pod_fields.h), in its order.
  bool same = true;
  forEachPodField([&](const auto& row) {
    if (same && row.role == FieldRole::Shape) same = a.*row.member == b.*row.member;
  });
  return same;
}

size_t schedulingHash(const Pod& pod) {
  // A few cheap fields; sameSchedulingFields settles the rest.
  size_t h = std::hash<std::string>{}(pod.namespace_);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(static_cast<size_t>(pod.requests.milliCpu));
  mix(static_cast<size_t>(pod.requests.memory));
  mix(pod.containers.size());
  mix(pod.initContainers.size());
  mix(pod.tolerations.size());
  mix(pod.nodeSelector.size());
  mix(pod.nodeAffinity.has_value());
  if (!pod.containers.empty()) mix(std::hash<std::string>{}(pod.containers.front().image));
  return h;
}

namespace {

size_t bytesOf(const std::string& s) { return sizeof s + (s.size() > 15 ? s.size() : 0); }

size_t bytesOf(const Resources& r) {
  size_t n = sizeof r;
  for (const auto& [name, value] : r.scalars) n += bytesOf(name) + sizeof value;
  return n;
}

size_t bytesOf(const std::vector<SelectorRequirement>& requirements) {
  size_t n = 0;
  for (const SelectorRequirement& r : requirements) {
    n += sizeof r + bytesOf(r.key);
    for (const std::string& v : r.values) n += bytesOf(v);
  }
  return n;
}

size_t bytesOf(const Labels& labels) {
  size_t n = 0;
  for (const auto& [k, v] : labels) n += bytesOf(k) + bytesOf(v);
  return n;
}

size_t bytesOf(const std::optional<LabelSelector>& selector) {
  return selector ? sizeof *selector + bytesOf(selector->matchLabels) + bytesOf(selector->matchExpressions) : 0;
}

size_t bytesOf(const std::optional<PodAffinityRules>& rules) {
  if (!rules) return 0;
  size_t n = sizeof *rules;
  auto term = [&n](const PodAffinityTerm& t) {
    n += sizeof t + bytesOf(t.labelSelector) + bytesOf(t.namespaceSelector) + bytesOf(t.topologyKey);
    for (const std::string& ns : t.namespaces) n += bytesOf(ns);
  };
  for (const PodAffinityTerm& t : rules->required) term(t);
  for (const WeightedPodAffinityTerm& t : rules->preferred) term(t.term);
  return n;
}

size_t bytesOf(const Container& c) {
  size_t n = sizeof c + bytesOf(c.name) + bytesOf(c.image) + bytesOf(c.requests);
  for (const HostPort& p : c.hostPorts) n += sizeof p + bytesOf(p.ip) + bytesOf(p.protocol) - 2 * sizeof(std::string);
  if (c.allocatedRequests) n += bytesOf(c.allocatedRequests->requests);
  if (c.actuatedRequests) n += bytesOf(c.actuatedRequests->requests);
  return n;
}

}  // namespace

size_t schedulingBytes(const Pod& pod) {
  size_t n = sizeof pod + bytesOf(pod.namespace_) + bytesOf(pod.schedulerName) + bytesOf(pod.nodeName) +
             bytesOf(pod.nodeSelector) + bytesOf(pod.requests) + bytesOf(pod.nonZeroRequests) + bytesOf(pod.overhead);
  for (const Container& c : pod.containers) n += bytesOf(c);
  for (const Container& c : pod.initContainers) n += bytesOf(c);
  for (const HostPort& p : pod.hostPorts) n += sizeof p + bytesOf(p.ip) + bytesOf(p.protocol) - 2 * sizeof(std::string);
  for (const Toleration& t : pod.tolerations) n += sizeof t + bytesOf(t.key) + bytesOf(t.value) - 2 * sizeof(std::string);
  if (pod.nodeAffinity) {
    auto term = [&n](const NodeSelectorTerm& t) { n += sizeof t + bytesOf(t.matchExpressions) + bytesOf(t.matchFields); };
    if (pod.nodeAffinity->required)
      for (const NodeSelectorTerm& t : pod.nodeAffinity->required->terms) term(t);
    for (const PreferredSchedulingTerm& p : pod.nodeAffinity->preferred) term(p.preference);
  }
  n += bytesOf(pod.podAffinity) + bytesOf(pod.podAntiAffinity);
  for (const TopologySpreadConstraint& t : pod.topologySpreadConstraints)
    n += sizeof t + bytesOf(t.topologyKey) + bytesOf(t.whenUnsatisfiable) + bytesOf(t.labelSelector);
  if (pod.podLevelRequests) n += bytesOf(pod.podLevelRequests->requests);
  return n;
}

namespace {

// About the memory a whole copy of the pod takes, as a cache entry keeps it
// (Entry::pod, its key): the scheduling fields and the rest (name, uid,
// labels, annotations, status, owner), which may be far larger (annotations
// alone up to the API server's 256 KiB). kMaxPodBytes bounds this, not only
// schedulingBytes.
size_t retainedBytes(const Pod& pod) {
  size_t n = schedulingBytes(pod) + bytesOf(pod.name) + bytesOf(pod.generateName) + bytesOf(pod.uid) +
             bytesOf(pod.labels) + bytesOf(pod.annotations) + bytesOf(pod.phase) + bytesOf(pod.nominatedNodeName) +
             bytesOf(pod.statusReason) + bytesOf(pod.statusMessage) + bytesOf(pod.ownerKind) +
             bytesOf(pod.ownerApiVersion) + bytesOf(pod.ownerName);
  // sizeof(Pod) already counted those strings' own bytes once.
  n -= 10 * sizeof(std::string);
  return n;
}

}  // namespace

void DecisionCache::reset(Entry& entry, const Pod& pod, size_t hash, uint64_t generation) {
  entry.hash = hash;
  entry.pod = pod;
  entry.generation = generation;
  entry.prepared = false;
  entry.unusable = false;
  entry.results.clear();
  // The per-node arrays are sized by the engine when it prepares the entry.
}

std::optional<DecisionCache::Lease> DecisionCache::lease(const Pod& pod, uint64_t generation) {
  const size_t hash = schedulingHash(pod);
  const bool tooLarge = retainedBytes(pod) > kMaxPodBytes;
  std::lock_guard lock(mutex_);
  if (tooLarge) {
    ++stats_.bypassed;
    return std::nullopt;
  }
  ++clock_;
  // An entry of this pod and generation, free.
  for (const std::shared_ptr<Entry>& e : entries_) {
    if (e->hash != hash || e->generation != generation) continue;
    std::unique_lock held(e->busy, std::try_to_lock);
    if (!held.owns_lock()) continue;
    if (!sameSchedulingFields(e->pod, pod)) continue;
    e->lastUse = clock_;
    if (e->unusable) {  // this generation's results could not be kept: decided without the cache
      ++stats_.bypassed;
      return std::nullopt;
    }
    ++stats_.hits;
    return Lease(e, std::move(held));
  }
  auto take = [&](std::shared_ptr<Entry> e, std::unique_lock<std::mutex> held) {
    reset(*e, pod, hash, generation);
    e->lastUse = clock_;
    ++stats_.misses;
    return Lease(std::move(e), std::move(held));
  };
  // A new entry while there is room.
  if (entries_.size() < capacity_) {
    auto e = std::make_shared<Entry>();
    std::unique_lock held(e->busy);
    entries_.push_back(e);
    return take(std::move(e), std::move(held));
  }
  // The least recently used free entry, one of an older generation first (its
  // results are of no use any more).
  std::shared_ptr<Entry> oldest;
  std::unique_lock<std::mutex> oldestHeld;
  bool oldestStale = false;
  for (const std::shared_ptr<Entry>& e : entries_) {
    const bool stale = e->generation != generation;
    if (oldest && (oldestStale > stale || (oldestStale == stale && e->lastUse >= oldest->lastUse))) continue;
    std::unique_lock held(e->busy, std::try_to_lock);
    if (!held.owns_lock()) continue;
    oldest = e;
    oldestHeld = std::move(held);
    oldestStale = stale;
  }
  if (!oldest) {
    ++stats_.bypassed;
    return std::nullopt;
  }
  if (oldestStale) return take(std::move(oldest), std::move(oldestHeld));
  // Every entry holds current results. Evicting one for each new shape would,
  // with more shapes in turn than entries, evict every entry before its next
  // use and pay a miss's extra cost on every decision: only every
  // kAdmitEvery-th such shape takes an entry, the others are computed without.
  if (++fullMisses_ % kAdmitEvery != 0) {
    ++stats_.bypassed;
    return std::nullopt;
  }
  return take(std::move(oldest), std::move(oldestHeld));
}

size_t DecisionCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

DecisionCache::Stats DecisionCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace placer
