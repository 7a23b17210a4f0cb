#include "test/fakeapi/selectors.h"

#include <gtest/gtest.h>

namespace placer::fakeapi {
namespace {

TEST(LabelSelector, MatchesLikeApimachinery) {
  const LabelPairs labels = {{"app", "web"}, {"tier", "front"}};
  struct Case {
    std::string selector;
    bool want;
  };
  const std::vector<Case> cases = {
      {"", true},
      {"app=web", true},
      {"app==web", true},
      {"app=db", false},
      {"app!=db", true},
      {"missing!=x", true},
      {"app in (db, web)", true},
      {"app notin (web)", false},
      {"missing notin (web)", true},
      {"tier", true},
      {"!tier", false},
      {"!missing", true},
      {"app=web,tier=back", false},
      {"app in (web),tier", true},
  };
  for (const auto& c : cases) {
    auto q = parseLabelSelector(c.selector);
    ASSERT_TRUE(q.ok()) << c.selector << ": " << q.error().message;
    EXPECT_EQ(q->matches(labels), c.want) << c.selector;
  }
  EXPECT_FALSE(parseLabelSelector("app in web").ok());
}

TEST(LabelSelector, FromMetav1LabelSelector) {
  auto q = labelSelectorFromJson(
      {{"matchLabels", {{"placer.io/enabled", "true"}}},
       {"matchExpressions",
        nlohmann::json::array({{{"key", "placer.io/skip"}, {"operator", "NotIn"}, {"values", {"true"}}}})}});
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->matches({{"placer.io/enabled", "true"}}));
  EXPECT_FALSE(q->matches({{"placer.io/enabled", "true"}, {"placer.io/skip", "true"}}));
  EXPECT_FALSE(q->matches({}));
  EXPECT_TRUE(labelSelectorFromJson(nullptr)->matches({}));
  EXPECT_TRUE(labelSelectorFromJson(nlohmann::json::object())->matches({}));
  EXPECT_FALSE(labelSelectorFromJson({{"matchExpressions", {{{"key", "a"}, {"operator", "Near"}}}}}).ok());
}

TEST(FieldSelector, PodAndNodeFields) {
  FieldValues pod{"web-0", "default", "node-a", "Running", "default-scheduler", false};
  struct Case {
    std::string selector;
    bool want;
  };
  const std::vector<Case> cases = {
      {"spec.nodeName=node-a", true},
      {"spec.nodeName==node-b", false},
      {"spec.nodeName=", false},
      {"status.phase!=Succeeded,status.phase!=Failed", true},
      {"metadata.name=web-0,metadata.namespace=default", true},
  };
  for (const auto& c : cases) {
    auto q = parseFieldSelector(c.selector, true);
    ASSERT_TRUE(q.ok()) << c.selector;
    EXPECT_EQ(q->matches(pod), c.want) << c.selector;
  }
  auto bad = parseFieldSelector("spec.hostname=x", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "field label not supported: spec.hostname");
  EXPECT_FALSE(parseFieldSelector("status.phase=Running", false).ok());
  EXPECT_TRUE(parseFieldSelector("spec.unschedulable=true", false)->matches({"n", "", "", "", "", true}));
}

}  // namespace
}  // namespace placer::fakeapi
