#pragma once
// NodeResourcesBalancedAllocation, as kube-scheduler's
// noderesources/balanced_allocation.go: favours nodes whose resources would be
// used evenly with the pod placed. For each configured resource (default cpu
// and memory) the fraction requested/allocatable is capped at 1; the score is
// (1 - standard deviation of the fractions) * 100, where two fractions use
// |f1 - f2| / 2. Real requests are used (no non-zero defaults). Resources the
// node lacks, and extended resources the pod does not request, are left out.
// PreScore skips (every node scores 0) for a pod that requests none of the
// configured resources, so best-effort pods do not pile onto one node.
//
// Args (NodeResourcesBalancedAllocationArgs): resources: [{name, weight}];
// weight must be 1 (0 or absent defaults to 1), names must not repeat.

#include <memory>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/plugins/resource_allocation.h"
#include "scoring/result.h"

namespace placer {

struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
};

// Decodes, defaults and validates; errors name the field
// ("NodeResourcesBalancedAllocationArgs.resources[1].name: Duplicate value: \"cpu\"").
Result<NodeResourcesBalancedAllocationArgs> decodeNodeResourcesBalancedAllocationArgs(const nlohmann::json& args);

// The registry factory: `args` is the pluginConfig args object, or null.
Result<std::unique_ptr<Plugin>> newNodeResourcesBalancedAllocation(const nlohmann::json& args);
// From already validated args.
std::unique_ptr<Plugin> makeNodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs args);

}  // namespace placer
