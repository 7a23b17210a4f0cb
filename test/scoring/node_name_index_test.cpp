#include "scoring/node_name_index.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace placer {
namespace {

// The index next to the plainest model of what it promises: a vector of names
// where the position of a name is its index, removal moves the last one in.
class Mirror {
 public:
  void append(const std::string& name) {
    index.append(name);
    names.push_back(name);
  }
  void remove(const std::string& name) {
    uint32_t at = index.position(name);
    ASSERT_NE(at, NodeNameIndex::kNotFound) << name;
    index.swapRemove(at);
    names[at] = names.back();
    names.pop_back();
  }

  NodeNameIndex index;
  std::vector<std::string> names;
};

// Every name the model holds is found at its position, by position() and by
// find(); the index reads each name back and ranks it where it sorts; the
// given unknown names are not found.
void expectExact(const Mirror& m, const std::vector<std::string>& unknown) {
  ASSERT_EQ(m.index.size(), m.names.size());
  for (uint32_t i = 0; i < m.names.size(); ++i) {
    EXPECT_EQ(m.index.position(m.names[i]), i) << m.names[i];
    EXPECT_EQ(m.index.name(i), m.names[i]);
    auto it = m.index.find(m.names[i]);
    ASSERT_NE(it, m.index.end()) << m.names[i];
    EXPECT_EQ(it->second, i);
  }
  // Ranks: each name's place in byte-wise order.
  std::vector<std::string> sorted = m.names;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < m.names.size(); ++i) {
    auto at = std::lower_bound(sorted.begin(), sorted.end(), m.names[i]);
    EXPECT_EQ(m.index.rank(i), static_cast<uint32_t>(at - sorted.begin())) << m.names[i];
  }
  for (const std::string& name : unknown) {
    EXPECT_EQ(m.index.position(name), NodeNameIndex::kNotFound) << '"' << name << '"';
    EXPECT_EQ(m.index.find(name), m.index.end()) << '"' << name << '"';
  }
}

std::string numbered(const std::string& prefix, int i) {
  std::string digits = std::to_string(i);
  return prefix + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
}

struct Case {
  std::string name;
  std::function<void(Mirror&)> steps;
  std::vector<std::string> unknown;
};

std::vector<Case> cases() {
  return {
      {"an empty index finds nothing", [](Mirror&) {}, {"", "node-1"}},
      {"names appended are found at their positions",
       [](Mirror& m) {
         for (const char* n : {"a", "node-1", "node-2", "worker.example.com"}) m.append(n);
       },
       {"b", "node-3", "node-", "node-11", "worker.example.co", ""}},
      {"removing a name moves the last one into its position",
       [](Mirror& m) {
         for (const char* n : {"n0", "n1", "n2", "n3"}) m.append(n);
         m.remove("n1");
       },
       {"n1"}},
      {"removing the last name leaves the others in place",
       [](Mirror& m) {
         for (const char* n : {"n0", "n1", "n2"}) m.append(n);
         m.remove("n2");
       },
       {"n2"}},
      {"a removed name added again is found at its new position",
       [](Mirror& m) {
         for (const char* n : {"n0", "n1", "n2", "n3"}) m.append(n);
         m.remove("n0");
         m.remove("n2");
         m.append("n0");
       },
       {"n2"}},
      {"removing every name empties the index, which then fills again",
       [](Mirror& m) {
         for (int i = 0; i < 40; ++i) m.append(numbered("n", i));
         for (int i = 0; i < 40; ++i) m.remove(numbered("n", i));
         m.append("n00007");
         m.append("other");
       },
       {"n00000", "n00039", ""}},
      {"the empty name is a name like any other",
       [](Mirror& m) {
         m.append("");
         m.append("a");
         m.append("b");
         m.remove("a");
       },
       {"a", " "}},
      {"names sharing long prefixes are told apart by their last bytes",
       [](Mirror& m) {
         for (int i = 0; i < 300; ++i) m.append(numbered("ip-10-0-12-34.eu-west-1.compute.internal-", i));
         m.remove(numbered("ip-10-0-12-34.eu-west-1.compute.internal-", 150));
       },
       {"ip-10-0-12-34.eu-west-1.compute.internal-", numbered("ip-10-0-12-34.eu-west-1.compute.internal-", 150),
        numbered("ip-10-0-12-34.eu-west-1.compute.internal-", 300),
        numbered("ip-10-0-12-34.eu-west-1.compute.internal-", 1) + "0"}},
      {"names that are prefixes of each other, at every length around the hash's word sizes",
       [](Mirror& m) {
         std::string s;
         for (int len = 0; len <= 40; ++len) {
           m.append(s);
           s += static_cast<char>('a' + len % 26);
         }
       },
       {std::string(41, 'x'), "b", "abcdefghijklmnopqrstuvwxyzabcdefghijklmno"}},
      {"names with bytes the hash reads as zero padding or as binary",
       [](Mirror& m) {
         m.append(std::string("a\0", 2));
         m.append("a");
         m.append(std::string("\0", 1));
         m.append("\xff\xfe\xfd");
         m.append(std::string("node\0\0\0\0\0\0\0\0x", 13));
       },
       {std::string("\0\0", 2), std::string("a\0\0", 3), std::string("node\0\0\0\0\0\0\0\0y", 13), "\xff\xfe"}},
      {"many nodes: 20,000 added, every third removed, some of those added again",
       [](Mirror& m) {
         for (int i = 0; i < 20000; ++i) m.append(numbered("node-", i));
         for (int i = 0; i < 20000; i += 3) m.remove(numbered("node-", i));
         for (int i = 0; i < 20000; i += 30) m.append(numbered("node-", i));
       },
       {numbered("node-", 3), numbered("node-", 19998), numbered("node-", 20000), "node-", "node-0000"}},
  };
}

class NodeNameIndexCases : public ::testing::TestWithParam<Case> {};

TEST_P(NodeNameIndexCases, LookupsAreExact) {
  Mirror m;
  GetParam().steps(m);
  expectExact(m, GetParam().unknown);
}

INSTANTIATE_TEST_SUITE_P(NodeNameIndex, NodeNameIndexCases, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name;
                           for (char c : info.param.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Names that all start their probe in the same slot of the smallest table
// (and the last slot, so runs wrap around): removals in the middle of a run
// must keep the rest reachable.
TEST(NodeNameIndex, CollidingNamesStayReachableThroughRemovals) {
  std::vector<std::string> colliding;
  for (int i = 0; colliding.size() < 6; ++i) {
    std::string name = "c" + std::to_string(i);
    if ((NodeNameIndex::hash(name) & 15) == 15) colliding.push_back(name);
  }
  Mirror m;
  for (const std::string& name : colliding) m.append(name);
  expectExact(m, {"c", "x"});
  m.remove(colliding[1]);
  expectExact(m, {colliding[1]});
  m.remove(colliding[4]);
  m.remove(colliding[0]);
  expectExact(m, {colliding[0], colliding[1], colliding[4]});
  m.append(colliding[1]);
  expectExact(m, {colliding[0], colliding[4]});
}

// A long run of adds and removals against the model, with a fixed sequence.
TEST(NodeNameIndex, ChurnMatchesTheModel) {
  std::mt19937 sequence(7);  // fixed seed: the same run every time
  Mirror m;
  std::vector<std::string> gone;
  for (int step = 0; step < 30000; ++step) {
    const uint32_t draw = sequence();
    if (m.names.empty() || draw % 5 < 3) {
      std::string name = "pool-" + std::to_string(draw % 4000);
      if (m.index.position(name) == NodeNameIndex::kNotFound) m.append(name);
    } else {
      std::string name = m.names[draw % m.names.size()];
      m.remove(name);
      gone.push_back(name);
    }
    if (step % 5000 == 0) {
      std::vector<std::string> unknown;
      for (const std::string& name : gone)
        if (std::find(m.names.begin(), m.names.end(), name) == m.names.end()) unknown.push_back(name);
      expectExact(m, unknown);
    }
  }
  expectExact(m, {"pool-4000", "pool-"});
}

TEST(NodeNameIndex, BatchedLookupEqualsOneByOne) {
  Mirror m;
  for (int i = 0; i < 3000; ++i) m.append(numbered("node-", i));
  for (int i = 0; i < 3000; i += 7) m.remove(numbered("node-", i));
  std::vector<std::string> queries;
  // Known and unknown names mixed, duplicates, the empty name, more than
  // one block, and a count that is not a multiple of the block.
  for (int i = 0; i < 3100; ++i) queries.push_back(numbered("node-", (i * 37) % 3100));
  queries.push_back("");
  queries.push_back(numbered("node-", 8));
  queries.push_back(numbered("node-", 8));
  for (size_t count : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, queries.size()}) {
    std::vector<std::string_view> names(queries.begin(), queries.begin() + static_cast<std::ptrdiff_t>(count));
    std::vector<uint32_t> positions(count, 12345);
    m.index.findAll(names, positions);
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(positions[i], m.index.position(names[i])) << names[i];
  }
  NodeNameIndex empty;
  std::vector<std::string_view> names = {"a", ""};
  std::vector<uint32_t> positions(2, 0);
  empty.findAll(names, positions);
  EXPECT_EQ(positions, (std::vector<uint32_t>{NodeNameIndex::kNotFound, NodeNameIndex::kNotFound}));
}

// The index keeps its own copy of each name: the caller's string may change or die.
TEST(NodeNameIndex, KeepsItsOwnCopyOfEachName) {
  NodeNameIndex index;
  {
    std::string name = "transient-node";
    index.append(name);
    name.assign("overwritten!!!");
  }
  EXPECT_EQ(index.position("transient-node"), 0u);
  EXPECT_EQ(index.position("overwritten!!!"), NodeNameIndex::kNotFound);
}

}  // namespace
}  // namespace placer
