#include "scoring/engine.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace placer {
namespace {

constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// Buffers reused by every decision of a thread, so the hot path allocates
// nothing per node (and after warm-up nothing per decision but the plugins' state).
struct Scratch {
  // The feasible list of a decision: its first entries (decide() keeps the
  // count; these only grow).
  std::vector<uint32_t> feasible;             // candidate indices
  std::vector<const NodeInfo*> feasibleNodes; // parallel to feasible
  std::vector<uint32_t> feasibleSlots;        // parallel to feasible: slots in the NodeResults
  std::vector<int64_t> scores;                // plugin-major: [plugin][feasible]
  std::vector<int64_t> totals;                // parallel to feasible
  FilterSink sink;
  NodeResults direct;                         // a decision's NodeResults without the cache
  // The node-by-node pass over one tile: the nodes to run the plugins on.
  std::vector<uint32_t> changed;
  std::vector<const NodeInfo*> changedNodes;
  std::vector<int64_t> changedScores;
  // The late filters over one tile.
  std::vector<uint32_t> lateIndex;            // tile positions still to check
  std::vector<const NodeInfo*> lateNodes;
  std::vector<const NodeInfo*> lateNodesLeft;  // parallel to lateIndex
  std::vector<uint32_t> lateVerdict;          // per tile position: 0, or 1 + index into lateRejections
  // Rejected nodes per verdict (index v - 1) of the NodeResults and of the
  // late filters, for a decision without detail (zeroed as one starts).
  std::vector<int32_t> verdictCounts;
  std::vector<int32_t> lateVerdictCounts;
};
thread_local Scratch scratch;

// Grows a scratch vector to at least n entries (never shrinks it).
template <class T>
void growTo(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Nodes per tile: small enough that a tile's NodeInfos stay in L1/L2 while
// every plugin runs over them.
constexpr size_t kTile = 64;
// The cache lines at the start of a NodeInfo that every decision reads:
// accounting, id, allocatable, taints, the cordon flag.
constexpr size_t kHotNodeBytes = 3 * 64;

// Rejections counted by Reasons identity first (plugins hand out the same
// Reasons for the same verdict), by text once at the end.
class ReasonTally {
 public:
  // Inline for the usual case, the same Reasons as the last rejected node's
  // (never empty ones: they are not counted, and their identity is null).
  void add(const Reasons& reasons, int32_t times) {
    if (last_ < counted_.size() && counted_[last_].first.identity() == reasons.identity()) {
      counted_[last_].second += times;
      return;
    }
    addElsewhere(reasons, times);
  }
  template <class F>
  void forEach(F&& f) const {
    for (const auto& [r, n] : counted_) f(r, n);
  }

 private:
  [[gnu::noinline]] void addElsewhere(const Reasons& reasons, int32_t times) {
    if (reasons.empty()) return;
    for (size_t i = 0; i < counted_.size(); ++i) {
      if (counted_[i].first.identity() == reasons.identity()) {
        counted_[i].second += times;
        last_ = i;
        return;
      }
    }
    last_ = counted_.size();
    counted_.emplace_back(reasons, times);
  }

  std::vector<std::pair<Reasons, int32_t>> counted_;
  size_t last_ = 0;
};

void countReasons(std::vector<std::pair<std::string, int32_t>>& counts, const std::vector<std::string>& reasons,
                  int32_t times) {
  for (const std::string& reason : reasons) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& e) { return e.first == reason; });
    if (it == counts.end())
      counts.emplace_back(reason, times);
    else
      it->second += times;
  }
}

std::string joinReasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const std::string& r : reasons) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

// A PreFilter/Filter/PreScore result that is neither success, skip nor a
// rejection fails the whole cycle, as upstream's framework does.
Status asFailure(std::string_view point, std::string_view plugin, const Status& status) {
  std::string message = "running \"";
  message.append(plugin).append("\" ").append(point).append(" plugin: ").append(joinReasons(status.reasons()));
  Status failure(Code::Error, std::move(message));
  failure.setPlugin(plugin);
  return failure;
}

bool hasName(std::string_view name, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Takes the nodes a filter rejected out of a list of candidates held as two
// parallel vectors, from `first` on (the rejections' positions count from
// `first`), keeping the others in order. onRejected(index, status) sees each
// rejected one; when it returns false the walk stops there and so does this
// (false), leaving the lists at their length.
template <class OnRejected>
bool dropRejected(std::vector<uint32_t>& indices, std::vector<const NodeInfo*>& nodes, size_t first,
                  const std::vector<std::pair<uint32_t, const Status*>>& rejected, OnRejected&& onRejected) {
  size_t kept = first;
  size_t j = first;
  for (const auto& [at, status] : rejected) {
    for (const size_t end = first + at; j < end; ++j, ++kept) {
      indices[kept] = indices[j];
      nodes[kept] = nodes[j];
    }
    if (!onRejected(indices[j], *status)) return false;
    ++j;
  }
  for (; j < indices.size(); ++j, ++kept) {
    indices[kept] = indices[j];
    nodes[kept] = nodes[j];
  }
  indices.resize(kept);
  nodes.resize(kept);
  return true;
}

// The index of a rejection among the results' distinct ones, plus one (0 is
// "feasible"); 0 when there are too many to keep. Matched by identity first
// (memoised and static rejections), then by text, so that a plugin handing out
// a fresh Status per rejection does not grow the list with every decision.
uint32_t verdictOf(NodeResults& r, const Status& status, std::string_view plugin, uint16_t filterIndex) {
  auto sameKind = [&](size_t i) {
    const Status& known = r.rejections[i];
    return known.code() == status.code() && known.plugin() == plugin && r.rejectionFilter[i] == filterIndex;
  };
  for (size_t i = r.rejections.size(); i-- > 0;)
    if (sameKind(i) && r.rejections[i].sharedReasons().identity() == status.sharedReasons().identity())
      return static_cast<uint32_t>(i + 1);
  for (size_t i = r.rejections.size(); i-- > 0;)
    if (sameKind(i) && r.rejections[i].sharedReasons() == status.sharedReasons()) return static_cast<uint32_t>(i + 1);
  if (r.rejections.size() >= (size_t{1} << 20)) return 0;
  Status copy = status;
  copy.setPlugin(plugin);
  r.rejections.push_back(std::move(copy));
  r.rejectionFilter.push_back(filterIndex);
  return static_cast<uint32_t>(r.rejections.size());
}

// The highest of the totals, the first position holding it, and whether a
// later one holds it too (the selection then compares names).
struct TopTotal {
  int64_t total = std::numeric_limits<int64_t>::min();
  size_t first = 0;
  bool tied = false;
  void add(int64_t t, size_t j) {
    if (t > total) {
      total = t;
      first = j;
      tied = false;
    } else if (t == total) {
      tied = true;
    }
  }
};

// totals[j] = the sum over k of rows[k][j] * weights[k], in the rows'
// order, through passes over up to kRowsPerPass rows at a time (the totals
// are read and written once per pass, not once per row); the last pass also
// finds their top. False when a value of a row lies outside
// [kMinNodeScore, kMaxNodeScore] (the totals and top are then meaningless).
constexpr size_t kRowsPerPass = 4;
template <size_t K, bool kFirst, bool kLast>
bool weighPass(const int64_t* const* rows, const int64_t* weights, size_t count, int64_t* totals, TopTotal& top) {
  constexpr uint64_t kSpan = static_cast<uint64_t>(kMaxNodeScore - kMinNodeScore);
  const int64_t* r[K];
  int64_t w[K];
#pragma GCC unroll 8
  for (size_t k = 0; k < K; ++k) {
    r[k] = rows[k];
    w[k] = weights[k];
  }
  bool outOfRange = false;
  TopTotal found;  // a local: in registers across the loop
  for (size_t j = 0; j < count; ++j) {
    int64_t total = kFirst ? 0 : totals[j];
#pragma GCC unroll 8
    for (size_t k = 0; k < K; ++k) {
      const int64_t v = r[k][j];
      outOfRange |= static_cast<uint64_t>(v - kMinNodeScore) > kSpan;
      total += v * w[k];
    }
    totals[j] = total;
    if constexpr (kLast) found.add(total, j);
  }
  if constexpr (kLast) top = found;
  return !outOfRange;
}
template <bool kFirst, bool kLast>
bool weighPassOf(size_t k, const int64_t* const* rows, const int64_t* weights, size_t count, int64_t* totals,
                 TopTotal& top) {
  switch (k) {
    case 1: return weighPass<1, kFirst, kLast>(rows, weights, count, totals, top);
    case 2: return weighPass<2, kFirst, kLast>(rows, weights, count, totals, top);
    case 3: return weighPass<3, kFirst, kLast>(rows, weights, count, totals, top);
    default: return weighPass<kRowsPerPass, kFirst, kLast>(rows, weights, count, totals, top);
  }
}
bool weighRows(std::span<const int64_t* const> rows, std::span<const int64_t> weights, size_t count, int64_t* totals,
               TopTotal& top) {
  if (rows.empty()) {
    std::fill(totals, totals + count, 0);
    top = TopTotal{0, 0, count > 1};
    return true;
  }
  bool inRange = true;
  for (size_t k = 0; k < rows.size(); k += kRowsPerPass) {
    const size_t n = std::min(kRowsPerPass, rows.size() - k);
    const bool first = k == 0;
    const bool last = k + n == rows.size();
    const int64_t* const* r = rows.data() + k;
    const int64_t* w = weights.data() + k;
    if (first && last)
      inRange &= weighPassOf<true, true>(n, r, w, count, totals, top);
    else if (first)
      inRange &= weighPassOf<true, false>(n, r, w, count, totals, top);
    else if (last)
      inRange &= weighPassOf<false, true>(n, r, w, count, totals, top);
    else
      inRange &= weighPassOf<false, false>(n, r, w, count, totals, top);
  }
  return inRange;
}

// The node-by-node filters that run, in profile order with their index
// there: those whose PreFilter did not skip.
void chooseNodeByNodeFilters(const Profile& profile, const Engine::Groups& groups,
                             const std::vector<std::string_view>& skipped, NodeResults& r) {
  const auto& filters = profile.filterPlugins();
  for (size_t i = 0; i < filters.size(); ++i) {
    if (!groups.filter[i] || hasName(filters[i]->name(), skipped)) continue;
    r.filters.push_back(filters[i]);
    r.filterIndex.push_back(static_cast<uint16_t>(i));
  }
}

// PreFilter of the node-by-node plugins of a cache entry (once per
// generation), or of a decision's NodeResults: the filters to run. False when
// one rejected the pod or failed: such results cannot be kept (the caller
// decides without the cache, which reports it).
bool prepareNodeByNode(const Profile& profile, const Engine::Groups& groups, NodeResults& r, const Pod& pod,
                       const ClusterView& view) {
  std::vector<std::string_view> skipped;
  const auto& preFilters = profile.preFilterPlugins();
  for (size_t i = 0; i < preFilters.size(); ++i) {
    if (!groups.preFilter[i]) continue;
    Status status = preFilters[i]->preFilter(r.state, pod, view);
    if (status.isSuccess()) continue;
    if (!status.isSkip()) return false;
    skipped.push_back(preFilters[i]->name());
  }
  chooseNodeByNodeFilters(profile, groups, skipped, r);
  return true;
}

// The nominated pods (ClusterView::nominatedPods) that count for `pod`, per
// node name: those of priority >= the pod's, other than the pod itself
// (kube-scheduler's addGENominatedPods). Sorted by node name; empty in
// almost every decision, which then costs nothing more.
class NominatedOverlay {
 public:
  NominatedOverlay(const Pod& pod, const ClusterView& view) {
    for (const auto& [node, list] : view.nominatedPods()) {
      std::vector<const NominatedPod*> counted;
      for (const NominatedPod& n : list)
        if (n.priority >= pod.priority && (pod.uid.empty() || n.uid != pod.uid)) counted.push_back(&n);
      if (!counted.empty()) nodes_.emplace_back(node, std::move(counted));
    }
    std::sort(nodes_.begin(), nodes_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  bool empty() const { return nodes_.empty(); }
  const std::vector<const NominatedPod*>* find(std::string_view node) const {
    auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node,
                               [](const auto& e, std::string_view name) { return e.first < name; });
    return it != nodes_.end() && it->first == node ? &it->second : nullptr;
  }

 private:
  std::vector<std::pair<std::string_view, std::vector<const NominatedPod*>>> nodes_;
};

// The first pass of RunFilterPluginsWithNominatedPods: every active filter,
// in profile order, on a copy of the node with its nominated pods added (and,
// for a plugin with PreFilterExtensions, its state with them counted there:
// upstream's AddPod); the first rejection (or failure), or nothing when all
// pass. The caller holds the node's accounting still. The node-by-node
// filters run with their own state and pod (a cache entry's), the late ones
// with the decision's.
std::optional<Status> filterWithNominated(const NodeInfo& node, const std::vector<const NominatedPod*>& nominated,
                                          const NodeResults& r, const Pod& rPod,
                                          const std::vector<std::pair<const FilterPlugin*, uint16_t>>& late,
                                          const CycleState& lateState, const Pod& pod, const ClusterView& view) {
  NodeInfo withNominated = node;
  for (const NominatedPod* n : nominated) withNominated.addUsage(n->requests, n->nonZeroRequests, n->hostPorts);
  size_t direct = 0;
  size_t later = 0;
  while (direct < r.filters.size() || later < late.size()) {
    const bool takeDirect =
        later == late.size() || (direct < r.filters.size() && r.filterIndex[direct] < late[later].second);
    const FilterPlugin* plugin = takeDirect ? r.filters[direct] : late[later].first;
    const CycleState& state = takeDirect ? r.state : lateState;
    const Pod& filtered = takeDirect ? rPod : pod;
    CycleState added;
    const auto* extensions = dynamic_cast<const PreFilterExtensions*>(plugin);
    const bool counted = extensions != nullptr &&
                         extensions->addNominatedPods(state, filtered, nominated, node, view, added);
    Status status = plugin->filter(counted ? added : state, filtered, withNominated);
    takeDirect ? ++direct : ++later;
    if (status.isSuccess()) continue;
    if (!status.isRejected()) status = asFailure("filter", plugin->name(), status);
    status.setPlugin(plugin->name());
    return status;
  }
  return std::nullopt;
}

// The node-by-node filters over one tile of nodes (held still by the
// caller's accounting guard): each active filter, in profile order, over the
// nodes still feasible, so the first that rejects a node gives its verdict,
// kept in r at its slot. On return `slots` and `nodes` hold the nodes that
// passed. A filter failure is kept as the node's verdict and in r.failure
// when `keepFailures`; otherwise (a cache entry) it, like a table of distinct
// rejections grown too big, makes this return false.
bool filterNodeByNode(NodeResults& r, const Pod& pod, std::vector<uint32_t>& slots,
                      std::vector<const NodeInfo*>& nodes, bool keepFailures, Scratch& s) {
  for (size_t f = 0; f < r.filters.size() && !slots.empty(); ++f) {
    const FilterPlugin* plugin = r.filters[f];
    s.sink.clear();
    plugin->filterAll(r.state, pod, nodes, s.sink);
    const auto& rejected = s.sink.rejected();
    if (rejected.empty()) continue;
    // Filters hand out one Status per verdict (static or memoised): the same
    // one as the node before has its verdict. Distinct Statuses of one sink
    // are distinct objects, so an address is never a stale match.
    const Status* last = nullptr;
    uint32_t lastVerdict = 0;
    const bool kept = dropRejected(slots, nodes, 0, rejected, [&](uint32_t slot, const Status& rejection) {
      if (&rejection == last) {
        r.verdicts[slot] = lastVerdict;
        return true;
      }
      const Status* status = &rejection;
      std::optional<Status> failure;
      if (!status->isRejected()) {
        if (!keepFailures) return false;
        failure = asFailure("filter", plugin->name(), *status);
        if (!r.failure) r.failure = failure;
        status = &*failure;
      }
      const uint32_t verdict = verdictOf(r, *status, plugin->name(), r.filterIndex[f]);
      if (verdict == 0) return false;
      r.verdicts[slot] = verdict;
      if (!failure) {
        last = &rejection;
        lastVerdict = verdict;
      }
      return true;
    });
    if (!kept) return false;
  }
  for (uint32_t slot : slots) r.verdicts[slot] = 0;
  return true;
}

// PreScore of the plugins of one group (node by node when `nodeByNode`, else
// the late ones over `nodes`), in profile order: a plugin whose results depend
// on other pods sets `podDependent` when it runs, a skip adds its name to
// `skipped`, and the first failure ends the pass, returned with its index.
std::optional<std::pair<Status, size_t>> runPreScores(const Profile& profile, const Engine::Groups& groups,
                                                      bool nodeByNode, CycleState& state, const Pod& pod,
                                                      std::span<const NodeInfo* const> nodes, const ClusterView& view,
                                                      bool& podDependent, std::vector<std::string_view>& skipped) {
  const auto& preScores = profile.preScorePlugins();
  for (size_t i = 0; i < preScores.size(); ++i) {
    if (static_cast<bool>(groups.preScore[i]) != nodeByNode) continue;
    Status status = preScores[i]->preScore(state, pod, nodes, view);
    if (status.isSuccess()) {
      if (!preScores[i]->resultsReusable()) podDependent = true;
      continue;
    }
    if (status.isSkip()) {
      skipped.push_back(preScores[i]->name());
      continue;
    }
    return std::pair(asFailure("prescore", preScores[i]->name(), status), i);
  }
  return std::nullopt;
}

// PreScore of the node-by-node plugins, once per NodeResults, before their
// first scores (these plugins read no feasible list): which of their score
// plugins score (r.scoring) and which PreScore skipped. A failure is kept in
// r when `keepFailures`; otherwise (a cache entry) this returns false.
bool preScoreNodeByNode(const Profile& profile, const Engine::Groups& groups, NodeResults& r, const Pod& pod,
                        const ClusterView& view, bool keepFailures) {
  if (r.preScored) return true;
  r.preScored = true;
  std::vector<std::string_view> skipped;
  if (auto failure = runPreScores(profile, groups, true, r.state, pod, {}, view, r.podDependent, skipped)) {
    if (!keepFailures) return false;
    r.preScoreFailure = std::move(failure->first);
    r.preScoreFailureIndex = failure->second;
  }
  const auto& scorePlugins = profile.scorePlugins();
  for (size_t p = 0; p < scorePlugins.size(); ++p) {
    if (!groups.score[p]) continue;
    (hasName(scorePlugins[p].plugin->name(), skipped) ? r.skipped : r.scoring).push_back(p);
  }
  return true;
}

// A cache entry's node-by-node pass over one tile of changed nodes: the
// filters, then (PreScore once) the scores of the nodes that pass, kept in
// r.raw at their slots (stride `stride`). False when the entry cannot be used.
bool runNodeByNode(const Profile& profile, const Engine::Groups& groups, NodeResults& r, const Pod& pod,
                   const ClusterView& view, std::vector<uint32_t>& slots, std::vector<const NodeInfo*>& nodes,
                   size_t stride, Scratch& s) {
  if (!filterNodeByNode(r, pod, slots, nodes, false, s)) return false;
  if (slots.empty()) return true;
  if (!preScoreNodeByNode(profile, groups, r, pod, view, false)) return false;
  const auto& scorePlugins = profile.scorePlugins();
  s.changedScores.resize(slots.size());
  for (size_t p : r.scoring) {
    scorePlugins[p].plugin->scoreAll(r.state, pod, nodes, s.changedScores);
    int32_t* raw = r.raw.data() + r.rawRow[p] * stride;
    for (size_t j = 0; j < slots.size(); ++j) {
      const int64_t score = s.changedScores[j];
      if (score < INT32_MIN || score > INT32_MAX) return false;
      raw[slots[j]] = static_cast<int32_t>(score);
    }
  }
  return true;
}

// Brings a cache entry up to date: the node-by-node plugins run again on the
// view's nodes whose version changed since its results were computed, each
// tile under its accounting stripe. False when the entry cannot be used.
bool refreshEntry(const Profile& profile, const Engine::Groups& groups, DecisionCache::Entry& e, const ClusterView& view) {
  const std::span<const NodeInfo> nodes = view.nodes();
  const size_t count = nodes.size();
  if (e.unusable || count == 0 || count > UINT32_MAX) return false;
  NodeResults& r = e.results;
  if (!e.prepared) {
    if (!prepareNodeByNode(profile, groups, r, e.pod, view)) {
      e.unusable = true;
      return false;
    }
    // Every node is computed below (every version is above 0); verdicts and
    // raw scores are written before they are read, so a recycled entry's old
    // values need no clearing.
    e.seenVersion = 0;
    r.verdicts.resize(count);
    r.rawRow.assign(profile.scorePlugins().size(), NodeResults::kNoRow);
    uint32_t rows = 0;
    for (size_t p = 0; p < groups.score.size(); ++p)
      if (groups.score[p]) r.rawRow[p] = rows++;
    r.raw.resize(rows * count);
    e.prepared = true;
  }
  Scratch& s = scratch;
  const std::span<const uint64_t> versions = view.nodeVersions();
  // Read before any tile: a node changed after this has a larger version,
  // seen now or by the next refresh.
  const uint64_t upTo = view.lastNodeVersion();
  static_assert(kTile == AccountingStripes::kNodesPerStripe, "a tile is one accounting stripe");
  for (size_t tileStart = 0; tileStart < count; tileStart += kTile) {
    const size_t tileEnd = std::min(count, tileStart + kTile);
    // The tile is one stripe: its first node's guard holds them all.
    const NodeInfo* first = &nodes[tileStart];
    AccountingReadGuard guard(view, std::span<const NodeInfo* const>(&first, 1));
    s.changed.clear();
    s.changedNodes.clear();
    for (size_t i = tileStart; i < tileEnd; ++i) {
      if (versions[i] <= e.seenVersion) continue;
      s.changed.push_back(static_cast<uint32_t>(i));
      s.changedNodes.push_back(&nodes[i]);
    }
    if (s.changed.empty()) continue;
    if (!runNodeByNode(profile, groups, r, e.pod, view, s.changed, s.changedNodes, count, s)) {
      e.unusable = true;
      return false;
    }
  }
  e.seenVersion = upTo;
  return true;
}

// One decision over `count` candidates, the i-th being nodeAt(i) with its
// node-by-node results at slot slotAt(i) of `r`: from a refreshed cache entry
// (r = its results, cState its state, cPod its pod), or computed here
// (entry == false: r is this decision's, filled tile by tile). Then the late
// plugins: their PreFilter, their filters over the candidates in tiles
// (before the node-by-node verdict in profile order), PreScore over the
// feasible list, their scores; normalising, weighting and selecting over all.
template <class NodeAt, class SlotAt>
Decision decide(const Profile& profile, const Engine::Groups& groups, const Pod& pod, const ClusterView& view,
                size_t count, NodeAt nodeAt, SlotAt slotAt, Detail detail, NodeResults* cached, const Pod* cachedPod) {
  Decision decision;
  decision.nodeCount = count;
  const bool full = detail != Detail::Summary;
  const bool perPlugin = detail == Detail::Full;
  const auto& scorePlugins = profile.scorePlugins();
  if (perPlugin) {
    decision.scorePlugins.reserve(scorePlugins.size());
    for (const WeightedScorePlugin& p : scorePlugins) decision.scorePlugins.push_back(p.plugin->name());
  }
  if (full) {
    decision.nodes.resize(count);
    for (size_t i = 0; i < count; ++i) decision.nodes[i].node = &nodeAt(i);
  }
  if (count == 0) return decision;

  Scratch& s = scratch;
  CycleState lateState;
  NodeResults& r = cached ? *cached : s.direct;
  const Pod& rPod = cached ? *cachedPod : pod;
  if (!cached) r.clear();
  CycleState& state = cached ? lateState : r.state;  // without the cache, one state for all

  // PreFilter, in profile order (a cache entry's node-by-node ones ran when it
  // was prepared, and passed): a Skip switches off the same plugin's Filter; a
  // rejection (or an error) ends the cycle with the same status on every node.
  std::vector<std::string_view> skippedFilters;
  const auto& preFilters = profile.preFilterPlugins();
  for (size_t i = 0; i < preFilters.size(); ++i) {
    const PreFilterPlugin* plugin = preFilters[i];
    if (cached && groups.preFilter[i]) continue;
    Status status = plugin->preFilter(state, pod, view);
    if (status.isSuccess()) {
      if (!plugin->resultsReusable()) decision.podDependent = true;
      continue;
    }
    if (status.isSkip()) {
      skippedFilters.push_back(plugin->name());
      continue;
    }
    status.setPlugin(plugin->name());
    if (!status.isRejected()) status = asFailure("prefilter", plugin->name(), status);
    countReasons(decision.reasonCounts, status.reasons(), static_cast<int32_t>(count));
    if (full) {
      for (NodeOutcome& outcome : decision.nodes) {
        outcome.code = status.code();
        outcome.reasons = status.sharedReasons();
        outcome.failedPlugin = status.plugin();
      }
    }
    if (status.code() == Code::Error)
      decision.failure = std::move(status);
    else
      decision.preFilterRejection = std::move(status);
    std::sort(decision.reasonCounts.begin(), decision.reasonCounts.end());
    return decision;
  }

  const auto& filters = profile.filterPlugins();
  if (!cached) {
    chooseNodeByNodeFilters(profile, groups, skippedFilters, r);
    r.verdicts.resize(count);
  }
  // The late filters, in profile order, with their index there.
  std::vector<std::pair<const FilterPlugin*, uint16_t>> late;
  for (size_t i = 0; i < filters.size(); ++i)
    if (!groups.filter[i] && !hasName(filters[i]->name(), skippedFilters))
      late.emplace_back(filters[i], static_cast<uint16_t>(i));
  std::deque<Status> lateRejections;  // distinct, plugin set
  std::vector<uint16_t> lateRejectionFilter;
  std::optional<Status> lateFailure;
  const NominatedOverlay nominated(pod, view);
  const bool lockTiles = !cached || !nominated.empty() ||
                         std::any_of(late.begin(), late.end(), [](const auto& f) { return f.first->readsAccounting(); });

  // Node by node, tile by tile; then the late filters over the tile. The
  // final verdict of a node is the first rejection in profile order.
  // Without the cache, late filters and nominated pods, that is the
  // node-by-node one.
  const bool onlyNodeByNode = !cached && late.empty() && nominated.empty();
  ReasonTally tally;
  // Rejected nodes counted by verdict (rejectWithVerdict, below): zeroed
  // here, not after the last one, so that nothing a decision left behind
  // (one ended by an exception) counts in the next.
  std::fill(s.verdictCounts.begin(), s.verdictCounts.end(), 0);
  std::fill(s.lateVerdictCounts.begin(), s.lateVerdictCounts.end(), 0);
  // The feasible list is written by index (no push_back per node): its
  // vectors only grow, `feasibleSoFar` is its length.
  size_t feasibleSoFar = 0;
  growTo(s.feasible, count);
  growTo(s.feasibleNodes, count);
  growTo(s.feasibleSlots, count);
  growTo(s.lateIndex, kTile);
  growTo(s.lateNodesLeft, kTile);
  s.lateVerdict.resize(kTile);
  // Raw scores go to s.scores, plugin-major over the feasible list. Without
  // the cache the node-by-node plugins score each tile's feasible nodes as
  // soon as it is filtered, straight to their place there (rows then have
  // the candidate count as stride, the most there can be); from a cache
  // entry they are gathered from its slots once filtering ends.
  const bool scoring = detail != Detail::FilterOnly;
  if (!cached && scoring) s.scores.resize(scorePlugins.size() * count);
  for (size_t tileStart = 0; tileStart < count; tileStart += kTile) {
    const size_t tileEnd = std::min(count, tileStart + kTile);
    const size_t n = tileEnd - tileStart;
    s.lateNodes.resize(n);
    if (!cached) {
      // The node-by-node filters' candidates too: every node of the tile.
      s.changed.resize(n);
      s.changedNodes.resize(n);
      for (size_t t = 0; t < n; ++t) {
        const NodeInfo* node = &nodeAt(tileStart + t);
        s.lateNodes[t] = node;
        s.changedNodes[t] = node;
        s.changed[t] = static_cast<uint32_t>(tileStart + t);
      }
    } else {
      for (size_t t = 0; t < n; ++t) s.lateNodes[t] = &nodeAt(tileStart + t);
    }
    // What every filter and scorer reads of the next tile's nodes (their
    // first cache lines, see NodeInfo) is fetched while this one is worked on.
    // Not from a cache entry: its node-by-node results are in the entry, and
    // the late plugins find a view node's labels and counts by its id, which
    // is its position (ClusterView::idsArePositions), without reading it;
    // fetching 5,000 nodes' lines there only stalled on memory.
    if (!cached) {
      for (size_t i = tileEnd; i < std::min(count, tileEnd + kTile); ++i) {
        const char* line = reinterpret_cast<const char*>(&nodeAt(i));
        for (size_t offset = 0; offset < kHotNodeBytes; offset += 64) __builtin_prefetch(line + offset);
      }
    }
    // The tile's accounting holds still while it is filtered (and scored),
    // when anything here reads it: not for a cache entry's decision whose
    // late filters read none and that has no nominated pod to add.
    AccountingReadGuard guard(view, lockTiles ? std::span<const NodeInfo* const>(s.lateNodes.data(), n)
                                              : std::span<const NodeInfo* const>());
    // (False only past 2^20 distinct rejections: s.changed is then not the
    // list of the nodes that passed.)
    const bool filteredWhole = cached || filterNodeByNode(r, pod, s.changed, s.changedNodes, true, s);
    const size_t tileFeasible = feasibleSoFar;
    std::fill(s.lateVerdict.begin(), s.lateVerdict.begin() + n, 0);
    for (const auto& [plugin, index] : late) {
      // The nodes still without a late verdict whose node-by-node verdict, if
      // any, comes later in profile order.
      size_t left = 0;
      for (size_t t = 0; t < n; ++t) {
        if (s.lateVerdict[t] != 0) continue;
        const uint32_t v = r.verdicts[slotAt(tileStart + t)];
        if (v != 0 && r.rejectionFilter[v - 1] < index) continue;
        s.lateIndex[left] = static_cast<uint32_t>(t);
        s.lateNodesLeft[left] = s.lateNodes[t];
        ++left;
      }
      if (left == 0) continue;
      s.sink.clear();
      plugin->filterAll(state, pod, std::span<const NodeInfo* const>(s.lateNodesLeft.data(), left), s.sink);
      for (const auto& [at, rejection] : s.sink.rejected()) {
        Status status = *rejection;
        if (!status.isRejected()) {
          status = asFailure("filter", plugin->name(), status);
          if (!lateFailure) lateFailure = status;
        }
        status.setPlugin(plugin->name());
        lateRejections.push_back(std::move(status));
        lateRejectionFilter.push_back(index);
        s.lateVerdict[s.lateIndex[at]] = static_cast<uint32_t>(lateRejections.size());
      }
    }
    // A node's final verdict, a rejection: counted, and kept with detail.
    auto rejectNode = [&](size_t i, const Status& rejection) {
      tally.add(rejection.sharedReasons(), 1);
      if (full) {
        NodeOutcome& outcome = decision.nodes[i];
        outcome.code = rejection.code();
        outcome.failedPlugin = rejection.plugin();
        outcome.reasons = rejection.sharedReasons();
      }
    };
    // A node whose final verdict is v (1 + its index in `rejections`): with
    // per-node detail, rejected as it is met; without, counted by verdict,
    // and each distinct rejection tallied once after the last tile (a
    // tally's sums do not depend on the order).
    auto rejectWithVerdict = [&](size_t i, std::vector<int32_t>& counts, const std::deque<Status>& rejections,
                                 uint32_t v) {
      if (full) {
        rejectNode(i, rejections[v - 1]);
        return;
      }
      growTo(counts, v);
      ++counts[v - 1];
    };
    if (onlyNodeByNode && filteredWhole) {
      // Nothing else to check: the nodes that passed the node-by-node
      // filters (s.changed, in order; without the cache a node's slot is its
      // index) are the tile's feasible ones, the others keep their verdict.
      const size_t passed = s.changed.size();
      std::copy_n(s.changed.begin(), passed, s.feasible.begin() + static_cast<ptrdiff_t>(feasibleSoFar));
      std::copy_n(s.changed.begin(), passed, s.feasibleSlots.begin() + static_cast<ptrdiff_t>(feasibleSoFar));
      std::copy_n(s.changedNodes.begin(), passed, s.feasibleNodes.begin() + static_cast<ptrdiff_t>(feasibleSoFar));
      feasibleSoFar += passed;
      for (size_t i = tileStart; passed < n && i < tileEnd; ++i)
        if (const uint32_t v = r.verdicts[i]; v != 0) rejectWithVerdict(i, s.verdictCounts, r.rejections, v);
    } else {
      for (size_t t = 0; t < n; ++t) {
        const size_t i = tileStart + t;
        const uint32_t slot = slotAt(i);
        // Nominated pods that count here: the pod must also pass with them
        // added, and when it does not, that pass's rejection is the verdict.
        if (!nominated.empty()) {
          if (const auto* added = nominated.find(s.lateNodes[t]->name())) {
            if (std::optional<Status> withNominated =
                    filterWithNominated(*s.lateNodes[t], *added, r, rPod, late, state, pod, view)) {
              if (withNominated->code() == Code::Error && !lateFailure) lateFailure = withNominated;
              rejectNode(i, *withNominated);
              continue;
            }
          }
        }
        if (const uint32_t lateV = s.lateVerdict[t]; lateV != 0) {
          rejectWithVerdict(i, s.lateVerdictCounts, lateRejections, lateV);
        } else if (const uint32_t v = r.verdicts[slot]; v != 0) {
          rejectWithVerdict(i, s.verdictCounts, r.rejections, v);
        } else {
          s.feasible[feasibleSoFar] = static_cast<uint32_t>(i);
          s.feasibleNodes[feasibleSoFar] = s.lateNodes[t];
          s.feasibleSlots[feasibleSoFar] = slot;
          ++feasibleSoFar;
        }
      }
    }
    if (!cached && scoring && feasibleSoFar > tileFeasible &&
        preScoreNodeByNode(profile, groups, r, pod, view, true) && !r.preScoreFailure) {
      const size_t k = feasibleSoFar - tileFeasible;
      const std::span<const NodeInfo* const> feasibleHere(s.feasibleNodes.data() + tileFeasible, k);
      for (size_t p : r.scoring)
        scorePlugins[p].plugin->scoreAll(r.state, pod, feasibleHere,
                                         std::span<int64_t>(s.scores.data() + p * count + tileFeasible, k));
    }
  }
  // The rejections counted by verdict (rejectWithVerdict), tallied.
  auto tallyCounted = [&](const std::vector<int32_t>& counts, const std::deque<Status>& rejections) {
    for (size_t v = 0; v < counts.size(); ++v)
      if (counts[v] != 0) tally.add(rejections[v].sharedReasons(), counts[v]);
  };
  tallyCounted(s.verdictCounts, r.rejections);
  tallyCounted(s.lateVerdictCounts, lateRejections);
  tally.forEach([&](const Reasons& reasons, int32_t times) { countReasons(decision.reasonCounts, reasons, times); });
  std::sort(decision.reasonCounts.begin(), decision.reasonCounts.end());
  if (r.failure && !cached) decision.failure = r.failure;
  if (lateFailure && !decision.failure) decision.failure = lateFailure;

  const size_t feasibleCount = feasibleSoFar;
  decision.feasibleCount = feasibleCount;
  if (perPlugin)
    for (NodeOutcome& outcome : decision.nodes)
      if (outcome.code == Code::Success) outcome.pluginScores.assign(scorePlugins.size(), 0);
  if (feasibleCount == 0 || decision.failure) return decision;
  if (detail == Detail::FilterOnly) {
    if (feasibleCount == 1) decision.selected = s.feasibleNodes[0];
    return decision;
  }

  // PreScore of the late plugins over the feasible list; a failure of either
  // group, the first in profile order, fails the cycle.
  std::vector<std::string_view> skippedScores;
  const std::span<const NodeInfo* const> feasibleNodes(s.feasibleNodes.data(), feasibleCount);
  auto latePreScore =
      runPreScores(profile, groups, false, state, pod, feasibleNodes, view, decision.podDependent, skippedScores);
  std::optional<Status> preScoreFailure;
  if (latePreScore) preScoreFailure = std::move(latePreScore->first);
  if (r.preScoreFailure && (!latePreScore || r.preScoreFailureIndex < latePreScore->second))
    preScoreFailure = r.preScoreFailure;
  if (preScoreFailure) {
    decision.failure = std::move(preScoreFailure);
    return decision;
  }
  if (r.podDependent) decision.podDependent = true;

  // The raw scores the node-by-node plugins did not write yet: a cache
  // entry's from its slots; the late plugins', computed now, tile by tile.
  const size_t rowStride = cached ? feasibleCount : count;
  if (cached) s.scores.resize(scorePlugins.size() * feasibleCount);
  std::vector<char> skipped(scorePlugins.size(), 0);
  for (size_t p : r.skipped) skipped[p] = 1;
  // Late plugins whose PreScore scored the feasible list give their
  // normalised scores at once (ScorePlugin::normalizedScoresOfFeasible).
  std::vector<char> normalized(scorePlugins.size(), 0);
  for (size_t p = 0; p < scorePlugins.size(); ++p) {
    int64_t* out = s.scores.data() + p * rowStride;
    if (groups.score[p]) {
      if (skipped[p] || !cached) continue;
      const int32_t* raw = r.raw.data() + r.rawRow[p] * view.nodes().size();
      for (size_t j = 0; j < feasibleCount; ++j) out[j] = raw[s.feasibleSlots[j]];
      continue;
    }
    if (hasName(scorePlugins[p].plugin->name(), skippedScores)) {
      skipped[p] = 1;
      continue;
    }
    if (scorePlugins[p].plugin->normalizedScoresOfFeasible(state, pod, feasibleNodes,
                                                           std::span<int64_t>(out, feasibleCount))) {
      normalized[p] = 1;
      continue;
    }
    for (size_t tileStart = 0; tileStart < feasibleCount; tileStart += kTile) {
      const size_t n = std::min(kTile, feasibleCount - tileStart);
      std::span<const NodeInfo* const> tile(s.feasibleNodes.data() + tileStart, n);
      AccountingReadGuard guard(view, scorePlugins[p].plugin->readsAccounting() ? tile
                                                                                : std::span<const NodeInfo* const>());
      scorePlugins[p].plugin->scoreAll(state, pod, tile, std::span<int64_t>(out + tileStart, n));
    }
  }

  // NormalizeScore, weight and select. A skipped plugin scores 0 (its row
  // is only read for per-plugin detail). Every normaliser runs before the
  // weighted sum, which reads the rows of up to kRowsPerPass plugins per
  // pass; a score outside [0, 100] fails the cycle with the first such
  // plugin in profile order and its first such score, as when each plugin
  // was checked right after its normaliser (normalisers change only their
  // own row).
  std::vector<const int64_t*> rows;
  std::vector<int64_t> weights;
  for (size_t p = 0; p < scorePlugins.size(); ++p) {
    const WeightedScorePlugin& weighted = scorePlugins[p];
    std::span<int64_t> scores(s.scores.data() + p * rowStride, feasibleCount);
    if (skipped[p]) {
      if (perPlugin) std::fill(scores.begin(), scores.end(), 0);
      continue;
    }
    if (groups.score[p])
      weighted.plugin->normalizeScores(r.state, rPod, scores);
    else if (!normalized[p])
      weighted.plugin->normalizeScores(state, pod, scores);
    rows.push_back(scores.data());
    weights.push_back(weighted.weight);
  }
  s.totals.resize(feasibleCount);
  TopTotal top;
  if (!weighRows(rows, weights, feasibleCount, s.totals.data(), top)) {
    for (size_t p = 0; p < scorePlugins.size(); ++p) {
      if (skipped[p]) continue;
      const int64_t* scores = s.scores.data() + p * rowStride;
      const int64_t* bad = std::find_if(scores, scores + feasibleCount,
                                        [](int64_t v) { return v < kMinNodeScore || v > kMaxNodeScore; });
      if (bad == scores + feasibleCount) continue;
      const std::string_view name = scorePlugins[p].plugin->name();
      Status failure(Code::Error, "plugin \"" + std::string(name) + "\" returns an invalid score " +
                                      std::to_string(*bad) + ", it should in the range of [0, 100] after normalizing");
      failure.setPlugin(name);
      decision.failure = std::move(failure);
      return decision;
    }
  }

  // Selection: the highest total; ties to the byte-wise smallest name. The
  // maximum first (found by the weighted sum), so that names are compared
  // only among the nodes that reach it: two of the view's nodes by their
  // place in its byte-wise order of names (ClusterView::nameRank, an integer
  // by position: a cluster of alike nodes ties on thousands), any other pair
  // by the names themselves.
  size_t best = top.first;
  if (top.tied) {
    const NodeInfo* bestNode = s.feasibleNodes[best];
    for (size_t j = best + 1; j < feasibleCount; ++j) {
      if (s.totals[j] != top.total) continue;
      const NodeInfo* node = s.feasibleNodes[j];
      const bool smaller = view.holds(*node) && view.holds(*bestNode) ? view.nameRank(*node) < view.nameRank(*bestNode)
                                                                        : node->name() < bestNode->name();
      if (smaller) {
        best = j;
        bestNode = node;
      }
    }
  }
  decision.selected = s.feasibleNodes[best];
  decision.selectedTotal = s.totals[best];

  if (full) {
    for (size_t j = 0; j < feasibleCount; ++j) {
      NodeOutcome& outcome = decision.nodes[s.feasible[j]];
      if (perPlugin)
        for (size_t p = 0; p < scorePlugins.size(); ++p) outcome.pluginScores[p] = s.scores[p * rowStride + j];
      outcome.total = s.totals[j];
    }
  }
  return decision;
}

Engine::Groups groupsOf(const Profile& profile, bool cached) {
  // A plugin runs node by node unless its PreScore reads the feasible list
  // (and, for a cache entry, unless its results are not reusable).
  std::vector<const Plugin*> late;
  for (const PreScorePlugin* p : profile.preScorePlugins())
    if (p->preScoreReadsFeasibleNodes()) late.push_back(p);
  auto nodeByNode = [&](const Plugin* p) {
    if (std::find(late.begin(), late.end(), p) != late.end()) return false;
    return !cached || p->resultsReusable();
  };
  Engine::Groups g;
  for (const PreFilterPlugin* p : profile.preFilterPlugins()) g.preFilter.push_back(nodeByNode(p));
  for (const FilterPlugin* p : profile.filterPlugins()) g.filter.push_back(nodeByNode(p));
  for (const PreScorePlugin* p : profile.preScorePlugins()) g.preScore.push_back(nodeByNode(p));
  for (const WeightedScorePlugin& p : profile.scorePlugins()) g.score.push_back(nodeByNode(p.plugin));
  g.anyNodeByNode = std::count(g.filter.begin(), g.filter.end(), 1) + std::count(g.score.begin(), g.score.end(), 1) > 0;
  return g;
}
}  // namespace

Engine::Engine(std::shared_ptr<const Profile> profile, size_t cacheCapacity)
    : profile_(std::move(profile)), direct_(groupsOf(*profile_, false)), cached_(groupsOf(*profile_, true)) {
  if (cacheCapacity > 0 && cached_.anyNodeByNode) cache_ = std::make_shared<DecisionCache>(cacheCapacity);
}

Decision Engine::place(const Pod& pod, const ClusterView& view, Detail detail) const {
  std::span<const NodeInfo> nodes = view.nodes();
  auto nodeAt = [&](size_t i) -> const NodeInfo& { return nodes[i]; };
  auto position = [](size_t i) { return static_cast<uint32_t>(i); };
  if (cache_ && (detail == Detail::Summary || detail == Detail::FilterOnly || detail == Detail::Totals)) {
    if (std::optional<DecisionCache::Lease> entry = cache_->lease(pod, view.staticGeneration());
        entry && refreshEntry(*profile_, cached_, **entry, view))
      return decide(*profile_, cached_, pod, view, nodes.size(), nodeAt, position, detail, &(*entry)->results,
                    &(*entry)->pod);
  }
  return decide(*profile_, direct_, pod, view, nodes.size(), nodeAt, position, detail, nullptr, nullptr);
}

Decision Engine::evaluate(const Pod& pod, const ClusterView& view, std::span<const NodeInfo* const> candidates,
                          Detail detail, CacheUse cacheUse) const {
  // The cache holds results for the view's own nodes: candidates that are
  // copies (the extender's full Nodes) are computed directly.
  const std::span<const NodeInfo> nodes = view.nodes();
  auto nodeAt = [&](size_t i) -> const NodeInfo& { return *candidates[i]; };
  if (cache_ && cacheUse == CacheUse::Reuse &&
      (detail == Detail::FilterOnly || detail == Detail::Totals || detail == Detail::Summary) &&
      std::all_of(candidates.begin(), candidates.end(), [&](const NodeInfo* n) { return view.holds(*n); })) {
    if (std::optional<DecisionCache::Lease> entry = cache_->lease(pod, view.staticGeneration());
        entry && refreshEntry(*profile_, cached_, **entry, view))
      return decide(*profile_, cached_, pod, view, candidates.size(), nodeAt,
                    [&](size_t i) { return static_cast<uint32_t>(candidates[i] - nodes.data()); }, detail,
                    &(*entry)->results, &(*entry)->pod);
  }
  return decide(*profile_, direct_, pod, view, candidates.size(), nodeAt,
                [](size_t i) { return static_cast<uint32_t>(i); }, detail, nullptr, nullptr);
}

std::string Decision::unschedulableMessage() const {
  if (failure) return joinReasons(failure->reasons());
  if (nodeCount == 0) return std::string(kNoNodesAvailable);
  std::string message = "0/" + std::to_string(nodeCount) + " nodes are available:";
  if (preFilterRejection) {
    message += " " + joinReasons(preFilterRejection->reasons()) + ".";
    return message;
  }
  // Upstream sorts the formatted "<count> <reason>" strings, so "10 x" sorts before "2 y".
  std::vector<std::string> entries;
  entries.reserve(reasonCounts.size());
  for (const auto& [reason, n] : reasonCounts) entries.push_back(std::to_string(n) + " " + reason);
  std::sort(entries.begin(), entries.end());
  if (!entries.empty()) {
    message += " ";
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) message += ", ";
      message += entries[i];
    }
    message += ".";
  }
  return message;
}

}  // namespace placer
