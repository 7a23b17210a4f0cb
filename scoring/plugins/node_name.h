#pragma once
// NodeName (kube-scheduler plugins/nodename).
//
// Filter: a pod with spec.nodeName set fits only the node of that name; others
// are rejected with UnschedulableAndUnresolvable
// "node(s) didn't match the requested node name". No args.

#include <memory>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

inline constexpr std::string_view kErrReasonNodeName = "node(s) didn't match the requested node name";

Result<std::unique_ptr<Plugin>> newNodeName(const nlohmann::json& args);

}  // namespace placer
