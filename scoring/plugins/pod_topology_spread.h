#pragma once
// PodTopologySpread (kube-scheduler plugins/podtopologyspread), over the
// pods of the view and its reservations.
//
// Constraints: the pod's own (whenUnsatisfiable DoNotSchedule for Filter,
// ScheduleAnyway for Score; matchLabelKeys merged into the selector; minDomains
// 1, nodeAffinityPolicy Honor and nodeTaintsPolicy Ignore when unset), or,
// when it has none, the default constraints with the selector upstream's
// DefaultSelector builds from the Services, ReplicationControllers,
// ReplicaSets and StatefulSets that select the pod (none when that selector
// is empty). Pods counted: same namespace, not terminating, matching the
// selector (an empty selector counts none).
//
// PreFilter/Filter (DoNotSchedule): over every node that has all the
// constraints' topology keys and passes each constraint's inclusion
// policies, the matching pods per domain and their minimum (0 when there are
// fewer domains than minDomains). A node without a key fails
// UnschedulableAndUnresolvable "node(s) didn't match pod topology spread
// constraints (missing required label)"; one where count + self-match - min
// exceeds maxSkew fails Unschedulable "node(s) didn't match pod topology
// spread constraints". Skip when there is no such constraint.
// PreScore/Score (ScheduleAnyway): domains are those of the feasible nodes;
// a feasible node missing a key is ignored (scores 0) unless the system
// defaults apply, which need not every key. A node scores
// round(sum(count * log(domains + 2) + maxSkew - 1)) (per node for
// kubernetes.io/hostname), normalised as 100 * (max + min - s) / max.
//
// Args (PodTopologySpreadArgs): defaultingType System (upstream default: the
// hostname maxSkew 3 and zone maxSkew 5 ScheduleAnyway constraints) or List
// (defaultConstraints), validated as upstream does.

#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

struct PodTopologySpreadArgs {
  bool systemDefaulting = true;
  std::vector<TopologySpreadConstraint> defaultConstraints;  // List
};

Result<PodTopologySpreadArgs> decodePodTopologySpreadArgs(const nlohmann::json& args);
Result<std::unique_ptr<Plugin>> newPodTopologySpread(const nlohmann::json& args);

}  // namespace placer
