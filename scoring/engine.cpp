#include "scoring/engine.h"

#include <algorithm>
#include <optional>
#include <string>

namespace placer {
namespace {

constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// Buffers reused by every decision of a thread, so the hot path allocates
// nothing per node (and after warm-up nothing per decision but the plugins' state).
struct Scratch {
  std::vector<uint32_t> feasible;             // candidate indices still feasible
  std::vector<const NodeInfo*> feasibleNodes; // parallel to feasible
  std::vector<int64_t> scores;                // plugin-major: [plugin][feasible]
  std::vector<int64_t> totals;                // parallel to feasible
  std::vector<size_t> scoring;                // score plugins not skipped
  FilterSink sink;
  // The decision cache's refresh: the nodes of a tile to run the plugins on.
  std::vector<uint32_t> changed;
  std::vector<const NodeInfo*> changedNodes;
  std::vector<int64_t> changedScores;
  std::vector<int32_t> verdictCounts;
  std::vector<uint32_t> feasiblePositions;  // assembleCached: parallel to feasible, positions in the view
};
thread_local Scratch scratch;

// Nodes per tile: small enough that a tile's NodeInfos stay in L1/L2 while
// every plugin runs over them.
constexpr size_t kTile = 64;

// Rejections counted by Reasons identity first (plugins hand out the same
// Reasons for the same verdict), by text once at the end.
class ReasonTally {
 public:
  void add(const Reasons& reasons, int32_t times) {
    if (reasons.empty()) return;
    if (last_ < counted_.size() && counted_[last_].first.identity() == reasons.identity()) {
      counted_[last_].second += times;
      return;
    }
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
  template <class F>
  void forEach(F&& f) const {
    for (const auto& [r, n] : counted_) f(r, n);
  }

 private:
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
// (false), leaving the lists as they were.
template <class OnRejected>
bool dropRejected(std::vector<uint32_t>& indices, std::vector<const NodeInfo*>& nodes, size_t first,
                  const std::vector<std::pair<uint32_t, const Status*>>& rejected, OnRejected&& onRejected) {
  size_t kept = first;
  size_t next = 0;  // next rejection
  for (size_t j = first; j < indices.size(); ++j) {
    if (next < rejected.size() && rejected[next].first == j - first) {
      if (!onRejected(indices[j], *rejected[next++].second)) return false;
      continue;
    }
    indices[kept] = indices[j];
    nodes[kept] = nodes[j];
    ++kept;
  }
  indices.resize(kept);
  nodes.resize(kept);
  return true;
}

// NormalizeScore, weight and select over the raw scores of the feasible
// nodes (s.scores, plugin-major with stride `stride`; s.feasibleNodes). Sets
// decision.selected, or decision.failure and returns false.
bool normalizeAndSelect(Decision& decision, const Profile& profile, const CycleState& state, const Pod& pod,
                        std::span<const std::string_view> skippedScores, size_t stride, Scratch& s) {
  const auto& scorePlugins = profile.scorePlugins();
  const size_t feasibleCount = decision.feasibleCount;
  // Totals are the weighted sums; a skipped plugin scores 0.
  s.totals.assign(feasibleCount, 0);
  for (size_t p = 0; p < scorePlugins.size(); ++p) {
    const WeightedScorePlugin& weighted = scorePlugins[p];
    std::span<int64_t> scores(s.scores.data() + p * stride, feasibleCount);
    if (!skippedScores.empty() && hasName(weighted.plugin->name(), skippedScores)) {
      std::fill(scores.begin(), scores.end(), 0);
      continue;
    }
    weighted.plugin->normalizeScores(state, pod, scores);
    int64_t low = kMinNodeScore;
    int64_t high = kMaxNodeScore;
    for (size_t j = 0; j < feasibleCount; ++j) {
      low = std::min(low, scores[j]);
      high = std::max(high, scores[j]);
      s.totals[j] += scores[j] * weighted.weight;
    }
    if (low < kMinNodeScore || high > kMaxNodeScore) {
      int64_t score = *std::find_if(scores.begin(), scores.end(),
                                    [](int64_t v) { return v < kMinNodeScore || v > kMaxNodeScore; });
      Status failure(Code::Error, "plugin \"" + std::string(weighted.plugin->name()) + "\" returns an invalid score " +
                                      std::to_string(score) + ", it should in the range of [0, 100] after normalizing");
      failure.setPlugin(weighted.plugin->name());
      decision.failure = std::move(failure);
      return false;
    }
  }

  // Selection: the highest total; ties to the byte-wise smallest name. The
  // maximum first, over the totals alone, so that names (one cache miss per
  // node) are compared only among the nodes that reach it.
  const int64_t top = *std::max_element(s.totals.begin(), s.totals.end());
  size_t best = static_cast<size_t>(std::find(s.totals.begin(), s.totals.end(), top) - s.totals.begin());
  for (size_t j = best + 1; j < feasibleCount; ++j)
    if (s.totals[j] == top && s.feasibleNodes[j]->name() < s.feasibleNodes[best]->name()) best = j;
  decision.selected = s.feasibleNodes[best];
  decision.selectedTotal = s.totals[best];
  return true;
}

template <class NodeAt>
Decision run(const Profile& profile, const Pod& pod, const ClusterView& view, size_t count, NodeAt nodeAt,
             Detail detail) {
  Decision decision;
  decision.nodeCount = count;
  const bool full = detail != Detail::Summary;  // per-node outcomes
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

  CycleState state;

  // PreFilter: a Skip switches off the same plugin's Filter; a rejection
  // (or an error) ends the cycle with the same status on every node.
  std::vector<std::string_view> skippedFilters;
  for (const PreFilterPlugin* plugin : profile.preFilterPlugins()) {
    Status status = plugin->preFilter(state, pod, view);
    if (status.isSuccess()) continue;
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
  // Filters to run, in order; the skipped ones left out once, not per node.
  const FilterPlugin* active[64];
  size_t activeCount = 0;
  std::vector<const FilterPlugin*> activeOverflow;
  for (const FilterPlugin* f : filters) {
    if (!skippedFilters.empty() && hasName(f->name(), skippedFilters)) continue;
    if (activeCount < 64)
      active[activeCount++] = f;
    else
      activeOverflow.push_back(f);
  }

  Scratch& s = scratch;
  s.feasible.clear();
  s.feasibleNodes.clear();
  s.feasible.reserve(count);
  s.feasibleNodes.reserve(count);
  // Raw scores, plugin-major with stride `count`: [plugin][position in the feasible list].
  s.scores.resize(scorePlugins.size() * count);

  // PreScore, run once. When no PreScore plugin reads the feasible list, it
  // runs as soon as the first node passes the filters and every tile is scored
  // right after it is filtered, while its NodeInfos are still in cache (one
  // pass over the nodes instead of two). Otherwise it runs on the whole
  // feasible list after filtering, as upstream does. Either way a cycle with
  // no feasible node never runs it, and a filter failure outranks its failure.
  const bool fused = detail != Detail::FilterOnly && std::none_of(profile.preScorePlugins().begin(), profile.preScorePlugins().end(),
                                  [](const PreScorePlugin* p) { return p->preScoreReadsFeasibleNodes(); });
  bool preScored = false;
  std::optional<Status> preScoreFailure;
  std::vector<std::string_view> skippedScores;
  std::vector<size_t>& scoring = s.scoring;  // score plugins not skipped
  auto preScore = [&](std::span<const NodeInfo* const> feasible) {
    preScored = true;
    for (const PreScorePlugin* plugin : profile.preScorePlugins()) {
      Status status = plugin->preScore(state, pod, feasible, view);
      if (status.isSuccess()) continue;
      if (status.isSkip()) {
        skippedScores.push_back(plugin->name());
        continue;
      }
      preScoreFailure = asFailure("prescore", plugin->name(), status);
      return;
    }
    scoring.clear();
    for (size_t p = 0; p < scorePlugins.size(); ++p)
      if (skippedScores.empty() || !hasName(scorePlugins[p].plugin->name(), skippedScores)) scoring.push_back(p);
  };
  // `guarded`: the caller holds the nodes' accounting already (the fused
  // tile), and a stripe may not be locked twice by one thread.
  auto scoreRange = [&](size_t from, size_t to, bool guarded) {
    for (size_t tileStart = from; tileStart < to; tileStart += kTile) {
      const size_t n = std::min(kTile, to - tileStart);
      std::span<const NodeInfo* const> tile(s.feasibleNodes.data() + tileStart, n);
      std::optional<AccountingReadGuard> guard;
      if (!guarded) guard.emplace(view, tile);
      for (size_t p : scoring)
        scorePlugins[p].plugin->scoreAll(state, pod, tile, std::span<int64_t>(s.scores.data() + p * count + tileStart, n));
    }
  };

  // Filter in tiles of nodes: each active plugin runs over the tile's nodes
  // still feasible, in profile order, so the first plugin that rejects a node
  // decides its reasons (as when each node runs the plugins in turn), while
  // a tile's NodeInfos stay in cache from one plugin to the next.
  ReasonTally tally;
  const size_t activeTotal = activeCount + activeOverflow.size();
  for (size_t tileStart = 0; tileStart < count; tileStart += kTile) {
    const size_t tileEnd = std::min(count, tileStart + kTile);
    const size_t first = s.feasible.size();
    for (size_t i = tileStart; i < tileEnd; ++i) {
      s.feasible.push_back(static_cast<uint32_t>(i));
      s.feasibleNodes.push_back(&nodeAt(i));
    }
    // The tile's accounting holds still while it is filtered (and, fused, scored).
    AccountingReadGuard guard(view, std::span<const NodeInfo* const>(s.feasibleNodes.data() + first, tileEnd - tileStart));
    for (size_t f = 0; f < activeTotal && s.feasible.size() > first; ++f) {
      const FilterPlugin* plugin = f < activeCount ? active[f] : activeOverflow[f - activeCount];
      s.sink.clear();
      const auto& rejected = s.sink.rejected();
      plugin->filterAll(state, pod,
                        std::span<const NodeInfo* const>(s.feasibleNodes.data() + first, s.feasible.size() - first),
                        s.sink);
      if (rejected.empty()) continue;
      dropRejected(s.feasible, s.feasibleNodes, first, rejected, [&](uint32_t index, const Status& rejection) {
        const Status* status = &rejection;
        std::optional<Status> failure;
        if (!status->isRejected()) {
          failure = asFailure("filter", plugin->name(), *status);
          if (!decision.failure) decision.failure = failure;
          status = &*failure;
        }
        tally.add(status->sharedReasons(), 1);
        if (full) {
          NodeOutcome& outcome = decision.nodes[index];
          outcome.code = status->code();
          outcome.failedPlugin = plugin->name();
          outcome.reasons = status->sharedReasons();
        }
        return true;
      });
    }
    if (fused && s.feasible.size() > first && !decision.failure) {
      if (!preScored) preScore({});
      if (!preScoreFailure) scoreRange(first, s.feasible.size(), true);
    }
  }
  tally.forEach([&](const Reasons& reasons, int32_t n) { countReasons(decision.reasonCounts, reasons, n); });
  std::sort(decision.reasonCounts.begin(), decision.reasonCounts.end());

  const size_t feasibleCount = s.feasible.size();
  decision.feasibleCount = feasibleCount;
  if (perPlugin)
    for (NodeOutcome& outcome : decision.nodes)
      if (outcome.code == Code::Success) outcome.pluginScores.assign(scorePlugins.size(), 0);
  if (feasibleCount == 0 || decision.failure) return decision;
  if (detail == Detail::FilterOnly) {
    if (feasibleCount == 1) decision.selected = s.feasibleNodes[0];
    return decision;
  }
  if (!fused) {
    preScore(std::span<const NodeInfo* const>(s.feasibleNodes.data(), feasibleCount));
    if (!preScoreFailure) scoreRange(0, feasibleCount, false);
  }
  if (preScoreFailure) {
    decision.failure = std::move(preScoreFailure);
    return decision;
  }

  if (!normalizeAndSelect(decision, profile, state, pod, skippedScores, count, s)) return decision;

  if (full) {
    for (size_t j = 0; j < feasibleCount; ++j) {
      NodeOutcome& outcome = decision.nodes[s.feasible[j]];
      if (perPlugin)
        for (size_t p = 0; p < scorePlugins.size(); ++p) outcome.pluginScores[p] = s.scores[p * count + j];
      outcome.total = s.totals[j];
    }
  }
  return decision;
}

// The index of a rejection among the entry's distinct ones, plus one (0 is
// "feasible"); 0 when there are too many to keep. Matched by identity first
// (memoised and static rejections), then by text, so that a plugin handing out
// a fresh Status per rejection does not grow the list with every decision.
uint16_t verdictOf(DecisionCache::Entry& e, const Status& status, std::string_view plugin) {
  auto sameKind = [&](const Status& known) { return known.code() == status.code() && known.plugin() == plugin; };
  for (size_t i = e.rejections.size(); i-- > 0;) {
    const Status& known = e.rejections[i];
    if (sameKind(known) && known.sharedReasons().identity() == status.sharedReasons().identity())
      return static_cast<uint16_t>(i + 1);
  }
  for (size_t i = e.rejections.size(); i-- > 0;) {
    const Status& known = e.rejections[i];
    if (sameKind(known) && known.sharedReasons() == status.sharedReasons()) return static_cast<uint16_t>(i + 1);
  }
  if (e.rejections.size() >= UINT16_MAX - 1) return 0;
  Status copy = status;
  copy.setPlugin(plugin);
  e.rejections.push_back(std::move(copy));
  return static_cast<uint16_t>(e.rejections.size());
}

// Brings a decision-cache entry up to date: the plugins run again on the
// view's nodes whose version changed since the entry's results were computed.
// False when the entry cannot be used (PreFilter rejected the pod, a plugin
// failed, too many distinct rejections): run() then decides, and reports what
// happened. Each tile is refreshed under its accounting stripe, shared.
bool refreshCached(const Profile& profile, DecisionCache::Entry& e, const ClusterView& view) {
  const std::span<const NodeInfo> nodes = view.nodes();
  const size_t count = nodes.size();
  if (e.unusable || count == 0 || count > UINT32_MAX) return false;
  const auto& scorePlugins = profile.scorePlugins();
  const Pod& pod = e.pod;

  if (!e.prepared) {
    std::vector<std::string_view> skippedFilters;
    for (const PreFilterPlugin* plugin : profile.preFilterPlugins()) {
      Status status = plugin->preFilter(e.state, pod, view);
      if (status.isSuccess()) continue;
      if (!status.isSkip()) {
        e.unusable = true;
        return false;
      }
      skippedFilters.push_back(plugin->name());
    }
    for (const FilterPlugin* f : profile.filterPlugins())
      if (!hasName(f->name(), skippedFilters)) e.filters.push_back(f);
    // Every node is computed below (version 0 matches none); verdicts and raw
    // scores are written before they are read, so a recycled entry's old
    // values need no clearing.
    e.versions.assign(count, 0);
    e.verdicts.resize(count);
    e.raw.resize(scorePlugins.size() * count);
    e.prepared = true;
  }

  Scratch& s = scratch;
  const std::span<const uint64_t> versions = view.nodeVersions();
  static_assert(kTile == AccountingStripes::kNodesPerStripe, "a tile is one accounting stripe");
  for (size_t tileStart = 0; tileStart < count; tileStart += kTile) {
    const size_t tileEnd = std::min(count, tileStart + kTile);
    // The tile is one stripe: its first node's guard holds them all.
    const NodeInfo* first = &nodes[tileStart];
    AccountingReadGuard guard(view, std::span<const NodeInfo* const>(&first, 1));
    s.changed.clear();
    s.changedNodes.clear();
    for (size_t i = tileStart; i < tileEnd; ++i) {
      if (e.versions[i] == versions[i]) continue;
      s.changed.push_back(static_cast<uint32_t>(i));
      s.changedNodes.push_back(&nodes[i]);
    }
    if (s.changed.empty()) continue;
    // Filters in profile order over the nodes still feasible: the first that
    // rejects a node gives its verdict, as in run().
    for (const FilterPlugin* plugin : e.filters) {
      if (s.changed.empty()) break;
      s.sink.clear();
      plugin->filterAll(e.state, pod, s.changedNodes, s.sink);
      const auto& rejected = s.sink.rejected();
      if (rejected.empty()) continue;
      const bool kept = dropRejected(s.changed, s.changedNodes, 0, rejected, [&](uint32_t i, const Status& status) {
        const uint16_t verdict = status.isRejected() ? verdictOf(e, status, plugin->name()) : 0;
        if (verdict == 0) return false;
        e.verdicts[i] = verdict;
        e.versions[i] = versions[i];
        return true;
      });
      if (!kept) {  // a filter failed, or too many distinct rejections
        e.unusable = true;
        return false;
      }
    }
    if (s.changed.empty()) continue;
    // PreScore once, when a node first passes (it reads no feasible list:
    // Engine uses the cache only then); a Skip scores that plugin 0.
    if (!e.preScored) {
      std::vector<std::string_view> skippedScores;
      for (const PreScorePlugin* plugin : profile.preScorePlugins()) {
        Status status = plugin->preScore(e.state, pod, {}, view);
        if (status.isSuccess()) continue;
        if (!status.isSkip()) {
          e.unusable = true;
          return false;
        }
        skippedScores.push_back(plugin->name());
      }
      for (size_t p = 0; p < scorePlugins.size(); ++p)
        if (!hasName(scorePlugins[p].plugin->name(), skippedScores)) e.scoring.push_back(p);
      e.preScored = true;
    }
    s.changedScores.resize(s.changed.size());
    for (size_t p : e.scoring) {
      scorePlugins[p].plugin->scoreAll(e.state, pod, s.changedNodes, s.changedScores);
      int64_t* raw = e.raw.data() + p * count;
      for (size_t j = 0; j < s.changed.size(); ++j) raw[s.changed[j]] = s.changedScores[j];
    }
    for (uint32_t i : s.changed) {
      e.verdicts[i] = 0;
      e.versions[i] = versions[i];
    }
  }

  return true;
}

// A decision from an up-to-date entry, over `count` nodes of the view, the
// i-th at position positionAt(i) of ClusterView::nodes(): their verdicts
// counted as run() counts them, the feasible ones' raw scores normalised and
// totalled over those nodes alone. Detail::Summary, FilterOnly or Totals (per
// node outcomes in the order given, as run() fills them).
template <class PositionAt>
Decision assembleCached(const Profile& profile, const DecisionCache::Entry& e, const ClusterView& view, size_t count,
                        PositionAt positionAt, Detail detail) {
  const std::span<const NodeInfo> nodes = view.nodes();
  const auto& scorePlugins = profile.scorePlugins();
  const bool full = detail != Detail::Summary;
  Scratch& s = scratch;
  Decision decision;
  decision.nodeCount = count;
  if (full) decision.nodes.resize(count);
  s.verdictCounts.assign(e.rejections.size() + 1, 0);
  s.feasible.clear();
  s.feasibleNodes.clear();
  s.feasiblePositions.clear();
  for (size_t i = 0; i < count; ++i) {
    const uint32_t position = positionAt(i);
    const uint16_t verdict = e.verdicts[position];
    ++s.verdictCounts[verdict];
    if (full) {
      NodeOutcome& outcome = decision.nodes[i];
      outcome.node = &nodes[position];
      if (verdict != 0) {
        const Status& rejection = e.rejections[verdict - 1];
        outcome.code = rejection.code();
        outcome.reasons = rejection.sharedReasons();
        outcome.failedPlugin = rejection.plugin();
      }
    }
    if (verdict == 0) {
      s.feasible.push_back(static_cast<uint32_t>(i));
      s.feasibleNodes.push_back(&nodes[position]);
      s.feasiblePositions.push_back(position);
    }
  }
  for (size_t v = 1; v < s.verdictCounts.size(); ++v)
    if (s.verdictCounts[v] > 0) countReasons(decision.reasonCounts, e.rejections[v - 1].reasons(), s.verdictCounts[v]);
  std::sort(decision.reasonCounts.begin(), decision.reasonCounts.end());
  const size_t feasibleCount = s.feasible.size();
  decision.feasibleCount = feasibleCount;
  if (feasibleCount == 0) return decision;
  if (detail == Detail::FilterOnly) {
    if (feasibleCount == 1) decision.selected = s.feasibleNodes[0];
    return decision;
  }

  s.scores.resize(scorePlugins.size() * feasibleCount);
  std::vector<std::string_view> skippedScores;
  for (size_t p = 0, next = 0; p < scorePlugins.size(); ++p) {
    int64_t* out = s.scores.data() + p * feasibleCount;
    if (next < e.scoring.size() && e.scoring[next] == p) {
      ++next;
      const int64_t* raw = e.raw.data() + p * nodes.size();
      for (size_t j = 0; j < feasibleCount; ++j) out[j] = raw[s.feasiblePositions[j]];
    } else {
      skippedScores.push_back(scorePlugins[p].plugin->name());
    }
  }
  if (!normalizeAndSelect(decision, profile, e.state, e.pod, skippedScores, feasibleCount, s)) return decision;
  if (full)
    for (size_t j = 0; j < feasibleCount; ++j) decision.nodes[s.feasible[j]].total = s.totals[j];
  return decision;
}

bool reusableProfile(const Profile& profile) {
  auto reusable = [](const Plugin* p) { return p->resultsReusable(); };
  const auto& preScore = profile.preScorePlugins();
  return std::all_of(profile.preFilterPlugins().begin(), profile.preFilterPlugins().end(), reusable) &&
         std::all_of(profile.filterPlugins().begin(), profile.filterPlugins().end(), reusable) &&
         std::all_of(preScore.begin(), preScore.end(), reusable) &&
         std::none_of(preScore.begin(), preScore.end(), [](const PreScorePlugin* p) { return p->preScoreReadsFeasibleNodes(); }) &&
         std::all_of(profile.scorePlugins().begin(), profile.scorePlugins().end(),
                     [](const WeightedScorePlugin& p) { return p.plugin->resultsReusable(); });
}

}  // namespace

Engine::Engine(std::shared_ptr<const Profile> profile, size_t cacheCapacity) : profile_(std::move(profile)) {
  if (cacheCapacity > 0 && reusableProfile(*profile_)) cache_ = std::make_shared<DecisionCache>(cacheCapacity);
}

Decision Engine::place(const Pod& pod, const ClusterView& view, Detail detail) const {
  std::span<const NodeInfo> nodes = view.nodes();
  if (cache_ && (detail == Detail::Summary || detail == Detail::FilterOnly || detail == Detail::Totals)) {
    if (std::optional<DecisionCache::Lease> entry = cache_->lease(pod, view.staticGeneration());
        entry && refreshCached(*profile_, **entry, view))
      return assembleCached(*profile_, **entry, view, nodes.size(), [](size_t i) { return static_cast<uint32_t>(i); },
                            detail);
  }
  return run(*profile_, pod, view, nodes.size(), [&](size_t i) -> const NodeInfo& { return nodes[i]; }, detail);
}

Decision Engine::evaluate(const Pod& pod, const ClusterView& view, std::span<const NodeInfo* const> candidates,
                          Detail detail, CacheUse cacheUse) const {
  // The cache holds results for the view's own nodes: candidates that are
  // copies (the extender's full Nodes) are computed directly.
  const std::span<const NodeInfo> nodes = view.nodes();
  if (cache_ && cacheUse == CacheUse::Reuse &&
      (detail == Detail::FilterOnly || detail == Detail::Totals || detail == Detail::Summary) &&
      std::all_of(candidates.begin(), candidates.end(), [&](const NodeInfo* n) { return view.holds(*n); })) {
    if (std::optional<DecisionCache::Lease> entry = cache_->lease(pod, view.staticGeneration());
        entry && refreshCached(*profile_, **entry, view))
      return assembleCached(
          *profile_, **entry, view, candidates.size(),
          [&](size_t i) { return static_cast<uint32_t>(candidates[i] - nodes.data()); }, detail);
  }
  return run(*profile_, pod, view, candidates.size(), [&](size_t i) -> const NodeInfo& { return *candidates[i]; },
             detail);
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
