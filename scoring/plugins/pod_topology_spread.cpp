#include "scoring/plugins/pod_topology_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "scoring/exact_quotient.h"
#include "scoring/plugins/names.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/plugin_args.h"
#include "scoring/plugins/resource_allocation.h"
#include "scoring/plugins/taint_toleration.h"
#include "scoring/scratch_counts.h"
#include "scoring/topology.h"

namespace placer {
namespace {

constexpr std::string_view kPreFilterKey = "PreFilterPodTopologySpread";
constexpr std::string_view kPreScoreKey = "PreScorePodTopologySpread";
constexpr std::string_view kHostnameKey = "kubernetes.io/hostname";
constexpr std::string_view kZoneKey = "topology.kubernetes.io/zone";
constexpr int64_t kInvalidScore = -1;

// A constraint as the plugin evaluates it (upstream's topologySpreadConstraint).
struct Constraint {
  int32_t maxSkew = 1;
  std::string topologyKey;
  CompiledSelector selector;
  int32_t minDomains = 1;
  bool honorNodeAffinity = true;
  bool honorNodeTaints = false;
};

const std::vector<TopologySpreadConstraint>& systemDefaultConstraints() {
  static const std::vector<TopologySpreadConstraint> defaults = [] {
    TopologySpreadConstraint hostname;
    hostname.topologyKey = std::string(kHostnameKey);
    hostname.whenUnsatisfiable = "ScheduleAnyway";
    hostname.maxSkew = 3;
    TopologySpreadConstraint zone;
    zone.topologyKey = std::string(kZoneKey);
    zone.whenUnsatisfiable = "ScheduleAnyway";
    zone.maxSkew = 5;
    return std::vector<TopologySpreadConstraint>{hostname, zone};
  }();
  return defaults;
}

// filterTopologySpreadConstraints: the constraints of one action, with
// matchLabelKeys merged into the selector (mergeLabelSetWithSelector).
Result<std::vector<Constraint>> filterConstraints(const std::vector<TopologySpreadConstraint>& constraints,
                                                  const Labels& podLabels, std::string_view action) {
  std::vector<Constraint> out;
  for (const TopologySpreadConstraint& c : constraints) {
    if (c.whenUnsatisfiable != action) continue;
    auto selector = CompiledSelector::compile(c.labelSelector);
    if (!selector) return selector.error();
    Constraint tsc;
    tsc.selector = std::move(*selector);
    if (!c.matchLabelKeys.empty() && !tsc.selector.nothing()) {
      Labels matchLabels;
      for (const std::string& key : c.matchLabelKeys)
        if (const std::string* value = findLabel(podLabels, key)) matchLabels.emplace_back(key, *value);
      std::sort(matchLabels.begin(), matchLabels.end());
      matchLabels.erase(std::unique(matchLabels.begin(), matchLabels.end(),
                                    [](const auto& a, const auto& b) { return a.first == b.first; }),
                        matchLabels.end());
      if (!matchLabels.empty()) {
        CompiledSelector merged = CompiledSelector::fromSet(matchLabels);
        merged.add(tsc.selector.requirements());
        tsc.selector = std::move(merged);
      }
    }
    tsc.maxSkew = c.maxSkew;
    tsc.topologyKey = c.topologyKey;
    tsc.minDomains = c.minDomains.value_or(1);
    tsc.honorNodeAffinity = c.nodeAffinityPolicy != NodeInclusionPolicy::Ignore;
    tsc.honorNodeTaints = c.nodeTaintsPolicy == NodeInclusionPolicy::Honor;
    out.push_back(std::move(tsc));
  }
  return out;
}

// upstream helper.DefaultSelector: the Services selecting the pod, and its
// controller (ReplicationController, ReplicaSet or StatefulSet).
CompiledSelector defaultSelector(const Pod& pod, const ClusterView& view) {
  Labels labelSet;
  auto merge = [&](const Labels& more) {
    for (const auto& [k, v] : more) {
      auto it = std::lower_bound(labelSet.begin(), labelSet.end(), k, [](const auto& e, const std::string& key) { return e.first < key; });
      if (it != labelSet.end() && it->first == k)
        it->second = v;
      else
        labelSet.emplace(it, k, v);
    }
  };
  // Only Services that may select the pod (a nil selector matches nothing, not everything).
  view.forEachServiceSelecting(pod.namespace_, pod.labels, [&](std::string_view, const Labels* selector) {
    bool matches = std::all_of(selector->begin(), selector->end(), [&](const auto& kv) {
      const std::string* v = findLabel(pod.labels, kv.first);
      return v != nullptr && *v == kv.second;
    });
    if (matches) merge(*selector);
  });
  CompiledSelector selector = CompiledSelector::fromSet(labelSet);
  if (pod.ownerKind.empty()) return selector;
  if (pod.ownerApiVersion == "v1" && pod.ownerKind == "ReplicationController") {
    if (const ClusterView::Workload* rc = view.workload(WorkloadKind::ReplicationController, pod.namespace_, pod.ownerName)) {
      if (rc->selectorMap) merge(*rc->selectorMap);
      selector = CompiledSelector::fromSet(labelSet);
    }
  } else if (pod.ownerApiVersion == "apps/v1" && (pod.ownerKind == "ReplicaSet" || pod.ownerKind == "StatefulSet")) {
    const WorkloadKind kind = pod.ownerKind == "ReplicaSet" ? WorkloadKind::ReplicaSet : WorkloadKind::StatefulSet;
    if (const ClusterView::Workload* w = view.workload(kind, pod.namespace_, pod.ownerName))
      if (!w->selector.nothing()) selector.add(w->selector.requirements());
  }
  return selector;
}

struct ConstraintSource {
  std::vector<Constraint> constraints;
  bool own = false;  // the pod's own constraints (not defaults)
};

Result<ConstraintSource> constraintsOf(const Pod& pod, const ClusterView& view, const PodTopologySpreadArgs& args,
                                       std::string_view action) {
  ConstraintSource out;
  if (!pod.topologySpreadConstraints.empty()) {
    out.own = true;
    auto own = filterConstraints(pod.topologySpreadConstraints, pod.labels, action);
    if (!own) {
      return Error{std::string(action == "DoNotSchedule" ? "obtaining pod's hard topology spread constraints: "
                                                         : "obtaining pod's soft topology spread constraints: ") +
                   own.error().message};
    }
    out.constraints = std::move(*own);
    return out;
  }
  const auto& defaults = args.systemDefaulting ? systemDefaultConstraints() : args.defaultConstraints;
  auto built = filterConstraints(defaults, pod.labels, action);
  if (!built) {
    return Error{std::string(action == "DoNotSchedule" ? "setting default hard topology spread constraints: "
                                                       : "setting default soft topology spread constraints: ") +
                 built.error().message};
  }
  if (built->empty()) return out;
  CompiledSelector selector = defaultSelector(pod, view);
  if (selector.empty()) return out;
  for (Constraint& c : *built) c.selector = selector;
  out.constraints = std::move(*built);
  return out;
}

// nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): the nodeSelector and
// the required terms (a term that does not parse matches nothing).
class RequiredNodeAffinity {
 public:
  explicit RequiredNodeAffinity(const Pod& pod) : nodeSelector_(&pod.nodeSelector) {
    if (pod.nodeAffinity && pod.nodeAffinity->required) required_ = ParsedNodeSelector::parse(*pod.nodeAffinity->required);
  }
  bool matches(const Node& node) const {
    for (const auto& [key, value] : *nodeSelector_) {
      const std::string* actual = findLabel(node.labels, key);
      if (actual == nullptr || *actual != value) return false;
    }
    return !required_ || required_->matches(node);
  }

 private:
  const Labels* nodeSelector_;
  std::optional<ParsedNodeSelector> required_;
};

bool matchesInclusionPolicies(const Constraint& c, const Pod& pod, const Node& node, const RequiredNodeAffinity& affinity) {
  if (c.honorNodeAffinity && !affinity.matches(node)) return false;
  if (c.honorNodeTaints && findUntoleratedScheduleTaint(node.taints, pod.tolerations) != nullptr) return false;
  return true;
}

// The view node a NodeInfo stands for (itself, or the view's node of the same
// name for a copy), or null.
const NodeInfo* viewNodeOf(const ClusterView& view, const NodeInfo& node) {
  return view.holds(node) ? &node : view.findNode(node.name());
}

// Matching pods per node (countPodsMatchSelector over every node at once),
// indexed by NodeInfo::id; for the length of the call that counts (the
// counts are scratch, see ScratchCounts).
class PodsPerNode {
 public:
  PodsPerNode(const ClusterView& view, const ReservedPods& reserved, const Constraint& c, std::string_view ns)
      : counts_(c.selector.empty() ? 0 : view.nodeIdBound()) {
    if (c.selector.empty()) return;  // upstream counts nothing for an empty selector
    ResolvedSelector resolved(view, c.selector);
    const std::vector<std::string> namespaces{std::string(ns)};
    forEachCandidatePod(view, reserved, c.selector, resolved, &namespaces, [&](const CountedPod& p) {
      if (p.terminating || !p.labelsMatch(resolved, c.selector)) return;
      counts_.add(p.node->id, 1);
    });
  }
  int64_t onViewNode(uint32_t id) const { return counts_.get(id); }
  const std::vector<uint32_t>& nodes() const { return counts_.touched(); }  // ids with a count
  const ScratchCounts& counts() const { return counts_; }

 private:
  ScratchCounts counts_;
};

// std::round (half away from zero, as Go's math.Round) without the libm
// call, exact for the non-negative scores below 2^62 that Score sums.
// Inlined: it runs once per feasible node, and a call costs as much as it does.
[[gnu::always_inline]] inline int64_t roundScore(double score) {
  if (!(score >= 0 && score < 0x1p62)) return static_cast<int64_t>(std::round(score));
  const int64_t whole = static_cast<int64_t>(score);
  // Without a branch: the fractions of nodes' scores follow no pattern.
  return whole + static_cast<int64_t>(score - static_cast<double>(whole) >= 0.5);
}

// PreScore's id of a feasible node that is not one of the view's.
constexpr uint32_t kNoId = UINT32_MAX;

// Per feasible node j: ids[j], its NodeInfo::id when it is one of the view's
// (viewNodeId: the node itself is not read while its id is its position),
// else kNoId; and values[j * n + i], its value of keys[i], read from the
// label column columns[i] by id for the view's nodes. A function of its own,
// over N keys known at compile time (N == 0: keys.size()), so that the loop
// keeps its pointers in registers: it runs once per feasible node.
template <size_t N>
bool gatherTopologyValuesOf(const ClusterView& view, std::span<const NodeInfo* const> feasible,
                            std::span<const TopologyKey> keys, std::span<const std::span<const uint32_t>> columns,
                            uint32_t* ids, uint32_t* values) {
  const size_t n = N != 0 ? N : keys.size();
  // The columns in locals (registers, for N known).
  const uint32_t* columnData[N != 0 ? N : 1];
  size_t columnSize[N != 0 ? N : 1];
  if constexpr (N != 0) {
    for (size_t i = 0; i < N; ++i) {
      columnData[i] = columns[i].data();
      columnSize[i] = columns[i].size();
    }
  }
  // view.holds(node) and viewNodeId(), with the view's range and flag in
  // locals (ids[] and values[] may alias the flag for the compiler).
  const NodeInfo* const viewFirst = view.nodes().data();
  const NodeInfo* const viewLast = viewFirst + view.nodes().size();
  const bool idsArePositions = view.idsArePositions();
  size_t j = 0;
  if constexpr (N != 0) {
    // The usual view: every node's id is its position, below every column's
    // size (a column is as long as the ids of the nodes with its key). Then
    // a view node's id is its address's offset and its values are read
    // without a bound check, up to the first node that is not the view's
    // (the loop below takes it from there).
    bool covered = idsArePositions;
    for (size_t i = 0; i < N; ++i) covered &= columnSize[i] >= view.nodes().size();
    if (covered) {
      for (; j < feasible.size(); ++j) {
        const NodeInfo* node = feasible[j];
        if (node < viewFirst || node >= viewLast) break;
        const auto id = static_cast<uint32_t>(node - viewFirst);
        ids[j] = id;
#pragma GCC unroll 4
        for (size_t i = 0; i < N; ++i) values[j * N + i] = columnData[i][id];
      }
    }
  }
  bool allViewNodes = true;
  for (; j < feasible.size(); ++j) {
    const NodeInfo& node = *feasible[j];
    uint32_t* nodeValues = values + j * n;
    if (&node < viewFirst || &node >= viewLast) {
      ids[j] = kNoId;
      for (size_t i = 0; i < n; ++i) nodeValues[i] = keys[i].valueOf(node);
      allViewNodes = false;
      continue;
    }
    const uint32_t id = idsArePositions ? static_cast<uint32_t>(&node - viewFirst) : viewNodeId(view, node);
    ids[j] = id;
    if constexpr (N != 0) {
#pragma GCC unroll 4
      for (size_t i = 0; i < N; ++i) nodeValues[i] = id < columnSize[i] ? columnData[i][id] : TopologyKey::kAbsent;
    } else {
      for (size_t i = 0; i < n; ++i) nodeValues[i] = id < columns[i].size() ? columns[i][id] : TopologyKey::kAbsent;
    }
  }
  return allViewNodes;
}

// True when every feasible node is one of the view's (no kNoId, no kUnknown).
bool gatherTopologyValues(const ClusterView& view, std::span<const NodeInfo* const> feasible,
                          std::span<const TopologyKey> keys, std::span<const std::span<const uint32_t>> columns,
                          uint32_t* ids, uint32_t* values) {
  switch (keys.size()) {
    case 1: return gatherTopologyValuesOf<1>(view, feasible, keys, columns, ids, values);
    case 2: return gatherTopologyValuesOf<2>(view, feasible, keys, columns, ids, values);  // the system defaults
    default: return gatherTopologyValuesOf<0>(view, feasible, keys, columns, ids, values);
  }
}

// PreScore's passes over feasible nodes that are all the view's (no kNoId
// id, no kUnknown value), with gatherTopologyValues' ids and values, for N
// constraints known at compile time (N == 0: n). Each runs once per
// feasible node, so the constraints' flags and arrays are copied to locals
// (registers) first.
// Registration: each domain (value) of a constraint other than hostname
// that some feasible node has gets a count of 1 in domains[i] (counting
// pods comes after: domains[i] then holds 1 + pods) and widens
// topologySize[i], and so does the absence of the key (once). With
// requireAllTopologies, a node missing any key registers nothing and joins
// `ignored`, by id.
template <size_t N, unsigned kHostMask>
void registerViewNodeDomains(std::span<const uint32_t> ids, const uint32_t* values, size_t n, const char* hostname,
                             bool requireAllTopologies, ScratchCounts* domains, int64_t* topologySize,
                             std::vector<uint32_t>& ignored) {
  if constexpr (N != 0) n = N;
  // The flags and arrays in locals (registers, for N known); a domain's
  // array does not move when add() writes to it.
  constexpr size_t kLocal = N != 0 ? N : 1;
  const int64_t* counts[kLocal] = {};
  size_t bound[kLocal] = {};
  if constexpr (N != 0) {
    for (size_t i = 0; i < N; ++i) {
      counts[i] = domains[i].data();
      bound[i] = domains[i].bound();
    }
  }
  auto isHost = [&](size_t i) { return N != 0 ? ((kHostMask >> i) & 1) != 0 : hostname[i] != 0; };
  auto registered = [&](size_t i, uint32_t value) {
    if constexpr (N != 0)
      return value < bound[i] && counts[i][value] != 0;
    else
      return domains[i].get(value) != 0;
  };
  // Whether a node lacks constraint i's key (registered once).
  bool absentLocal[kLocal] = {};
  std::vector<char> absentDynamic(N != 0 ? 0 : n, 0);
  auto absentSeen = [&](size_t i) -> auto& {
    if constexpr (N != 0)
      return absentLocal[i];
    else
      return absentDynamic[i];
  };
  for (size_t j = 0; j < ids.size(); ++j) {
    const uint32_t* nodeValues = values + j * n;
    if (requireAllTopologies) {
      bool missing = false;
      for (size_t i = 0; i < n; ++i) missing |= nodeValues[i] == TopologyKey::kAbsent;
      if (missing) {
        ignored.push_back(ids[j]);
        continue;
      }
    }
#pragma GCC unroll 4
    for (size_t i = 0; i < n; ++i) {
      if (isHost(i)) continue;  // counted per node in Score
      const uint32_t value = nodeValues[i];
      if (value == TopologyKey::kAbsent) {
        absentSeen(i) = true;
      } else if (!registered(i, value)) {
        domains[i].add(value, 1);
        ++topologySize[i];
      }
    }
  }
  for (size_t i = 0; i < n; ++i) topologySize[i] += absentSeen(i) ? 1 : 0;
}

// Registration for any feasible list (with nodes that are not the view's):
// as registerViewNodeDomains, and each distinct value the view does not
// know (kUnknown, a copy's) is a domain of its own; an ignored copy joins
// ignoredCopies.
void registerDomains(std::span<const NodeInfo* const> feasible, std::span<const uint32_t> ids, const uint32_t* values,
                     const std::vector<TopologyKey>& keys, const std::vector<char>& hostname, bool requireAllTopologies,
                     std::vector<ScratchCounts>& domains, std::vector<int64_t>& topologySize,
                     std::vector<uint32_t>& ignored, std::vector<const NodeInfo*>& ignoredCopies) {
  const size_t n = keys.size();
  std::vector<bool> absentRegistered(n, false);
  std::vector<std::vector<std::string>> unknownValues(n);
  for (size_t j = 0; j < feasible.size(); ++j) {
    const uint32_t* nodeValues = values + j * n;
    const bool allKeys =
        std::none_of(nodeValues, nodeValues + n, [](uint32_t v) { return v == TopologyKey::kAbsent; });
    if (requireAllTopologies && !allKeys) {
      if (ids[j] != kNoId)
        ignored.push_back(ids[j]);
      else
        ignoredCopies.push_back(feasible[j]);
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      if (hostname[i]) continue;  // counted per node in Score
      const uint32_t value = nodeValues[i];
      if (value == TopologyKey::kAbsent) {
        if (!absentRegistered[i]) {
          absentRegistered[i] = true;
          ++topologySize[i];
        }
      } else if (value == TopologyKey::kUnknown) {
        const std::string& text = *findLabel(feasible[j]->node.labels, keys[i].text());
        if (std::find(unknownValues[i].begin(), unknownValues[i].end(), text) == unknownValues[i].end()) {
          unknownValues[i].push_back(text);
          ++topologySize[i];
        }
      } else if (domains[i].get(value) == 0) {
        domains[i].add(value, 1);
        ++topologySize[i];
      }
    }
  }
}

// One constraint's term of a view node's score, count * weight + skew: by
// node (hostname), count being counts[id] (0 past the bound); by domain,
// domainTerms[value], the term of each domain of the feasible nodes
// computed once (every feasible node's value is such a domain; no other
// entry is read).
struct ScoreTerm {
  const int64_t* counts = nullptr;
  size_t bound = 0;
  const double* domainTerms = nullptr;
  double weight = 0;
  double skew = 0;
  bool byNode = false;
};

// The range of a list of raw scores, as NormalizeScore reads it: the least
// and the largest other than kInvalidScore (INT64_MAX and 0 when there is
// none), and whether any is kInvalidScore.
struct ScoreRange {
  int64_t minScore = std::numeric_limits<int64_t>::max();
  int64_t maxScore = 0;
  bool anyInvalid = false;
  void add(int64_t s) {
    if (s == kInvalidScore) {
      anyInvalid = true;
      return;
    }
    minScore = std::min(minScore, s);
    maxScore = std::max(maxScore, s);
  }
};

// Score: the sum over constraints, in their order, of their terms, rounded;
// a node missing a key skips that constraint (or, with
// requireAllTopologies, scores kInvalidScore). kHostMask: bit i set when
// constraint i counts per node (terms[i].byNode), for N known. Returns the
// scores' range.
template <size_t N, unsigned kHostMask>
ScoreRange scoreViewNodes(std::span<const uint32_t> ids, const uint32_t* values, size_t n, const ScoreTerm* terms,
                          bool requireAllTopologies, int64_t* out) {
  if constexpr (N != 0) n = N;
  constexpr size_t kLocal = N != 0 ? N : 1;
  const int64_t* counts[kLocal] = {};
  size_t bound[kLocal] = {};
  const double* domainTerms[kLocal] = {};
  double weight[kLocal] = {};
  double skew[kLocal] = {};
  if constexpr (N != 0) {
    for (size_t i = 0; i < N; ++i) {
      counts[i] = terms[i].counts;
      bound[i] = terms[i].bound;
      domainTerms[i] = terms[i].domainTerms;
      weight[i] = terms[i].weight;
      skew[i] = terms[i].skew;
    }
  }
  ScoreRange range;
  for (size_t j = 0; j < ids.size(); ++j) {
    const uint32_t id = ids[j];
    const uint32_t* nodeValues = values + j * n;
    double score = 0;
    bool missing = false;
#pragma GCC unroll 4
    for (size_t i = 0; i < n; ++i) {
      const uint32_t value = nodeValues[i];
      if (value == TopologyKey::kAbsent) {
        missing = true;
        continue;
      }
      if constexpr (N != 0) {
        if (((kHostMask >> i) & 1) != 0) {
          const int64_t count = id < bound[i] ? counts[i][id] : 0;
          score += static_cast<double>(count) * weight[i] + skew[i];
        } else {
          score += domainTerms[i][value];
        }
      } else {
        const ScoreTerm& t = terms[i];
        if (t.byNode) {
          const int64_t count = id < t.bound ? t.counts[id] : 0;
          score += static_cast<double>(count) * t.weight + t.skew;
        } else {
          score += t.domainTerms[value];
        }
      }
    }
    const int64_t result = requireAllTopologies && missing ? kInvalidScore : roundScore(score);
    out[j] = result;
    range.add(result);
  }
  return range;
}

// Calls f.template operator()<N, kHostMask>() with the constraint count
// and hostname flags at hand as constants for up to two constraints (the
// system defaults: hostname and zone), else with <0, 0>.
template <class F>
void withStaticConstraints(size_t n, const char* hostname, F&& f) {
  if (n == 1) {
    hostname[0] ? f.template operator()<1, 1>() : f.template operator()<1, 0>();
  } else if (n == 2) {
    switch ((hostname[0] ? 1u : 0u) | (hostname[1] ? 2u : 0u)) {
      case 0: f.template operator()<2, 0>(); break;
      case 1: f.template operator()<2, 1>(); break;
      case 2: f.template operator()<2, 2>(); break;
      default: f.template operator()<2, 3>(); break;
    }
  } else {
    f.template operator()<0, 0>();
  }
}

bool hasAllKeys(const std::vector<TopologyKey>& keys, const NodeInfo& node) {
  return std::all_of(keys.begin(), keys.end(), [&](const TopologyKey& k) { return k.presentOn(node); });
}

// PreFilter's static half: for each hard constraint, which domains count
// (upstream's TpKeyToDomainsNum and the domains PreFilter registers: the
// values of the nodes that have every constraint's key and pass the
// constraint's inclusion policies) and which nodes' pods count in them. It
// depends on the pod's constraints, node affinity and tolerations
// (EligibilityKey) and on the view's node set and labels and taints, so it holds
// for one view generation (ClusterView::staticGeneration) and is built once
// per EligibilityKey there (EligibleDomainsMemo): then a decision counts only
// the nodes holding matching pods instead of walking every node. PreScore
// reads the same table for its soft constraints (which nodes' pods count)
// when their policies read the pod's node affinity or tolerations.
struct EligibleDomains {
  static constexpr uint32_t kNone = UINT32_MAX;
  struct PerConstraint {
    std::vector<uint32_t> domainOfValue;  // by node label value id: index among the eligible domains, or kNone
    std::vector<uint32_t> domainOfNode;   // by NodeInfo::id: the domain its pods count in, or kNone
    uint32_t domains = 0;                 // eligible domains
    // kNone past the bounds: for TopologyKey::kAbsent and kUnknown, and ids of no view node.
    uint32_t ofValue(uint32_t value) const { return value < domainOfValue.size() ? domainOfValue[value] : kNone; }
    uint32_t ofNode(uint32_t id) const { return id < domainOfNode.size() ? domainOfNode[id] : kNone; }
  };
  std::vector<PerConstraint> constraints;
};

// Whether constraint i counts the pods of `node`, given that the node has
// its key: the node has every constraint's key, when `requireAllKeys`
// (PreFilter, and PreScore but under the system defaults, which spare a node
// a missing key), and passes the constraint's inclusion policies.
bool podsCountOn(const std::vector<Constraint>& constraints, const std::vector<TopologyKey>& keys, size_t i,
                 const NodeInfo& node, const Pod& pod, const RequiredNodeAffinity& affinity, bool requireAllKeys) {
  if (requireAllKeys && !hasAllKeys(keys, node)) return false;
  return matchesInclusionPolicies(constraints[i], pod, node.node, affinity);
}

// requireAllKeys: as podsCountOn's.
std::shared_ptr<const EligibleDomains> buildEligibleDomains(const std::vector<Constraint>& constraints,
                                                            const std::vector<TopologyKey>& keys, const Pod& pod,
                                                            const ClusterView& view, bool requireAllKeys) {
  auto out = std::make_shared<EligibleDomains>();
  const RequiredNodeAffinity affinity(pod);
  const size_t n = constraints.size();
  out->constraints.resize(n);
  for (EligibleDomains::PerConstraint& c : out->constraints) {
    c.domainOfValue.assign(view.nodeLabelValueBound(), EligibleDomains::kNone);
    c.domainOfNode.assign(view.nodeIdBound(), EligibleDomains::kNone);
  }
  for (const NodeInfo& node : view.nodes()) {
    for (size_t i = 0; i < n; ++i) {
      EligibleDomains::PerConstraint& c = out->constraints[i];
      const uint32_t value = keys[i].valueOf(node);
      // (A view node's value is always below the bound; kAbsent is past it.)
      if (value >= c.domainOfValue.size()) continue;
      if (!podsCountOn(constraints, keys, i, node, pod, affinity, requireAllKeys)) continue;
      if (c.domainOfValue[value] == EligibleDomains::kNone) c.domainOfValue[value] = c.domains++;
      if (node.id < c.domainOfNode.size()) c.domainOfNode[node.id] = c.domainOfValue[value];
    }
  }
  return out;
}

// What EligibleDomains depends on besides the view: the constraints' keys
// and inclusion policies, and the pod's node affinity (nodeSelector and
// required terms) and tolerations where a policy honours them. Pods of many
// shapes share one (the same constraints without node affinity).
struct EligibilityKey {
  struct Of {
    std::string topologyKey;
    bool honorNodeAffinity = true;
    bool honorNodeTaints = false;
    bool operator==(const Of&) const = default;
  };
  std::vector<Of> constraints;
  bool requireAllKeys = true;
  Labels nodeSelector;
  std::optional<NodeSelector> required;
  std::vector<Toleration> tolerations;
  bool operator==(const EligibilityKey&) const = default;

  EligibilityKey(const std::vector<Constraint>& of, const Pod& pod, bool requireAll) : requireAllKeys(requireAll) {
    bool affinity = false;
    bool taints = false;
    for (const Constraint& c : of) {
      constraints.push_back({c.topologyKey, c.honorNodeAffinity, c.honorNodeTaints});
      affinity |= c.honorNodeAffinity;
      taints |= c.honorNodeTaints;
    }
    if (affinity) {
      nodeSelector = pod.nodeSelector;
      if (pod.nodeAffinity) required = pod.nodeAffinity->required;
    }
    if (taints) tolerations = pod.tolerations;
  }
  size_t hash() const {
    size_t h = nodeSelector.size() * 31 + tolerations.size() * 131 +
               (required ? 1 + required->terms.size() : 0) * 1031 + requireAllKeys;
    for (const Of& c : constraints)
      h = h * 1000003 ^ (std::hash<std::string>()(c.topologyKey) + c.honorNodeAffinity * 2 + c.honorNodeTaints);
    for (const auto& [k, v] : nodeSelector) h = h * 1000003 ^ std::hash<std::string>()(k) ^ std::hash<std::string>()(v);
    return h;
  }
};

// The EligibleDomains of recent keys, each for the view generation it was
// built in; the least recently used is replaced. Thread-safe: decisions on
// many threads share it (a key built twice at once keeps one).
class EligibleDomainsMemo {
 public:
  static constexpr size_t kCapacity = 64;

  template <class Build>
  std::shared_ptr<const EligibleDomains> get(const EligibilityKey& key, const ClusterView& view, Build build) const {
    const uint64_t generation = view.staticGeneration();
    const size_t hash = key.hash();
    {
      std::lock_guard lock(mutex_);
      for (Entry& e : entries_) {
        if (e.generation == generation && e.hash == hash && e.key == key) {
          e.lastUse = ++clock_;
          return e.domains;
        }
      }
    }
    std::shared_ptr<const EligibleDomains> built = build();
    std::lock_guard lock(mutex_);
    Entry* slot = nullptr;
    if (entries_.size() < kCapacity) {
      slot = &entries_.emplace_back(key);
    } else {
      slot = &*std::min_element(entries_.begin(), entries_.end(), [&](const Entry& a, const Entry& b) {
        // Another generation's entries first, then the least recently used.
        return std::pair(a.generation == generation, a.lastUse) < std::pair(b.generation == generation, b.lastUse);
      });
      slot->key = key;
    }
    slot->generation = generation;
    slot->hash = hash;
    slot->lastUse = ++clock_;
    slot->domains = built;
    return built;
  }

 private:
  struct Entry {
    explicit Entry(EligibilityKey k) : key(std::move(k)) {}
    EligibilityKey key;
    uint64_t generation = 0;
    size_t hash = 0;
    uint64_t lastUse = 0;
    std::shared_ptr<const EligibleDomains> domains;
  };
  mutable std::mutex mutex_;
  mutable std::vector<Entry> entries_;
  mutable uint64_t clock_ = 0;
};

struct PreFilterState final : StateData {
  std::vector<Constraint> constraints;
  std::vector<TopologyKey> keys;
  std::shared_ptr<const EligibleDomains> eligible;  // per constraint: its domains and the nodes counting in them
  std::vector<std::vector<int64_t>> counts;         // per constraint, by eligible domain: matching pods
  std::vector<int64_t> minMatch;                    // per constraint: the minimum over them (MaxInt32 when none)
  std::vector<bool> selfMatch;
};

// Filter's verdict on a node: null when it passes, else a static rejection.
const Status* rejectionOf(const PreFilterState& state, const NodeInfo& node) {
  static const Status kMissingLabel(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeLabelNotMatch));
  static const Status kSkew(Code::Unschedulable, std::string(kErrReasonConstraintsNotMatch));
  for (size_t i = 0; i < state.constraints.size(); ++i) {
    const Constraint& c = state.constraints[i];
    const EligibleDomains::PerConstraint& eligible = state.eligible->constraints[i];
    const uint32_t value = state.keys[i].valueOf(node);
    if (value == TopologyKey::kAbsent) return &kMissingLabel;
    const int64_t minimum = static_cast<int64_t>(eligible.domains) < c.minDomains ? 0 : state.minMatch[i];
    const uint32_t domain = eligible.ofValue(value);
    const int64_t matchNum = domain != EligibleDomains::kNone ? state.counts[i][domain] : 0;
    const int64_t skew = matchNum + (state.selfMatch[i] ? 1 : 0) - minimum;
    if (skew > c.maxSkew) return &kSkew;
  }
  return nullptr;
}

// The fewest matching pods over constraint i's eligible domains (an eligible
// domain with no pod is a minimum of 0); MaxInt32 when there is none.
int64_t minMatchOf(const PreFilterState& state, size_t i) {
  const std::vector<int64_t>& counts = state.counts[i];
  if (counts.empty()) return std::numeric_limits<int32_t>::max();
  return *std::min_element(counts.begin(), counts.end());
}

struct PreScoreState final : StateData {
  std::vector<Constraint> constraints;
  std::vector<TopologyKey> keys;
  std::vector<bool> hostname;
  std::vector<double> weights;
  // What score() reads of a node PreScore was not given (or given twice):
  // per constraint, pods per domain of the feasible nodes (not hostname) or
  // per node by NodeInfo::id (hostname); the ignored view nodes by id, sorted.
  std::vector<SparseCounts> counts;
  std::vector<const NodeInfo*> ignoredCopies;
  std::vector<uint32_t> ignored;
  const ClusterView* view = nullptr;
  // The feasible list PreScore was given (not a copy: the caller's, which
  // stays unchanged while the cycle's scores are taken) and the raw score of
  // each of its nodes, computed there while its nodes were at hand, with
  // their range: normalizedScoresOfFeasible() answers for that list from
  // these alone.
  std::span<const NodeInfo* const> scoredList;
  std::unique_ptr<int64_t[]> scores;
  ScoreRange range;

  bool isIgnored(const NodeInfo& node) const {
    if (view->holds(node)) return std::binary_search(ignored.begin(), ignored.end(), viewNodeId(*view, node));
    return std::find(ignoredCopies.begin(), ignoredCopies.end(), &node) != ignoredCopies.end();
  }
  // Score: the sum over constraints, in their order, of count * weight +
  // maxSkew - 1, rounded; nodes missing a key skip that constraint.
  int64_t scoreOf(const NodeInfo& node) const {
    if (isIgnored(node)) return kInvalidScore;
    const NodeInfo* viewNode = viewNodeOf(*view, node);
    double score = 0;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const uint32_t value = keys[i].valueOf(node);
      if (value == TopologyKey::kAbsent) continue;
      int64_t count = 0;
      if (hostname[i]) {
        count = viewNode == nullptr ? 0 : counts[i].get(viewNode->id);
      } else if (value != TopologyKey::kUnknown) {
        count = counts[i].get(value);
      }
      score += static_cast<double>(count) * weights[i] + static_cast<double>(constraints[i].maxSkew - 1);
    }
    return roundScore(score);
  }
};

class PodTopologySpread final : public PreFilterPlugin,
                                public FilterPlugin,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public PreFilterExtensions {
 public:
  explicit PodTopologySpread(PodTopologySpreadArgs args) : args_(std::move(args)) {}
  std::string_view name() const override { return names::kPodTopologySpread; }
  bool readsAccounting() const override { return false; }  // labels and its cycle state only

  Status preFilter(CycleState& cycle, const Pod& pod, const ClusterView& view) const override {
    auto source = constraintsOf(pod, view, args_, "DoNotSchedule");
    if (!source) return Status(Code::Error, "get constraints from pod: " + source.error().message);
    if (source->constraints.empty()) return Status::skip();
    auto state = std::make_unique<PreFilterState>();
    state->constraints = std::move(source->constraints);
    const size_t n = state->constraints.size();
    const std::shared_ptr<const ReservedPods> reserved = view.reservedPods();
    for (const Constraint& c : state->constraints) {
      state->keys.emplace_back(view, c.topologyKey);
      state->selfMatch.push_back(c.selector.matches(pod.labels));
    }
    state->eligible = eligibleMemo_.get(EligibilityKey(state->constraints, pod, true), view, [&] {
      return buildEligibleDomains(state->constraints, state->keys, pod, view, true);
    });
    // Each node's matching pods count in its domain, if it has one.
    for (size_t i = 0; i < n; ++i) {
      const EligibleDomains::PerConstraint& eligible = state->eligible->constraints[i];
      std::vector<int64_t>& counts = state->counts.emplace_back(eligible.domains, 0);
      const PodsPerNode perNode(view, *reserved, state->constraints[i], pod.namespace_);
      for (uint32_t id : perNode.nodes()) {  // each once: PodsPerNode only adds
        const uint32_t domain = eligible.ofNode(id);
        if (domain != EligibleDomains::kNone) counts[domain] += perNode.onViewNode(id);
      }
    }
    state->minMatch.assign(n, std::numeric_limits<int32_t>::max());
    for (size_t i = 0; i < n; ++i) state->minMatch[i] = minMatchOf(*state, i);
    cycle.write(kPreFilterKey, std::move(state));
    return Status::success();
  }

  // upstream's AddPod: each nominated pod counted in the node's domains, as
  // PreFilter counts a pod bound there (same namespace as the pod, matching
  // the constraint's selector, on a node with every key that passes the
  // constraint's inclusion policies); the minimum kept exact, as upstream's.
  bool addNominatedPods(const CycleState& cycle, const Pod& pod, std::span<const NominatedPod* const> added,
                        const NodeInfo& node, const ClusterView&, CycleState& out) const override {
    const PreFilterState* state = cycle.read<PreFilterState>(kPreFilterKey);
    if (state == nullptr) return false;
    auto counted = std::make_unique<PreFilterState>(*state);
    if (hasAllKeys(counted->keys, node)) {
      const RequiredNodeAffinity affinity(pod);
      for (size_t i = 0; i < counted->constraints.size(); ++i) {
        const Constraint& c = counted->constraints[i];
        const uint32_t value = counted->keys[i].valueOf(node);
        const uint32_t domain = counted->eligible->constraints[i].ofValue(value);
        if (domain == EligibleDomains::kNone) continue;
        if (!matchesInclusionPolicies(c, pod, node.node, affinity)) continue;
        int64_t pods = 0;
        for (const NominatedPod* n : added)
          if (n->namespace_ == pod.namespace_ && c.selector.matches(n->labels)) ++pods;
        if (pods == 0) continue;
        counted->counts[i][domain] += pods;
        counted->minMatch[i] = minMatchOf(*counted, i);
      }
    }
    out.write(kPreFilterKey, std::move(counted));
    return true;
  }

  Status filter(const CycleState& cycle, const Pod&, const NodeInfo& node) const override {
    return filterByState<PreFilterState>(cycle, kPreFilterKey, node, rejectionOf);
  }

  void filterAll(const CycleState& cycle, const Pod&, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    filterAllByState<PreFilterState>(cycle, kPreFilterKey, nodes, sink, rejectionOf);
  }

  Status preScore(CycleState& cycle, const Pod& pod, std::span<const NodeInfo* const> feasible,
                  const ClusterView& view) const override {
    if (view.nodes().empty()) return Status::skip();
    auto source = constraintsOf(pod, view, args_, "ScheduleAnyway");
    if (!source) return Status(Code::Error, "calculating preScoreState: " + source.error().message);
    if (source->constraints.empty()) return Status::skip();
    auto state = std::make_unique<PreScoreState>();
    state->view = &view;
    state->constraints = std::move(source->constraints);
    const size_t n = state->constraints.size();
    // Only the system defaults spare a node a missing key (say, no zone label).
    const bool requireAllTopologies = source->own || !args_.systemDefaulting;
    const std::shared_ptr<const ReservedPods> reserved = view.reservedPods();
    // Per constraint: its matching pods per node (pods[podsOf[i]]: constraints
    // with one selector, as the system defaults', count the same pods once);
    // for a constraint other than hostname (counted per node), domains[i]
    // holds 1 + its pods for each domain of the feasible nodes, 0 for others.
    std::vector<PodsPerNode> pods;
    pods.reserve(n);
    std::vector<size_t> podsOf(n);
    std::vector<ScratchCounts> domains;
    domains.reserve(n);
    std::vector<std::span<const uint32_t>> columns;
    for (size_t i = 0; i < n; ++i) {
      const Constraint& c = state->constraints[i];
      state->keys.emplace_back(view, c.topologyKey);
      const bool hostname = c.topologyKey == kHostnameKey;
      state->hostname.push_back(hostname);
      domains.emplace_back(hostname ? 0 : view.nodeLabelValueBound());
      columns.push_back(view.nodeLabelColumn(view.nodeLabelKeyId(c.topologyKey)));
      size_t same = 0;
      while (same < i && !(state->constraints[same].selector == c.selector)) ++same;
      if (same < i) {
        podsOf[i] = podsOf[same];
      } else {
        podsOf[i] = pods.size();
        pods.emplace_back(view, *reserved, c, pod.namespace_);
      }
    }
    const std::vector<char> hostname(state->hostname.begin(), state->hostname.end());
    // Per feasible node: its id (kNoId for a node that is not the view's)
    // and its value of every key (gatherTopologyValues), kept for the scores
    // at the end; in buffers of this thread's (no allocation per decision).
    thread_local std::vector<uint32_t> feasibleIds;
    thread_local std::vector<uint32_t> values;
    if (feasibleIds.size() < feasible.size()) feasibleIds.resize(feasible.size());
    if (values.size() < feasible.size() * n) values.resize(feasible.size() * n);
    const bool allViewNodes =
        gatherTopologyValues(view, feasible, state->keys, columns, feasibleIds.data(), values.data());
    const std::span<const uint32_t> ids(feasibleIds.data(), feasible.size());
    std::vector<int64_t> topologySize(n, 0);
    if (allViewNodes) {
      withStaticConstraints(n, hostname.data(), [&]<size_t N, unsigned kHostMask>() {
        registerViewNodeDomains<N, kHostMask>(ids, values.data(), n, hostname.data(), requireAllTopologies,
                                              domains.data(), topologySize.data(), state->ignored);
      });
    } else {
      registerDomains(feasible, ids, values.data(), state->keys, hostname, requireAllTopologies, domains,
                      topologySize, state->ignored, state->ignoredCopies);
    }
    const size_t ignoredCount = state->ignored.size() + state->ignoredCopies.size();
    std::sort(state->ignored.begin(), state->ignored.end());
    for (size_t i = 0; i < n; ++i) {
      const int64_t size = hostname[i] ? static_cast<int64_t>(feasible.size() - ignoredCount) : topologySize[i];
      state->weights.push_back(std::log(static_cast<double>(size + 2)));
    }
    // Pods of every node (not only the feasible ones) count in their domain.
    // (Nodes without the key, the "" domain of the system defaults, only
    // widen topologySize: Score reads no count for them.)
    // Which nodes' pods count (their keys, the inclusion policies): from the
    // table PreFilter keeps (per view generation and EligibilityKey) when
    // the policies read the pod's node affinity or tolerations, which are
    // matched against each node's labels or taints as text; else checked here.
    const RequiredNodeAffinity affinity(pod);
    const bool policiesReadPod =
        std::any_of(state->constraints.begin(), state->constraints.end(), [&](const Constraint& c) {
          return c.honorNodeTaints || (c.honorNodeAffinity && (!pod.nodeSelector.empty() ||
                                                               (pod.nodeAffinity && pod.nodeAffinity->required)));
        });
    std::shared_ptr<const EligibleDomains> eligible;
    if (policiesReadPod) {
      eligible = eligibleMemo_.get(EligibilityKey(state->constraints, pod, requireAllTopologies), view, [&] {
        return buildEligibleDomains(state->constraints, state->keys, pod, view, requireAllTopologies);
      });
    }
    for (size_t i = 0; i < n; ++i) {
      const PodsPerNode& counted = pods[podsOf[i]];
      if (!hostname[i]) {
        for (uint32_t id : counted.nodes()) {
          const NodeInfo* node = view.nodeById(id);
          if (node == nullptr) continue;
          // A domain of the feasible nodes first (a label read), then the
          // node's other keys and the inclusion policies.
          const uint32_t value = state->keys[i].valueOf(*node);
          if (value == TopologyKey::kAbsent || domains[i].get(value) == 0) continue;
          if (eligible ? eligible->constraints[i].ofNode(id) == EligibleDomains::kNone
                       : !podsCountOn(state->constraints, state->keys, i, *node, pod, affinity, requireAllTopologies))
            continue;
          domains[i].add(value, counted.onViewNode(id));
        }
      }
      state->counts.push_back(hostname[i] ? SparseCounts(counted.counts()) : SparseCounts(domains[i], 1));
    }
    // The scores of the feasible nodes, from the counts at hand (no zeroing:
    // every entry is written).
    state->scoredList = feasible;
    state->scores.reset(new int64_t[feasible.size()]);
    if (allViewNodes) {
      // A domain's term (count * weight + skew) once per domain of the
      // feasible nodes, not once per node: domains[i] holds 1 + its pods.
      // The tables are this thread's, by value id; only the entries of those
      // domains are written and read.
      thread_local std::vector<double> domainTermTable;
      const size_t valueBound = view.nodeLabelValueBound();
      const auto byDomain = static_cast<size_t>(std::count(hostname.begin(), hostname.end(), 0));
      if (domainTermTable.size() < byDomain * valueBound) domainTermTable.resize(byDomain * valueBound);
      size_t tablesUsed = 0;
      std::vector<ScoreTerm> terms(n);
      for (size_t i = 0; i < n; ++i) {
        ScoreTerm& t = terms[i];
        t.weight = state->weights[i];
        t.skew = static_cast<double>(state->constraints[i].maxSkew - 1);
        t.byNode = hostname[i] != 0;
        if (t.byNode) {
          const ScratchCounts& counts = pods[podsOf[i]].counts();
          t.counts = counts.data();
          t.bound = counts.bound();
          continue;
        }
        double* table = domainTermTable.data() + tablesUsed++ * valueBound;
        for (uint32_t value : domains[i].touched())
          table[value] = static_cast<double>(domains[i].get(value) - 1) * t.weight + t.skew;
        t.domainTerms = table;
      }
      withStaticConstraints(n, hostname.data(), [&]<size_t N, unsigned kHostMask>() {
        state->range = scoreViewNodes<N, kHostMask>(ids, values.data(), n, terms.data(), requireAllTopologies,
                                                    state->scores.get());
      });
    } else {
      for (size_t j = 0; j < feasible.size(); ++j) {
        state->scores[j] = state->scoreOf(*feasible[j]);
        state->range.add(state->scores[j]);
      }
    }
    cycle.write(kPreScoreKey, std::move(state));
    return Status::success();
  }

  int64_t score(const CycleState& cycle, const Pod&, const NodeInfo& node) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    return state == nullptr ? 0 : state->scoreOf(node);
  }

  void scoreAll(const CycleState& cycle, const Pod&, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    if (state == nullptr) {
      std::fill(out.begin(), out.end(), 0);
      return;
    }
    for (size_t j = 0; j < nodes.size(); ++j) out[j] = state->scoreOf(*nodes[j]);
  }

  void normalizeScores(const CycleState& cycle, const Pod&, std::span<int64_t> scores) const override {
    if (cycle.read<PreScoreState>(kPreScoreKey) == nullptr) return;
    ScoreRange range;
    for (int64_t s : scores) range.add(s);
    normalize(scores, range, scores);
  }

  bool normalizedScoresOfFeasible(const CycleState& cycle, const Pod&, std::span<const NodeInfo* const> nodes,
                                  std::span<int64_t> out) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    if (state == nullptr || nodes.data() != state->scoredList.data() || nodes.size() != state->scoredList.size() ||
        out.size() != nodes.size())
      return false;
    normalize(std::span<const int64_t>(state->scores.get(), nodes.size()), state->range, out);
    return true;
  }

 private:
  // NormalizeScore: out[j] is the normalised raw[j], `range` being raw's
  // (out may be raw itself).
  static void normalize(std::span<const int64_t> raw, const ScoreRange& range, std::span<int64_t> out) {
    const int64_t minScore = range.minScore;
    const int64_t maxScore = range.maxScore;
    if (maxScore == 0) {
      for (size_t j = 0; j < raw.size(); ++j) out[j] = raw[j] == kInvalidScore ? 0 : kMaxNodeScore;
      return;
    }
    // Scores are >= 0, so the numerator is within [0, 100 * maxScore].
    const bool exact = minScore >= 0 && maxScore < kExactQuotientBound / (2 * kMaxNodeScore);
    if (exact && mapScoresThroughTable(raw, out, range.anyInvalid ? kInvalidScore : minScore, maxScore, [&](int64_t s) {
          return s == kInvalidScore ? 0 : exactQuotient(kMaxNodeScore * (maxScore + minScore - s), maxScore);
        }))
      return;
    for (size_t j = 0; j < raw.size(); ++j) {
      const int64_t s = raw[j];
      if (s == kInvalidScore) {
        out[j] = 0;
      } else if (exact) {
        out[j] = exactQuotient(kMaxNodeScore * (maxScore + minScore - s), maxScore);
      } else {
        out[j] = kMaxNodeScore * (maxScore + minScore - s) / maxScore;
      }
    }
  }

  PodTopologySpreadArgs args_;
  EligibleDomainsMemo eligibleMemo_;  // PreFilter's static half, and which nodes' pods PreScore counts
};

}  // namespace

Result<PodTopologySpreadArgs> decodePodTopologySpreadArgs(const nlohmann::json& args) {
  constexpr std::string_view kType = "PodTopologySpreadArgs";
  PodTopologySpreadArgs out;
  if (args.is_null()) return out;
  if (Outcome ok = checkArgsObject(args, kType, {"defaultConstraints", "defaultingType"}); !ok) return ok.error();
  std::string defaultingType = "System";  // SetDefaults_PodTopologySpreadArgs
  if (auto t = args.find("defaultingType"); t != args.end() && !t->is_null()) {
    if (!t->is_string()) return fieldError("PodTopologySpreadArgs.defaultingType", "must be a string");
    defaultingType = t->get<std::string>();
    if (defaultingType.empty()) defaultingType = "System";
  }
  if (auto d = args.find("defaultConstraints"); d != args.end() && !d->is_null()) {
    auto decoded = decodeTopologySpreadConstraints(*d);
    if (!decoded) {
      std::string message = decoded.error().message;
      constexpr std::string_view kPrefix = "topologySpreadConstraints";
      if (message.rfind(kPrefix, 0) == 0) message = "defaultConstraints" + message.substr(kPrefix.size());
      return Error{"PodTopologySpreadArgs." + message};
    }
    out.defaultConstraints = std::move(*decoded);
  }

  // ValidatePodTopologySpreadArgs: every error is reported.
  const std::string root = "PodTopologySpreadArgs";
  std::vector<std::string> errs;
  if (defaultingType != "System" && defaultingType != "List") {
    errs.push_back(root + ".defaultingType: Unsupported value: " + goQuote(defaultingType) +
                   ": supported values: \"System\", \"List\"");
  } else if (defaultingType == "System" && !out.defaultConstraints.empty()) {
    errs.push_back(root + ".defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
  }
  for (size_t i = 0; i < out.defaultConstraints.size(); ++i) {
    const TopologySpreadConstraint& c = out.defaultConstraints[i];
    const std::string p = root + ".defaultConstraints[" + std::to_string(i) + "]";
    if (c.maxSkew <= 0)
      errs.push_back(p + ".maxSkew: Invalid value: " + std::to_string(c.maxSkew) + ": not in valid range (0, inf)");
    if (c.topologyKey.empty()) {
      errs.push_back(p + ".topologyKey: Required value: can not be empty");
    } else {
      for (const std::string& msg : qualifiedNameErrors(c.topologyKey))
        errs.push_back(p + ".topologyKey: Invalid value: " + goQuote(c.topologyKey) + ": " + msg);
    }
    if (c.whenUnsatisfiable.empty()) {
      errs.push_back(p + ".whenUnsatisfiable: Required value: can not be empty");
    } else if (c.whenUnsatisfiable != "DoNotSchedule" && c.whenUnsatisfiable != "ScheduleAnyway") {
      errs.push_back(p + ".whenUnsatisfiable: Unsupported value: " + goQuote(c.whenUnsatisfiable) +
                     ": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"");
    }
    if (c.labelSelector)
      errs.push_back(p + ".labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod");
    for (size_t j = 0; j < i; ++j) {
      const TopologySpreadConstraint& other = out.defaultConstraints[j];
      if (other.topologyKey == c.topologyKey && other.whenUnsatisfiable == c.whenUnsatisfiable) {
        errs.push_back(p + ": Duplicate value: \"{" + c.topologyKey + ", " + c.whenUnsatisfiable + "}\"");
        break;
      }
    }
  }
  if (!errs.empty()) return Error{aggregateErrors(errs)};
  out.systemDefaulting = defaultingType == "System";
  return out;
}

Result<std::unique_ptr<Plugin>> newPodTopologySpread(const nlohmann::json& args) {
  auto decoded = decodePodTopologySpreadArgs(args);
  if (!decoded) return decoded.error();
  return std::unique_ptr<Plugin>(std::make_unique<PodTopologySpread>(std::move(*decoded)));
}

}  // namespace placer
