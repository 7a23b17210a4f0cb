#include "scoring/engine.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/exact_quotient.h"
#include "test/support/fake_plugins.h"

namespace placer {
namespace {

using nlohmann::json;

struct Case {
  std::string name;
  std::vector<std::string> nodes;  // in view order
  json profile;                    // one KubeSchedulerConfiguration profile over the fake registry
  // Expectations.
  std::string selected;  // "" = none
  std::vector<std::string> feasible;
  std::map<std::string, std::vector<std::string>> unfeasible;
  std::map<std::string, std::vector<int64_t>> scores = {};  // per score plugin, then total
  std::string message = "";                                 // only checked when nothing is selected
};

// Plugins listed explicitly per extension point; the defaults are upstream's
// names, absent from the fake registry, so they contribute nothing.
json profileWith(json plugins, json pluginConfig) {
  return json{{"plugins", std::move(plugins)}, {"pluginConfig", std::move(pluginConfig)}};
}

json cfg(const std::string& name, json args) { return json{{"name", name}, {"args", std::move(args)}}; }

// Nodes with nothing but a name, in view order.
void addNodes(MutableClusterView& view, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    Node node;
    node.name = name;
    view.upsertNode(node);
  }
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"highest total wins",
                 {"n1", "n2", "n3"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}},
                             {cfg("ScoreA", {{"scores", {{"n1", 10}, {"n2", 50}, {"n3", 30}}}})}),
                 "n2",
                 {"n1", "n2", "n3"},
                 {},
                 {{"n1", {10, 10}}, {"n2", {50, 50}}, {"n3", {30, 30}}}});
  out.push_back({"weights multiply the normalised scores",
                 {"n1", "n2"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}, {{"name", "ScoreB"}, {"weight", 3}}}}}}},
                             {cfg("ScoreA", {{"scores", {{"n1", 100}, {"n2", 0}}}}),
                              cfg("ScoreB", {{"scores", {{"n1", 0}, {"n2", 50}}}})}),
                 "n2",
                 {"n1", "n2"},
                 {},
                 {{"n1", {100, 0, 100}}, {"n2", {0, 50, 150}}}});
  out.push_back({"a tie goes to the byte-wise smallest name",
                 {"node-b", "node-a", "Node-c", "node-a1"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}}, json::array()),
                 "Node-c",
                 {"node-b", "node-a", "Node-c", "node-a1"},
                 {},
                 {{"node-a", {0, 0}}, {"Node-c", {0, 0}}}});
  out.push_back({"the first failing filter decides a node's reasons",
                 {"n1", "n2", "n3"},
                 profileWith({{"filter", {{"enabled", {{{"name", "FilterA"}}, {{"name", "FilterB"}}}}}}},
                             {cfg("FilterA", {{"reject", {{"n1", "A says no"}}}}),
                              cfg("FilterB", {{"reject", {{"n1", "B says no"}, {"n2", "B says no"}}}})}),
                 "n3",
                 {"n3"},
                 {{"n1", {"A says no"}}, {"n2", {"B says no"}}}});
  out.push_back({"no feasible node: reasons counted and sorted as kube-scheduler prints them",
                 {"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10", "n11", "n12"},
                 profileWith({{"filter", {{"enabled", {{{"name", "FilterA"}}}}}}},
                             {cfg("FilterA", {{"reject",
                                               {{"n01", "Insufficient cpu"}, {"n02", "Insufficient cpu"},
                                                {"n03", "Insufficient cpu"}, {"n04", "Insufficient cpu"},
                                                {"n05", "Insufficient cpu"}, {"n06", "Insufficient cpu"},
                                                {"n07", "Insufficient cpu"}, {"n08", "Insufficient cpu"},
                                                {"n09", "Insufficient cpu"}, {"n10", "Insufficient cpu"}}},
                                              {"unresolvable",
                                               {{"n11", "node(s) had untolerated taint {dedicated: gpu}"},
                                                {"n12", "node(s) had untolerated taint {dedicated: gpu}"}}}})}),
                 "",
                 {},
                 {},
                 {},
                 "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}."});
  out.push_back({"a node with several reasons counts each",
                 {"n1", "n2"},
                 profileWith({{"filter", {{"enabled", {{{"name", "FilterA"}}}}}}},
                             {cfg("FilterA", {{"reject", {{"n1", "Insufficient cpu"}, {"n2", "Too many pods"}}}})}),
                 "",
                 {},
                 {{"n1", {"Insufficient cpu"}}, {"n2", {"Too many pods"}}},
                 {},
                 "0/2 nodes are available: 1 Insufficient cpu, 1 Too many pods."});
  out.push_back({"a PreFilter rejection makes every node unfeasible with its reason",
                 {"n1", "n2"},
                 profileWith({{"preFilter", {{"enabled", {{{"name", "PreFilterFilter"}}}}}},
                              {"filter", {{"enabled", {{{"name", "PreFilterFilter"}}}}}}},
                             {cfg("PreFilterFilter", {{"preFilter", "unresolvable"},
                                                      {"preFilterReason", "node(s) didn't match Pod's node affinity/selector"}})}),
                 "",
                 {},
                 {{"n1", {"node(s) didn't match Pod's node affinity/selector"}},
                  {"n2", {"node(s) didn't match Pod's node affinity/selector"}}},
                 {},
                 "0/2 nodes are available: node(s) didn't match Pod's node affinity/selector."});
  out.push_back({"a PreFilter Skip switches off the same plugin's Filter",
                 {"n1", "n2"},
                 profileWith({{"multiPoint", {{"enabled", {{{"name", "AllA"}}}}}}},
                             {cfg("AllA", {{"preFilter", "skip"}, {"reject", {{"n1", "never checked"}}}})}),
                 "n1",
                 {"n1", "n2"},
                 {},
                 {{"n1", {0, 0}}, {"n2", {0, 0}}}});
  out.push_back({"a PreScore Skip makes the plugin score 0 everywhere",
                 {"n1", "n2"},
                 profileWith({{"multiPoint", {{"enabled", {{{"name", "AllA"}}, {{"name", "ScoreB"}}}}}}},
                             {cfg("AllA", {{"preScore", "skip"}, {"scores", {{"n1", 90}, {"n2", 10}}}}),
                              cfg("ScoreB", {{"scores", {{"n1", 10}, {"n2", 20}}}})}),
                 "n2",
                 {"n1", "n2"},
                 {},
                 {{"n1", {0, 10, 10}}, {"n2", {0, 20, 20}}}});
  out.push_back({"NormalizeScore scales to 100 before the weight",
                 {"n1", "n2", "n3"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}, {"weight", 2}}}}}}},
                             {cfg("ScoreA", {{"scores", {{"n1", 1}, {"n2", 4}, {"n3", 2}}}, {"normalize", "default"}})}),
                 "n2",
                 {"n1", "n2", "n3"},
                 {},
                 {{"n1", {25, 50}}, {"n2", {100, 200}}, {"n3", {50, 100}}}});
  out.push_back({"a reversed NormalizeScore favours the lowest raw score",
                 {"n1", "n2"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}},
                             {cfg("ScoreA", {{"scores", {{"n1", 0}, {"n2", 2}}}, {"normalize", "reverse"}})}),
                 "n1",
                 {"n1", "n2"},
                 {},
                 {{"n1", {100, 100}}, {"n2", {0, 0}}}});
  out.push_back({"only one feasible node is still scored",
                 {"n1", "n2"},
                 profileWith({{"multiPoint", {{"enabled", {{{"name", "FilterA"}}, {{"name", "ScoreA"}}}}}}},
                             {cfg("FilterA", {{"reject", {{"n1", "no"}}}}), cfg("ScoreA", {{"scores", {{"n2", 42}}}})}),
                 "n2",
                 {"n2"},
                 {{"n1", {"no"}}},
                 {{"n2", {42, 42}}}});
  out.push_back({"a score outside 0..100 after normalising fails the cycle",
                 {"n1"},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}}, {cfg("ScoreA", {{"normalize", "invalid"}})}),
                 "",
                 {"n1"},
                 {},
                 {},
                 "plugin \"ScoreA\" returns an invalid score 101, it should in the range of [0, 100] after normalizing"});
  // Five scoring plugins: the engine sums the weighted rows four at a time.
  auto fiveScorers = [](json allA, json allB) {
    return profileWith({{"preScore", {{"enabled", {{{"name", "AllA"}}}}}},
                        {"score",
                         {{"enabled",
                           {{{"name", "ScoreA"}},
                            {{"name", "ScoreB"}, {"weight", 2}},
                            {{"name", "PreScoreScore"}, {"weight", 3}},
                            {{"name", "AllA"}, {"weight", 4}},
                            {{"name", "AllB"}, {"weight", 5}}}}}}},
                       {cfg("ScoreA", {{"scores", {{"n1", 10}, {"n2", 100}, {"n3", 0}}}}),
                        cfg("ScoreB", {{"scores", {{"n1", 20}, {"n2", 0}, {"n3", 100}}}}),
                        cfg("PreScoreScore", {{"scores", {{"n1", 30}, {"n2", 0}, {"n3", 100}}}}),
                        cfg("AllA", std::move(allA)), cfg("AllB", std::move(allB))});
  };
  const json allAScores = {{"scores", {{"n1", 40}, {"n2", 0}, {"n3", 100}}}};
  const json allBScores = {{"scores", {{"n1", 50}, {"n2", 100}, {"n3", 0}}}};
  out.push_back({"five weighted plugins add up to one total per node",
                 {"n1", "n2", "n3"},
                 fiveScorers(allAScores, allBScores),
                 "n3",
                 {"n1", "n2", "n3"},
                 {},
                 {{"n1", {10, 20, 30, 40, 50, 550}}, {"n2", {100, 0, 0, 0, 100, 600}}, {"n3", {0, 100, 100, 100, 0, 900}}}});
  json allASkips = allAScores;
  allASkips["preScore"] = "skip";
  out.push_back({"a plugin whose PreScore skips adds nothing among five",
                 {"n1", "n2", "n3"},
                 fiveScorers(allASkips, allBScores),
                 "n2",
                 {"n1", "n2", "n3"},
                 {},
                 {{"n1", {10, 20, 30, 0, 50, 390}}, {"n2", {100, 0, 0, 0, 100, 600}}, {"n3", {0, 100, 100, 0, 0, 500}}}});
  json allBInvalid = allBScores;
  allBInvalid["normalize"] = "invalid";
  out.push_back({"the fifth plugin's score outside 0..100 fails the cycle",
                 {"n1", "n2", "n3"},
                 fiveScorers(allAScores, allBInvalid),
                 "",
                 {"n1", "n2", "n3"},
                 {},
                 {},
                 "plugin \"AllB\" returns an invalid score 101, it should in the range of [0, 100] after normalizing"});
  json allAInvalid = allAScores;
  allAInvalid["normalize"] = "invalid";
  out.push_back({"of two plugins scoring outside 0..100 the first in profile order fails the cycle",
                 {"n1", "n2", "n3"},
                 fiveScorers(allAInvalid, allBInvalid),
                 "",
                 {"n1", "n2", "n3"},
                 {},
                 {},
                 "plugin \"AllA\" returns an invalid score 101, it should in the range of [0, 100] after normalizing"});
  out.push_back({"a Filter error fails the cycle",
                 {"n1", "n2"},
                 profileWith({{"filter", {{"enabled", {{{"name", "FilterA"}}}}}}}, {cfg("FilterA", {{"error", {{"n1", "boom"}}}})}),
                 "",
                 {"n2"},
                 {{"n1", {"running \"FilterA\" filter plugin: boom"}}},
                 {},
                 "running \"FilterA\" filter plugin: boom"});
  out.push_back({"no nodes at all",
                 {},
                 profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}}, json::array()),
                 "",
                 {},
                 {},
                 {},
                 "no nodes available to schedule pods"});
  return out;
}

class EngineCases : public ::testing::TestWithParam<Case> {};

TEST_P(EngineCases, DecisionMatches) {
  const Case& c = GetParam();
  auto profile = Profile::fromJson(c.profile, test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  MutableClusterView view;
  addNodes(view, c.nodes);
  Pod pod;
  pod.namespace_ = "default";
  pod.name = "web";
  Engine engine(*profile);

  Decision d = engine.place(pod, view, Detail::Full);
  EXPECT_EQ(d.selected ? d.selected->name() : "", c.selected);
  EXPECT_EQ(d.nodeCount, c.nodes.size());
  std::vector<std::string> feasible;
  std::map<std::string, std::vector<std::string>> unfeasible;
  for (const NodeOutcome& o : d.nodes) {
    if (o.code == Code::Success)
      feasible.push_back(o.node->name());
    else
      unfeasible[o.node->name()] = o.reasons;
    if (auto it = c.scores.find(o.node->name()); it != c.scores.end() && d.selected) {
      std::vector<int64_t> got = o.pluginScores;
      got.push_back(o.total);
      EXPECT_EQ(got, it->second) << o.node->name();
    }
  }
  EXPECT_EQ(feasible, c.feasible);
  if (!c.unfeasible.empty() || !c.feasible.empty()) {
    EXPECT_EQ(unfeasible, c.unfeasible);
  }
  EXPECT_EQ(d.feasibleCount, c.feasible.size());
  if (!c.message.empty()) {
    EXPECT_EQ(d.unschedulableMessage(), c.message);
  }

  // The summary decides the same without per-node detail.
  Decision summary = engine.place(pod, view, Detail::Summary);
  EXPECT_EQ(summary.selected, d.selected);
  EXPECT_EQ(summary.selectedTotal, d.selectedTotal);
  EXPECT_EQ(summary.feasibleCount, d.feasibleCount);
  EXPECT_EQ(summary.reasonCounts, d.reasonCounts);
  EXPECT_TRUE(summary.nodes.empty());
}

INSTANTIATE_TEST_SUITE_P(, EngineCases, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

TEST(Engine, EvaluateScoresOnlyTheCandidates) {
  auto profile = Profile::fromJson(
      profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}},
                  {cfg("ScoreA", {{"scores", {{"n1", 90}, {"n2", 50}, {"n3", 70}}}})}),
      test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  MutableClusterView view;
  addNodes(view, {"n1", "n2", "n3"});
  std::vector<const NodeInfo*> candidates{view.findNode("n2"), view.findNode("n3")};
  Decision d = Engine(*profile).evaluate(Pod{}, view, candidates, Detail::Full);
  ASSERT_NE(d.selected, nullptr);
  EXPECT_EQ(d.selected->name(), "n3");
  EXPECT_EQ(d.nodeCount, 2u);
  ASSERT_EQ(d.nodes.size(), 2u);
  EXPECT_EQ(d.nodes[0].node->name(), "n2");
}

// The decision cache keeps raw scores in 32 bits: a plugin whose raw score
// does not fit (here 5e9, normalised to 0-100 afterwards) is decided without
// the cache, the same as by an engine without it, every time.
TEST(Engine, RawScoresBeyond32BitsAreDecidedAsWithoutTheCache) {
  auto profile = Profile::fromJson(
      profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}, {{"name", "ScoreB"}}}}}}},
                  {cfg("ScoreA", {{"reusable", true},
                                  {"normalize", "default"},
                                  {"scores", {{"n1", 5'000'000'000}, {"n2", 4'000'000'000}, {"n3", 1}}}}),
                   cfg("ScoreB", {{"reusable", true}, {"scores", {{"n1", 0}, {"n2", 100}, {"n3", 0}}}})}),
      test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  MutableClusterView view;
  addNodes(view, {"n1", "n2", "n3"});
  Engine cached(*profile, 4);
  Engine direct(*profile, 0);
  ASSERT_NE(cached.cache(), nullptr);
  Pod pod;
  pod.namespace_ = "default";
  pod.name = "web";
  // n1: 100 + 0; n2: 80 + 100 (4e9 * 100 / 5e9); n3: 0 + 0.
  const Decision expected = direct.place(pod, view);
  ASSERT_NE(expected.selected, nullptr);
  EXPECT_EQ(expected.selected->name(), "n2");
  EXPECT_EQ(expected.selectedTotal, 180);
  for (int i = 0; i < 3; ++i) {
    const Decision d = cached.place(pod, view);
    ASSERT_NE(d.selected, nullptr);
    EXPECT_EQ(d.selected->name(), "n2");
    EXPECT_EQ(d.selectedTotal, expected.selectedTotal);
  }
  EXPECT_EQ(cached.cache()->stats().hits, 0u) << "an entry that cannot hold the scores is never used";
}

// A tie among thousands of nodes (all score the same) goes to the
// byte-wise smallest name whatever the view's order, also after nodes come
// and go (the view's order of names is kept by position), and the same node
// is chosen from copies of the nodes (the extender's full Nodes).
TEST(Engine, ATieAmongManyNodesGoesToTheSmallestNameAsNodesComeAndGo) {
  auto profile = Profile::fromJson(profileWith({{"score", {{"enabled", {{{"name", "ScoreA"}}}}}}}, json::array()),
                                   test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  MutableClusterView view;
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("n" + std::to_string(i * 7 % 3000));  // n0 is first, n1 the 2,143rd
  addNodes(view, names);
  Engine engine(*profile);
  auto smallestNow = [&] {
    std::string smallest;
    for (const NodeInfo& n : view.nodes())
      if (smallest.empty() || n.name() < smallest) smallest = n.name();
    return smallest;
  };
  for (const std::string gone : {"n0", "n1", "n10", "n100", "n1000"}) {
    const Decision d = engine.place(Pod{}, view);
    ASSERT_NE(d.selected, nullptr);
    EXPECT_EQ(d.selected->name(), smallestNow());
    EXPECT_EQ(d.selected->name(), gone);
    // The same tie over copies of the nodes, in the view's order.
    std::vector<NodeInfo> copies(view.nodes().begin(), view.nodes().end());
    std::vector<const NodeInfo*> candidates;
    for (const NodeInfo& n : copies) candidates.push_back(&n);
    const Decision fromCopies = engine.evaluate(Pod{}, view, candidates, Detail::Summary);
    ASSERT_NE(fromCopies.selected, nullptr);
    EXPECT_EQ(fromCopies.selected->name(), gone);
    view.removeNode(gone);
  }
  EXPECT_EQ(engine.place(Pod{}, view).selected->name(), "n1001");
}

TEST(Engine, ReasonCountsAreSortedByReason) {
  auto profile = Profile::fromJson(
      profileWith({{"filter", {{"enabled", {{{"name", "FilterA"}}}}}}},
                  {cfg("FilterA", {{"reject", {{"n1", "b"}, {"n2", "a"}, {"n3", "b"}}}})}),
      test::fakeRegistry());
  ASSERT_TRUE(profile.ok());
  MutableClusterView view;
  addNodes(view, {"n1", "n2", "n3"});
  Decision d = Engine(*profile).place(Pod{}, view);
  using Counts = std::vector<std::pair<std::string, int32_t>>;
  EXPECT_EQ(d.reasonCounts, (Counts{{"a", 1}, {"b", 2}}));
}

// Normalising without an integer division per node gives upstream's integer
// quotients, also where a quotient is one short of the next integer.
TEST(Framework, DefaultNormalizeScoreKeepsUpstreamsIntegerQuotients) {
  struct Case {
    std::string name;
    std::vector<int64_t> scores;
  };
  const int64_t big = (int64_t{1} << 46) - 3;  // within the fast path: 100 * big < 2^53
  // Many nodes over a few counts go through a table of the quotients.
  auto many = [](size_t n, int64_t span) {
    std::vector<int64_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>((i * 7919) % static_cast<size_t>(span + 1));
    return v;
  };
  const std::vector<Case> cases = {
      {"small counts", {0, 1, 2, 3, 7}},
      {"many nodes, counts up to 6", many(1000, 6)},
      {"many nodes, counts up to 255 (the largest table)", many(1100, 255)},
      {"many nodes, counts up to 256 (too wide for a table)", many(5000, 256)},
      {"counts up to 99 over too few nodes for a table", many(396, 99)},
      {"many nodes, counts up to 99", many(397, 99)},
      {"one below a multiple of the maximum", {big, big - 1, big / 3, big / 3 - 1, 1, 0}},
      {"a maximum past the fast path", {int64_t{1} << 47, (int64_t{1} << 47) - 1, 12345}},
      {"negative scores", {-5, 3, 9}},
      {"all zero", {0, 0, 0}},
  };
  for (const Case& c : cases) {
    for (bool reverse : {false, true}) {
      SCOPED_TRACE(c.name + (reverse ? " reversed" : ""));
      int64_t maxCount = 0;
      for (int64_t s : c.scores) maxCount = std::max(maxCount, s);
      std::vector<int64_t> expected = c.scores;
      for (int64_t& s : expected) {
        if (maxCount == 0) {
          s = reverse ? kMaxNodeScore : s;
          continue;
        }
        // Upstream's expression, in 128 bits so the reference cannot overflow.
        s = static_cast<int64_t>(static_cast<__int128>(kMaxNodeScore) * s / maxCount);
        if (reverse) s = kMaxNodeScore - s;
      }
      std::vector<int64_t> scores = c.scores;
      defaultNormalizeScore(kMaxNodeScore, reverse, scores);
      EXPECT_EQ(scores, expected);
    }
  }
  for (int64_t d : {int64_t{3}, int64_t{7}, int64_t{1000003}, big}) {
    for (int64_t n : {d - 1, 2 * d - 1, 99 * d - 1, 100 * d - 1, 100 * d}) {
      EXPECT_EQ(exactQuotient(n, d), n / d) << n << " / " << d;
    }
  }
}

TEST(Framework, ScoresMapThroughATableOnlyWhenTheirRangeIsSmallBesideTheirNumber) {
  struct Case {
    std::string name;
    size_t count;
    int64_t lo;
    int64_t hi;
    bool mapped;
  };
  const std::vector<Case> cases = {
      {"a few values over many scores", 100, 0, 5, true},
      {"a range starting below zero (an invalid score)", 100, -1, 20, true},
      {"the widest table", 2000, 1000, 1255, true},
      {"one value wider than the table", 2000, 1000, 1256, false},
      {"a range as wide as a quarter of the scores", 40, 0, 10, false},
      {"a range just under a quarter of the scores", 41, 0, 10, true},
      {"an empty range", 100, 5, 4, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<int64_t> scores(c.count);
    for (size_t i = 0; i < c.count; ++i)
      scores[i] = c.hi < c.lo ? c.lo : c.lo + static_cast<int64_t>(i % static_cast<size_t>(c.hi - c.lo + 1));
    const std::vector<int64_t> before = scores;
    auto f = [](int64_t v) { return 3 * v * v - 7; };
    EXPECT_EQ(mapScoresThroughTable(scores, c.lo, c.hi, f), c.mapped);
    std::vector<int64_t> expected = before;
    if (c.mapped)
      for (int64_t& s : expected) s = f(s);
    EXPECT_EQ(scores, expected);
  }
}

}  // namespace
}  // namespace placer
