// What becomes of placed pods, seen through the pod watch: kubelet
// rejections counted with the decision's accounting, and one Event per
// decision once the pod appears.
#include "webhook/placed_pods.h"

#include <gtest/gtest.h>

#include "webhook/admission.h"
#include "test/support/builders.h"

namespace placer {
namespace {

using test::PodBuilder;

class RecordingSink final : public EventSink {
 public:
  void emit(PodEvent event) override { events.push_back(std::move(event)); }
  std::vector<PodEvent> events;
};

Pod assignedPod(const std::string& name, const std::string& reservation, const std::string& node) {
  Pod pod = PodBuilder(name, "shop").nodeName(node).obj();
  pod.annotations = {{std::string(kAssignedNodeAnnotation), node}, {std::string(kReservationAnnotation), reservation}};
  pod.phase = "Pending";
  return pod;
}

double counterValue(const MetricsRegistry& metrics, const std::string& series) {
  const std::string text = metrics.render();
  size_t at = text.find("\n" + series + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 2);
}

TEST(KubeletRejections, AdmissionReasonsAreTheKubeletsOwn) {
  struct Case {
    std::string reason;
    bool rejection;
  };
  const std::vector<Case> cases = {
      {"OutOfcpu", true},          {"OutOfmemory", true},        {"OutOfpods", true},
      {"OutOfephemeral-storage", true}, {"OutOfnvidia.com/gpu", true}, {"NodeAffinity", true},
      {"NodePorts", true},         {"UnexpectedAdmissionError", true}, {"TaintToleration", true},
      {"Evicted", false},          {"DeadlineExceeded", false},  {"OutOf", false},
      {"", false},                 {"Preempting", false},
  };
  for (const Case& c : cases) EXPECT_EQ(isKubeletAdmissionRejection(c.reason), c.rejection) << c.reason;
}

TEST(KubeletRejections, APlacedPodRejectedIsCountedOnceWithTheDecisionsAccounting) {
  MetricsRegistry metrics;
  PlacedPods placed(metrics, nullptr);
  EXPECT_EQ(counterValue(metrics, "placer_kubelet_rejections_total{reason=\"OutOfcpu\"}"), 0);
  Placement::NodeAccounting accounting;
  accounting.allocatable.milliCpu = 4000;
  accounting.requested.milliCpu = 3500;
  accounting.podCount = 7;
  placed.assigned("r-1", "shop/web-1", "node-a", accounting);

  Pod pod = assignedPod("web-1", "r-1", "node-a");
  placed.observed(pod);  // Pending: nothing
  pod.phase = "Failed";
  pod.statusReason = "OutOfcpu";
  pod.statusMessage = "Pod was rejected: Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 4000";
  placed.observed(pod);
  placed.observed(pod);  // the same pod again (a later status update, a relist): counted once
  EXPECT_EQ(counterValue(metrics, "placer_kubelet_rejections_total{reason=\"OutOfcpu\"}"), 1);
  auto seen = placed.rejections();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].pod, "shop/web-1");
  EXPECT_EQ(seen[0].node, "node-a");
  EXPECT_TRUE(seen[0].decidedHere);
  EXPECT_EQ(seen[0].accounting.requested.milliCpu, 3500);
  EXPECT_EQ(seen[0].accounting.podCount, 7);

  // Failed for another reason, or a pod placer did not assign: not a rejection of placer's.
  Pod evicted = assignedPod("web-2", "r-2", "node-a");
  evicted.phase = "Failed";
  evicted.statusReason = "Evicted";
  placed.observed(evicted);
  Pod other = PodBuilder("other", "shop").nodeName("node-a").obj();
  other.phase = "Failed";
  other.statusReason = "OutOfmemory";
  placed.observed(other);
  EXPECT_EQ(placed.rejections().size(), 1u);
  EXPECT_EQ(counterValue(metrics, "placer_kubelet_rejections_total{reason=\"OutOfmemory\"}"), -1);
}

TEST(PlacedPodEvents, OneScheduledEventOnceTheAssignedPodAppears) {
  MetricsRegistry metrics;
  RecordingSink sink;
  PlacedPods placed(metrics, &sink);
  placed.assigned("r-1", "shop/web-", "node-a", {});
  Pod pod = assignedPod("web-x2k4q", "r-1", "node-a");
  placed.observed(pod);
  placed.observed(pod);  // MODIFIED events, relists: still one
  ASSERT_EQ(sink.events.size(), 1u);
  const PodEvent& e = sink.events[0];
  EXPECT_EQ(e.reason, "Scheduled");
  EXPECT_EQ(e.action, "Binding");
  EXPECT_EQ(e.type, "Normal");
  EXPECT_EQ(e.note, "Successfully assigned shop/web-x2k4q to node-a");
  EXPECT_EQ(e.podNamespace, "shop");
  EXPECT_EQ(e.podName, "web-x2k4q");
  EXPECT_EQ(e.podUid, pod.uid);

  // A pod assigned by another process (or before a restart): no event from this one.
  placed.observed(assignedPod("web-zzz", "r-unknown", "node-a"));
  EXPECT_EQ(sink.events.size(), 1u);
}

TEST(PlacedPodEvents, OneNotPlacedEventPerDeclinedAdmission) {
  MetricsRegistry metrics;
  RecordingSink sink;
  PlacedPods placed(metrics, &sink);
  const std::string reason = "0/3 nodes are available: 3 Insufficient cpu.";
  placed.declined("shop/batch-", reason);
  Pod pod = PodBuilder("batch-abcde", "shop").obj();
  pod.generateName = "batch-";
  pod.annotations = {{std::string(kUnassignedReasonAnnotation), reason}};
  placed.observed(pod);
  placed.observed(pod);
  Pod second = pod;  // a second pod of the same generateName that placer did not decline (here)
  second.name = "batch-fghij";
  second.uid = "other-uid";
  placed.observed(second);
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0].reason, "NotPlaced");
  EXPECT_EQ(sink.events[0].type, "Normal");
  EXPECT_EQ(sink.events[0].note, reason);
  EXPECT_EQ(sink.events[0].podName, "batch-abcde");
}

TEST(PlacedPodEvents, MemoryIsBounded) {
  MetricsRegistry metrics;
  RecordingSink sink;
  PlacedPods placed(metrics, &sink, /*capacity=*/4);
  for (int i = 0; i < 10; ++i) placed.assigned("r-" + std::to_string(i), "shop/p", "node-a", {});
  // The oldest decisions were forgotten: only the last four are told about.
  for (int i = 0; i < 10; ++i) placed.observed(assignedPod("p" + std::to_string(i), "r-" + std::to_string(i), "node-a"));
  EXPECT_EQ(sink.events.size(), 4u);
}

}  // namespace
}  // namespace placer
