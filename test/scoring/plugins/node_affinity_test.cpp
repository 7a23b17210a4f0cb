// Ported from kube-scheduler plugins/nodeaffinity/node_affinity_test.go, plus
// the matching rules of component-helpers/scheduling/corev1/nodeaffinity.
#include "scoring/plugins/node_affinity.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "test/support/builders.h"
#include "test/support/plugin_harness.h"

namespace placer {
namespace {

using test::matchExpressions;
using test::matchFields;
using test::NodeBuilder;
using test::PodBuilder;
using test::req;
constexpr auto In = SelectorOperator::In;
constexpr auto NotIn = SelectorOperator::NotIn;
constexpr auto Exists = SelectorOperator::Exists;
constexpr auto DoesNotExist = SelectorOperator::DoesNotExist;
constexpr auto Gt = SelectorOperator::Gt;
constexpr auto Lt = SelectorOperator::Lt;

const std::string kPodReason = "node(s) didn't match Pod's node affinity/selector";
const std::string kEnforcedReason = "node(s) didn't match scheduler-enforced node affinity";
const std::string kConflictReason = "pod affinity terms conflict";

std::unique_ptr<Plugin> plugin(const nlohmann::json& args = nullptr) {
  auto p = newNodeAffinity(args);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(p).value() : nullptr;
}

// addedAffinity.required with one term pinning metadata.name to node2.
const nlohmann::json kAddedNode2 = {
    {"addedAffinity",
     {{"requiredDuringSchedulingIgnoredDuringExecution",
       {{"nodeSelectorTerms", {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"node2"}}}}}}}}}}}}};

struct FilterCase {
  std::string name;
  Pod pod;
  Node node;
  Code preFilterCode;  // Success, Skip or a rejection
  Code code;           // the node's verdict
  std::string reason;
  nlohmann::json args = nullptr;
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class NodeAffinityFilter : public testing::TestWithParam<FilterCase> {};

TEST_P(NodeAffinityFilter, Verdict) {
  const FilterCase& c = GetParam();
  auto p = plugin(c.args);
  ASSERT_NE(p, nullptr);
  test::FilterOutcome got = test::runFilter(*p, c.pod, test::nodeInfo(c.node));
  EXPECT_EQ(got.preFilter.code(), c.preFilterCode);
  EXPECT_EQ(got.filter.code(), c.code);
  if (c.reason.empty())
    EXPECT_TRUE(got.filter.reasons().empty());
  else
    EXPECT_EQ(got.filter.reasons(), std::vector<std::string>{c.reason});

  // Filter alone (PreFilter disabled) reaches the same verdict, except for the
  // conflict that only PreFilter reports.
  if (c.preFilterCode != Code::UnschedulableAndUnresolvable) {
    CycleState empty;
    Status alone = dynamic_cast<const FilterPlugin&>(*p).filter(empty, c.pod, test::nodeInfo(c.node));
    EXPECT_EQ(alone.code(), c.code);
  }
}

const Code Ok = Code::Success;
const Code Skip = Code::Skip;
const Code Unresolvable = Code::UnschedulableAndUnresolvable;

Node labelled(std::initializer_list<std::pair<std::string, std::string>> labels, std::string name = "") {
  return NodeBuilder(std::move(name)).labels(labels);
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, NodeAffinityFilter,
    testing::Values(
        FilterCase{"MissingLabels", PodBuilder().nodeSelector({{"foo", "bar"}}), labelled({}), Ok, Unresolvable,
                   kPodReason},
        FilterCase{"SameLabels", PodBuilder().nodeSelector({{"foo", "bar"}}), labelled({{"foo", "bar"}}), Ok, Ok, ""},
        FilterCase{"NodeLabelsAreSuperset", PodBuilder().nodeSelector({{"foo", "bar"}}),
                   labelled({{"foo", "bar"}, {"baz", "blah"}}), Ok, Ok, ""},
        FilterCase{"NodeLabelsAreSubset", PodBuilder().nodeSelector({{"foo", "bar"}, {"baz", "blah"}}),
                   labelled({{"foo", "bar"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"InOperatorMatches",
                   PodBuilder().requiredTerms({matchExpressions({req("foo", In, {"bar", "value2"})})}),
                   labelled({{"foo", "bar"}}), Ok, Ok, ""},
        FilterCase{"GtOperatorMatches",
                   PodBuilder().requiredTerms({matchExpressions({req("kernel-version", Gt, {"0204"})})}),
                   labelled({{"kernel-version", "0206"}}), Ok, Ok, ""},
        FilterCase{"NotInOperatorMatches",
                   PodBuilder().requiredTerms({matchExpressions({req("mem-type", NotIn, {"DDR", "DDR2"})})}),
                   labelled({{"mem-type", "DDR3"}}), Ok, Ok, ""},
        FilterCase{"ExistsOperatorMatches", PodBuilder().requiredTerms({matchExpressions({req("GPU", Exists)})}),
                   labelled({{"GPU", "NVIDIA-GRID-K1"}}), Ok, Ok, ""},
        FilterCase{"AffinityNotMatchingLabels",
                   PodBuilder().requiredTerms({matchExpressions({req("foo", In, {"value1", "value2"})})}),
                   labelled({{"foo", "bar"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"EmptyMatchExpressionsMatchesNothing", PodBuilder().requiredTerms({NodeSelectorTerm{}}),
                   labelled({{"foo", "bar"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"NoAffinitySchedules", PodBuilder(), labelled({{"foo", "bar"}}), Skip, Ok, ""},
        FilterCase{"MultipleMatchExpressionsAndedMatch",
                   PodBuilder().requiredTerms(
                       {matchExpressions({req("GPU", Exists), req("GPU", NotIn, {"AMD", "INTER"})})}),
                   labelled({{"GPU", "NVIDIA-GRID-K1"}}), Ok, Ok, ""},
        FilterCase{"MultipleMatchExpressionsAndedDoNotMatch",
                   PodBuilder().requiredTerms(
                       {matchExpressions({req("GPU", Exists), req("GPU", In, {"AMD", "INTER"})})}),
                   labelled({{"GPU", "NVIDIA-GRID-K1"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"MultipleTermsOred",
                   PodBuilder().requiredTerms({matchExpressions({req("foo", In, {"bar", "value2"})}),
                                               matchExpressions({req("diffkey", In, {"wrong", "value2"})})}),
                   labelled({{"foo", "bar"}}), Ok, Ok, ""},
        FilterCase{"AffinityAndNodeSelectorBothSatisfied",
                   PodBuilder().nodeSelector({{"foo", "bar"}}).requiredTerms({matchExpressions({req("foo", Exists)})}),
                   labelled({{"foo", "bar"}}), Ok, Ok, ""},
        FilterCase{"AffinityMatchesButNodeSelectorDoesNot",
                   PodBuilder().nodeSelector({{"foo", "bar"}}).requiredTerms({matchExpressions({req("foo", Exists)})}),
                   labelled({{"foo", "barrrrrr"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"InvalidValueInTermMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("foo", NotIn, {"invalid value: ___@#$%^"})})}),
                   labelled({{"foo", "bar"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"MatchFieldsInMatchesNode",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"})})}),
                   labelled({}, "node1"), Ok, Ok, ""},
        FilterCase{"MatchFieldsInDoesNotMatchNode",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"})})}),
                   labelled({}, "node2"), Ok, Unresolvable, kPodReason},
        FilterCase{"TwoTermsMatchFieldsFailsButMatchExpressionsMatches",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"}),
                                                            req("metadata.name", In, {"node2"})}),
                                               matchExpressions({req("foo", In, {"bar"})})}),
                   labelled({{"foo", "bar"}}, "node2"), Ok, Ok, ""},
        FilterCase{"OneTermMatchFieldsFailsMatchExpressionsMatches",
                   PodBuilder().requiredTerms({[] {
                     NodeSelectorTerm t = matchFields({req("metadata.name", In, {"node1"})});
                     t.matchExpressions = {req("foo", In, {"bar"})};
                     return t;
                   }()}),
                   labelled({{"foo", "bar"}}, "node2"), Ok, Unresolvable, kPodReason},
        FilterCase{"OneTermBothMatchFieldsAndMatchExpressionsMatch",
                   PodBuilder().requiredTerms({[] {
                     NodeSelectorTerm t = matchFields({req("metadata.name", In, {"node1"})});
                     t.matchExpressions = {req("foo", In, {"bar"})};
                     return t;
                   }()}),
                   labelled({{"foo", "bar"}}, "node1"), Ok, Ok, ""},
        FilterCase{"TwoTermsNeitherMatches",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"})}),
                                               matchExpressions({req("foo", In, {"not-match-to-bar"})})}),
                   labelled({{"foo", "bar"}}, "node2"), Ok, Unresolvable, kPodReason},
        FilterCase{"TwoTermsOfNodeNameAffinity",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"})}),
                                               matchFields({req("metadata.name", In, {"node2"})})}),
                   labelled({}, "node2"), Ok, Ok, ""},
        FilterCase{"TwoConflictingMatchFieldRequirements",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1"}),
                                                            req("metadata.name", In, {"node2"})})}),
                   labelled({{"foo", "bar"}}, "node2"), Unresolvable, Unresolvable, kConflictReason},
        FilterCase{"MatchesAddedAffinityAndPodAffinity",
                   PodBuilder().requiredTerms({matchExpressions({req("zone", In, {"foo"})})}),
                   labelled({{"zone", "foo"}}, "node2"), Ok, Ok, "", kAddedNode2},
        FilterCase{"MatchesAddedAffinityButNotPodAffinity",
                   PodBuilder().requiredTerms({matchExpressions({req("zone", In, {"bar"})})}),
                   labelled({{"zone", "foo"}}, "node2"), Ok, Unresolvable, kPodReason, kAddedNode2},
        FilterCase{"DoesNotMatchAddedAffinity", PodBuilder(), labelled({{"zone", "foo"}}, "node2"), Ok, Unresolvable,
                   kEnforcedReason,
                   {{"addedAffinity",
                     {{"requiredDuringSchedulingIgnoredDuringExecution",
                       {{"nodeSelectorTerms",
                         {{{"matchExpressions", {{{"key", "zone"}, {"operator", "In"}, {"values", {"bar"}}}}}}}}}}}}}},
        FilterCase{"AddedAffinityCheckedBeforePodSelector", PodBuilder().nodeSelector({{"a", "b"}}),
                   labelled({}, "node1"), Ok, Unresolvable, kEnforcedReason, kAddedNode2}),
    [](const auto& info) { return info.param.name; });

// The label operators one by one, as labels.Requirement.Matches defines them.
INSTANTIATE_TEST_SUITE_P(
    Operators, NodeAffinityFilter,
    testing::Values(
        FilterCase{"InWithoutLabel", PodBuilder().requiredTerms({matchExpressions({req("k", In, {"v"})})}),
                   labelled({}), Ok, Unresolvable, kPodReason},
        FilterCase{"NotInWithoutLabelMatches", PodBuilder().requiredTerms({matchExpressions({req("k", NotIn, {"v"})})}),
                   labelled({}), Ok, Ok, ""},
        FilterCase{"NotInWithListedValue", PodBuilder().requiredTerms({matchExpressions({req("k", NotIn, {"v"})})}),
                   labelled({{"k", "v"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"DoesNotExistWithoutLabel",
                   PodBuilder().requiredTerms({matchExpressions({req("k", DoesNotExist)})}), labelled({}), Ok, Ok, ""},
        FilterCase{"DoesNotExistWithLabel", PodBuilder().requiredTerms({matchExpressions({req("k", DoesNotExist)})}),
                   labelled({{"k", ""}}), Ok, Unresolvable, kPodReason},
        FilterCase{"ExistsWithEmptyValue", PodBuilder().requiredTerms({matchExpressions({req("k", Exists)})}),
                   labelled({{"k", ""}}), Ok, Ok, ""},
        FilterCase{"GtEqualIsNotGreater", PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"5"})})}),
                   labelled({{"k", "5"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"LtNegative", PodBuilder().requiredTerms({matchExpressions({req("k", Lt, {"0"})})}),
                   labelled({{"k", "-3"}}), Ok, Ok, ""},
        // "+10" parses as an integer but is not a valid label value, so the term is invalid.
        FilterCase{"LtWithPlusSignIsInvalid", PodBuilder().requiredTerms({matchExpressions({req("k", Lt, {"+10"})})}),
                   labelled({{"k", "9"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"GtNodeValueWithPlusSign", PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"8"})})}),
                   labelled({{"k", "+9"}}), Ok, Ok, ""},
        FilterCase{"GtWithoutLabel", PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"1"})})}),
                   labelled({}), Ok, Unresolvable, kPodReason},
        FilterCase{"GtNodeValueNotInteger", PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"1"})})}),
                   labelled({{"k", "2x"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"GtInvalidBoundMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"one"})})}), labelled({{"k", "2"}}), Ok,
                   Unresolvable, kPodReason},
        FilterCase{"GtInvalidBoundOtherTermStillMatches",
                   PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"one"})}),
                                               matchExpressions({req("k", Exists)})}),
                   labelled({{"k", "2"}}), Ok, Ok, ""},
        FilterCase{"GtWithTwoValuesMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("k", Gt, {"1", "2"})})}), labelled({{"k", "9"}}),
                   Ok, Unresolvable, kPodReason},
        FilterCase{"GtOverflowBoundMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("k", Lt, {"9223372036854775808"})})}),
                   labelled({{"k", "1"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"InWithNoValuesMatchesNothing", PodBuilder().requiredTerms({matchExpressions({req("k", In, {})})}),
                   labelled({{"k", "v"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"ExistsWithValuesMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("k", Exists, {"v"})})}), labelled({{"k", "v"}}),
                   Ok, Unresolvable, kPodReason},
        FilterCase{"InvalidKeyMatchesNothing",
                   PodBuilder().requiredTerms({matchExpressions({req("invalid key", Exists)})}),
                   labelled({{"invalid key", "v"}}), Ok, Unresolvable, kPodReason},
        FilterCase{"PrefixedKey",
                   PodBuilder().requiredTerms({matchExpressions({req("topology.kubernetes.io/zone", In, {"a"})})}),
                   labelled({{"topology.kubernetes.io/zone", "a"}}), Ok, Ok, ""},
        FilterCase{"MatchFieldsNotIn",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", NotIn, {"node1"})})}),
                   labelled({}, "node1"), Ok, Unresolvable, kPodReason},
        FilterCase{"MatchFieldsWithTwoValuesMatchesNothing",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", In, {"node1", "node2"})})}),
                   labelled({}, "node1"), Ok, Unresolvable, kPodReason},
        FilterCase{"MatchFieldsExistsUnsupported",
                   PodBuilder().requiredTerms({matchFields({req("metadata.name", Exists)})}), labelled({}, "node1"), Ok,
                   Unresolvable, kPodReason},
        FilterCase{"MatchFieldsOtherFieldIsEmpty",
                   PodBuilder().requiredTerms({matchFields({req("metadata.uid", NotIn, {"x"})})}),
                   labelled({}, "node1"), Ok, Ok, ""},
        FilterCase{"NoTermsMatchesNothing", PodBuilder().requiredTerms({}), labelled({}), Ok, Unresolvable,
                   kPodReason}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  Pod pod;
  std::vector<Node> nodes;
  std::vector<int64_t> want;
  nlohmann::json args = nullptr;
  Code preScore = Code::Success;
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class NodeAffinityScore : public testing::TestWithParam<ScoreCase> {};

TEST_P(NodeAffinityScore, NormalisedScores) {
  const ScoreCase& c = GetParam();
  auto p = plugin(c.args);
  ASSERT_NE(p, nullptr);
  std::vector<NodeInfo> infos;
  for (const Node& n : c.nodes) infos.push_back(test::nodeInfo(n));
  test::ScoreOutcome got = test::runScore(*p, c.pod, test::pointers(infos));
  EXPECT_EQ(got.preScore.code(), c.preScore);
  EXPECT_EQ(got.scores, c.want);
}

PodBuilder affinity1() { return PodBuilder().preferredTerm(2, matchExpressions({req("foo", In, {"bar"})})); }
PodBuilder affinity2() {
  return PodBuilder()
      .preferredTerm(2, matchExpressions({req("foo", In, {"bar"})}))
      .preferredTerm(4, matchExpressions({req("key", In, {"value"})}))
      .preferredTerm(5, matchExpressions({req("foo", In, {"bar"}), req("key", In, {"value"}), req("az", In, {"az1"})}));
}
Node node(std::string name, std::initializer_list<std::pair<std::string, std::string>> labels) {
  return NodeBuilder(std::move(name)).labels(labels);
}
const auto label1 = {std::pair<std::string, std::string>{"foo", "bar"}};

INSTANTIATE_TEST_SUITE_P(
    Upstream, NodeAffinityScore,
    testing::Values(
        ScoreCase{"AllNodesSamePriorityWithoutAffinity",
                  PodBuilder(),
                  {node("node1", {{"foo", "bar"}}), node("node2", {{"key", "value"}}), node("node3", {{"az", "az1"}})},
                  {0, 0, 0},
                  nullptr,
                  Code::Skip},
        ScoreCase{"NoNodeMatchesPreferredTerms",
                  affinity1(),
                  {node("node1", {{"abc", "az11"}, {"def", "az22"}}), node("node2", {{"key", "value"}}),
                   node("node3", {{"az", "az1"}})},
                  {0, 0, 0}},
        ScoreCase{"OnlyNode1Matches",
                  affinity1(),
                  {node("node1", {{"foo", "bar"}}), node("node2", {{"key", "value"}}), node("node3", {{"az", "az1"}})},
                  {100, 0, 0}},
        ScoreCase{"AllMatchWithDifferentPriorities",
                  affinity2(),
                  {node("node1", {{"foo", "bar"}}), node("node5", {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}}),
                   node("node2", {{"key", "value"}})},
                  {18, 100, 36}},
        ScoreCase{"AddedAffinity",
                  PodBuilder(),
                  {node("node1", {{"foo", "bar"}}), node("node2", {{"key", "value"}})},
                  {100, 0},
                  {{"addedAffinity",
                    {{"preferredDuringSchedulingIgnoredDuringExecution",
                      {{{"weight", 2},
                        {"preference",
                         {{"matchExpressions", {{{"key", "foo"}, {"operator", "In"}, {"values", {"bar"}}}}}}}}}}}}}},
        ScoreCase{"AddedAffinityAndPodAffinity",
                  affinity1(),
                  {node("node1", {{"foo", "bar"}}), node("node2", {{"key", "value"}}),
                   node("node3", {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}})},
                  {40, 60, 100},
                  {{"addedAffinity",
                    {{"preferredDuringSchedulingIgnoredDuringExecution",
                      {{{"weight", 3},
                        {"preference",
                         {{"matchExpressions", {{{"key", "key"}, {"operator", "In"}, {"values", {"value"}}}}}}}}}}}}}},
        ScoreCase{"ZeroWeightTermIgnored",
                  PodBuilder().preferredTerm(0, matchExpressions({req("foo", In, {"bar"})})),
                  {node("node1", {{"foo", "bar"}}), node("node2", {})},
                  {0, 0}},
        ScoreCase{"PreferredMatchFieldsOnName",
                  PodBuilder().preferredTerm(10, matchFields({req("metadata.name", In, {"node2"})})),
                  {node("node1", {}), node("node2", {})},
                  {0, 100}}),
    [](const auto& info) { return info.param.name; });

TEST(NodeAffinityScore, BrokenPreferredTermFailsPreScoreWithError) {
  auto p = plugin();
  Pod pod = PodBuilder().preferredTerm(2, matchExpressions({req("invalid key", In, {"bar"})}));
  std::vector<NodeInfo> infos{test::nodeInfo(node("node1", {{"foo", "bar"}}))};
  test::ScoreOutcome got = test::runScore(*p, pod, test::pointers(infos));
  EXPECT_EQ(got.preScore.code(), Code::Error);
  ASSERT_EQ(got.preScore.reasons().size(), 1u);
  EXPECT_EQ(got.preScore.reasons()[0],
            "[0].matchExpressions[0].key: Invalid value: \"invalid key\": name part must consist of alphanumeric "
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
            "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
}

TEST(NodeAffinityScore, ScoresWithoutPreScore) {
  auto p = plugin();
  const auto& scorer = dynamic_cast<const ScorePlugin&>(*p);
  CycleState state;
  Pod pod = affinity2();
  EXPECT_EQ(scorer.score(state, pod, test::nodeInfo(node("n", {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}}))),
            11);
}

struct ArgsCase {
  std::string name;
  nlohmann::json args;
  std::string error;  // empty: valid
};

void PrintTo(const ArgsCase& c, std::ostream* os) { *os << c.name; }

class NodeAffinityArgs : public testing::TestWithParam<ArgsCase> {};

TEST_P(NodeAffinityArgs, Validation) {
  const ArgsCase& c = GetParam();
  auto p = newNodeAffinity(c.args);
  if (c.error.empty()) {
    EXPECT_TRUE(p.ok()) << p.error().message;
  } else {
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, c.error);
  }
}

nlohmann::json requiredExpr(nlohmann::json expr) {
  return {{"addedAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", {{{"matchExpressions", {expr}}}}}}}}}};
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NodeAffinityArgs,
    testing::Values(
        ArgsCase{"Null", nullptr, ""}, ArgsCase{"Empty", nlohmann::json::object(), ""},
        ArgsCase{"TypeMetaIgnored",
                 {{"apiVersion", "kubescheduler.config.k8s.io/v1"}, {"kind", "NodeAffinityArgs"}},
                 ""},
        ArgsCase{"ValidRequired", requiredExpr({{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}}), ""},
        ArgsCase{"UnsupportedOperator", requiredExpr({{"key", "zone"}, {"operator", "Foo"}}),
                 "NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].operator: unsupported \"Foo\""},
        ArgsCase{"GtNotInteger", requiredExpr({{"key", "k"}, {"operator", "Gt"}, {"values", {"x"}}}),
                 "NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be "
                 "an integer"},
        ArgsCase{"InWithoutValues", requiredExpr({{"key", "k"}, {"operator", "In"}}),
                 "NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be "
                 "empty"},
        ArgsCase{"PreferredInvalidKey",
                 {{"addedAffinity",
                   {{"preferredDuringSchedulingIgnoredDuringExecution",
                     {{{"weight", 1},
                       {"preference", {{"matchExpressions", {{{"key", "a/b/c"}, {"operator", "Exists"}}}}}}}}}}}},
                 "NodeAffinityArgs.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0]"
                 ".key: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' "
                 "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                 "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
                 "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
        ArgsCase{"UnknownField", {{"addedAfinity", nlohmann::json::object()}},
                 "NodeAffinityArgs.addedAfinity: unknown field"},
        ArgsCase{"UnknownNestedField", {{"addedAffinity", {{"required", nlohmann::json::object()}}}},
                 "NodeAffinityArgs.addedAffinity.required: unknown field"},
        ArgsCase{"WrongType", {{"addedAffinity", "zone"}}, "NodeAffinityArgs.addedAffinity: must be an object"},
        ArgsCase{"MatchFieldsUnsupportedOperator",
                 {{"addedAffinity",
                   {{"requiredDuringSchedulingIgnoredDuringExecution",
                     {{"nodeSelectorTerms",
                       {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "Exists"}}}}}}}}}}}},
                 "NodeAffinityArgs.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                 "matchFields[0].operator: Unsupported value: \"Exists\": supported values: \"In\", \"NotIn\""}),
    [](const auto& info) { return info.param.name; });

TEST(NodeAffinity, SkipsPreFilterAndPreScoreForPlainPod) {
  auto p = plugin();
  CycleState state;
  EXPECT_TRUE(dynamic_cast<const PreFilterPlugin&>(*p).preFilter(state, PodBuilder(), ClusterView()).isSkip());
  EXPECT_TRUE(dynamic_cast<const PreScorePlugin&>(*p).preScore(state, PodBuilder(), {}, ClusterView()).isSkip());
  EXPECT_EQ(p->name(), names::kNodeAffinity);
}

}  // namespace
}  // namespace placer
