#pragma once
// NodeAffinity (kube-scheduler plugins/nodeaffinity, with the matching rules
// of k8s.io/component-helpers/scheduling/corev1/nodeaffinity).
//
// PreFilter: Skip when the pod has no nodeSelector, no required node affinity
// and the plugin has no addedAffinity.required. When every required term pins
// metadata.name (matchFields In) and the union of the pinned names is empty,
// the pod is rejected for every node: UnschedulableAndUnresolvable
// "pod affinity terms conflict".
// Filter: addedAffinity.required not matched -> UnschedulableAndUnresolvable
// "node(s) didn't match scheduler-enforced node affinity"; then the pod's
// nodeSelector (every pair equal) and required terms (ORed; expressions and
// fields in a term ANDed) -> UnschedulableAndUnresolvable
// "node(s) didn't match Pod's node affinity/selector".
// A required term that does not parse (unknown key syntax, a Gt/Lt value that
// is not an integer, In with no values, ...) matches no node, as upstream.
// PreScore/Score: the sum of the weights of the preferred terms (the pod's and
// addedAffinity's) that the node matches, normalised to 0-100 (max -> 100).
// A preferred term of the pod that does not parse fails PreScore with Error.
//
// Args (NodeAffinityArgs): {"addedAffinity": <v1.NodeAffinity>}; validated at
// construction, errors name the field, e.g.
// NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: unsupported "Foo"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kErrReasonNodeAffinityPod = "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kErrReasonNodeAffinityEnforced =
    "node(s) didn't match scheduler-enforced node affinity";
inline constexpr std::string_view kErrReasonNodeAffinityConflict = "pod affinity terms conflict";
inline constexpr std::string_view kObjectNameField = "metadata.name";

// One NodeSelectorTerm, parsed once: label requirements with their integer
// bounds resolved, field requirements, and the parse errors that make the term
// match nothing. Immutable after parsing; safe to share between threads.
class ParsedNodeSelectorTerm {
 public:
  // `path` prefixes error messages (e.g. "nodeSelectorTerms[0]").
  static ParsedNodeSelectorTerm parse(const NodeSelectorTerm& term, std::string_view path);

  bool empty() const { return empty_; }
  const std::vector<std::string>& errors() const { return errors_; }
  bool matches(const Node& node) const;

  // The term resolved against a view's node label index, for one decision:
  // matches() then compares integers. Only for nodes with
  // ClusterView::labelsIndexed(node); the view must not change meanwhile.
  struct Indexed {
    struct Requirement {
      SelectorOperator op;
      uint32_t key;                  // StringTable::kNone: no node has the key
      std::vector<uint32_t> values;  // In/NotIn: ids of the values some node has
      int64_t bound = 0;
    };
    const ParsedNodeSelectorTerm* term = nullptr;
    std::vector<Requirement> labels;
    bool matches(const NodeInfo& node, const ClusterView& view) const;
  };
  Indexed resolve(const ClusterView& view) const;

 private:
  bool fieldsMatch(const Node& node) const;
  struct LabelRequirement {
    std::string key;
    SelectorOperator op;
    std::vector<std::string> values;
    int64_t bound = 0;  // Gt / Lt
  };
  struct FieldRequirement {
    std::string key;
    bool equal;  // In: equal; NotIn: not equal
    std::string value;
  };
  bool empty_ = true;
  bool hasLabelSelector_ = false;
  bool hasFieldSelector_ = false;
  std::vector<LabelRequirement> labels_;
  std::vector<FieldRequirement> fields_;
  std::vector<std::string> errors_;
};

// v1.NodeSelector: terms ORed; empty terms are dropped and match nothing.
class ParsedNodeSelector {
 public:
  static ParsedNodeSelector parse(const NodeSelector& selector, std::string_view path = "nodeSelectorTerms");
  bool matches(const Node& node) const;
  // Every parse error of every term (NewNodeSelector fails on any of them).
  std::vector<std::string> errors() const;

  struct Indexed {
    std::vector<ParsedNodeSelectorTerm::Indexed> terms;
    bool matches(const NodeInfo& node, const ClusterView& view) const {
      for (const auto& t : terms)
        if (t.matches(node, view)) return true;
      return false;
    }
  };
  Indexed resolve(const ClusterView& view) const;

 private:
  std::vector<ParsedNodeSelectorTerm> terms_;
};

// []v1.PreferredSchedulingTerm: terms with weight 0 or no requirements are dropped.
class ParsedPreferredTerms {
 public:
  static ParsedPreferredTerms parse(const std::vector<PreferredSchedulingTerm>& terms, std::string_view path = "");
  int64_t score(const Node& node) const;
  const std::vector<std::string>& errors() const { return errors_; }
  bool empty() const { return terms_.empty(); }

  struct Indexed {
    std::vector<std::pair<ParsedNodeSelectorTerm::Indexed, int32_t>> terms;
    int64_t score(const NodeInfo& node, const ClusterView& view) const {
      int64_t score = 0;
      for (const auto& [term, weight] : terms)
        if (term.matches(node, view)) score += weight;
      return score;
    }
  };
  Indexed resolve(const ClusterView& view) const;

 private:
  std::vector<std::pair<ParsedNodeSelectorTerm, int32_t>> terms_;
  std::vector<std::string> errors_;
};


// Decodes a v1.NodeAffinity JSON object (as in NodeAffinityArgs.addedAffinity);
// errors name the field under `path`.
Result<NodeAffinity> decodeNodeAffinity(const nlohmann::json& object, const std::string& path);

Result<std::unique_ptr<Plugin>> newNodeAffinity(const nlohmann::json& args);

}  // namespace placer
