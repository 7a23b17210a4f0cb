#pragma once
// Pod (anti-)affinity terms, compiled once per pod: upstream's
// framework.AffinityTerm / WeightedAffinityTerm as NewPodInfo builds them.
//
//  - selector: the term's labelSelector (nil matches no pod);
//  - namespaces: the term's namespaces, or the pod's own namespace when the
//    term gives neither namespaces nor a namespaceSelector;
//  - namespaceSelector: nil matches no namespace, {} every namespace;
//  - Matches(pod, nsLabels): the pod's namespace is listed or its
//    namespace's labels match namespaceSelector, and its labels match selector.
//
// Immutable once compiled; shared between the view, reservations and threads.

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/label_selector.h"
#include "scoring/model.h"

namespace placer {

enum class TermKind : uint8_t { RequiredAffinity, RequiredAntiAffinity, PreferredAffinity, PreferredAntiAffinity };
inline constexpr size_t kTermKinds = 4;

struct AffinityTerm {
  CompiledSelector selector;
  std::vector<std::string> namespaces;  // sorted, unique
  CompiledSelector namespaceSelector;   // Nothing when not given
  std::string topologyKey;
  int32_t weight = 0;  // preferred terms

  bool namespaceMatches(std::string_view podNamespace, const Labels& namespaceLabels) const {
    return std::binary_search(namespaces.begin(), namespaces.end(), podNamespace, std::less<>()) ||
           namespaceSelector.matches(namespaceLabels);
  }
  // `label(key)` as CompiledSelector::matchesWith.
  template <class Lookup>
  bool matches(std::string_view podNamespace, const Labels& namespaceLabels, Lookup&& label) const {
    return namespaceMatches(podNamespace, namespaceLabels) && selector.matchesWith(label);
  }
  bool matches(std::string_view podNamespace, const Labels& namespaceLabels, const Labels& labels) const {
    return namespaceMatches(podNamespace, namespaceLabels) && selector.matches(labels);
  }
  // Equal for equal terms of the same kind (and weight).
  std::string canonical(TermKind kind) const;
  bool operator==(const AffinityTerm&) const = default;
};

struct PodAffinityInfo {
  std::array<std::vector<AffinityTerm>, kTermKinds> terms;
  const std::vector<AffinityTerm>& of(TermKind kind) const { return terms[static_cast<size_t>(kind)]; }
  bool empty() const {
    return std::all_of(terms.begin(), terms.end(), [](const auto& t) { return t.empty(); });
  }
};

// The pod's terms as upstream's NewPodInfo compiles them: a kind with a term
// that does not compile keeps no term at all, and `errors` (when given)
// receives "requiredAffinityTerms: <message>" and the like, in upstream's order.
// Null when the pod has no term of any kind.
std::shared_ptr<const PodAffinityInfo> compilePodAffinity(const Pod& pod, std::vector<std::string>* errors = nullptr);

// Whether the pod declares pod affinity or anti-affinity at all (upstream's
// PodsWithAffinity membership), and required anti-affinity terms.
bool hasPodAffinity(const Pod& pod);

}  // namespace placer
