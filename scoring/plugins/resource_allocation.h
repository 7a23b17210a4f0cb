#pragma once
// Resource-allocation scoring shared by NodeResourcesFit and
// NodeResourcesBalancedAllocation, as upstream's noderesources/resource_allocation.go
// and its scorers (least_allocated.go, most_allocated.go,
// requested_to_capacity_ratio.go, balanced_allocation.go).
//
// For each configured resource a node contributes a pair (allocatable, requested
// including the incoming pod); a strategy turns the pairs into a 0–100 score.
// A pair with allocatable 0 is not scored: the node lacks the resource, or it is
// an extended resource the pod does not request.
//
// Immutable after construction; safe to share between threads.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

// One entry of the args' `resources` list (config.ResourceSpec).
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;
  bool operator==(const ResourceSpec&) const = default;
};

// kube-scheduler's defaultResourceSpec: cpu and memory, weight 1 each.
std::vector<ResourceSpec> defaultResourceSpecs();

// Which amounts count as "requested" for cpu and memory.
enum class RequestBasis : uint8_t {
  NonZero,  // NodeResourcesFit: the scorers' non-zero defaults for containers that request nothing
  Actual,   // NodeResourcesBalancedAllocation (upstream useRequested): the real requests
};

// A point of a RequestedToCapacityRatio shape, score already scaled to 0–100.
struct ShapePoint {
  int64_t utilization = 0;
  int64_t score = 0;
  bool operator==(const ShapePoint&) const = default;
};

// helper.BuildBrokenLinearFunction: linear segments between the points, flat
// before the first and after the last. Points sorted by utilization, at least one.
int64_t brokenLinear(std::span<const ShapePoint> shape, int64_t utilization);

// Per-resource scores on 0–100.
int64_t leastRequestedScore(int64_t requested, int64_t capacity);
int64_t mostRequestedScore(int64_t requested, int64_t capacity);

class ResourceAllocation {
 public:
  ResourceAllocation(std::vector<ResourceSpec> resources, RequestBasis basis);

  size_t size() const { return entries_.size(); }
  const std::vector<ResourceSpec>& resources() const { return specs_; }

  // The pod's request for each configured resource, in configuration order
  // (upstream calculatePodResourceRequestList). `out` has size() elements.
  void podRequests(const Pod& pod, std::span<int64_t> out) const;
  std::vector<int64_t> podRequests(const Pod& pod) const;

  struct Amounts {
    int64_t allocatable = 0;
    int64_t requested = 0;  // on the node, including the incoming pod
  };
  // Resource i of the node with the pod's request added (upstream
  // calculateResourceAllocatableRequest plus the "only non-zero allocatable" rule).
  // Inline: it runs for every resource of every node.
  Amounts amounts(size_t i, const NodeInfo& node, int64_t podRequest) const {
    const Entry& e = entries_[i];
    const Resources& allocatable = node.allocatable();
    const bool nonZero = basis_ == RequestBasis::NonZero;
    switch (e.kind) {
      case Kind::Cpu:
        return {allocatable.milliCpu,
                wrapAdd(nonZero ? node.nonZeroRequested.milliCpu : node.requested.milliCpu, podRequest)};
      case Kind::Memory:
        return {allocatable.memory, wrapAdd(nonZero ? node.nonZeroRequested.memory : node.requested.memory, podRequest)};
      case Kind::EphemeralStorage:
        return {allocatable.ephemeralStorage, wrapAdd(node.requested.ephemeralStorage, podRequest)};
      case Kind::Scalar: return scalarAmounts(e, node, podRequest);
      case Kind::Unscored: return {};
    }
    return {};
  }

  // Strategies. `podRequests` comes from podRequests().
  int64_t leastAllocated(const NodeInfo& node, std::span<const int64_t> podRequests) const;
  int64_t mostAllocated(const NodeInfo& node, std::span<const int64_t> podRequests) const;
  int64_t requestedToCapacityRatio(std::span<const ShapePoint> shape, const NodeInfo& node,
                                   std::span<const int64_t> podRequests) const;
  // (1 - standard deviation of the requested fractions, each capped at 1) * 100.
  int64_t balanced(const NodeInfo& node, std::span<const int64_t> podRequests) const;
  // leastAllocated() and balanced() of many nodes: out[i] for nodes[i]. The
  // same integers, through one tight loop when the resources are cpu and
  // memory (the default), as they are in nearly every profile.
  void leastAllocatedAll(std::span<const NodeInfo* const> nodes, std::span<const int64_t> podRequests,
                         std::span<int64_t> out) const;
  void balancedAll(std::span<const NodeInfo* const> nodes, std::span<const int64_t> podRequests,
                   std::span<int64_t> out) const;

 private:
  enum class Kind : uint8_t { Cpu, Memory, EphemeralStorage, Scalar, Unscored };
  struct Entry {
    Kind kind;
    std::string name;
    int64_t weight;
  };
  static Amounts scalarAmounts(const Entry& e, const NodeInfo& node, int64_t podRequest);
  // The resources are cpu then memory (any weights): the *All fast paths apply.
  bool cpuThenMemory() const;

  std::vector<ResourceSpec> specs_;
  std::vector<Entry> entries_;
  RequestBasis basis_;
};

// Decoding helpers shared by the args of both plugins. `path` is the field path
// used in error messages ("NodeResourcesFitArgs.scoringStrategy.resources").
// A null value decodes to an empty list. Unknown keys are refused, as
// kube-scheduler's strict decoding does.
Result<std::vector<ResourceSpec>> decodeResourceSpecs(const nlohmann::json& value, std::string_view path);

// Go's field.ErrorList.ToAggregate().Error(): one error as is, several as "[a, b]".
std::string aggregateErrors(const std::vector<std::string>& errors);

}  // namespace placer
