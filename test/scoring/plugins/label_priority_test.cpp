// LabelPriority is placer's own plugin: the integer value of a node label,
// normalised linearly so that the largest value scores 100.
#include "scoring/plugins/label_priority.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::NodeBuilder;
using test::PodBuilder;

constexpr const char* kLabel = "placer.io/priority";

Node node(std::string name, std::optional<std::string> value) {
  NodeBuilder b(std::move(name));
  if (value) b.label(kLabel, *value);
  return b;
}

struct ScoreCase {
  std::string name;
  std::vector<Node> nodes;
  std::vector<int64_t> want;
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class LabelPriorityScore : public testing::TestWithParam<ScoreCase> {};

TEST_P(LabelPriorityScore, Normalised) {
  const ScoreCase& c = GetParam();
  auto p = newLabelPriority({{"label", kLabel}});
  ASSERT_TRUE(p.ok());
  std::vector<NodeInfo> infos;
  for (const Node& n : c.nodes) infos.push_back(test::nodeInfo(n));
  EXPECT_EQ(test::runScore(**p, PodBuilder(), test::pointers(infos)).scores, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LabelPriorityScore,
    testing::Values(
        ScoreCase{"LargestValueScores100Linearly", {node("a", "10"), node("b", "5"), node("c", "3")}, {100, 50, 30}},
        ScoreCase{"AbsentLabelScoresZero", {node("a", "7"), node("b", std::nullopt)}, {100, 0}},
        ScoreCase{"NonIntegerScoresZero", {node("a", "7"), node("b", "high"), node("c", "1.5")}, {100, 0, 0}},
        ScoreCase{"NegativeScoresZero", {node("a", "-5"), node("b", "4")}, {0, 100}},
        ScoreCase{"AllZeroStayZero", {node("a", "0"), node("b", std::nullopt)}, {0, 0}},
        ScoreCase{"RoundsDown", {node("a", "3"), node("b", "2"), node("c", "1")}, {100, 66, 33}},
        ScoreCase{"HugeValuesDoNotOverflow", {node("a", "9223372036854775807"), node("b", "4611686018427387904")},
                  {100, 50}},
        ScoreCase{"PlusSignAccepted", {node("a", "+8"), node("b", "2")}, {100, 25}}),
    [](const auto& info) { return info.param.name; });

struct FilterCase {
  std::string name;
  bool filterNodesWithoutLabel;
  Node node;
  bool fits;
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class LabelPriorityFilter : public testing::TestWithParam<FilterCase> {};

TEST_P(LabelPriorityFilter, Verdict) {
  const FilterCase& c = GetParam();
  auto p = newLabelPriority({{"label", kLabel}, {"filterNodesWithoutLabel", c.filterNodesWithoutLabel}});
  ASSERT_TRUE(p.ok());
  test::FilterOutcome got = test::runFilter(**p, PodBuilder(), test::nodeInfo(c.node));
  if (c.fits) {
    EXPECT_TRUE(got.filter.isSuccess());
  } else {
    EXPECT_EQ(got.filter.code(), Code::UnschedulableAndUnresolvable);
    EXPECT_EQ(got.filter.reasons(), std::vector<std::string>{"node(s) didn't have label placer.io/priority"});
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, LabelPriorityFilter,
                         testing::Values(FilterCase{"WithoutFilteringAbsentLabelFits", false, node("a", std::nullopt), true},
                                         FilterCase{"AbsentLabelRejected", true, node("a", std::nullopt), false},
                                         FilterCase{"NonIntegerRejected", true, node("a", "ten"), false},
                                         FilterCase{"EmptyValueRejected", true, node("a", ""), false},
                                         FilterCase{"NegativeIntegerFits", true, node("a", "-1"), true},
                                         FilterCase{"IntegerFits", true, node("a", "42"), true}),
                         [](const auto& info) { return info.param.name; });

struct ArgsCase {
  std::string name;
  nlohmann::json args;
  std::string error;
};

void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }

class LabelPriorityArgsValidation : public testing::TestWithParam<ArgsCase> {};

TEST_P(LabelPriorityArgsValidation, Errors) {
  const ArgsCase& c = GetParam();
  auto p = newLabelPriority(c.args);
  if (c.error.empty()) {
    EXPECT_TRUE(p.ok()) << p.error().message;
  } else {
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, c.error);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LabelPriorityArgsValidation,
    testing::Values(ArgsCase{"Valid", {{"label", "tier"}}, ""},
                    ArgsCase{"ValidWithTypeMeta",
                             {{"apiVersion", "placer.io/v1alpha1"}, {"kind", "LabelPriorityArgs"}, {"label", "tier"},
                              {"filterNodesWithoutLabel", true}},
                             ""},
                    ArgsCase{"NoArgs", nullptr, "LabelPriorityArgs.label: required"},
                    ArgsCase{"MissingLabel", nlohmann::json::object(), "LabelPriorityArgs.label: required"},
                    ArgsCase{"EmptyLabel", {{"label", ""}}, "LabelPriorityArgs.label: must not be empty"},
                    ArgsCase{"LabelNotString", {{"label", 3}}, "LabelPriorityArgs.label: must be a string"},
                    ArgsCase{"FilterNotBool", {{"label", "x"}, {"filterNodesWithoutLabel", "yes"}},
                             "LabelPriorityArgs.filterNodesWithoutLabel: must be a boolean"},
                    ArgsCase{"UnknownField", {{"label", "x"}, {"lable", "y"}}, "LabelPriorityArgs.lable: unknown field"}),
    [](const auto& info) { return info.param.name; });

TEST(LabelPriority, PreFilterSkipsWhenNotFiltering) {
  auto p = newLabelPriority({{"label", kLabel}});
  ASSERT_TRUE(p.ok());
  CycleState state;
  EXPECT_TRUE(dynamic_cast<const PreFilterPlugin&>(**p).preFilter(state, PodBuilder(), ClusterView()).isSkip());
  EXPECT_EQ((*p)->name(), names::kLabelPriority);
}

}  // namespace
}  // namespace placer
