// The pod request computation against kube-scheduler's: resourcehelper.PodRequests
// (component-helpers/resource) for Requested, and PodInfo.CalculateResource's
// non-zero variant for NonZeroRequested.

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/model.h"

namespace placer {
namespace {

constexpr int64_t kMi = 1024 * 1024;
constexpr int64_t kGi = 1024 * kMi;

// A container from (cpu millis, memory bytes); std::nullopt = not requested.
Container container(std::optional<int64_t> milliCpu, std::optional<int64_t> memory = std::nullopt,
                    bool sidecar = false) {
  Container c;
  if (milliCpu) {
    c.requests.milliCpu = *milliCpu;
    c.hasCpuRequest = true;
  }
  if (memory) {
    c.requests.memory = *memory;
    c.hasMemoryRequest = true;
  }
  c.restartableInit = sidecar;
  return c;
}
Container sidecar(std::optional<int64_t> milliCpu, std::optional<int64_t> memory = std::nullopt) {
  return container(milliCpu, memory, true);
}

struct RequestsCase {
  std::string name;
  std::vector<Container> containers;
  std::vector<Container> initContainers;
  Resources overhead;
  std::optional<Pod::PodLevelRequests> podLevel;
  int64_t wantMilliCpu;
  int64_t wantMemory;
  int64_t wantNonZeroMilliCpu;
  int64_t wantNonZeroMemory;
};

void PrintTo(const RequestsCase& c, std::ostream* os) { *os << c.name; }

Resources cpuMem(int64_t milliCpu, int64_t memory) {
  Resources r;
  r.milliCpu = milliCpu;
  r.memory = memory;
  return r;
}

class PodRequestsTest : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(PodRequestsTest, MatchesKubeScheduler) {
  const RequestsCase& c = GetParam();
  Pod pod;
  pod.containers = c.containers;
  pod.initContainers = c.initContainers;
  pod.overhead = c.overhead;
  pod.podLevelRequests = c.podLevel;
  computePodRequests(pod);
  EXPECT_EQ(pod.requests.milliCpu, c.wantMilliCpu) << "requests cpu";
  EXPECT_EQ(pod.requests.memory, c.wantMemory) << "requests memory";
  EXPECT_EQ(pod.nonZeroRequests.milliCpu, c.wantNonZeroMilliCpu) << "non-zero cpu";
  EXPECT_EQ(pod.nonZeroRequests.memory, c.wantNonZeroMemory) << "non-zero memory";
}

const int64_t kDefCpu = kDefaultMilliCpuRequest;
const int64_t kInt64Max = std::numeric_limits<int64_t>::max();
const int64_t kHuge = kInt64Max / 2 + 1;  // two of them pass int64
const int64_t kDefMem = kDefaultMemoryRequest;

INSTANTIATE_TEST_SUITE_P(
    Cases, PodRequestsTest,
    ::testing::Values(
        RequestsCase{"NoContainers", {}, {}, {}, {}, 0, 0, 0, 0},
        RequestsCase{"SumOfContainers", {container(1000, 5), container(4000, 12)}, {}, {}, {}, 5000, 17, 5000, 17},
        RequestsCase{"OverheadIsAdded", {container(1000, 10)}, {}, cpuMem(5000, 5), {}, 6000, 15, 6000, 15},
        RequestsCase{"JustOverhead", {container(std::nullopt)}, {}, cpuMem(5000, 5), {},
                     5000, 5, 5000 + kDefCpu, 5 + kDefMem},
        // "nil options, larger init container": init 4 vs containers 1.
        RequestsCase{"LargerInitContainerWins", {container(1000)}, {container(4000)}, {}, {}, 4000, 0, 4000, kDefMem},
        // "nil options, larger containers": init 2 vs containers 2+3.
        RequestsCase{"LargerContainersWin", {container(2000), container(3000)}, {container(2000)}, {}, {},
                     5000, 0, 5000, 2 * kDefMem},
        // "two container with overhead, massive init": max(5, 40) + overhead 3.
        RequestsCase{"MassiveInitPlusOverhead",
                     {container(1000, 5), container(4000, 12)},
                     {container(1000, 5), container(40000, 120)},
                     cpuMem(3000, 8), {}, 43000, 128, 43000, 128},
        // Sidecars (restartable init containers) keep running beside the app.
        RequestsCase{"SidecarAddsToContainers", {container(1000)}, {sidecar(1000)}, {}, {}, 2000, 0, 2000, 2 * kDefMem},
        RequestsCase{"MultipleSidecars", {container(1000)}, {sidecar(1000), sidecar(2000), sidecar(3000)}, {}, {},
                     7000, 0, 7000, 4 * kDefMem},
        // An init container runs beside the sidecars started before it.
        RequestsCase{"InitAfterSidecarRunsBesideIt", {container(1000)}, {sidecar(1000), container(5000)}, {}, {},
                     6000, 0, 6000, 2 * kDefMem},
        RequestsCase{"InitBeforeSidecarRunsAlone", {container(1000)}, {container(5000), sidecar(1000)}, {}, {},
                     5000, 0, 5000, 2 * kDefMem},
        // Upstream "multiple restartable and regular init containers":
        // regular 5, sidecar 1, sidecar 2, regular 5 (+3 running) = 8 > 1+1+2+3.
        RequestsCase{"InterleavedSidecarsAndInits",
                     {container(1000)},
                     {container(5000), sidecar(1000), sidecar(2000), container(5000), sidecar(3000)},
                     {}, {}, 8000, 0, 8000, 4 * kDefMem},
        RequestsCase{"SidecarsOutgrowInits", {container(1000)}, {container(2000), sidecar(3000), sidecar(3000)}, {},
                     {}, 7000, 0, 7000, 3 * kDefMem},
        RequestsCase{"ResourcesMaximisedSeparately",
                     {container(1000, 1 * kGi)},
                     {container(3000, 100 * kMi)},
                     {}, {}, 3000, 1 * kGi, 3000, 1 * kGi},
        // Non-zero defaults: per container where the request is absent.
        RequestsCase{"NoRequestsGetDefaults", {container(std::nullopt), container(std::nullopt)}, {}, {}, {},
                     0, 0, 2 * kDefCpu, 2 * kDefMem},
        RequestsCase{"ExplicitZeroIsKept", {container(0, 0)}, {}, {}, {}, 0, 0, 0, 0},
        // Amounts whose sum passes int64 (hostile input) stay at the limit, a
        // request no node satisfies, instead of wrapping to a small one.
        RequestsCase{"SumBeyondInt64StaysAtTheLimit",
                     {container(kHuge, kHuge), container(kHuge, kHuge)}, {}, {}, {},
                     kInt64Max, kInt64Max, kInt64Max, kInt64Max},
        RequestsCase{"SidecarsAndOverheadBeyondInt64StayAtTheLimit",
                     {container(kHuge)}, {sidecar(kHuge)}, cpuMem(kHuge, 0), {},
                     kInt64Max, 0, kInt64Max, 2 * kDefMem},
        RequestsCase{"OnlyMissingResourceDefaults", {container(500, std::nullopt)}, {}, {}, {},
                     500, 0, 500, kDefMem},
        RequestsCase{"InitContainersDefaultToo", {container(std::nullopt)}, {container(std::nullopt)}, {}, {},
                     0, 0, kDefCpu, kDefMem},
        RequestsCase{"SidecarDefaultsAdd", {container(std::nullopt)}, {sidecar(std::nullopt)}, {}, {},
                     0, 0, 2 * kDefCpu, 2 * kDefMem},
        // Pod-level resources replace the aggregate for cpu and memory.
        RequestsCase{"PodLevelReplacesContainers",
                     {container(std::nullopt), container(std::nullopt)}, {}, {},
                     Pod::PodLevelRequests{cpuMem(2000, 1 * kGi), true, true},
                     2000, 1 * kGi, 2000, 1 * kGi},
        RequestsCase{"PodLevelPlusOverhead",
                     {container(100, 100)}, {}, cpuMem(250, 10),
                     Pod::PodLevelRequests{cpuMem(2000, 1 * kGi), true, true},
                     2250, 1 * kGi + 10, 2250, 1 * kGi + 10},
        // Pod-level cpu only: memory still aggregates containers, and its
        // default applies because nothing requests memory.
        RequestsCase{"PodLevelCpuOnly",
                     {container(std::nullopt), container(std::nullopt)}, {}, {},
                     Pod::PodLevelRequests{cpuMem(1500, 0), true, false},
                     1500, 0, 1500, 2 * kDefMem},
        // With pod-level resources, a container's missing cpu is not defaulted
        // when another container requests cpu.
        RequestsCase{"PodLevelMemoryOnlyCpuFromContainers",
                     {container(300), container(std::nullopt)}, {}, {},
                     Pod::PodLevelRequests{cpuMem(0, 2 * kGi), false, true},
                     300, 2 * kGi, 300, 2 * kGi}),
    [](const auto& info) { return info.param.name; });

// In-place resize: kube-scheduler counts the per-resource maximum of what the
// spec asks, what the kubelet allocated and what is actuated; while a resize
// is infeasible the spec is left out (resourcehelper TestPodResourceRequests).
struct ResizeCase {
  std::string name;
  std::string podJson;
  int64_t wantMilliCpu;
  int64_t wantMemory;
  int64_t wantNonZeroMilliCpu;
};

void PrintTo(const ResizeCase& c, std::ostream* os) { *os << c.name; }

class ResizeTest : public ::testing::TestWithParam<ResizeCase> {};

TEST_P(ResizeTest, CountsStatusResources) {
  auto pod = decodePod(nlohmann::json::parse(GetParam().podJson));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(pod->requests.milliCpu, GetParam().wantMilliCpu);
  EXPECT_EQ(pod->requests.memory, GetParam().wantMemory);
  EXPECT_EQ(pod->nonZeroRequests.milliCpu, GetParam().wantNonZeroMilliCpu);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResizeTest,
    ::testing::Values(
        ResizeCase{"InfeasibleUsesActuated",
                   R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
                       "status": {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
                                  "containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}})",
                   2000, 0, 2000},
        ResizeCase{"InfeasibleInProgressUsesAllocated",
                   R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "6"}}}]},
                       "status": {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
                                  "containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "4"},
                                                         "resources": {"requests": {"cpu": "2"}}}]}})",
                   4000, 0, 4000},
        ResizeCase{"DeferredKeepsSpec",
                   R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
                       "status": {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}],
                                  "containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}})",
                   4000, 0, 4000},
        ResizeCase{"NoResizeStatusTakesMaximum",
                   R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
                       "status": {"containerStatuses": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}})",
                   3000, 0, 3000},
        ResizeCase{"PerResourceThreeWayMaximum",
                   R"({"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "10m", "memory": "30M"}}}]},
                       "status": {"containerStatuses": [{"name": "c", "allocatedResources": {"cpu": "30m", "memory": "10M"},
                                                         "resources": {"requests": {"cpu": "20m", "memory": "20M"}}}]}})",
                   30, 30000000, 30},
        ResizeCase{"InitContainerStatusesAreMatchedByName",
                   R"({"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
                                "initContainers": [{"name": "side", "restartPolicy": "Always",
                                                    "resources": {"requests": {"cpu": "1"}}}]},
                       "status": {"initContainerStatuses": [{"name": "side", "allocatedResources": {"cpu": "2"}}]}})",
                   3000, 0, 3000}),
    [](const auto& info) { return info.param.name; });

TEST(PodRequests, ScalarsFollowTheSameRules) {
  Pod pod;
  Container app = container(100);
  app.requests.setScalar("nvidia.com/gpu", 1);
  Container init = container(100);
  init.requests.setScalar("nvidia.com/gpu", 2);
  Container side = sidecar(100);
  side.requests.setScalar("hugepages-2Mi", 4 * kMi);
  pod.containers = {app};
  pod.initContainers = {side, init};
  computePodRequests(pod);
  EXPECT_EQ(pod.requests.scalar("nvidia.com/gpu"), 2);  // max(1, 2 + 0)
  EXPECT_EQ(pod.requests.scalar("hugepages-2Mi"), 4 * kMi);
  EXPECT_EQ(pod.requests.milliCpu, 200);  // max(100 + 100, 100 + 100)
  EXPECT_TRUE(pod.nonZeroRequests.scalars.empty());
}

TEST(PodRequests, PodLevelHugePagesReplaceContainers) {
  Pod pod;
  Container app = container(100);
  app.requests.setScalar("hugepages-2Mi", 2 * kMi);
  pod.containers = {app};
  Pod::PodLevelRequests level;
  level.requests.setScalar("hugepages-2Mi", 8 * kMi);
  pod.podLevelRequests = level;
  computePodRequests(pod);
  EXPECT_EQ(pod.requests.scalar("hugepages-2Mi"), 8 * kMi);
  EXPECT_EQ(pod.requests.milliCpu, 100);
}

TEST(PodRequests, HostPortsComeFromSidecarsAndContainers) {
  Pod pod;
  Container app = container(100);
  app.hostPorts = {HostPort{"0.0.0.0", "TCP", 8080}};
  Container init = container(100);
  init.hostPorts = {HostPort{"0.0.0.0", "TCP", 9000}};  // finished before the pod runs
  Container side = sidecar(100);
  side.hostPorts = {HostPort{"10.0.0.1", "UDP", 53}};
  pod.containers = {app};
  pod.initContainers = {init, side};
  computePodRequests(pod);
  ASSERT_EQ(pod.hostPorts.size(), 2u);
  EXPECT_EQ(pod.hostPorts[0], (HostPort{"10.0.0.1", "UDP", 53}));
  EXPECT_EQ(pod.hostPorts[1], (HostPort{"0.0.0.0", "TCP", 8080}));
}

TEST(PodRequests, RecomputingIsIdempotent) {
  Pod pod;
  pod.containers = {container(100, 10)};
  pod.initContainers = {sidecar(50)};
  computePodRequests(pod);
  const Resources first = pod.requests;
  const Resources nonZero = pod.nonZeroRequests;
  computePodRequests(pod);
  EXPECT_EQ(pod.requests, first);
  EXPECT_EQ(pod.nonZeroRequests, nonZero);
}

}  // namespace
}  // namespace placer
