#pragma once
// Label and field selectors as the API server evaluates them on list and watch
// (k8s.io/apimachinery/pkg/labels and pkg/fields), and metav1.LabelSelector as
// webhooks use it for namespaceSelector / objectSelector.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::fakeapi {

using LabelPairs = std::vector<std::pair<std::string, std::string>>;

struct LabelRequirement {
  enum class Op { Equals, NotEquals, In, NotIn, Exists, DoesNotExist };
  std::string key;
  Op op = Op::Exists;
  std::vector<std::string> values;
};

// A conjunction of requirements; empty matches everything.
struct LabelSelectorQuery {
  std::vector<LabelRequirement> requirements;
  bool matches(const LabelPairs& labels) const;
  bool empty() const { return requirements.empty(); }
};

// The ?labelSelector= syntax: "a=b,c!=d,e in (x,y),f notin (z),g,!h".
Result<LabelSelectorQuery> parseLabelSelector(std::string_view text);
// metav1.LabelSelector JSON ({matchLabels, matchExpressions}); null or {} matches all.
Result<LabelSelectorQuery> labelSelectorFromJson(const nlohmann::json& selector);

// The fields a field selector may name, per kind, already extracted.
// Views of one object's fields, valid while the object is (a list matches
// 150,000 pods: no copies).
struct FieldValues {
  std::string_view name;
  std::string_view ns;
  std::string_view nodeName;       // pods: spec.nodeName
  std::string_view phase;          // pods: status.phase
  std::string_view schedulerName;  // pods: spec.schedulerName
  bool unschedulable = false;      // nodes: spec.unschedulable
};

struct FieldRequirement {
  std::string field;
  bool equals = true;  // "=" / "==" vs "!="
  std::string value;
};

struct FieldSelectorQuery {
  std::vector<FieldRequirement> requirements;
  bool isPod = true;
  bool matches(const FieldValues& values) const;
  bool empty() const { return requirements.empty(); }
};

// ?fieldSelector= for pods (isPod) or nodes. An unsupported field is an error
// worded as upstream's: "field label not supported: <field>".
Result<FieldSelectorQuery> parseFieldSelector(std::string_view text, bool isPod);
// ?fieldSelector= naming only the given fields.
Result<FieldSelectorQuery> parseFieldSelector(std::string_view text, const std::vector<std::string>& allowedFields);

}  // namespace placer::fakeapi
