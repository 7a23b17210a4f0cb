#include "scoring/resources.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace placer {
namespace {

struct ResourceNameCase {
  std::string name;
  bool extended;
  bool hugePage;
  bool scalar;
};

void PrintTo(const ResourceNameCase& c, std::ostream* os) { *os << '"' << c.name << '"'; }

class ResourceNameTest : public ::testing::TestWithParam<ResourceNameCase> {};

TEST_P(ResourceNameTest, ClassifiesLikeV1Helper) {
  const ResourceNameCase& c = GetParam();
  EXPECT_EQ(isExtendedResourceName(c.name), c.extended);
  EXPECT_EQ(isHugePageResourceName(c.name), c.hugePage);
  EXPECT_EQ(isScalarResourceName(c.name), c.scalar);
}

INSTANTIATE_TEST_SUITE_P(
    Names, ResourceNameTest,
    ::testing::Values(
        // Native, unprefixed resources are not scalars: the scheduler keeps them in fixed fields.
        ResourceNameCase{"cpu", false, false, false}, ResourceNameCase{"memory", false, false, false},
        ResourceNameCase{"ephemeral-storage", false, false, false}, ResourceNameCase{"pods", false, false, false},
        ResourceNameCase{"storage", false, false, false},
        // Extended resources: a vendor domain outside kubernetes.io.
        ResourceNameCase{"example.com/gpu", true, false, true}, ResourceNameCase{"nvidia.com/gpu", true, false, true},
        ResourceNameCase{"amd.com/gpu", true, false, true}, ResourceNameCase{"example.com/Foo_bar.1", true, false, true},
        ResourceNameCase{"x/y", true, false, true},
        // Prefixed native resources are scalar but not extended.
        ResourceNameCase{"kubernetes.io/something", false, false, true},
        ResourceNameCase{"foo.kubernetes.io/bar", false, false, true},
        // "requests." would be ambiguous in a ResourceQuota.
        ResourceNameCase{"requests.example.com/gpu", false, false, false},
        // Huge pages and attachable volumes are scalar.
        ResourceNameCase{"hugepages-2Mi", false, true, true}, ResourceNameCase{"hugepages-1Gi", false, true, true},
        ResourceNameCase{"attachable-volumes-aws-ebs", false, false, true},
        ResourceNameCase{"attachable-volumes-csi-ebs.csi.aws.com", false, false, true},
        // Invalid qualified names are not extended resources.
        ResourceNameCase{"example.com/", false, false, false}, ResourceNameCase{"/gpu", false, false, false},
        ResourceNameCase{"Example.com/gpu", false, false, false},
        ResourceNameCase{"example.com/a/b", false, false, false},
        ResourceNameCase{"example.com/-gpu", false, false, false},
        ResourceNameCase{"example.com/gpu-", false, false, false},
        ResourceNameCase{"example..com/gpu", false, false, false},
        ResourceNameCase{"example.com/" + std::string(63, 'a'), true, false, true},
        ResourceNameCase{"example.com/" + std::string(64, 'a'), false, false, false},
        ResourceNameCase{std::string(244, 'a') + ".com/gpu", false, false, false}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(Resources, ScalarsStaySortedAndAddUp) {
  Resources r;
  r.setScalar("nvidia.com/gpu", 1);
  r.setScalar("example.com/fpga", 2);
  r.addScalar("nvidia.com/gpu", 2);
  ASSERT_EQ(r.scalars.size(), 2u);
  EXPECT_EQ(r.scalars[0].first, "example.com/fpga");
  EXPECT_EQ(r.get("nvidia.com/gpu"), 3);
  EXPECT_EQ(r.get("hugepages-2Mi"), 0);
}

// A node's accounting wraps like Go's int64 (never undefined behaviour), so a
// pod added and removed again leaves the totals exactly as they were, even
// when amounts near the int64 limit pass through them.
TEST(Resources, AddThenSubtractRestoresTotalsNearTheInt64Limit) {
  Resources node;
  node.milliCpu = std::numeric_limits<int64_t>::max() - 5;
  node.memory = 1000;
  node.setScalar("example.com/fpga", std::numeric_limits<int64_t>::max());
  const Resources before = node;
  Resources pod;
  pod.milliCpu = 100;
  pod.memory = std::numeric_limits<int64_t>::max();
  pod.setScalar("example.com/fpga", 7);
  pod.setScalar("nvidia.com/gpu", 1);
  node.add(pod);
  node.subtract(pod);
  EXPECT_EQ(node, before);
}

TEST(Resources, SaturatingAddHoldsAtTheLimits) {
  Resources a;
  a.milliCpu = std::numeric_limits<int64_t>::max() - 1;
  a.setScalar("example.com/fpga", std::numeric_limits<int64_t>::max());
  Resources b;
  b.milliCpu = 10;
  b.memory = 3;
  b.setScalar("example.com/fpga", 1);
  a.addSaturating(b);
  EXPECT_EQ(a.milliCpu, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(a.memory, 3);
  EXPECT_EQ(a.scalar("example.com/fpga"), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace placer
