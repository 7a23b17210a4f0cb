#pragma once
// The engine's decision cache: a decision's per-node results, kept for the
// next pod that schedules the same way, so that deciding again recomputes
// only the nodes that changed in between.
//
// Pods created together are mostly replicas of one template: they differ in
// name and labels, not in anything a plugin reads. For such a pod the engine
// reuses, per node, the filter verdict and the raw scores of an earlier
// decision, and runs the plugins again only on nodes whose version changed
// (ClusterView::nodeVersions(): a reservation, a pod bound or gone, a node
// update). Normalising, totalling and selecting always run over every node,
// so a decision from the cache is exactly the decision without it.
//
// An entry is valid for one view generation (ClusterView::staticGeneration():
// the node set, labels, taints, images and cordons as they were); any change
// there empties it. Only profiles whose plugins all allow it use the cache
// (Plugin::resultsReusable()).
//
// Thread-safety: lease() may be called from any thread; an entry is used by
// one decision at a time (the lease holds it), and a pod whose entries are
// all in use gets a new one, or none.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "scoring/framework.h"
#include "scoring/model.h"

namespace placer {

// Whether two pods schedule identically: equal in everything a plugin may read
// of a pod, the Shape fields of scoring/pod_fields.h (all but identity,
// labels, annotations, owner and status).
bool sameSchedulingFields(const Pod& a, const Pod& b);
size_t schedulingHash(const Pod& pod);
// About the memory a copy of the pod's scheduling fields takes, in bytes
// (strings, lists, resources; linear in the pod's size).
size_t schedulingBytes(const Pod& pod);

// The results of the plugins an engine runs node by node (Engine: the
// plugins whose PreScore reads no feasible list, and for a cache entry only
// those whose results are reusable): per node slot, the filter verdict and the
// raw scores, with their PreFilter and PreScore state. A cache entry keeps
// them per view position across decisions; a decision without the cache
// computes them for its candidates and drops them.
struct NodeResults {
  CycleState state;
  std::vector<const FilterPlugin*> filters;  // active (PreFilter did not skip), in profile order
  std::vector<uint16_t> filterIndex;         // parallel: index in Profile::filterPlugins()
  bool preScored = false;
  std::vector<size_t> scoring;               // their score plugins PreScore did not skip (profile indices)
  std::vector<size_t> skipped;               // their score plugins PreScore skipped
  std::optional<Status> preScoreFailure;
  size_t preScoreFailureIndex = 0;           // index in Profile::preScorePlugins() of the failing one
  std::vector<uint32_t> verdicts;            // per slot: 0 feasible; else 1 + index into rejections
  std::deque<Status> rejections;             // distinct rejections, plugin set
  std::vector<uint16_t> rejectionFilter;     // parallel: profile filter index of the rejecting plugin
  // A cache entry's raw scores, one row per node-by-node score plugin
  // (rawRow[profile score index]; kNoRow for the late ones), stride = slots.
  // 32 bits: half the memory a decision reads; a score that does not fit
  // makes the entry unusable (the decision is computed without it).
  static constexpr uint32_t kNoRow = UINT32_MAX;
  std::vector<int32_t> raw;
  std::vector<uint32_t> rawRow;
  std::optional<Status> failure;             // a filter failed (Code::Error)
  bool podDependent = false;                 // a PreScore whose results are not reusable did not skip
  void clear() {
    state = CycleState();
    filters.clear();
    filterIndex.clear();
    preScored = false;
    scoring.clear();
    skipped.clear();
    preScoreFailure.reset();
    rejections.clear();
    rejectionFilter.clear();
    failure.reset();
    podDependent = false;
  }
};

class DecisionCache {
 public:
  // Filled by the engine. Every per-node array is indexed by position in
  // ClusterView::nodes().
  struct Entry {
    std::mutex busy;  // held by the lease
    size_t hash = 0;
    Pod pod;  // the pod the results were computed for: every plugin call gets this one
    uint64_t generation = 0;
    uint64_t lastUse = 0;
    bool prepared = false;  // PreFilter ran for this generation
    bool unusable = false;  // this generation's results cannot be kept (PreFilter rejected, an error)
    NodeResults results;
    // Every node's results are for its version at most this one (a node
    // whose version is larger changed since: ClusterView::lastNodeVersion).
    uint64_t seenVersion = 0;
  };

  class Lease {
   public:
    Lease(std::shared_ptr<Entry> entry, std::unique_lock<std::mutex> lock)
        : entry_(std::move(entry)), lock_(std::move(lock)) {}
    Entry& operator*() const { return *entry_; }
    Entry* operator->() const { return entry_.get(); }

   private:
    std::shared_ptr<Entry> entry_;
    std::unique_lock<std::mutex> lock_;
  };

  explicit DecisionCache(size_t capacity) : capacity_(capacity) {}

  // An entry for the pod, held until the lease goes: one with results of this
  // generation if one is free (none if its results could not be kept:
  // unusable), else a fresh one (prepared == false) while
  // there is room, else the least recently used free entry, one of an older
  // generation first. Empty (the decision is computed without the cache) when
  // every entry is in use, and for new shapes while every entry holds current
  // results, but for every kAdmitEvery-th, which evicts the least recently used.
  // Empty for pods larger than kMaxPodBytes.
  static constexpr uint64_t kAdmitEvery = 8;
  // A pod whose scheduling fields take more than this (schedulingBytes) is
  // decided without the cache (bypass): an entry keeps a copy of its pod and
  // PreFilter's state, about twice this, beside its per-node arrays, so the
  // cache's memory is bounded by capacity x (2 x kMaxPodBytes + nodes x per-node cost).
  static constexpr size_t kMaxPodBytes = 64 * 1024;
  std::optional<Lease> lease(const Pod& pod, uint64_t generation);

  size_t size() const;

  // What lease() answered since the cache was made: an entry with results of
  // the view's generation (hits), a fresh or recycled entry (misses), nothing
  // (bypassed: every entry in use, or a new shape not admitted).
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t bypassed = 0;
  };
  Stats stats() const;

 private:
  static void reset(Entry& entry, const Pod& pod, size_t hash, uint64_t generation);

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Entry>> entries_;
  uint64_t clock_ = 0;
  Stats stats_;              // under mutex_
  uint64_t fullMisses_ = 0;  // new shapes met while every entry held current results
};

}  // namespace placer
