#pragma once
// NodeResourcesFit, as kube-scheduler's noderesources/fit.go.
//
// Filter: the node must have room for the pod's requests — one more pod,
// cpu, memory, ephemeral-storage, hugepages and extended resources — against
// allocatable minus what its pods already request. Reasons are upstream's
// ("Too many pods", "Insufficient cpu", "Insufficient example.com/gpu"); the
// code is UnschedulableAndUnresolvable when a request exceeds the node's whole
// allocatable (preemption cannot help), Unschedulable otherwise.
// ignoredResources / ignoredResourceGroups exempt extended resources only.
//
// Score: scoringStrategy LeastAllocated (default), MostAllocated or
// RequestedToCapacityRatio over the configured resources (default cpu and
// memory, weight 1), using the non-zero request defaults for cpu and memory.
//
// Args (NodeResourcesFitArgs, kubescheduler.config.k8s.io/v1):
//   ignoredResources: [string], ignoredResourceGroups: [string],
//   scoringStrategy: {type, resources: [{name, weight}],
//                     requestedToCapacityRatio: {shape: [{utilization, score}]}}
// decoded, defaulted and validated exactly as upstream; apiVersion/kind are ignored.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/plugins/resource_allocation.h"
#include "scoring/result.h"

namespace placer {

enum class ScoringStrategyType : uint8_t { LeastAllocated, MostAllocated, RequestedToCapacityRatio };

struct NodeResourcesFitArgs {
  std::vector<std::string> ignoredResources;
  std::vector<std::string> ignoredResourceGroups;
  ScoringStrategyType strategy = ScoringStrategyType::LeastAllocated;
  std::vector<ResourceSpec> resources = defaultResourceSpecs();
  // RequestedToCapacityRatio only: scores as written (0–10), not yet scaled.
  std::vector<ShapePoint> shape;
};

// Decodes, defaults and validates; errors name the field
// ("NodeResourcesFitArgs.scoringStrategy.resources[0].weight: Invalid value: ...").
Result<NodeResourcesFitArgs> decodeNodeResourcesFitArgs(const nlohmann::json& args);

// The registry factory: `args` is the pluginConfig args object, or null.
Result<std::unique_ptr<Plugin>> newNodeResourcesFit(const nlohmann::json& args);
// From already validated args.
std::unique_ptr<Plugin> makeNodeResourcesFit(NodeResourcesFitArgs args);

}  // namespace placer
