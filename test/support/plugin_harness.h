#pragma once
// Runs one plugin the way the engine does, for plugin unit tests:
// PreFilter -> Filter on a node; PreScore -> Score on every node -> NormalizeScore.
// Header-only.

#include <memory>
#include <string>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/framework.h"

namespace placer::test {

struct FilterOutcome {
  Status preFilter;  // Success when the plugin has no PreFilter
  Status filter;     // the node's verdict: the PreFilter rejection, Success after Skip, or Filter's status
};

inline FilterOutcome runFilter(const Plugin& plugin, const Pod& pod, const NodeInfo& node,
                               const ClusterView& view = ClusterView()) {
  CycleState state;
  FilterOutcome out;
  if (const auto* pre = dynamic_cast<const PreFilterPlugin*>(&plugin)) {
    out.preFilter = pre->preFilter(state, pod, view);
    if (out.preFilter.isRejected() || out.preFilter.code() == Code::Error) {
      out.filter = out.preFilter;
      return out;
    }
    if (out.preFilter.isSkip()) return out;  // filter stays Success
  }
  if (const auto* filter = dynamic_cast<const FilterPlugin*>(&plugin)) out.filter = filter->filter(state, pod, node);
  return out;
}

struct ScoreOutcome {
  Status preScore;              // Success when the plugin has no PreScore
  std::vector<int64_t> scores;  // normalised, in the order of the nodes given; 0 after Skip
};

// Scores `nodes` (the feasible ones) against `view` (the whole cluster).
inline ScoreOutcome runScore(const Plugin& plugin, const Pod& pod, const std::vector<const NodeInfo*>& nodes,
                             const ClusterView& view = ClusterView()) {
  CycleState state;
  ScoreOutcome out;
  out.scores.assign(nodes.size(), 0);
  if (const auto* pre = dynamic_cast<const PreScorePlugin*>(&plugin)) {
    out.preScore = pre->preScore(state, pod, nodes, view);
    if (!out.preScore.isSuccess()) return out;
  }
  const auto* scorer = dynamic_cast<const ScorePlugin*>(&plugin);
  if (scorer == nullptr) return out;
  for (size_t i = 0; i < nodes.size(); ++i) out.scores[i] = scorer->score(state, pod, *nodes[i]);
  scorer->normalizeScores(state, pod, out.scores);
  return out;
}

inline std::vector<const NodeInfo*> pointers(const std::vector<NodeInfo>& nodes) {
  std::vector<const NodeInfo*> out;
  for (const NodeInfo& n : nodes) out.push_back(&n);
  return out;
}

}  // namespace placer::test
