#include "scoring/plugins/taint_toleration.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {

bool toleratesTaint(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect != TaintEffect::All && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case TolerationOperator::Equal: return toleration.value == taint.value;
    case TolerationOperator::Exists: return true;
  }
  return false;
}

bool tolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations)
    if (toleratesTaint(t, taint)) return true;
  return false;
}

const Taint* findUntoleratedScheduleTaint(std::span<const Taint> taints, std::span<const Toleration> tolerations) {
  for (const Taint& taint : taints) {
    if (taint.effect != TaintEffect::NoSchedule && taint.effect != TaintEffect::NoExecute) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

std::string untoleratedTaintReason(const Taint& taint) {
  std::string reason = "node(s) had untolerated taint {";
  reason.append(taint.key).append(": ").append(taint.value).append("}");
  return reason;
}

namespace {

// Only tolerations that can tolerate a PreferNoSchedule taint count for the score.
bool appliesToPreferNoSchedule(const Toleration& t) {
  return t.effect == TaintEffect::All || t.effect == TaintEffect::PreferNoSchedule;
}

// Per decision: what the pod makes of each distinct taint list of the view
// (NodeInfo::taintSet), decided on first sight.
constexpr std::string_view kVerdictsKey = "TaintTolerationVerdicts";
struct Verdicts final : StateData {
  struct Verdict {
    bool filtered = false;
    const Status* rejection = nullptr;  // set when a NoSchedule/NoExecute taint is untolerated (in byTaint)
    int32_t intolerable = -1;         // PreferNoSchedule taints not tolerated; -1 = not yet counted
  };
  std::vector<Verdict> bySet;
  std::deque<std::pair<const Taint*, Status>> byTaint;  // one Status per distinct untolerated taint (stable)

  Verdict& of(uint32_t set) {
    if (set >= bySet.size()) bySet.resize(set + 1);
    return bySet[set];
  }
  const Status& rejection(const Taint& taint) {
    auto it = std::find_if(byTaint.begin(), byTaint.end(),
                           [&](const auto& e) { return e.first->key == taint.key && e.first->value == taint.value; });
    if (it == byTaint.end())
      it = byTaint.insert(byTaint.end(), {&taint, Status(Code::UnschedulableAndUnresolvable, untoleratedTaintReason(taint))});
    return it->second;
  }
};

bool sharesTaintSet(const NodeInfo& node) {
  return node.taintSet != UINT32_MAX && node.taintSetData == node.node.taints.data();
}

class TaintToleration final : public FilterPlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return names::kTaintToleration; }
  bool resultsReusable() const override { return true; }  // see Plugin

  Status filter(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    const Taint* taint = findUntoleratedScheduleTaint(node.node.taints, pod.tolerations);
    if (taint == nullptr) return Status::success();
    return Status(Code::UnschedulableAndUnresolvable, untoleratedTaintReason(*taint));
  }

  void filterAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    Verdicts& verdicts = state.memo<Verdicts>(kVerdictsKey);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      const std::vector<Taint>& taints = node.node.taints;
      if (taints.empty()) continue;
      if (sharesTaintSet(node)) {
        Verdicts::Verdict& v = verdicts.of(node.taintSet);
        if (!v.filtered) {
          v.filtered = true;
          if (const Taint* taint = findUntoleratedScheduleTaint(taints, pod.tolerations))
            v.rejection = &verdicts.rejection(*taint);
        }
        if (v.rejection) sink.rejectWith(static_cast<uint32_t>(i), *v.rejection);
        continue;
      }
      if (const Taint* taint = findUntoleratedScheduleTaint(taints, pod.tolerations))
        sink.rejectWith(static_cast<uint32_t>(i), verdicts.rejection(*taint));
    }
  }

  // Upstream precomputes the PreferNoSchedule tolerations in PreScore; testing
  // the effect inline gives the same count without per-decision state.
  int64_t score(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    int64_t intolerable = 0;
    for (const Taint& taint : node.node.taints) {
      if (taint.effect != TaintEffect::PreferNoSchedule) continue;
      bool tolerated = false;
      for (const Toleration& t : pod.tolerations) {
        if (appliesToPreferNoSchedule(t) && toleratesTaint(t, taint)) {
          tolerated = true;
          break;
        }
      }
      if (!tolerated) ++intolerable;
    }
    return intolerable;
  }

  void scoreAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    Verdicts& verdicts = state.memo<Verdicts>(kVerdictsKey);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      if (node.node.taints.empty()) {
        out[i] = 0;
      } else if (sharesTaintSet(node)) {
        Verdicts::Verdict& v = verdicts.of(node.taintSet);
        if (v.intolerable < 0) v.intolerable = static_cast<int32_t>(score(state, pod, node));
        out[i] = v.intolerable;
      } else {
        out[i] = score(state, pod, node);
      }
    }
  }

  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    defaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> newTaintToleration(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "TaintTolerationArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<TaintToleration>());
}

}  // namespace placer
