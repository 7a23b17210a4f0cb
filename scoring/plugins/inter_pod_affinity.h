#pragma once
// InterPodAffinity (kube-scheduler plugins/interpodaffinity), over the pods
// of the view and its reservations.
//
// PreFilter: the pod's required terms are compiled as upstream's NewPodInfo
// does (a term that does not compile: UnschedulableAndUnresolvable
// "parsing pod: requiredAffinityTerms: ..." for every node); a term's
// namespaceSelector is unrolled into the namespaces whose labels match it.
// Three counts per topology domain are taken:
//  - existing pods whose required anti-affinity terms match this pod;
//  - pods matching all of this pod's required affinity terms;
//  - pods matching each of this pod's required anti-affinity terms.
// Skip when the first is empty and the pod has no required terms.
// Filter, in this order:
//  - affinity: a node missing a term's topology key, or whose domain holds no
//    matching pod, fails UnschedulableAndUnresolvable "node(s) didn't match
//    pod affinity rules" — unless no pod matches anywhere and the pod matches
//    its own terms (the first pod of a group);
//  - anti-affinity: a domain holding a matching pod fails Unschedulable
//    "node(s) didn't match pod anti-affinity rules";
//  - existing pods' anti-affinity: Unschedulable "node(s) didn't satisfy
//    existing pods anti-affinity rules".
// PreScore/Score: per topology domain, + weight for each pod matching one of
// this pod's preferred affinity terms, - weight for its preferred
// anti-affinity terms; + hardPodAffinityWeight for each existing pod whose
// required affinity term matches this pod, + / - weight for existing pods'
// preferred (anti-)affinity terms that match it. A node scores the sum over
// its domains; normalised as (score - min) * 100 / (max - min). Skip when
// nothing contributed (or, with ignorePreferredTermsOfExistingPods, when the
// pod has no preferred terms).
//
// Args (InterPodAffinityArgs): hardPodAffinityWeight (default 1, 0..100),
// ignorePreferredTermsOfExistingPods (default false).

#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";
inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";

struct InterPodAffinityArgs {
  int32_t hardPodAffinityWeight = 1;
  bool ignorePreferredTermsOfExistingPods = false;
};

Result<InterPodAffinityArgs> decodeInterPodAffinityArgs(const nlohmann::json& args);
Result<std::unique_ptr<Plugin>> newInterPodAffinity(const nlohmann::json& args);

}  // namespace placer
