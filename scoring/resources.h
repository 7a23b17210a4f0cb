#pragma once
// A vector of resource amounts, as kube-scheduler's framework.Resource:
// cpu in millicores, memory and ephemeral-storage in bytes, pods as a count,
// and "scalar" resources (hugepages-*, extended resources such as
// example.com/gpu, attachable-volumes-*) by name.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace placer {

inline constexpr std::string_view kResourceCpu = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// Defaults kube-scheduler's scorers assume for containers that request nothing
// (pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

// Go's int64 arithmetic wraps on overflow; C++ signed overflow is undefined.
// Amounts near the int64 limit are possible in hostile input, so arithmetic
// that upstream does unchecked is done modulo 2^64 here.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
// a + b, held at the int64 limits instead of wrapping.
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

struct Resources {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  int64_t ephemeralStorage = 0;
  int64_t pods = 0;  // only meaningful for allocatable (AllowedPodNumber)
  // Sorted by name, unique names.
  std::vector<std::pair<std::string, int64_t>> scalars;

  int64_t scalar(std::string_view name) const {
    auto it = std::lower_bound(scalars.begin(), scalars.end(), name,
                               [](const auto& e, std::string_view n) { return e.first < n; });
    return (it != scalars.end() && it->first == name) ? it->second : 0;
  }
  void setScalar(std::string_view name, int64_t value) {
    auto it = std::lower_bound(scalars.begin(), scalars.end(), name,
                               [](const auto& e, std::string_view n) { return e.first < n; });
    if (it != scalars.end() && it->first == name)
      it->second = value;
    else
      scalars.emplace(it, std::string(name), value);
  }
  void addScalar(std::string_view name, int64_t delta) { setScalar(name, wrapAdd(scalar(name), delta)); }

  // Any resource by its Kubernetes name ("cpu" answers millicores).
  int64_t get(std::string_view name) const {
    if (name == kResourceCpu) return milliCpu;
    if (name == kResourceMemory) return memory;
    if (name == kResourceEphemeralStorage) return ephemeralStorage;
    if (name == kResourcePods) return pods;
    return scalar(name);
  }

  // add, subtract and setMax walk both sorted lists once: linear in the two
  // sizes, whatever the number of names (a pod may request thousands of
  // distinct extended resources). subtract drops the names that reach zero,
  // so a node's usage does not keep every name a departed pod requested.
  //
  // add and subtract are a node's accounting: they wrap modulo 2^64 as Go's
  // int64 arithmetic does (C++ signed overflow is undefined), so adding a
  // pod and subtracting it again always restores the totals exactly, even
  // for amounts near the int64 limit that hostile input can carry.
  void add(const Resources& o) { combine(o, wrapAdd, Absent::Insert); }
  void subtract(const Resources& o) { combine(o, wrapSub, Absent::InsertNonZero); }
  // A pod's own request, summed over its containers: a total beyond int64
  // stays at the int64 maximum, a request no node can satisfy, so such a
  // pod is never placed on the strength of a sum that wrapped.
  void addSaturating(const Resources& o) { combine(o, saturatingAdd, Absent::Insert); }
  // Element-wise maximum (init containers).
  void setMax(const Resources& o) {
    milliCpu = std::max(milliCpu, o.milliCpu);
    memory = std::max(memory, o.memory);
    ephemeralStorage = std::max(ephemeralStorage, o.ephemeralStorage);
    pods = std::max(pods, o.pods);
    mergeScalars(o, [](int64_t a, int64_t b) { return std::max(a, b); }, Absent::InsertPositive);
  }
  bool operator==(const Resources&) const = default;

 private:
  // What a name of o that is not here becomes, and whether subtract's zeros stay.
  enum class Absent { Insert, InsertNonZero, InsertPositive };

  template <class Combine>
  void combine(const Resources& o, Combine op, Absent absent) {
    milliCpu = op(milliCpu, o.milliCpu);
    memory = op(memory, o.memory);
    ephemeralStorage = op(ephemeralStorage, o.ephemeralStorage);
    pods = op(pods, o.pods);
    mergeScalars(o, op, absent);
  }

  // scalars[name] = op(scalars[name], o.scalars[name]) for every name of
  // o (an absent name counts 0). InsertNonZero also removes the names o
  // brings to zero; InsertPositive inserts only positive results.
  template <class Combine>
  void mergeScalars(const Resources& o, Combine op, Absent absent) {
    if (o.scalars.empty()) return;
    std::vector<std::pair<std::string, int64_t>> merged;
    merged.reserve(scalars.size() + o.scalars.size());
    auto a = scalars.begin();
    auto b = o.scalars.begin();
    while (a != scalars.end() || b != o.scalars.end()) {
      if (b == o.scalars.end() || (a != scalars.end() && a->first < b->first)) {
        merged.push_back(std::move(*a++));
        continue;
      }
      const bool both = a != scalars.end() && a->first == b->first;
      const int64_t value = op(both ? a->second : 0, b->second);
      const bool keep = absent == Absent::Insert || (absent == Absent::InsertNonZero && value != 0) ||
                        (absent == Absent::InsertPositive && (both || value > 0));
      if (keep) merged.emplace_back(both ? std::move(a->first) : b->first, value);
      if (both) ++a;
      ++b;
    }
    scalars = std::move(merged);
  }
};

// Names kube-scheduler treats as scalar resources (v1helper.IsScalarResourceName):
// extended resources, hugepages-*, attachable-volumes-*, prefixed native resources.
bool isScalarResourceName(std::string_view name);
bool isExtendedResourceName(std::string_view name);
bool isHugePageResourceName(std::string_view name);

}  // namespace placer
