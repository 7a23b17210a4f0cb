#pragma once
// A scheduling profile, configured exactly like one profile of a
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
//   plugins.{multiPoint,preFilter,filter,preScore,score}.{enabled,disabled} ("*" allowed),
//   weights on score plugins (1..100, default 1 where not given upstream),
//   pluginConfig[] {name, args} with upstream argument schemas.
// With no configuration: kube-scheduler's default profile restricted to the
// plugins placer implements, with upstream weights.
//
// Immutable once built; share as std::shared_ptr<const Profile>.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/registry.h"
#include "scoring/result.h"

namespace placer {

struct WeightedScorePlugin {
  const ScorePlugin* plugin;
  int32_t weight;
};

class Profile {
 public:
  // `profile` is one element of KubeSchedulerConfiguration.profiles (or null for defaults).
  // Errors name the field under `path` ("profiles[0].plugins.score.enabled[2]: unknown plugin \"Foo\"").
  // Plugins kube-scheduler has but placer does not implement (PodTopologySpread,
  // VolumeBinding, PrioritySort, DefaultBinder, ...) are accepted and ignored, with a
  // warning; names neither knows are errors. Extension points placer does not run
  // (queueSort, bind, permit, ...) are accepted and ignored likewise.
  static Result<std::shared_ptr<const Profile>> fromJson(const nlohmann::json& profile,
                                                         const PluginRegistry& registry = builtinPlugins(),
                                                         std::string_view path = "profiles[0]");
  static std::shared_ptr<const Profile> defaults();

  const std::string& schedulerName() const { return schedulerName_; }
  const std::vector<const PreFilterPlugin*>& preFilterPlugins() const { return preFilter_; }
  const std::vector<const FilterPlugin*>& filterPlugins() const { return filter_; }
  const std::vector<const PreScorePlugin*>& preScorePlugins() const { return preScore_; }
  const std::vector<WeightedScorePlugin>& scorePlugins() const { return score_; }
  // What was accepted but ignored (unimplemented upstream plugins, extension points placer lacks).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::string schedulerName_ = "default-scheduler";
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<const PreFilterPlugin*> preFilter_;
  std::vector<const FilterPlugin*> filter_;
  std::vector<const PreScorePlugin*> preScore_;
  std::vector<WeightedScorePlugin> score_;
  std::vector<std::string> warnings_;

  friend class ProfileBuilder;
};

}  // namespace placer
