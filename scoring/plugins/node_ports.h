#pragma once
// NodePorts (kube-scheduler plugins/nodeports).
//
// PreFilter collects the pod's host ports (hostPort > 0) from its containers
// and from init containers with restartPolicy: Always (util.GetHostPorts);
// Skip when there are none. Filter rejects a node with Unschedulable
// "node(s) didn't have free ports for the requested pod ports" when a wanted
// (ip, protocol, port) conflicts with one in use: same protocol and port, and
// either IP is 0.0.0.0 or the IPs are equal. An empty IP means 0.0.0.0 and an
// empty protocol TCP. No args.

#include <memory>
#include <span>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kErrReasonNodePorts = "node(s) didn't have free ports for the requested pod ports";

// framework.HostPortInfo.CheckConflict: does `wanted` conflict with any port in use?
bool hostPortConflicts(const HostPort& wanted, std::span<const HostPort> used);

Result<std::unique_ptr<Plugin>> newNodePorts(const nlohmann::json& args);

}  // namespace placer
