#pragma once
// The filter-and-score engine: runs a profile over every node of a view
// (or a given candidate list), never a sample.
//
// Selection: the highest weighted total wins; ties go to the node whose name
// sorts first (byte-wise). The rule is deterministic so `placer explain`
// replays any decision.
//
// Thread-safety: an Engine may be used by many threads at once; each call
// has its own CycleState, or holds the decision-cache entry it uses.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/decision_cache.h"
#include "scoring/framework.h"
#include "scoring/profile.h"

namespace placer {

enum class Detail : uint8_t {
  Summary,     // selected node, counts, reason summary
  FilterOnly,  // PreFilter and Filter only, with per-node outcomes (code, reasons); nothing is
               // scored, and a feasible candidate is "selected" (total 0) only when it is the only one
  Totals,      // Summary plus per-node outcomes with weighted totals, no per-plugin scores
  Full,        // per-node outcomes with per-plugin scores too (explain)
};

struct NodeOutcome {
  const NodeInfo* node = nullptr;
  Code code = Code::Success;          // Success = feasible
  Reasons reasons;                    // for unfeasible nodes (shared, cheap to copy)
  std::string_view failedPlugin;
  std::vector<int64_t> pluginScores;  // normalised, before weight; parallel to Decision::scorePlugins
  int64_t total = 0;
};

struct Decision {
  const NodeInfo* selected = nullptr;  // null: no feasible node
  int64_t selectedTotal = 0;
  size_t nodeCount = 0;
  size_t feasibleCount = 0;
  // Reason -> how many nodes it rejected, sorted by reason (kube-scheduler's FitError summary).
  std::vector<std::pair<std::string, int32_t>> reasonCounts;
  // Set when a PreFilter plugin rejected the pod for every node.
  std::optional<Status> preFilterRejection;
  // Set when a plugin returned Code::Error (or a score outside 0..100 after
  // normalising): as in kube-scheduler the cycle fails and no node is selected.
  std::optional<Status> failure;
  // Whether a plugin whose results depend on other pods (its results are not
  // reusable: InterPodAffinity, PodTopologySpread) took part: neither its
  // PreFilter nor its PreScore skipped. A reservation made meanwhile may
  // change such a decision (see ClusterState::reserve).
  bool podDependent = false;
  // Detail::Full only.
  std::vector<std::string_view> scorePlugins;
  std::vector<NodeOutcome> nodes;

  // "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint {a: b}."
  // exactly as kube-scheduler's FitError.Error(): "<count> <reason>" entries sorted as
  // strings, or the PreFilter rejection's message. With no node at all:
  // "no nodes available to schedule pods"; after a failure: the failure's message.
  std::string unschedulableMessage() const;
};

class Engine {
 public:
  // Decisions for pods that schedule alike share per-node results through a
  // DecisionCache of up to `cacheCapacity` entries (0: none), when every
  // plugin of the profile allows it. Each entry keeps about 4 + 4 x (score
  // plugins run node by node) bytes per node (24 with the default profile:
  // 256 entries take ~41 MB at 5,000 nodes with their pods, engine_bench's
  // BM_CacheMemory).
  static constexpr size_t kDefaultCacheCapacity = 256;
  explicit Engine(std::shared_ptr<const Profile> profile, size_t cacheCapacity = kDefaultCacheCapacity);

  // Whether evaluate() may go through the decision cache. Reusing it brings
  // the pod's results up to date on every node of the view that changed
  // (a pass over all their versions): worth it for many candidates (the
  // extender's NodeNames), not for a few (admission's confirm step, which runs
  // while it holds the chosen node's stripe exclusively).
  enum class CacheUse : uint8_t { Bypass, Reuse };

  // Every node of the view. Detail::Full always computes every node (explain).
  Decision place(const Pod& pod, const ClusterView& view, Detail detail = Detail::Summary) const;
  // Only the given candidates (extender requests); view supplies cluster-wide facts.
  Decision evaluate(const Pod& pod, const ClusterView& view, std::span<const NodeInfo* const> candidates,
                    Detail detail, CacheUse cacheUse = CacheUse::Bypass) const;

  const Profile& profile() const { return *profile_; }
  // Null when no plugin of the profile allows it, or its capacity is 0.
  const DecisionCache* cache() const { return cache_.get(); }

  // Which plugins run node by node, their results kept per node slot
  // (NodeResults); the others ("late") run over the feasible nodes once every
  // filter has passed. Per index of the profile's lists.
  struct Groups {
    std::vector<char> preFilter, filter, preScore, score;  // 1: node by node
    bool anyNodeByNode = false;
  };

 private:
  std::shared_ptr<const Profile> profile_;
  std::shared_ptr<DecisionCache> cache_;  // internally synchronised
  Groups direct_;  // without the cache: plugins whose PreScore reads no feasible list
  Groups cached_;  // with it: of those, the ones whose results are reusable
};

}  // namespace placer
