#pragma once
// NodeUnschedulable (kube-scheduler plugins/nodeunschedulable).
//
// Filter: a node with spec.unschedulable is rejected with
// UnschedulableAndUnresolvable "node(s) were unschedulable", unless the pod
// tolerates the taint {key: node.kubernetes.io/unschedulable, effect: NoSchedule}.
// No args.

#include <memory>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";
inline constexpr std::string_view kErrReasonNodeUnschedulable = "node(s) were unschedulable";

Result<std::unique_ptr<Plugin>> newNodeUnschedulable(const nlohmann::json& args);

}  // namespace placer
