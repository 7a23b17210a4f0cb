#include "scoring/profile.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/support/fake_plugins.h"

namespace placer {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::vector<std::string> filterNames(const Profile& p) {
  std::vector<std::string> out;
  for (const FilterPlugin* f : p.filterPlugins()) out.emplace_back(f->name());
  return out;
}

std::vector<std::string> preFilterNames(const Profile& p) {
  std::vector<std::string> out;
  for (const PreFilterPlugin* f : p.preFilterPlugins()) out.emplace_back(f->name());
  return out;
}

// "Name:weight" per score plugin, in order.
std::vector<std::string> scoreNames(const Profile& p) {
  std::vector<std::string> out;
  for (const WeightedScorePlugin& s : p.scorePlugins())
    out.push_back(std::string(s.plugin->name()) + ":" + std::to_string(s.weight));
  return out;
}

const std::vector<std::string> kDefaultFilters = {"NodeUnschedulable", "NodeName",         "TaintToleration",
                                                  "NodeAffinity",      "NodePorts",        "NodeResourcesFit",
                                                  "PodTopologySpread", "InterPodAffinity"};
const std::vector<std::string> kDefaultScores = {"TaintToleration:3",   "NodeAffinity:2",
                                                 "NodeResourcesFit:1",  "PodTopologySpread:2",
                                                 "InterPodAffinity:2", "NodeResourcesBalancedAllocation:1",
                                                 "ImageLocality:1"};

struct Case {
  std::string name;
  json profile;
  std::vector<std::string> filters;
  std::vector<std::string> scores;
  std::vector<std::string> warningsContaining = {};
};

std::vector<Case> cases() {
  return {
      {"no configuration is upstream's default profile with upstream weights", nullptr, kDefaultFilters,
       kDefaultScores},
      {"an empty profile is the default profile", json::object(), kDefaultFilters, kDefaultScores},
      {"a plugin disabled in multiPoint leaves every extension point",
       {{"plugins", {{"multiPoint", {{"disabled", {{{"name", "TaintToleration"}}}}}}}}},
       {"NodeUnschedulable", "NodeName", "NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread",
        "InterPodAffinity"},
       {"NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:1"}},
      {"a plugin disabled for score keeps filtering",
       {{"plugins", {{"score", {{"disabled", {{{"name", "TaintToleration"}}}}}}}}},
       kDefaultFilters,
       {"NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:1"}},
      {"score disabled \"*\" drops every score plugin and keeps the filters",
       {{"plugins", {{"score", {{"disabled", {{{"name", "*"}}}}}}}}},
       kDefaultFilters,
       {}},
      {"multiPoint disabled \"*\" keeps only what is enabled explicitly",
       {{"plugins",
         {{"multiPoint", {{"disabled", {{{"name", "*"}}}}}},
          {"filter", {{"enabled", {{{"name", "NodeName"}}}}}},
          {"score", {{"enabled", {{{"name", "ImageLocality"}, {"weight", 7}}}}}}}}},
       {"NodeName"},
       {"ImageLocality:7"}},
      {"re-enabling a default for score overrides its weight and moves it first",
       {{"plugins", {{"score", {{"enabled", {{{"name", "NodeResourcesFit"}, {"weight", 5}}}}}}}}},
       kDefaultFilters,
       {"NodeResourcesFit:5", "TaintToleration:3", "NodeAffinity:2", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:1"}},
      {"a weight re-given in multiPoint replaces the default in place",
       {{"plugins", {{"multiPoint", {{"enabled", {{{"name", "ImageLocality"}, {"weight", 10}}}}}}}}},
       kDefaultFilters,
       {"TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:10"}},
      {"weight 0 means the default, 1",
       {{"plugins", {{"multiPoint", {{"enabled", {{{"name", "TaintToleration"}, {"weight", 0}}}}}}}}},
       kDefaultFilters,
       {"TaintToleration:1", "NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:1"}},
      {"LabelPriority enabled through multiPoint with its args",
       {{"plugins", {{"multiPoint", {{"enabled", {{{"name", "LabelPriority"}, {"weight", 4}}}}}}}},
        {"pluginConfig",
         {{{"name", "LabelPriority"}, {"args", {{"label", "example.com/node-priority"}, {"filterNodesWithoutLabel", true}}}}}}},
       {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
        "PodTopologySpread", "InterPodAffinity", "LabelPriority"},
       {"TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1", "PodTopologySpread:2", "InterPodAffinity:2",
        "NodeResourcesBalancedAllocation:1", "ImageLocality:1", "LabelPriority:4"}},
      {"upstream plugins placer lacks are accepted with a warning",
       {{"plugins",
         {{"multiPoint", {{"enabled", {{{"name", "VolumeBinding"}}}}}},
          {"queueSort", {{"enabled", {{{"name", "PrioritySort"}}}}}},
          {"bind", {{"enabled", {{{"name", "DefaultBinder"}}}}}}}},
        {"pluginConfig", {{{"name", "VolumeBinding"}, {"args", {{"bindTimeoutSeconds", 600}}}}}}},
       kDefaultFilters,
       kDefaultScores,
       {"VolumeBinding is not implemented", "queueSort", "bind"}},
      {"a pasted upstream profile with the volume plugins disabled",
       {{"schedulerName", "default-scheduler"},
        {"plugins",
         {{"multiPoint",
           {{"disabled", {{{"name", "VolumeBinding"}}, {{"name", "VolumeZone"}}, {{"name", "NodeVolumeLimits"}}}}}}}}},
       kDefaultFilters,
       kDefaultScores},
  };
}

class ProfileCases : public ::testing::TestWithParam<Case> {};

TEST_P(ProfileCases, BuildsThePluginLists) {
  const Case& c = GetParam();
  auto profile = Profile::fromJson(c.profile);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(filterNames(**profile), c.filters);
  EXPECT_EQ(scoreNames(**profile), c.scores);
  std::string warnings;
  for (const std::string& w : (*profile)->warnings()) warnings += w + "\n";
  for (const std::string& expected : c.warningsContaining) EXPECT_THAT(warnings, HasSubstr(expected));
  if (c.warningsContaining.empty()) {
    EXPECT_EQ(warnings, "");
  }
}

INSTANTIATE_TEST_SUITE_P(, ProfileCases, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

struct ErrorCase {
  std::string name;
  json profile;
  std::string error;  // exact message
};

std::vector<ErrorCase> errorCases() {
  return {
      {"an unknown plugin names where it was written",
       {{"plugins",
         {{"score", {{"enabled", {{{"name", "ImageLocality"}}, {{"name", "NodeAffinity"}}, {{"name", "Foo"}}}}}}}}},
       "profiles[0].plugins.score.enabled[2].name: unknown plugin \"Foo\""},
      {"an unknown plugin in disabled is an error too",
       {{"plugins", {{"multiPoint", {{"disabled", {{{"name", "Bar"}}}}}}}}},
       "profiles[0].plugins.multiPoint.disabled[0].name: unknown plugin \"Bar\""},
      {"a weight above 100",
       {{"plugins", {{"score", {{"enabled", {{{"name", "ImageLocality"}, {"weight", 101}}}}}}}}},
       "profiles[0].plugins.score.enabled[0].weight: Invalid value: 101: must be in the range 1..100 (0 means the "
       "default, 1)"},
      {"a negative weight",
       {{"plugins", {{"multiPoint", {{"enabled", {{{"name", "ImageLocality"}, {"weight", -1}}}}}}}}},
       "profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: -1: must be in the range 1..100 (0 means the "
       "default, 1)"},
      {"a weight that is not a number",
       {{"plugins", {{"score", {{"enabled", {{{"name", "ImageLocality"}, {"weight", "3"}}}}}}}}},
       "profiles[0].plugins.score.enabled[0].weight: must be an integer"},
      {"a plugin enabled at a point it does not implement",
       {{"plugins", {{"filter", {{"enabled", {{{"name", "ImageLocality"}}}}}}}}},
       "profiles[0].plugins.filter.enabled[0]: plugin \"ImageLocality\" does not extend FilterPlugin"},
      {"a plugin enabled twice at one point",
       {{"plugins", {{"filter", {{"enabled", {{{"name", "NodeName"}}, {{"name", "NodeName"}}}}}}}}},
       "profiles[0].plugins.filter.enabled[1]: plugin \"NodeName\" already registered as \"FilterPlugin\""},
      {"a plugin enabled twice in multiPoint",
       {{"plugins",
         {{"multiPoint",
           {{"disabled", {{{"name", "*"}}}}, {"enabled", {{{"name", "NodeName"}}, {{"name", "NodeName"}}}}}}}}},
       "profiles[0].plugins.multiPoint.enabled[1]: plugin \"NodeName\" already registered as \"PreFilterPlugin\""},
      {"invalid plugin args name the pluginConfig entry",
       {{"pluginConfig",
         {{{"name", "NodeAffinity"}},
          {{"name", "LabelPriority"}, {"args", {{"filterNodesWithoutLabel", true}}}}}}},
       ""},
      {"a repeated pluginConfig entry",
       {{"pluginConfig", {{{"name", "NodeAffinity"}}, {{"name", "NodeAffinity"}}}}},
       "profiles[0].pluginConfig[1]: Duplicate value: \"NodeAffinity\""},
      {"pluginConfig for an unknown plugin",
       {{"pluginConfig", {{{"name", "Nope"}, {"args", json::object()}}}}},
       "profiles[0].pluginConfig[0].name: unknown plugin \"Nope\""},
      {"an unknown field in the profile", {{"plugin", json::object()}}, "profiles[0].plugin: unknown field"},
      {"an unknown extension point", {{"plugins", {{"scoring", json::object()}}}},
       "profiles[0].plugins.scoring: unknown field"},
      {"enabled that is not a list", {{"plugins", {{"score", {{"enabled", "ImageLocality"}}}}}},
       "profiles[0].plugins.score.enabled: must be an array"},
      {"a plugin entry without a name", {{"plugins", {{"score", {{"enabled", {json::object()}}}}}}},
       "profiles[0].plugins.score.enabled[0].name: Required value"},
      {"a profile that is not an object", json::array(), "profiles[0]: must be an object"},
  };
}

class ProfileErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ProfileErrors, AreRefusedWithWhereAndWhat) {
  const ErrorCase& c = GetParam();
  auto profile = Profile::fromJson(c.profile);
  ASSERT_FALSE(profile.ok());
  if (c.error.empty()) {
    EXPECT_THAT(profile.error().message, HasSubstr("profiles[0].pluginConfig[1].args: LabelPriorityArgs.label"));
  } else {
    EXPECT_EQ(profile.error().message, c.error);
  }
}

INSTANTIATE_TEST_SUITE_P(, ProfileErrors, ::testing::ValuesIn(errorCases()), [](const auto& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

TEST(Profile, SchedulerNameDefaultsToDefaultScheduler) {
  EXPECT_EQ(Profile::defaults()->schedulerName(), "default-scheduler");
  auto named = Profile::fromJson({{"schedulerName", "placer"}});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ((*named)->schedulerName(), "placer");
}

TEST(Profile, PluginsImplementingSeveralPointsAreOneInstance) {
  auto profile = Profile::fromJson({{"plugins", {{"multiPoint", {{"enabled", {{{"name", "AllA"}}}}}}}}},
                                   test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const Profile& p = **profile;
  ASSERT_EQ(p.filterPlugins().size(), 1u);
  ASSERT_EQ(p.scorePlugins().size(), 1u);
  EXPECT_EQ(dynamic_cast<const Plugin*>(p.filterPlugins()[0]), dynamic_cast<const Plugin*>(p.scorePlugins()[0].plugin));
  EXPECT_EQ(preFilterNames(p), std::vector<std::string>{"AllA"});
}

TEST(Profile, ExplicitPointOrderFollowsUpstream) {
  // Overridden multiPoint plugins first (in the point's order), then the rest of
  // multiPoint, then the point's own additions.
  auto profile = Profile::fromJson(
      {{"plugins",
        {{"multiPoint", {{"enabled", {{{"name", "FilterA"}}, {{"name", "FilterB"}}, {{"name", "AllA"}}}}}},
         {"filter", {{"enabled", {{{"name", "PreFilterFilter"}}, {{"name", "AllA"}}}}}}}}},
      test::fakeRegistry());
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(filterNames(**profile), (std::vector<std::string>{"AllA", "FilterA", "FilterB", "PreFilterFilter"}));
}

}  // namespace
}  // namespace placer
