#include "scoring/scratch_counts.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace placer {
namespace {

// Every count of an array lent with this bound is 0.
void expectAllZero(const ScratchCounts& counts, size_t bound) {
  for (uint32_t id = 0; id < bound; ++id) ASSERT_EQ(counts.get(id), 0) << "id " << id;
}

TEST(ScratchCountsTest, AnArrayComesBackZeroedWhateverTheLastDecisionWrote) {
  struct Case {
    std::string name;
    std::vector<std::pair<uint32_t, int64_t>> adds;  // in order
    size_t nextBound;                                // the bound asked for afterwards
  };
  const std::vector<Case> cases = {
      {"nothing written", {}, 64},
      {"one count", {{5, 3}}, 64},
      {"a count back to 0 and up again", {{7, 2}, {7, -2}, {7, 4}}, 64},
      {"adding 0 writes nothing", {{9, 0}}, 64},
      {"the first and the last id", {{0, 1}, {63, 1}}, 64},
      {"a larger bound afterwards", {{3, 8}}, 4096},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    {
      ScratchCounts counts(64);
      for (const auto& [id, n] : c.adds) counts.add(id, n);
    }
    ScratchCounts again(c.nextBound);
    expectAllZero(again, c.nextBound);
  }
}

TEST(ScratchCountsTest, CountsAddUpAndIdsPastTheBoundReadZero) {
  ScratchCounts counts(10);
  counts.add(2, 1);
  counts.add(2, 2);
  counts.add(9, 5);
  counts.add(10, 7);    // past the bound: ignored
  counts.add(1000, 1);  // far past it
  EXPECT_EQ(counts.get(2), 3);
  EXPECT_EQ(counts.get(9), 5);
  EXPECT_EQ(counts.get(10), 0);
  EXPECT_EQ(counts.get(1000), 0);
  EXPECT_EQ(counts.get(3), 0);
  EXPECT_EQ(counts.touched(), (std::vector<uint32_t>{2, 9}));
}

TEST(ScratchCountsTest, ArraysLentAtOnceAreDistinct) {
  ScratchCounts a(32);
  ScratchCounts b(32);
  a.add(4, 1);
  b.add(4, 10);
  EXPECT_EQ(a.get(4), 1);
  EXPECT_EQ(b.get(4), 10);
  ScratchCounts moved(std::move(a));
  EXPECT_EQ(moved.get(4), 1);
}

TEST(ScratchCountsTest, ABoundOfZeroCountsNothing) {
  ScratchCounts counts(0);
  counts.add(0, 1);
  EXPECT_EQ(counts.get(0), 0);
  EXPECT_TRUE(counts.touched().empty());
}

TEST(SparseCountsTest, KeepsTheCountsThatAreNotZeroAfterTheOffset) {
  ScratchCounts counts(100);
  counts.add(40, 1);  // 1 - 1: dropped
  counts.add(7, 3);
  counts.add(99, 2);
  counts.add(7, -3);
  counts.add(7, 5);  // 7 touched twice
  const SparseCounts plain(counts);
  EXPECT_EQ(plain.get(7), 5);
  EXPECT_EQ(plain.get(40), 1);
  EXPECT_EQ(plain.get(99), 2);
  EXPECT_EQ(plain.get(8), 0);
  const SparseCounts offset(counts, 1);
  EXPECT_EQ(offset.get(7), 4);
  EXPECT_EQ(offset.get(40), 0);
  EXPECT_EQ(offset.get(99), 1);
  EXPECT_EQ(offset.get(1000), 0);
}

}  // namespace
}  // namespace placer
