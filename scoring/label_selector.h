#pragma once
// metav1.LabelSelector as k8s.io/apimachinery/pkg/labels.Selector: compiled
// once, matched many times against pod labels.
//
// Semantics as upstream (metav1.LabelSelectorAsSelector, labels.Requirement):
//  - a nil selector matches nothing (Nothing); an empty one matches
//    everything (Everything, also Empty());
//  - matchLabels are Equals requirements, matchExpressions In / NotIn /
//    Exists / DoesNotExist; NotIn and DoesNotExist hold for a missing key;
//  - compile() refuses what upstream refuses, with upstream's message: an
//    unknown operator ("\"Gt\" is not a valid label selector operator"), In or
//    NotIn without values, Exists or DoesNotExist with values, a key that is
//    not a qualified name, a value that is not a valid label value.
//
// Immutable after compiling; safe to share between threads.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

// labels.Requirement.Matches for the set-based operators, which label and
// node selectors share: `value` is the object's value of the requirement's
// key (anything comparable to a string_view through *), null when it has no
// such label. Gt and Lt (node selectors only) are the caller's: false here.
template <class V>
bool matchesSetRequirement(SelectorOperator op, const std::vector<std::string>& values, const V* value) {
  auto listed = [&] {
    for (const std::string& v : values)
      if (std::string_view(v) == std::string_view(*value)) return true;
    return false;
  };
  switch (op) {
    case SelectorOperator::In: return value != nullptr && listed();
    case SelectorOperator::NotIn: return value == nullptr || !listed();
    case SelectorOperator::Exists: return value != nullptr;
    case SelectorOperator::DoesNotExist: return value == nullptr;
    default: return false;
  }
}

class CompiledSelector {
 public:
  struct Requirement {
    std::string key;
    SelectorOperator op = SelectorOperator::In;  // In (Equals too), NotIn, Exists, DoesNotExist
    std::vector<std::string> values;             // sorted, unique
    bool operator==(const Requirement&) const = default;
  };

  // labels.Nothing().
  CompiledSelector() = default;
  static CompiledSelector everything() {
    CompiledSelector s;
    s.nothing_ = false;
    return s;
  }
  static Result<CompiledSelector> compile(const std::optional<LabelSelector>& selector);
  // labels.SelectorFromSet / Set.AsSelector: Equals per pair (Everything for an empty set).
  static CompiledSelector fromSet(const Labels& set);

  bool nothing() const { return nothing_; }
  // labels.Selector.Empty(): no requirements (Everything). Nothing is not empty.
  bool empty() const { return !nothing_ && requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

  // labels.Selector.Add: more requirements, ANDed (no effect on Nothing).
  void add(const std::vector<Requirement>& requirements);
  void add(Requirement requirement);

  bool matches(const Labels& labels) const {
    return matchesWith([&](std::string_view key) -> const std::string* { return findLabel(labels, key); });
  }
  // `label(key)` returns the value of a label (anything with ->size() and
  // comparable to a string_view through *), or null when absent.
  template <class Lookup>
  bool matchesWith(Lookup&& label) const {
    if (nothing_) return false;
    for (const Requirement& r : requirements_)
      if (!matchesSetRequirement(r.op, r.values, label(std::string_view(r.key)))) return false;
    return true;
  }

  // One string per distinct selector (requirements in canonical order), for
  // keys of selectors that are shared.
  std::string canonical() const;
  bool operator==(const CompiledSelector&) const = default;

 private:
  void sortRequirements();

  bool nothing_ = true;
  std::vector<Requirement> requirements_;  // sorted by key, then operator
};

}  // namespace placer
