// The synthetic cluster generator (test/support) is trusted by benchmarks and
// load generators: its JSON must decode to exactly the structs it builds
// directly, and it must be deterministic and never overcommit a node.
#include "test/support/cluster_generator.h"

#include <sstream>

#include <gtest/gtest.h>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "scoring/snapshot.h"

namespace placer {
namespace {

GeneratorParams smallCluster() {
  GeneratorParams p;
  p.nodes = 12;
  p.podsPerNode = 4;
  return p;
}

TEST(ClusterGenerator, JsonDecodesToTheDirectlyBuiltObjects) {
  GeneratorParams p = smallCluster();
  for (int i = 0; i < p.nodes; ++i) {
    auto node = decodeNode(generateNode(p, i));
    ASSERT_TRUE(node.ok()) << node.error().message;
    Node direct = generateNodeObject(p, i);
    EXPECT_EQ(node->name, direct.name);
    EXPECT_EQ(node->labels, direct.labels);
    EXPECT_EQ(node->taints, direct.taints);
    EXPECT_EQ(node->unschedulable, direct.unschedulable);
    EXPECT_EQ(node->allocatable.milliCpu, direct.allocatable.milliCpu);
    EXPECT_EQ(node->allocatable.memory, direct.allocatable.memory);
    EXPECT_EQ(node->allocatable.pods, direct.allocatable.pods);
    EXPECT_EQ(node->allocatable.scalar("nvidia.com/gpu"), direct.allocatable.scalar("nvidia.com/gpu"));
    ASSERT_EQ(node->images.size(), direct.images.size());
  }
  for (int64_t i = 0; i < generatedPodCount(p); ++i) {
    auto pod = decodePod(generatePod(p, i));
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    Pod direct = generatePodObject(p, i);
    EXPECT_EQ(pod->nodeName, direct.nodeName) << i;
    EXPECT_EQ(pod->uid, direct.uid) << i;
    EXPECT_EQ(pod->labels, direct.labels) << i;
    EXPECT_EQ(pod->requests, direct.requests) << i;
    EXPECT_EQ(pod->nonZeroRequests.milliCpu, direct.nonZeroRequests.milliCpu) << i;
    EXPECT_EQ(pod->nonZeroRequests.memory, direct.nonZeroRequests.memory) << i;
    EXPECT_EQ(pod->hostPorts, direct.hostPorts) << i;
    EXPECT_EQ(pod->tolerations, direct.tolerations) << i;
    EXPECT_EQ(pod->nodeAffinity, direct.nodeAffinity) << i;
    EXPECT_EQ(pod->podAffinity, direct.podAffinity) << i;
    EXPECT_EQ(pod->podAntiAffinity, direct.podAntiAffinity) << i;
    EXPECT_EQ(pod->ownerKind, direct.ownerKind) << i;
    EXPECT_EQ(pod->ownerApiVersion, direct.ownerApiVersion) << i;
    EXPECT_EQ(pod->ownerName, direct.ownerName) << i;
  }
  for (int i = 0; i < kPendingShapes; ++i) {
    auto pod = decodePod(generatePendingPod(p, i));
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    EXPECT_EQ(pod->requests, generatePendingPodObject(p, i).requests) << i;
    EXPECT_EQ(pod->podAffinity, generatePendingPodObject(p, i).podAffinity) << i;
    EXPECT_EQ(pod->podAntiAffinity, generatePendingPodObject(p, i).podAntiAffinity) << i;
    EXPECT_EQ(pod->topologySpreadConstraints, generatePendingPodObject(p, i).topologySpreadConstraints) << i;
    EXPECT_TRUE(pod->nodeName.empty());
  }
}

TEST(ClusterGenerator, IsDeterministic) {
  std::ostringstream a, b;
  writeSnapshot(a, smallCluster());
  writeSnapshot(b, smallCluster());
  EXPECT_EQ(a.str(), b.str());
  auto snapshot = parseSnapshot(a.str());
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  EXPECT_EQ(snapshot->nodes.size(), 12u);
  EXPECT_EQ(snapshot->pods.size(), 48u);
  EXPECT_TRUE(snapshot->pod.has_value());
}

TEST(ClusterGenerator, NoNodeIsOvercommitted) {
  GeneratorParams p = smallCluster();
  p.podsPerNode = 30;
  MutableClusterView view;
  fillClusterView(view, p);
  ASSERT_EQ(view.nodes().size(), 12u);
  for (const NodeInfo& n : view.nodes()) {
    EXPECT_EQ(n.podCount, 30) << n.name();
    EXPECT_LE(n.requested.milliCpu, n.allocatable().milliCpu) << n.name();
    EXPECT_LE(n.requested.memory, n.allocatable().memory) << n.name();
    EXPECT_LE(n.requested.ephemeralStorage, n.allocatable().ephemeralStorage) << n.name();
    EXPECT_LE(n.requested.scalar("nvidia.com/gpu"), n.allocatable().scalar("nvidia.com/gpu")) << n.name();
  }
}

}  // namespace
}  // namespace placer
