// metav1.LabelSelector as labels.Selector: what matches, and upstream's
// messages for what does not compile.
#include "scoring/label_selector.h"

#include <gtest/gtest.h>

namespace placer {
namespace {

LabelSelector selector(Labels matchLabels, std::vector<SelectorRequirement> expressions = {}) {
  return LabelSelector{std::move(matchLabels), std::move(expressions)};
}

TEST(CompiledSelector, MatchesAsLabelsSelectorDoes) {
  const Labels web = {{"app", "web"}, {"tier", "front"}};
  struct Case {
    std::string name;
    std::optional<LabelSelector> selector;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"a nil selector matches nothing", std::nullopt, false},
      {"an empty selector matches everything", selector({}), true},
      {"matchLabels all equal", selector({{"app", "web"}}), true},
      {"matchLabels one differs", selector({{"app", "web"}, {"tier", "back"}}), false},
      {"In lists the value", selector({}, {{"app", SelectorOperator::In, {"db", "web"}, {}}}), true},
      {"NotIn holds for a missing key", selector({}, {{"env", SelectorOperator::NotIn, {"prod"}, {}}}), true},
      {"NotIn fails on a listed value", selector({}, {{"app", SelectorOperator::NotIn, {"web"}, {}}}), false},
      {"Exists", selector({}, {{"tier", SelectorOperator::Exists, {}, {}}}), true},
      {"DoesNotExist", selector({}, {{"tier", SelectorOperator::DoesNotExist, {}, {}}}), false},
  };
  for (const Case& c : cases) {
    auto compiled = CompiledSelector::compile(c.selector);
    ASSERT_TRUE(compiled.ok()) << c.name << ": " << compiled.error().message;
    EXPECT_EQ(compiled->matches(web), c.matches) << c.name;
  }
  EXPECT_TRUE(CompiledSelector::compile(selector({}))->empty());
  EXPECT_FALSE(CompiledSelector::compile(std::nullopt)->empty());
}

TEST(CompiledSelector, RefusesWhatUpstreamRefusesWithItsMessage) {
  struct Case {
    std::string name;
    LabelSelector selector;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"In without values", selector({}, {{"app", SelectorOperator::In, {}, {}}}),
       "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"},
      {"Exists with values", selector({}, {{"app", SelectorOperator::Exists, {"a"}, {}}}),
       "values: Invalid value: []string{\"a\"}: values set must be empty for exists and does not exist"},
      {"a value that is no label value (its path names the index and the key)",
       selector({}, {{"app", SelectorOperator::In, {"ok", "{{.bad}}"}, {}}}),
       "values[1][app]: Invalid value: \"{{.bad}}\": a valid label must be an empty string or consist of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
       "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
       "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"an operator of node selectors", selector({}, {{"app", SelectorOperator::In, {"1"}, "Gt"}}),
       "\"Gt\" is not a valid label selector operator"},
      {"a key that is no qualified name", selector({{"bad key", "v"}}),
       "key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and "
       "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
       "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
  };
  for (const Case& c : cases) {
    auto compiled = CompiledSelector::compile(c.selector);
    ASSERT_FALSE(compiled.ok()) << c.name;
    EXPECT_EQ(compiled.error().message, c.message) << c.name;
  }
}

}  // namespace
}  // namespace placer
