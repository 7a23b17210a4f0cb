#include "scoring/plugins/inter_pod_affinity.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"
#include "scoring/plugins/resource_allocation.h"  // aggregateErrors
#include "scoring/topology.h"

namespace placer {
namespace {

constexpr std::string_view kPreFilterKey = "PreFilterInterPodAffinity";
constexpr std::string_view kPreScoreKey = "PreScoreInterPodAffinity";

const Labels kNoLabels;

// The incoming pod's terms: matchLabelKeys merged (the API server does it
// after admission) and each namespaceSelector unrolled into the namespaces
// of the view that it selects (upstream's mergeAffinityTermNamespacesIfNotEmpty),
// so that matching needs no namespace labels.
std::shared_ptr<PodAffinityInfo> compileIncoming(const Pod& pod, const ClusterView& view, std::vector<std::string>* errors) {
  std::shared_ptr<const PodAffinityInfo> compiled;
  if (hasMatchLabelKeys(pod)) {
    Pod stored = pod;
    applyMatchLabelKeys(stored);
    compiled = compilePodAffinity(stored, errors);
  } else {
    compiled = compilePodAffinity(pod, errors);
  }
  if (!compiled) return nullptr;
  auto info = std::make_shared<PodAffinityInfo>(*compiled);
  for (auto& terms : info->terms) {
    for (AffinityTerm& term : terms) {
      if (term.namespaceSelector.nothing() || term.namespaceSelector.empty()) continue;
      view.forEachNamespace([&](std::string_view name, const Labels& labels) {
        if (term.namespaceSelector.matches(labels)) term.namespaces.emplace_back(name);
      });
      std::sort(term.namespaces.begin(), term.namespaces.end());
      term.namespaces.erase(std::unique(term.namespaces.begin(), term.namespaces.end()), term.namespaces.end());
      term.namespaceSelector = CompiledSelector();
    }
  }
  return info;
}

// An incoming term matched against another pod (Matches(pod, nil)): its
// namespaceSelector is Nothing or Everything once unrolled.
bool incomingTermMatches(const AffinityTerm& term, const CountedPod& pod, const ResolvedSelector& resolved) {
  return term.namespaceMatches(pod.namespace_, kNoLabels) && pod.labelsMatch(resolved, term.selector);
}

bool podMatchesAllTerms(const std::vector<AffinityTerm>& terms, std::string_view ns, const Labels& labels) {
  if (terms.empty()) return false;
  for (const AffinityTerm& t : terms)
    if (!t.matches(ns, kNoLabels, labels)) return false;
  return true;
}

// Counts per (topology key, domain) for a list of keys.
class TopologyPairCounts {
 public:
  TopologyPairCounts(const ClusterView& view) : view_(&view) {}
  size_t keyIndex(const std::string& key) {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i].text() == key) return i;
    keys_.emplace_back(*view_, key);
    counts_.emplace_back(view_->nodeLabelValueBound());
    return keys_.size() - 1;
  }
  // Whether valueById() may stand for key(k).valueOf(node): a view node
  // (its labels are indexed, its id is viewId(node)).
  bool readsById(const NodeInfo& node) const { return view_->holds(node); }
  uint32_t viewId(const NodeInfo& node) const { return viewNodeId(*view_, node); }
  uint32_t valueById(size_t k, uint32_t nodeId) const { return keys_[k].valueOfViewNode(nodeId); }
  // Adds n to the node's domain of key k; false when the node lacks the key.
  bool add(size_t k, const NodeInfo& node, int64_t n) {
    uint32_t value = keys_[k].valueOf(node);
    if (value == TopologyKey::kAbsent) return false;
    counts_[k].add(value, n);
    any_ = any_ || n != 0;
    return true;
  }
  int64_t get(size_t k, uint32_t value) const { return counts_[k].get(value); }
  const TopologyKey& key(size_t k) const { return keys_[k]; }
  size_t keyCount() const { return keys_.size(); }
  // upstream: len(map) > 0 (entries reaching 0 are deleted; ours only grow).
  bool empty() const {
    for (const DomainCounts& c : counts_)
      if (c.anyNonZero()) return false;
    return true;
  }

 private:
  const ClusterView* view_;
  std::vector<TopologyKey> keys_;
  std::vector<DomainCounts> counts_;
  bool any_ = false;
};

struct PreFilterState final : StateData {
  explicit PreFilterState(const ClusterView& view) : existingAnti(view), affinity(view), anti(view) {}
  std::shared_ptr<PodAffinityInfo> info;
  TopologyPairCounts existingAnti;  // existing pods' required anti-affinity matching the pod
  TopologyPairCounts affinity;      // pods matching all required affinity terms
  TopologyPairCounts anti;          // pods matching a required anti-affinity term
  std::vector<size_t> affinityKeys;  // per required affinity term: key index in `affinity`
  std::vector<size_t> antiKeys;      // per required anti-affinity term: key index in `anti`
  bool matchesOwnAffinity = false;
};

struct PreScoreState final : StateData {
  explicit PreScoreState(const ClusterView& view) : scores(view) {}
  TopologyPairCounts scores;
};

// Filter's verdict on a node: null when it passes, else a static rejection.
// valueOf(counts, k) is the node's value of counts.key(k).
template <class ValueOf>
const Status* rejectionWith(const PreFilterState& state, ValueOf valueOf) {
  static const Status kAffinity(Code::UnschedulableAndUnresolvable, std::string(kErrReasonAffinityRulesNotMatch));
  static const Status kAnti(Code::Unschedulable, std::string(kErrReasonAntiAffinityRulesNotMatch));
  static const Status kExisting(Code::Unschedulable, std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  if (!state.affinityKeys.empty()) {
    bool podsExist = true;
    for (size_t k : state.affinityKeys) {
      uint32_t value = valueOf(state.affinity, k);
      if (value == TopologyKey::kAbsent) return &kAffinity;  // every topology label must exist, also for self-affinity
      if (state.affinity.get(k, value) <= 0) podsExist = false;
    }
    if (!podsExist && !(state.affinity.empty() && state.matchesOwnAffinity)) return &kAffinity;
  }
  for (size_t k : state.antiKeys) {
    uint32_t value = valueOf(state.anti, k);
    if (value != TopologyKey::kAbsent && state.anti.get(k, value) > 0) return &kAnti;
  }
  for (size_t k = 0; k < state.existingAnti.keyCount(); ++k) {
    uint32_t value = valueOf(state.existingAnti, k);
    if (value != TopologyKey::kAbsent && state.existingAnti.get(k, value) > 0) return &kExisting;
  }
  return nullptr;
}

const Status* rejectionOf(const PreFilterState& state, const NodeInfo& node) {
  if (state.anti.readsById(node)) {
    const uint32_t id = state.anti.viewId(node);
    return rejectionWith(state, [id](const TopologyPairCounts& c, size_t k) { return c.valueById(k, id); });
  }
  return rejectionWith(state, [&node](const TopologyPairCounts& c, size_t k) { return c.key(k).valueOf(node); });
}

int64_t scoreOf(const PreScoreState& state, const NodeInfo& node) {
  const TopologyPairCounts& scores = state.scores;
  const bool byId = scores.readsById(node);
  const uint32_t id = byId ? scores.viewId(node) : 0;
  int64_t score = 0;
  for (size_t k = 0; k < scores.keyCount(); ++k) {
    uint32_t value = byId ? scores.valueById(k, id) : scores.key(k).valueOf(node);
    if (value != TopologyKey::kAbsent) score += scores.get(k, value);
  }
  return score;
}

// upstream's preFilterState.updateWithPod(pod, node, +1): a pod counted on
// `node` as if bound there, for the incoming `pod`.
void countOnNode(PreFilterState& state, const Pod& pod, const NominatedPod& added, const NodeInfo& node,
                 const ClusterView& view) {
  if (added.affinity) {
    const Labels* nsLabels = view.namespaceLabels(pod.namespace_);
    for (const AffinityTerm& t : added.affinity->of(TermKind::RequiredAntiAffinity))
      if (t.matches(pod.namespace_, nsLabels ? *nsLabels : kNoLabels, pod.labels))
        state.existingAnti.add(state.existingAnti.keyIndex(t.topologyKey), node, 1);
  }
  if (!state.info) return;
  const auto& affinityTerms = state.info->of(TermKind::RequiredAffinity);
  if (podMatchesAllTerms(affinityTerms, added.namespace_, added.labels))
    for (size_t k : state.affinityKeys) state.affinity.add(k, node, 1);
  const auto& antiTerms = state.info->of(TermKind::RequiredAntiAffinity);
  for (size_t i = 0; i < antiTerms.size(); ++i)
    if (antiTerms[i].matches(added.namespace_, kNoLabels, added.labels)) state.anti.add(state.antiKeys[i], node, 1);
}

class InterPodAffinity final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public PreFilterExtensions {
 public:
  explicit InterPodAffinity(InterPodAffinityArgs args) : args_(args) {}
  std::string_view name() const override { return names::kInterPodAffinity; }
  bool preScoreReadsFeasibleNodes() const override { return false; }
  bool readsAccounting() const override { return false; }  // labels and its cycle state only

  Status preFilter(CycleState& cycle, const Pod& pod, const ClusterView& view) const override {
    std::vector<std::string> errors;
    auto state = std::make_unique<PreFilterState>(view);
    state->info = compileIncoming(pod, view, &errors);
    if (!errors.empty()) return Status(Code::UnschedulableAndUnresolvable, "parsing pod: " + aggregateErrors(errors));
    const std::shared_ptr<const ReservedPods> reserved = view.reservedPods();
    const Labels* nsLabels = view.namespaceLabels(pod.namespace_);
    const Labels& namespaceLabels = nsLabels ? *nsLabels : kNoLabels;

    // Existing pods' required anti-affinity terms that match this pod.
    view.forEachTermClassFor(pod.namespace_, pod.labels, [&](const TermClass& c) {
      if (c.kind != TermKind::RequiredAntiAffinity || c.nodes.empty()) return;
      if (!c.term.matches(pod.namespace_, namespaceLabels, pod.labels)) return;
      size_t k = state->existingAnti.keyIndex(c.term.topologyKey);
      for (const auto& [nodeId, count] : c.nodes)
        if (const NodeInfo* node = view.nodeById(nodeId)) state->existingAnti.add(k, *node, count);
    });
    for (const auto& r : reserved->pods) {
      if (!r->affinity) continue;
      const NodeInfo* node = view.nodeById(r->nodeId);
      if (node == nullptr) continue;
      for (const AffinityTerm& t : r->affinity->of(TermKind::RequiredAntiAffinity))
        if (t.matches(pod.namespace_, namespaceLabels, pod.labels))
          state->existingAnti.add(state->existingAnti.keyIndex(t.topologyKey), *node, 1);
    }

    const PodAffinityInfo* info = state->info.get();
    static const std::vector<AffinityTerm> kNone;
    const auto& affinityTerms = info ? info->of(TermKind::RequiredAffinity) : kNone;
    const auto& antiTerms = info ? info->of(TermKind::RequiredAntiAffinity) : kNone;
    if (affinityTerms.empty() && antiTerms.empty()) {
      if (state->existingAnti.empty()) return Status::skip();
      cycle.write(kPreFilterKey, std::move(state));
      return Status::success();
    }

    // Pods matching all of the pod's required affinity terms count in each
    // term's domain; candidates come from the term with the fewest.
    for (const AffinityTerm& t : affinityTerms) state->affinityKeys.push_back(state->affinity.keyIndex(t.topologyKey));
    if (!affinityTerms.empty()) {
      std::vector<ResolvedSelector> resolved;
      for (const AffinityTerm& t : affinityTerms) resolved.emplace_back(view, t.selector);
      const bool allNamespaces = std::any_of(affinityTerms.begin(), affinityTerms.end(),
                                             [](const AffinityTerm& t) { return t.namespaceSelector.empty(); });
      forEachCandidatePod(view, *reserved, affinityTerms[0].selector, resolved[0],
                          allNamespaces ? nullptr : &affinityTerms[0].namespaces, [&](const CountedPod& p) {
                            for (size_t i = 0; i < affinityTerms.size(); ++i)
                              if (!incomingTermMatches(affinityTerms[i], p, resolved[i])) return;
                            for (size_t i = 0; i < affinityTerms.size(); ++i)
                              state->affinity.add(state->affinityKeys[i], *p.node, 1);
                          });
      state->matchesOwnAffinity = podMatchesAllTerms(affinityTerms, pod.namespace_, pod.labels);
    }
    for (const AffinityTerm& t : antiTerms) {
      const size_t k = state->anti.keyIndex(t.topologyKey);
      state->antiKeys.push_back(k);
      ResolvedSelector resolved(view, t.selector);
      forEachCandidatePod(view, *reserved, t.selector, resolved, t.namespaceSelector.empty() ? nullptr : &t.namespaces,
                          [&](const CountedPod& p) {
                            if (incomingTermMatches(t, p, resolved)) state->anti.add(k, *p.node, 1);
                          });
    }
    cycle.write(kPreFilterKey, std::move(state));
    return Status::success();
  }

  Status filter(const CycleState& cycle, const Pod&, const NodeInfo& node) const override {
    return filterByState<PreFilterState>(cycle, kPreFilterKey, node, rejectionOf);
  }

  void filterAll(const CycleState& cycle, const Pod&, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    filterAllByState<PreFilterState>(cycle, kPreFilterKey, nodes, sink, rejectionOf);
  }

  bool addNominatedPods(const CycleState& cycle, const Pod& pod, std::span<const NominatedPod* const> added,
                        const NodeInfo& node, const ClusterView& view, CycleState& out) const override {
    const PreFilterState* state = cycle.read<PreFilterState>(kPreFilterKey);
    if (state == nullptr) return false;
    auto counted = std::make_unique<PreFilterState>(*state);
    for (const NominatedPod* n : added) countOnNode(*counted, pod, *n, node, view);
    out.write(kPreFilterKey, std::move(counted));
    return true;
  }

  Status preScore(CycleState& cycle, const Pod& pod, std::span<const NodeInfo* const>,
                  const ClusterView& view) const override {
    const bool hasConstraints = (pod.podAffinity && !pod.podAffinity->preferred.empty()) ||
                                (pod.podAntiAffinity && !pod.podAntiAffinity->preferred.empty());
    if (args_.ignorePreferredTermsOfExistingPods && !hasConstraints) return Status::skip();
    // A term that does not compile fails the cycle, as upstream's NewPodInfo
    // does here (PreFilter, when enabled, has rejected the pod before).
    std::vector<std::string> errors;
    std::shared_ptr<PodAffinityInfo> info = hasConstraints ? compileIncoming(pod, view, &errors) : nullptr;
    if (!errors.empty()) return Status(Code::Error, "failed to parse pod: " + aggregateErrors(errors));
    const std::shared_ptr<const ReservedPods> reserved = view.reservedPods();
    const Labels* nsLabels = view.namespaceLabels(pod.namespace_);
    const Labels& namespaceLabels = nsLabels ? *nsLabels : kNoLabels;
    auto state = std::make_unique<PreScoreState>(view);
    bool contributed = false;
    // processTerm: a node without labels, or without the term's key, adds nothing.
    auto credit = [&](size_t key, const NodeInfo& node, int64_t amount) {
      if (node.node.labels.empty()) return;
      if (state->scores.add(key, node, amount)) contributed = true;
    };

    // This pod's preferred terms, matched against every pod.
    if (hasConstraints && info) {
      for (TermKind kind : {TermKind::PreferredAffinity, TermKind::PreferredAntiAffinity}) {
        const int sign = kind == TermKind::PreferredAffinity ? 1 : -1;
        for (const AffinityTerm& t : info->of(kind)) {
          ResolvedSelector resolved(view, t.selector);
          const size_t key = state->scores.keyIndex(t.topologyKey);
          forEachCandidatePod(view, *reserved, t.selector, resolved,
                              t.namespaceSelector.empty() ? nullptr : &t.namespaces, [&](const CountedPod& p) {
                                if (incomingTermMatches(t, p, resolved)) credit(key, *p.node, int64_t{t.weight} * sign);
                              });
        }
      }
    }
    // Existing pods' terms that match this pod.
    auto existingWeight = [&](TermKind kind, const AffinityTerm& t) -> int64_t {
      switch (kind) {
        case TermKind::RequiredAffinity: return args_.hardPodAffinityWeight;
        case TermKind::PreferredAffinity: return t.weight;
        case TermKind::PreferredAntiAffinity: return -int64_t{t.weight};
        default: return 0;
      }
    };
    view.forEachTermClassFor(pod.namespace_, pod.labels, [&](const TermClass& c) {
      const int64_t w = existingWeight(c.kind, c.term);
      if (c.kind == TermKind::RequiredAntiAffinity || c.nodes.empty()) return;
      if (c.kind == TermKind::RequiredAffinity && args_.hardPodAffinityWeight <= 0) return;
      if (!c.term.matches(pod.namespace_, namespaceLabels, pod.labels)) return;
      const size_t key = state->scores.keyIndex(c.term.topologyKey);
      for (const auto& [nodeId, count] : c.nodes)
        if (const NodeInfo* node = view.nodeById(nodeId)) credit(key, *node, w * count);
    });
    for (const auto& r : reserved->pods) {
      if (!r->affinity) continue;
      const NodeInfo* node = view.nodeById(r->nodeId);
      if (node == nullptr) continue;
      for (TermKind kind : {TermKind::RequiredAffinity, TermKind::PreferredAffinity, TermKind::PreferredAntiAffinity}) {
        if (kind == TermKind::RequiredAffinity && args_.hardPodAffinityWeight <= 0) continue;
        for (const AffinityTerm& t : r->affinity->of(kind))
          if (t.matches(pod.namespace_, namespaceLabels, pod.labels))
            credit(state->scores.keyIndex(t.topologyKey), *node, existingWeight(kind, t));
      }
    }
    if (!contributed) return Status::skip();
    cycle.write(kPreScoreKey, std::move(state));
    return Status::success();
  }

  int64_t score(const CycleState& cycle, const Pod&, const NodeInfo& node) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    return state == nullptr ? 0 : scoreOf(*state, node);
  }

  void scoreAll(const CycleState& cycle, const Pod&, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = state == nullptr ? 0 : scoreOf(*state, *nodes[i]);
  }

  void normalizeScores(const CycleState& cycle, const Pod&, std::span<int64_t> scores) const override {
    const PreScoreState* state = cycle.read<PreScoreState>(kPreScoreKey);
    if (state == nullptr || scores.empty()) return;
    int64_t low = std::numeric_limits<int64_t>::max();
    int64_t high = std::numeric_limits<int64_t>::min();
    for (int64_t s : scores) {
      low = std::min(low, s);
      high = std::max(high, s);
    }
    const int64_t diff = high - low;
    for (int64_t& s : scores) {
      double f = 0;
      if (diff > 0) f = static_cast<double>(kMaxNodeScore) * (static_cast<double>(s - low) / static_cast<double>(diff));
      s = static_cast<int64_t>(f);
    }
  }

 private:
  InterPodAffinityArgs args_;
};

}  // namespace

Result<InterPodAffinityArgs> decodeInterPodAffinityArgs(const nlohmann::json& args) {
  constexpr std::string_view kType = "InterPodAffinityArgs";
  InterPodAffinityArgs out;
  if (args.is_null()) return out;
  if (Outcome ok = checkArgsObject(args, kType, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}); !ok)
    return ok.error();
  if (auto w = args.find("hardPodAffinityWeight"); w != args.end() && !w->is_null()) {
    if (!w->is_number_integer()) return fieldError("InterPodAffinityArgs.hardPodAffinityWeight", "must be an integer");
    const int64_t v = w->get<int64_t>();
    if (v < 0 || v > 100)
      return fieldError("hardPodAffinityWeight",
                        "Invalid value: " + std::to_string(v) + ": not in valid range [0, 100]");
    out.hardPodAffinityWeight = static_cast<int32_t>(v);
  }
  if (auto i = args.find("ignorePreferredTermsOfExistingPods"); i != args.end() && !i->is_null()) {
    if (!i->is_boolean())
      return fieldError("InterPodAffinityArgs.ignorePreferredTermsOfExistingPods", "must be a boolean");
    out.ignorePreferredTermsOfExistingPods = i->get<bool>();
  }
  return out;
}

Result<std::unique_ptr<Plugin>> newInterPodAffinity(const nlohmann::json& args) {
  auto decoded = decodeInterPodAffinityArgs(args);
  if (!decoded) return decoded.error();
  return std::unique_ptr<Plugin>(std::make_unique<InterPodAffinity>(*decoded));
}

}  // namespace placer
