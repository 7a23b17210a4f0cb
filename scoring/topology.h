#pragma once
// What InterPodAffinity and PodTopologySpread share: reading a node's value
// of a topology key, counting per topology domain, and finding the pods of
// the view (and its reservations) that a label selector selects without
// looking at every pod.
//
// All of it is per decision: built in PreFilter / PreScore from a view that
// holds still for the decision, read in Filter / Score. Not thread-safe;
// each decision has its own.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/framework.h"
#include "scoring/label_selector.h"
#include "scoring/pod_affinity.h"

namespace placer {

// The NodeInfo::id of one of the view's own nodes (view.holds(node)), read
// without touching the node while it equals the node's position in nodes():
// for every node while ClusterView::idsArePositions(), else when
// nodeById(position) is the node itself, found through the view's dense
// id -> position array. A view's own node always has its labels indexed
// (upsertNode indexes every node it keeps), so its values are read from the
// label columns by this id.
inline uint32_t viewNodeId(const ClusterView& view, const NodeInfo& node) {
  const auto position = static_cast<uint32_t>(&node - view.nodes().data());
  if (view.idsArePositions()) return position;
  return view.nodeById(position) == &node ? position : node.id;
}

// A node label key as the view indexes it. valueOf(node) is the id of the
// node's value (ClusterView::nodeLabelValueId), kAbsent when the node has no
// such label, kUnknown when it has one that no node of the view has (a node
// copy from an extender request).
class TopologyKey {
 public:
  static constexpr uint32_t kAbsent = StringTable::kNone;
  static constexpr uint32_t kUnknown = StringTable::kNone - 1;

  TopologyKey() = default;
  TopologyKey(const ClusterView& view, std::string key);
  uint32_t valueOf(const NodeInfo& node) const {
    // A view's own node has its labels indexed (ClusterView::viewNodeId).
    if (view_->holds(node)) return valueOfViewNode(viewNodeId(*view_, node));
    return valueOfCopy(node);
  }
  // valueOf() of a view node with indexed labels, by NodeInfo::id.
  uint32_t valueOfViewNode(uint32_t id) const { return view_->nodeLabel(keyId_, id); }
  bool indexedViewNode(const NodeInfo& node) const { return view_->holds(node); }
  bool presentOn(const NodeInfo& node) const { return valueOf(node) != kAbsent; }
  const std::string& text() const { return key_; }

 private:
  uint32_t valueOfCopy(const NodeInfo& node) const;

  const ClusterView* view_ = nullptr;
  std::string key_;
  uint32_t keyId_ = StringTable::kNone;
};

// Counts per domain (value id) of one topology key. Value ids index a dense
// array sized to the view's bound, so a lookup per node is one load.
class DomainCounts {
 public:
  explicit DomainCounts(uint32_t valueBound = 0) : counts_(valueBound, 0) {}
  // kAbsent / kUnknown values are ignored by add() and read as 0.
  void add(uint32_t value, int64_t n) {
    if (value >= counts_.size()) return;
    if (counts_[value] == 0 && n != 0) touched_.push_back(value);
    counts_[value] += n;
  }
  int64_t get(uint32_t value) const { return value < counts_.size() ? counts_[value] : 0; }
  // Every count by value id (get() without the bound check, for hot loops).
  std::span<const int64_t> values() const { return counts_; }
  // Domains whose count is not 0, in the order first touched (a value may
  // repeat if it went back to 0 and up again; callers check get()).
  const std::vector<uint32_t>& touched() const { return touched_; }
  bool anyNonZero() const {
    for (uint32_t v : touched_)
      if (counts_[v] != 0) return true;
    return false;
  }

 private:
  std::vector<int64_t> counts_;
  std::vector<uint32_t> touched_;
};

// A label selector resolved against the view's interned strings, to match
// view pods by integer compares.
class ResolvedSelector {
 public:
  ResolvedSelector(const ClusterView& view, const CompiledSelector& selector);
  bool matches(const PodRecord& pod) const;
  // No view pod can match (Nothing, or an In / Exists on what no pod has).
  bool impossible() const { return impossible_; }
  // The smallest list of pods that holds every pod the selector matches
  // (from the label index), or false when it has no In requirement to use.
  bool candidates(const ClusterView& view, std::vector<std::span<const uint32_t>>& out) const;

 private:
  struct Requirement {
    uint32_t key = StringTable::kNone;
    SelectorOperator op = SelectorOperator::In;
    std::vector<uint32_t> values;
  };
  std::vector<Requirement> requirements_;
  bool impossible_ = false;
};

// A pod counted on a node of the view, as the topology plugins see it: a
// bound pod of the view or a reservation.
struct CountedPod {
  const NodeInfo* node = nullptr;
  std::string_view namespace_;
  bool terminating = false;
  const PodAffinityInfo* affinity = nullptr;
  const PodRecord* record = nullptr;     // a view pod
  const ReservedPod* reserved = nullptr;  // a reservation
  bool labelsMatch(const ResolvedSelector& resolved, const CompiledSelector& selector) const {
    return record ? resolved.matches(*record) : selector.matches(reserved->labels);
  }
};

// Visits every pod on a node of the view (and every reservation) that may
// match `selector` and lives in one of `namespaces` (all namespaces when
// null): the label index narrows the candidates; f(pod) decides the rest
// (it is passed the resolved selector through CountedPod::labelsMatch).
// Pods not attached to a view node are skipped.
template <class F>
void forEachCandidatePod(const ClusterView& view, const ReservedPods& reserved, const CompiledSelector& selector,
                         const ResolvedSelector& resolved, const std::vector<std::string>* namespaces, F&& f);

// Filter and filterAll of a topology plugin whose PreFilter state (type
// State, at `key`; absent: nothing to check) gives the verdict on a node as
// verdict(state, node): null when the node passes, else a rejection that
// stays put for the decision (a static), handed to the sink without a copy.
template <class State, class Verdict>
Status filterByState(const CycleState& cycle, std::string_view key, const NodeInfo& node, Verdict verdict) {
  const State* state = cycle.read<State>(key);
  const Status* rejection = state == nullptr ? nullptr : verdict(*state, node);
  return rejection == nullptr ? Status::success() : *rejection;
}
template <class State, class Verdict>
void filterAllByState(const CycleState& cycle, std::string_view key, std::span<const NodeInfo* const> nodes,
                      FilterSink& sink, Verdict verdict) {
  const State* state = cycle.read<State>(key);
  if (state == nullptr) return;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (const Status* rejection = verdict(*state, *nodes[i])) sink.rejectWith(static_cast<uint32_t>(i), *rejection);
}

// Namespace ids of a term's namespaces (kNone for ones no pod has).
std::vector<uint32_t> namespaceIds(const ClusterView& view, const std::vector<std::string>& namespaces);

// ---- implementation ----

template <class F>
void forEachCandidatePod(const ClusterView& view, const ReservedPods& reserved, const CompiledSelector& selector,
                         const ResolvedSelector& resolved, const std::vector<std::string>* namespaces, F&& f) {
  if (selector.nothing()) return;
  if (!resolved.impossible()) {
    std::vector<uint32_t> nsIds;
    if (namespaces) nsIds = namespaceIds(view, *namespaces);
    auto inNamespaces = [&](uint32_t ns) {
      return namespaces == nullptr || std::find(nsIds.begin(), nsIds.end(), ns) != nsIds.end();
    };
    auto visit = [&](uint32_t slot) {
      const PodRecord* pod = view.pod(slot);
      if (pod == nullptr || !pod->attached || !inNamespaces(pod->namespaceId)) return;
      CountedPod counted;
      counted.node = view.nodeById(pod->nodeId);
      if (counted.node == nullptr) return;
      counted.namespace_ = view.text(pod->namespaceId);
      counted.terminating = pod->terminating;
      counted.affinity = pod->affinity.get();
      counted.record = pod;
      f(counted);
    };
    // A list of slots, each record (then its labels) fetched a few visits
    // ahead: a visit is a wait on memory otherwise.
    auto visitAll = [&](std::span<const uint32_t> list) {
      constexpr size_t kRecordsAhead = 8;
      constexpr size_t kLabelsAhead = 4;
      for (size_t k = 0; k < std::min(list.size(), kRecordsAhead); ++k) view.prefetchPod(list[k]);
      for (size_t k = 0; k < list.size(); ++k) {
        if (k + kRecordsAhead < list.size()) view.prefetchPod(list[k + kRecordsAhead]);
        if (k + kLabelsAhead < list.size()) view.prefetchPodLabels(list[k + kLabelsAhead]);
        visit(list[k]);
      }
    };
    std::vector<std::span<const uint32_t>> lists;
    if (resolved.candidates(view, lists)) {
      for (std::span<const uint32_t> list : lists) visitAll(list);
    } else if (namespaces != nullptr) {
      for (uint32_t ns : nsIds)
        if (ns != StringTable::kNone) visitAll(view.podsInNamespace(ns));
    } else {
      for (uint32_t slot = 0; slot < view.podSlotBound(); ++slot) visit(slot);
    }
  }
  for (const auto& r : reserved.pods) {
    if (namespaces && !std::binary_search(namespaces->begin(), namespaces->end(), r->namespace_)) continue;
    CountedPod counted;
    counted.node = view.nodeById(r->nodeId);
    if (counted.node == nullptr) continue;
    counted.namespace_ = r->namespace_;
    counted.affinity = r->affinity.get();
    counted.reserved = r.get();
    f(counted);
  }
}

}  // namespace placer
