#include "scoring/pod_affinity.h"

namespace placer {
namespace {

Result<AffinityTerm> compileTerm(const Pod& pod, const PodAffinityTerm& term, int32_t weight) {
  AffinityTerm out;
  auto selector = CompiledSelector::compile(term.labelSelector);
  if (!selector) return selector.error();
  out.selector = std::move(*selector);
  auto nsSelector = CompiledSelector::compile(term.namespaceSelector);
  if (!nsSelector) return nsSelector.error();
  out.namespaceSelector = std::move(*nsSelector);
  if (term.namespaces.empty() && !term.namespaceSelector) {
    out.namespaces.push_back(pod.namespace_);
  } else {
    out.namespaces = term.namespaces;
    std::sort(out.namespaces.begin(), out.namespaces.end());
    out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()), out.namespaces.end());
  }
  out.topologyKey = term.topologyKey;
  out.weight = weight;
  return out;
}

}  // namespace

std::string AffinityTerm::canonical(TermKind kind) const {
  std::string out;
  out += static_cast<char>('0' + static_cast<int>(kind));
  out += std::to_string(weight);
  out += '\x04';
  out += topologyKey;
  out += '\x04';
  for (const std::string& ns : namespaces) {
    out += ns;
    out += '\x05';
  }
  out += '\x04';
  out += namespaceSelector.canonical();
  out += '\x04';
  out += selector.canonical();
  return out;
}

bool hasPodAffinity(const Pod& pod) { return pod.podAffinity.has_value() || pod.podAntiAffinity.has_value(); }

std::shared_ptr<const PodAffinityInfo> compilePodAffinity(const Pod& pod, std::vector<std::string>* errors) {
  if (!hasPodAffinity(pod)) return nullptr;
  auto info = std::make_shared<PodAffinityInfo>();
  static const std::vector<PodAffinityTerm> kNoTerms;
  static const std::vector<WeightedPodAffinityTerm> kNoWeighted;
  const auto& requiredAffinity = pod.podAffinity ? pod.podAffinity->required : kNoTerms;
  const auto& requiredAnti = pod.podAntiAffinity ? pod.podAntiAffinity->required : kNoTerms;
  const auto& preferredAffinity = pod.podAffinity ? pod.podAffinity->preferred : kNoWeighted;
  const auto& preferredAnti = pod.podAntiAffinity ? pod.podAntiAffinity->preferred : kNoWeighted;

  auto compileAll = [&](TermKind kind, std::string_view name, auto&& terms, auto&& termOf, auto&& weightOf) {
    std::vector<AffinityTerm>& out = info->terms[static_cast<size_t>(kind)];
    for (const auto& t : terms) {
      auto compiled = compileTerm(pod, termOf(t), weightOf(t));
      if (!compiled) {
        out.clear();  // upstream: getAffinityTerms returns nil with the error
        if (errors) errors->push_back(std::string(name) + ": " + compiled.error().message);
        return;
      }
      out.push_back(std::move(*compiled));
    }
  };
  auto plain = [](const PodAffinityTerm& t) -> const PodAffinityTerm& { return t; };
  auto noWeight = [](const PodAffinityTerm&) { return 0; };
  auto weighted = [](const WeightedPodAffinityTerm& t) -> const PodAffinityTerm& { return t.term; };
  auto weightOf = [](const WeightedPodAffinityTerm& t) { return t.weight; };
  compileAll(TermKind::RequiredAffinity, "requiredAffinityTerms", requiredAffinity, plain, noWeight);
  compileAll(TermKind::RequiredAntiAffinity, "requiredAntiAffinityTerms", requiredAnti, plain, noWeight);
  compileAll(TermKind::PreferredAffinity, "preferredAffinityTerms", preferredAffinity, weighted, weightOf);
  compileAll(TermKind::PreferredAntiAffinity, "preferredAntiAffinityTerms", preferredAnti, weighted, weightOf);
  if (info->empty()) return nullptr;
  return info;
}

}  // namespace placer
