#include "scoring/plugins/resource_allocation.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "scoring/exact_quotient.h"
#include "scoring/framework.h"
#include "scoring/resources.h"

namespace placer {

namespace {

// Upstream's unchecked int64 arithmetic, modulo 2^64 (wrapAdd and wrapSub are
// in resources.h).
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
// Go's division truncates toward zero like C++; only MinInt64 / -1 differs (it wraps).
int64_t wrapDiv(int64_t a, int64_t b) {
  if (b == -1) return wrapSub(0, a);
  return a / b;
}

constexpr int64_t kMaxUtilization = 100;

// nodeScore / weightSum with upstream's integer division. The default profile
// scores cpu and memory with weight 1 each: dividing by a constant 2 spares a
// hardware division on every node.
int64_t weightedAverage(int64_t nodeScore, int64_t weightSum) {
  if (weightSum == 2) return nodeScore / 2;
  return weightSum == 0 ? 0 : nodeScore / weightSum;
}

// Calls f(i, amounts) for every resource the node can be scored on.
template <class F>
void forEachScored(const ResourceAllocation& r, const NodeInfo& node, std::span<const int64_t> podRequests, F&& f) {
  for (size_t i = 0; i < r.size(); ++i) {
    ResourceAllocation::Amounts a = r.amounts(i, node, podRequests[i]);
    if (a.allocatable == 0) continue;
    f(i, a);
  }
}

}  // namespace

std::vector<ResourceSpec> defaultResourceSpecs() {
  return {{std::string(kResourceCpu), 1}, {std::string(kResourceMemory), 1}};
}

int64_t brokenLinear(std::span<const ShapePoint> shape, int64_t p) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (p <= shape[i].utilization) {
      if (i == 0) return shape[0].score;
      const ShapePoint& lo = shape[i - 1];
      const ShapePoint& hi = shape[i];
      return lo.score + (hi.score - lo.score) * (p - lo.utilization) / (hi.utilization - lo.utilization);
    }
  }
  return shape.empty() ? 0 : shape.back().score;
}

int64_t leastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return wrapDiv(wrapMul(wrapSub(capacity, requested), kMaxNodeScore), capacity);
}

int64_t mostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  // Requested may exceed capacity because pods without requests count the non-zero defaults.
  if (requested > capacity) requested = capacity;
  return wrapDiv(wrapMul(requested, kMaxNodeScore), capacity);
}

ResourceAllocation::ResourceAllocation(std::vector<ResourceSpec> resources, RequestBasis basis)
    : specs_(std::move(resources)), basis_(basis) {
  entries_.reserve(specs_.size());
  for (const ResourceSpec& spec : specs_) {
    Kind kind = Kind::Unscored;
    if (spec.name == kResourceCpu)
      kind = Kind::Cpu;
    else if (spec.name == kResourceMemory)
      kind = Kind::Memory;
    else if (spec.name == kResourceEphemeralStorage)
      kind = Kind::EphemeralStorage;
    else if (isScalarResourceName(spec.name))
      kind = Kind::Scalar;
    // Anything else ("pods", "storage", ...) is never in a node's scalar
    // resources upstream, so it always scores as absent.
    entries_.push_back(Entry{kind, spec.name, spec.weight});
  }
}

void ResourceAllocation::podRequests(const Pod& pod, std::span<int64_t> out) const {
  const Resources& cpuMemory = basis_ == RequestBasis::NonZero ? pod.nonZeroRequests : pod.requests;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    switch (e.kind) {
      case Kind::Cpu: out[i] = cpuMemory.milliCpu; break;
      case Kind::Memory: out[i] = cpuMemory.memory; break;
      case Kind::EphemeralStorage: out[i] = pod.requests.ephemeralStorage; break;
      case Kind::Scalar: out[i] = pod.requests.scalar(e.name); break;
      case Kind::Unscored: out[i] = 0; break;
    }
  }
}

std::vector<int64_t> ResourceAllocation::podRequests(const Pod& pod) const {
  std::vector<int64_t> out(entries_.size());
  podRequests(pod, out);
  return out;
}

ResourceAllocation::Amounts ResourceAllocation::scalarAmounts(const Entry& e, const NodeInfo& node,
                                                             int64_t podRequest) {
  // An extended resource the pod does not request is left out of the score.
  if (podRequest == 0) return {};
  int64_t allocatable = node.allocatable().scalar(e.name);
  if (allocatable == 0) return {};
  return {allocatable, wrapAdd(node.requested.scalar(e.name), podRequest)};
}

namespace {

// Upstream's resourceAllocationScorer for the strategies scored per resource:
// `score(requested, allocatable)` of each scored resource, weighted and averaged.
// `weight(i)` is the i-th resource's weight.
template <class Score, class Weight>
int64_t weightedScore(const ResourceAllocation& allocation, const NodeInfo& node, std::span<const int64_t> podRequests,
                      Score score, Weight weight) {
  int64_t nodeScore = 0;
  int64_t weightSum = 0;
  forEachScored(allocation, node, podRequests, [&](size_t i, ResourceAllocation::Amounts a) {
    nodeScore = wrapAdd(nodeScore, wrapMul(score(a.requested, a.allocatable), weight(i)));
    weightSum += weight(i);
  });
  return weightedAverage(nodeScore, weightSum);
}

}  // namespace

int64_t ResourceAllocation::leastAllocated(const NodeInfo& node, std::span<const int64_t> podRequests) const {
  return weightedScore(*this, node, podRequests, leastRequestedScore, [&](size_t i) { return entries_[i].weight; });
}

int64_t ResourceAllocation::mostAllocated(const NodeInfo& node, std::span<const int64_t> podRequests) const {
  return weightedScore(*this, node, podRequests, mostRequestedScore, [&](size_t i) { return entries_[i].weight; });
}

int64_t ResourceAllocation::requestedToCapacityRatio(std::span<const ShapePoint> shape, const NodeInfo& node,
                                                     std::span<const int64_t> podRequests) const {
  int64_t nodeScore = 0;
  int64_t weightSum = 0;
  forEachScored(*this, node, podRequests, [&](size_t i, Amounts a) {
    int64_t utilization = a.requested > a.allocatable
                              ? kMaxUtilization
                              : wrapDiv(wrapMul(a.requested, kMaxUtilization), a.allocatable);
    int64_t resourceScore = brokenLinear(shape, utilization);
    // Upstream leaves resources scoring 0 out of the average.
    if (resourceScore > 0) {
      nodeScore = wrapAdd(nodeScore, wrapMul(resourceScore, entries_[i].weight));
      weightSum += entries_[i].weight;
    }
  });
  if (weightSum == 0) return 0;
  return static_cast<int64_t>(std::round(static_cast<double>(nodeScore) / static_cast<double>(weightSum)));
}

int64_t ResourceAllocation::balanced(const NodeInfo& node, std::span<const int64_t> podRequests) const {
  // Same floating-point operations in the same order as upstream, so scores
  // truncate identically.
  auto fraction = [](Amounts a) {
    double f = static_cast<double>(a.requested) / static_cast<double>(a.allocatable);
    return f > 1 ? 1.0 : f;
  };
  double totalFraction = 0;
  double first = 0;
  double second = 0;
  size_t count = 0;
  forEachScored(*this, node, podRequests, [&](size_t, Amounts a) {
    double f = fraction(a);
    totalFraction += f;
    if (count == 0) first = f;
    if (count == 1) second = f;
    ++count;
  });

  double stddev = 0;
  if (count == 2) {
    // The usual cpu + memory case: the standard deviation of two values.
    stddev = std::abs((first - second) / 2);
  } else if (count > 2) {
    double mean = totalFraction / static_cast<double>(count);
    double sum = 0;
    forEachScored(*this, node, podRequests, [&](size_t, Amounts a) {
      double f = fraction(a);
      sum = sum + (f - mean) * (f - mean);
    });
    stddev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - stddev) * static_cast<double>(kMaxNodeScore));
}

namespace {

// leastRequestedScore() for a capacity other than 0: its integer quotient
// through one floating-point division (exactQuotient) whenever the numerator
// stays below 2^53, the integer arithmetic otherwise.
// Inlined: it runs twice per node, and a call costs as much as it does.
[[gnu::always_inline]] inline int64_t leastRequestedNonZeroCapacity(int64_t requested, int64_t capacity) {
  if (requested > capacity) return 0;
  if (requested >= 0 && capacity < kExactQuotientBound / kMaxNodeScore)
    return exactQuotient((capacity - requested) * kMaxNodeScore, capacity);
  return wrapDiv(wrapMul(wrapSub(capacity, requested), kMaxNodeScore), capacity);
}

// Two doubles divided by one instruction (GCC/Clang vector extension): each
// lane is the same correctly rounded IEEE division as a scalar one, so the
// cpu and memory quotients of a node cost one division's throughput, not two.
using DoublePair = double __attribute__((vector_size(16)));

// Whether leastRequestedNonZeroCapacity(requested, capacity) takes its
// floating-point path (and capacity is not 0).
[[gnu::always_inline]] inline bool leastRequestedByQuotient(int64_t requested, int64_t capacity) {
  // capacity in [1, bound) and requested in [0, capacity], as two unsigned
  // compares (a negative value is larger than any bound as unsigned).
  constexpr uint64_t kBound = kExactQuotientBound / kMaxNodeScore;
  return static_cast<uint64_t>(capacity) - 1 < kBound - 1 &&
         static_cast<uint64_t>(requested) <= static_cast<uint64_t>(capacity);
}

// The cpu-then-memory fast paths: out[i] = score(allocatable, cpu, memory)
// of nodes[i], cpu and memory being what the node has requested (non-zero
// amounts or not) with the pod's requests added.
template <class Score>
void scoreCpuThenMemory(std::span<const NodeInfo* const> nodes, std::span<const int64_t> podRequests, bool nonZero,
                        std::span<int64_t> out, Score score) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeInfo& node = *nodes[i];
    const int64_t cpu = wrapAdd(nonZero ? node.nonZeroRequested.milliCpu : node.requested.milliCpu, podRequests[0]);
    const int64_t memory = wrapAdd(nonZero ? node.nonZeroRequested.memory : node.requested.memory, podRequests[1]);
    out[i] = score(node.allocatable(), cpu, memory);
  }
}

}  // namespace

bool ResourceAllocation::cpuThenMemory() const {
  return entries_.size() == 2 && entries_[0].kind == Kind::Cpu && entries_[1].kind == Kind::Memory;
}

void ResourceAllocation::leastAllocatedAll(std::span<const NodeInfo* const> nodes, std::span<const int64_t> podRequests,
                                           std::span<int64_t> out) const {
  if (!cpuThenMemory()) {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = leastAllocated(*nodes[i], podRequests);
    return;
  }
  const int64_t cpuWeight = entries_[0].weight;
  const int64_t memoryWeight = entries_[1].weight;
  // unitWeights: both weights 1 (the default profile's), known at compile time.
  auto scoreAll = [&](auto unitWeights) {
    scoreCpuThenMemory(
        nodes, podRequests, basis_ == RequestBasis::NonZero, out,
        [&](const Resources& allocatable, int64_t cpu, int64_t memory) -> int64_t {
          if (leastRequestedByQuotient(cpu, allocatable.milliCpu) &&
              leastRequestedByQuotient(memory, allocatable.memory)) {
            // Both exactQuotient()s in one division.
            const DoublePair quotients =
                DoublePair{static_cast<double>((allocatable.milliCpu - cpu) * kMaxNodeScore),
                           static_cast<double>((allocatable.memory - memory) * kMaxNodeScore)} /
                DoublePair{static_cast<double>(allocatable.milliCpu), static_cast<double>(allocatable.memory)};
            const auto cpuScore = static_cast<int64_t>(quotients[0]);
            const auto memoryScore = static_cast<int64_t>(quotients[1]);
            // weightedAverage(cpuScore + memoryScore, 2): both lie in [0, 100].
            if constexpr (decltype(unitWeights)::value) return (cpuScore + memoryScore) >> 1;
            return weightedAverage(wrapAdd(wrapMul(cpuScore, cpuWeight), wrapMul(memoryScore, memoryWeight)),
                                   cpuWeight + memoryWeight);
          }
          int64_t nodeScore = 0;
          int64_t weightSum = 0;
          if (allocatable.milliCpu != 0) {
            nodeScore = wrapMul(leastRequestedNonZeroCapacity(cpu, allocatable.milliCpu), cpuWeight);
            weightSum = cpuWeight;
          }
          if (allocatable.memory != 0) {
            nodeScore =
                wrapAdd(nodeScore, wrapMul(leastRequestedNonZeroCapacity(memory, allocatable.memory), memoryWeight));
            weightSum += memoryWeight;
          }
          return weightedAverage(nodeScore, weightSum);
        });
  };
  if (cpuWeight == 1 && memoryWeight == 1)
    scoreAll(std::true_type{});
  else
    scoreAll(std::false_type{});
}

void ResourceAllocation::balancedAll(std::span<const NodeInfo* const> nodes, std::span<const int64_t> podRequests,
                                     std::span<int64_t> out) const {
  if (!cpuThenMemory()) {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = balanced(*nodes[i], podRequests);
    return;
  }
  // balanced() with one or two fractions: the deviation of two is half their
  // difference, of one is 0.
  scoreCpuThenMemory(nodes, podRequests, basis_ == RequestBasis::NonZero, out,
                     [](const Resources& allocatable, int64_t cpu, int64_t memory) {
                       double stddev = 0;
                       if (allocatable.milliCpu != 0 && allocatable.memory != 0) {
                         const DoublePair fractions =
                             DoublePair{static_cast<double>(cpu), static_cast<double>(memory)} /
                             DoublePair{static_cast<double>(allocatable.milliCpu), static_cast<double>(allocatable.memory)};
                         double cpuFraction = fractions[0];
                         double memoryFraction = fractions[1];
                         cpuFraction = cpuFraction > 1 ? 1.0 : cpuFraction;
                         memoryFraction = memoryFraction > 1 ? 1.0 : memoryFraction;
                         stddev = std::abs((cpuFraction - memoryFraction) / 2);
                       }
                       return static_cast<int64_t>((1 - stddev) * static_cast<double>(kMaxNodeScore));
                     });
}

std::string aggregateErrors(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::string out = "[";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += ", ";
    out += errors[i];
  }
  out += "]";
  return out;
}

Result<std::vector<ResourceSpec>> decodeResourceSpecs(const nlohmann::json& value, std::string_view path) {
  std::vector<ResourceSpec> specs;
  if (value.is_null()) return specs;
  if (!value.is_array()) return fieldError(path, "must be a list");
  for (size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& item = value[i];
    std::string itemPath = indexedField(path, i);
    if (!item.is_object()) return fieldError(itemPath, "must be an object");
    ResourceSpec spec;
    spec.weight = 0;  // absent: defaulted by the caller, as upstream's SetDefaults_*
    for (const auto& [key, v] : item.items()) {
      if (key == "name") {
        if (!v.is_string()) return fieldError(itemPath + ".name", "must be a string");
        spec.name = v.get<std::string>();
      } else if (key == "weight") {
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return fieldError(itemPath + ".weight", "must fit in a 64-bit integer");
        if (!v.is_number_integer()) return fieldError(itemPath + ".weight", "must be an integer");
        spec.weight = v.get<int64_t>();
      } else {
        return fieldError(itemPath + "." + key, "unknown field");
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace placer
