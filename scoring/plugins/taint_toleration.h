#pragma once
// TaintToleration (kube-scheduler plugins/tainttoleration).
//
// Filter: the first NoSchedule or NoExecute taint of the node (in the node's
// order) that no toleration of the pod tolerates rejects the node with
// UnschedulableAndUnresolvable "node(s) had untolerated taint {<key>: <value>}"
// (an empty value prints as "{key: }").
// Score: the number of PreferNoSchedule taints not tolerated by the pod's
// tolerations whose effect is PreferNoSchedule or empty; normalised with the
// default normaliser, reversed (fewest intolerable taints -> 100).
// No args.

#include <memory>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

// v1.Toleration.ToleratesTaint (k8s.io/api/core/v1): an empty toleration
// effect matches every effect, an empty key every key; Exists ignores the value.
bool toleratesTaint(const Toleration& toleration, const Taint& taint);
bool tolerationsTolerateTaint(std::span<const Toleration> tolerations, const Taint& taint);

// component-helpers FindMatchingUntoleratedTaint restricted to NoSchedule and
// NoExecute taints: the first such taint not tolerated, or nullptr.
const Taint* findUntoleratedScheduleTaint(std::span<const Taint> taints, std::span<const Toleration> tolerations);

// The filter reason for an untolerated taint, formatted exactly as upstream.
std::string untoleratedTaintReason(const Taint& taint);

Result<std::unique_ptr<Plugin>> newTaintToleration(const nlohmann::json& args);

}  // namespace placer
