#pragma once
// Builders for pods and nodes described by their resource requests, in the
// spirit of kube-scheduler's st.MakePod().Req(...) and makeNode(...), for the
// resource plugins' tests. They compute Pod::requests and Pod::nonZeroRequests
// the way upstream does (sum of containers, max with each init container,
// overhead added; 100m cpu / 200Mi memory for a container that omits them), so
// these tests do not depend on the JSON decoder. Header-only.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "scoring/resources.h"

namespace placer::test {

// Quantities as kube-scheduler's tests write them: st.MakePod().Req({"cpu": "3000"})
// asks for 3000 cores.
constexpr int64_t cores(int64_t n) { return n * 1000; }
constexpr int64_t Mi(int64_t n) { return n * 1024 * 1024; }

// One container's requests. An unset cpu or memory is "not requested"
// (the non-zero defaults apply to it); 0 is an explicit zero request.
struct ContainerRequests {
  std::optional<int64_t> milliCpu;
  std::optional<int64_t> memory;
  int64_t ephemeralStorage = 0;
  std::vector<std::pair<std::string, int64_t>> scalars;
};

inline ContainerRequests cpuMem(int64_t milliCpu, int64_t memory) { return {milliCpu, memory, 0, {}}; }

inline Resources resources(int64_t milliCpu, int64_t memory,
                           std::vector<std::pair<std::string, int64_t>> scalars = {}, int64_t pods = 0,
                           int64_t ephemeralStorage = 0) {
  Resources r;
  r.milliCpu = milliCpu;
  r.memory = memory;
  r.pods = pods;
  r.ephemeralStorage = ephemeralStorage;
  for (auto& [name, value] : scalars) r.setScalar(name, value);
  return r;
}

class ResourcePod {
 public:
  explicit ResourcePod(std::string name = "pod") {
    pod_.name = std::move(name);
    pod_.namespace_ = "default";
  }

  // st.MakePod().Req(...): adds a container with these requests.
  ResourcePod& container(ContainerRequests c) {
    containers_.push_back(std::move(c));
    return recompute();
  }
  // st.MakePod().Container("c"): a container that requests nothing.
  ResourcePod& emptyContainer() { return container(ContainerRequests{}); }
  ResourcePod& initContainer(ContainerRequests c) {
    initContainers_.push_back(std::move(c));
    return recompute();
  }
  ResourcePod& overhead(Resources o) {
    overhead_ = std::move(o);
    return recompute();
  }
  ResourcePod& nodeName(std::string n) {
    pod_.nodeName = std::move(n);
    return *this;
  }

  const Pod& obj() const { return pod_; }
  operator const Pod&() const { return pod_; }

 private:
  static Resources toResources(const ContainerRequests& c, bool nonZero) {
    Resources r;
    r.milliCpu = c.milliCpu.value_or(nonZero ? kDefaultMilliCpuRequest : 0);
    r.memory = c.memory.value_or(nonZero ? kDefaultMemoryRequest : 0);
    if (nonZero) return r;
    r.ephemeralStorage = c.ephemeralStorage;
    for (const auto& [name, value] : c.scalars) r.setScalar(name, value);
    return r;
  }
  static Resources total(const std::vector<ContainerRequests>& containers,
                         const std::vector<ContainerRequests>& initContainers, const Resources& overhead,
                         bool nonZero) {
    Resources sum;
    for (const auto& c : containers) sum.add(toResources(c, nonZero));
    for (const auto& c : initContainers) sum.setMax(toResources(c, nonZero));
    Resources o = overhead;
    if (nonZero) o = resources(overhead.milliCpu, overhead.memory);
    sum.add(o);
    return sum;
  }
  ResourcePod& recompute() {
    pod_.requests = total(containers_, initContainers_, overhead_, false);
    pod_.nonZeroRequests = total(containers_, initContainers_, overhead_, true);
    pod_.containers.assign(containers_.size(), Container{});
    return *this;
  }

  Pod pod_;
  std::vector<ContainerRequests> containers_;
  std::vector<ContainerRequests> initContainers_;
  Resources overhead_;
};

// A node with `allocatable` running `pods`, accounted as upstream's NodeInfo.AddPod.
inline NodeInfo nodeWith(std::string name, Resources allocatable, const std::vector<Pod>& pods = {}) {
  NodeInfo info;
  info.node.name = std::move(name);
  info.node.allocatable = std::move(allocatable);
  for (const Pod& p : pods) {
    info.requested.add(p.requests);
    info.nonZeroRequested.milliCpu += p.nonZeroRequests.milliCpu;
    info.nonZeroRequested.memory += p.nonZeroRequests.memory;
    ++info.podCount;
  }
  return info;
}

}  // namespace placer::test
