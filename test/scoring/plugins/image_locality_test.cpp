// Ported from kube-scheduler plugins/imagelocality/image_locality_test.go.
#include "scoring/plugins/image_locality.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/plugins/names.h"
#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;

constexpr int64_t mb = 1024 * 1024;

Node node403002000(std::string name) {
  return NodeBuilder(std::move(name))
      .image({"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40 * mb)
      .image({"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * mb)
      .image({"gcr.io/2000:latest"}, 2000 * mb);
}
Node node25010(std::string name) {
  return NodeBuilder(std::move(name))
      .image({"gcr.io/250:latest"}, 250 * mb)
      .image({"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * mb);
}
Node node60040900(std::string name) {
  return NodeBuilder(std::move(name))
      .image({"gcr.io/600:latest"}, 600 * mb)
      .image({"gcr.io/40:latest"}, 40 * mb)
      .image({"gcr.io/900:latest"}, 900 * mb);
}
Node node300600900(std::string name) {
  return NodeBuilder(std::move(name))
      .image({"gcr.io/300:latest"}, 300 * mb)
      .image({"gcr.io/600:latest"}, 600 * mb)
      .image({"gcr.io/900:latest"}, 900 * mb);
}
Node node400030(std::string name) {
  return NodeBuilder(std::move(name)).image({"gcr.io/4000:latest"}, 4000 * mb).image({"gcr.io/30:latest"}, 30 * mb);
}
Node node203040(std::string name) {
  return NodeBuilder(std::move(name))
      .image({"gcr.io/20:latest"}, 20 * mb)
      .image({"gcr.io/30:latest"}, 30 * mb)
      .image({"gcr.io/40:latest"}, 40 * mb);
}
Node noImages(std::string name) { return NodeBuilder(std::move(name)); }

Pod pod(std::vector<std::string> images, std::vector<std::string> initImages = {}) {
  PodBuilder b;
  for (auto& i : initImages) b.initContainer(i);
  for (auto& i : images) b.container(i);
  return b;
}

struct Case {
  std::string name;
  Pod pod;
  std::vector<Node> nodes;
  std::vector<int64_t> want;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ImageLocalityScore : public testing::TestWithParam<Case> {};

TEST_P(ImageLocalityScore, Scores) {
  const Case& c = GetParam();
  MutableClusterView view;
  for (const Node& n : c.nodes) view.upsertNode(n);
  std::vector<const NodeInfo*> nodes;
  for (const Node& n : c.nodes) nodes.push_back(view.findNode(n.name));
  auto p = newImageLocality(nullptr);
  ASSERT_TRUE(p.ok());
  test::ScoreOutcome got = test::runScore(**p, c.pod, nodes, view);
  EXPECT_EQ(got.scores, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, ImageLocalityScore,
    testing::Values(
        // 250M * 1/2 spread: 100 * (125M - 23M) / (2000M - 23M) = 5
        Case{"TwoImagesSpreadOnTwoNodesPreferTheLargerImage", pod({"gcr.io/40", "gcr.io/250"}),
             {node403002000("node1"), node25010("node2")}, {0, 5}},
        // 100 * ((40M + 300M) / 2 - 23M) / (2000M - 23M) = 7
        Case{"TwoImagesOnOneNodePreferThisNode", pod({"gcr.io/40", "gcr.io/300"}),
             {node403002000("node1"), node25010("node2")}, {7, 0}},
        Case{"IfExceedLimitUseLimit", pod({"gcr.io/10", "gcr.io/4000"}), {node400030("node1"), node25010("node2")},
             {100, 0}},
        // 100 * (4000M / 3 - 23M) / (2000M - 23M) = 66
        Case{"IfExceedLimitUseLimitWithNodeWithoutImages", pod({"gcr.io/10", "gcr.io/4000"}),
             {node400030("node1"), node25010("node2"), noImages("node3")}, {66, 0, 0}},
        Case{"PodWithMultipleLargeImagesNode2Preferred", pod({"gcr.io/300", "gcr.io/600", "gcr.io/900"}),
             {node60040900("node1"), node300600900("node2"), noImages("node3")}, {32, 36, 0}},
        Case{"PodWithMultipleSmallImages", pod({"gcr.io/30", "gcr.io/40"}), {node203040("node1"), node400030("node2")},
             {1, 0}},
        Case{"IncludeInitContainers", pod({"gcr.io/30"}, {"gcr.io/300"}), {node403002000("node1"), node203040("node2")},
             {6, 0}}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    More, ImageLocalityScore,
    testing::Values(
        Case{"NoNodeHoldsTheImages", pod({"gcr.io/unknown"}), {node403002000("node1"), node25010("node2")}, {0, 0}},
        Case{"TaggedImageMatchesOnlyThatTag", pod({"gcr.io/300:v1"}), {node403002000("node1"), node300600900("node2")},
             // v1 is only on node1 (1 of 2 nodes): 100 * (150M - 23M) / (1000M - 23M) = 12
             {12, 0}},
        Case{"ContainersSharingAnImageEachCount", pod({"gcr.io/2000", "gcr.io/2000"}),
             {node403002000("node1"), noImages("node2")},
             // 2 * 2000M / 2 = 2000M of 2000M max: 100 * (2000M - 23M) / (2000M - 23M) = 100
             {100, 0}},
        Case{"PodWithoutContainers", Pod{}, {node403002000("node1")}, {0}}),
    [](const auto& info) { return info.param.name; });

TEST(ImageLocality, PriorityIsClampedToThresholds) {
  EXPECT_EQ(imageLocalityPriority(0, 1), 0);
  EXPECT_EQ(imageLocalityPriority(23 * mb, 1), 0);
  EXPECT_EQ(imageLocalityPriority(1000 * mb, 1), 100);
  EXPECT_EQ(imageLocalityPriority(5000 * mb, 1), 100);
  EXPECT_EQ(imageLocalityPriority(5000 * mb, 0), 0);
}

TEST(ImageLocality, PreScoreSkipsWhenNoNodeHoldsAnImage) {
  MutableClusterView view;
  view.upsertNode(node25010("node1"));
  auto p = newImageLocality(nullptr);
  ASSERT_TRUE(p.ok());
  CycleState state;
  const auto& pre = dynamic_cast<const PreScorePlugin&>(**p);
  EXPECT_TRUE(pre.preScore(state, pod({"nginx"}), {}, view).isSkip());
  EXPECT_TRUE(pre.preScore(state, pod({"gcr.io/250"}), {}, view).isSuccess());
  EXPECT_EQ((*p)->name(), names::kImageLocality);
}

}  // namespace
}  // namespace placer
