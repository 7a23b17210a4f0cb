#include "scoring/profile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"

namespace placer {

using nlohmann::json;

namespace {

// Plugins of kube-scheduler that placer does not implement: accepted in a
// profile (so an upstream configuration can be pasted as is) and ignored.
constexpr std::string_view kUpstreamOnly[] = {
    "SchedulingGates",   "PrioritySort",     "DefaultPreemption", "DefaultBinder",    "VolumeBinding",
    "VolumeRestrictions", "VolumeZone",      "NodeVolumeLimits",  "EBSLimits",        "GCEPDLimits",
    "AzureDiskLimits",   "CinderLimits",     "DynamicResources",
    "NodeDeclaredFeatures", "GangScheduling",
};

bool isUpstreamOnly(std::string_view name) {
  return std::find(std::begin(kUpstreamOnly), std::end(kUpstreamOnly), name) != std::end(kUpstreamOnly);
}

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // 0: not given
  std::string path;    // where the user wrote it; empty for defaults
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;
  bool present = false;
};

// Upstream's v1 default profile (pkg/scheduler/apis/config/v1/default_plugins.go), in order.
PluginSet defaultMultiPoint() {
  PluginSet set;
  auto add = [&](std::string_view name, int32_t weight = 0) { set.enabled.push_back({std::string(name), weight, ""}); };
  add("SchedulingGates");
  add("PrioritySort");
  add(names::kNodeUnschedulable);
  add(names::kNodeName);
  add(names::kTaintToleration, 3);
  add(names::kNodeAffinity, 2);
  add(names::kNodePorts);
  add(names::kNodeResourcesFit, 1);
  add("VolumeRestrictions");
  add("NodeVolumeLimits");
  add("VolumeBinding");
  add("VolumeZone");
  add(names::kPodTopologySpread, 2);
  add(names::kInterPodAffinity, 2);
  add("DefaultPreemption");
  add(names::kNodeResourcesBalancedAllocation, 1);
  add(names::kImageLocality, 1);
  add("DefaultBinder");
  return set;
}

// mergePluginSet: the custom set overrides defaults in place, "*" drops them all.
PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet merged;
  std::set<std::string, std::less<>> disabled;
  for (const PluginRef& p : custom.disabled) {
    merged.disabled.push_back(p);
    disabled.insert(p.name);
  }
  for (const PluginRef& p : defaults.disabled) {
    merged.disabled.push_back(p);
    disabled.insert(p.name);
  }
  // A default named again in the custom set is replaced in place (by the last
  // custom entry of that name); other custom entries follow, duplicates included
  // (the framework then refuses them).
  std::map<std::string, size_t, std::less<>> lastIndex;
  for (size_t i = 0; i < custom.enabled.size(); ++i) lastIndex[custom.enabled[i].name] = i;
  std::vector<bool> replaced(custom.enabled.size(), false);
  if (!disabled.contains("*")) {
    for (const PluginRef& d : defaults.enabled) {
      if (disabled.contains(d.name)) continue;
      if (auto it = lastIndex.find(d.name); it != lastIndex.end()) {
        merged.enabled.push_back(custom.enabled[it->second]);
        replaced[it->second] = true;
      } else {
        merged.enabled.push_back(d);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i)
    if (!replaced[i]) merged.enabled.push_back(custom.enabled[i]);
  return merged;
}

enum class Point { PreFilter, Filter, PreScore, Score };

constexpr std::string_view kRunPoints[] = {"preFilter", "filter", "preScore", "score"};
constexpr std::string_view kIgnoredPoints[] = {"preEnqueue", "queueSort", "postFilter", "reserve",
                                                "permit",     "preBind",   "bind",       "postBind"};

bool implements(const Plugin* plugin, Point point) {
  switch (point) {
    case Point::PreFilter: return dynamic_cast<const PreFilterPlugin*>(plugin) != nullptr;
    case Point::Filter: return dynamic_cast<const FilterPlugin*>(plugin) != nullptr;
    case Point::PreScore: return dynamic_cast<const PreScorePlugin*>(plugin) != nullptr;
    case Point::Score: return dynamic_cast<const ScorePlugin*>(plugin) != nullptr;
  }
  return false;
}

std::string_view interfaceName(Point point) {
  switch (point) {
    case Point::PreFilter: return "PreFilterPlugin";
    case Point::Filter: return "FilterPlugin";
    case Point::PreScore: return "PreScorePlugin";
    case Point::Score: return "ScorePlugin";
  }
  return "";
}

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

class ProfileBuilder {
 public:
  ProfileBuilder(const PluginRegistry& registry, std::string_view path) : registry_(registry), path_(path) {}

  Result<std::shared_ptr<const Profile>> build(const json& doc) {
    auto profile = std::make_shared<Profile>();
    profile_ = profile.get();
    if (!doc.is_null() && !doc.is_object()) return fieldError(path_, "must be an object");

    std::map<std::string, PluginSet, std::less<>> sets;
    const json* plugins = nullptr;
    const json* pluginConfig = nullptr;
    if (doc.is_object()) {
      for (const auto& [key, value] : doc.items()) {
        std::string where = path_ + "." + key;
        if (key == "schedulerName") {
          if (!value.is_string()) return fieldError(where, "must be a string");
          if (!value.get_ref<const std::string&>().empty()) profile->schedulerName_ = value.get<std::string>();
        } else if (key == "percentageOfNodesToScore") {
          if (!value.is_null() && !value.is_number_integer()) return fieldError(where, "must be an integer");
          if (value.is_number_integer() && (value.get<int64_t>() < 0 || value.get<int64_t>() > 100))
            return fieldError(where, "Invalid value: " + value.dump() + ": not in valid range [0-100]");
          if (!value.is_null())
            profile->warnings_.push_back(where + ": placer scores every node; ignored");
        } else if (key == "plugins") {
          if (!value.is_null() && !value.is_object()) return fieldError(where, "must be an object");
          plugins = &value;
        } else if (key == "pluginConfig") {
          if (!value.is_null() && !value.is_array()) return fieldError(where, "must be an array");
          pluginConfig = &value;
        } else {
          return fieldError(where, "unknown field");
        }
      }
    }

    if (plugins != nullptr && plugins->is_object()) {
      for (const auto& [key, value] : plugins->items()) {
        std::string where = path_ + ".plugins." + key;
        bool run = key == "multiPoint" ||
                   std::find(std::begin(kRunPoints), std::end(kRunPoints), key) != std::end(kRunPoints);
        bool ignored = std::find(std::begin(kIgnoredPoints), std::end(kIgnoredPoints), key) != std::end(kIgnoredPoints);
        if (!run && !ignored) return fieldError(where, "unknown field");
        auto set = parseSet(value, where);
        if (!set) return set.error();
        if (ignored) {
          if (!set->enabled.empty())
            profile->warnings_.push_back(where + ": placer has no " + key + " extension point; ignored");
          continue;
        }
        sets[key] = std::move(*set);
      }
    }

    // Instantiate each plugin once, with its pluginConfig args.
    std::map<std::string, const json*, std::less<>> args;
    if (pluginConfig != nullptr && pluginConfig->is_array()) {
      for (size_t i = 0; i < pluginConfig->size(); ++i) {
        const json& entry = (*pluginConfig)[i];
        std::string where = path_ + ".pluginConfig[" + std::to_string(i) + "]";
        if (!entry.is_object()) return fieldError(where, "must be an object");
        for (const auto& [key, value] : entry.items())
          if (key != "name" && key != "args") return fieldError(where + "." + key, "unknown field");
        auto name = entry.find("name");
        if (name == entry.end() || !name->is_string()) return fieldError(where + ".name", "must be a string");
        const std::string& n = name->get_ref<const std::string&>();
        if (args.contains(n)) return fieldError(where, "Duplicate value: " + quote(n));
        if (auto known = checkKnown(n, where + ".name"); !known) return known.error();
        static const json kNull;
        auto a = entry.find("args");
        args[n] = a == entry.end() ? &kNull : &*a;
        argsPath_[n] = where + ".args";
        if (!registry_.contains(n)) {
          profile->warnings_.push_back(where + ": " + n + " is not implemented by placer; its args are ignored");
        } else {
          // Validated even when the plugin is not enabled, so a typo fails at load.
          auto plugin = instantiate(n, args);
          if (!plugin) return plugin.error();
        }
      }
    }

    PluginSet multiPoint = mergePluginSet(defaultMultiPoint(), sets["multiPoint"]);
    std::map<Point, PluginSet> points;
    const Point order[] = {Point::PreFilter, Point::Filter, Point::PreScore, Point::Score};
    for (Point point : order) points[point] = mergePluginSet(PluginSet{}, sets[std::string(kRunPoints[int(point)])]);

    // Warn once per unimplemented plugin the user named.
    std::set<std::string, std::less<>> warned;
    auto noteIgnored = [&](const PluginRef& p) {
      if (p.path.empty() || registry_.contains(p.name) || warned.contains(p.name)) return;
      warned.insert(p.name);
      profile->warnings_.push_back(p.path + ": " + p.name + " is not implemented by placer; ignored");
    };
    for (const PluginRef& p : multiPoint.enabled) noteIgnored(p);
    for (auto& [point, set] : points)
      for (const PluginRef& p : set.enabled) noteIgnored(p);

    for (Point point : order) {
      auto built = expand(point, points[point], multiPoint, args);
      if (!built) return built.error();
      for (const Plugin* plugin : *built) {
        switch (point) {
          case Point::PreFilter: profile->preFilter_.push_back(dynamic_cast<const PreFilterPlugin*>(plugin)); break;
          case Point::Filter: profile->filter_.push_back(dynamic_cast<const FilterPlugin*>(plugin)); break;
          case Point::PreScore: profile->preScore_.push_back(dynamic_cast<const PreScorePlugin*>(plugin)); break;
          case Point::Score:
            profile->score_.push_back({dynamic_cast<const ScorePlugin*>(plugin), weightOf(plugin->name(), points[Point::Score], multiPoint)});
            break;
        }
      }
    }
    for (auto& [name, plugin] : instances_) profile->owned_.push_back(std::move(plugin));
    return std::shared_ptr<const Profile>(std::move(profile));
  }

 private:
  Outcome checkKnown(std::string_view name, const std::string& where) const {
    if (registry_.contains(name) || isUpstreamOnly(name)) return {};
    return fieldError(where, "unknown plugin " + quote(name));
  }

  Result<PluginSet> parseSet(const json& value, const std::string& where) const {
    PluginSet set;
    set.present = true;
    if (value.is_null()) return set;
    if (!value.is_object()) return fieldError(where, "must be an object");
    for (const auto& [key, list] : value.items()) {
      std::string listPath = where + "." + key;
      if (key != "enabled" && key != "disabled") return fieldError(listPath, "unknown field");
      if (list.is_null()) continue;
      if (!list.is_array()) return fieldError(listPath, "must be an array");
      for (size_t i = 0; i < list.size(); ++i) {
        std::string itemPath = indexedField(listPath, i);
        const json& item = list[i];
        if (!item.is_object()) return fieldError(itemPath, "must be an object");
        PluginRef ref;
        ref.path = itemPath;
        for (const auto& [field, v] : item.items()) {
          if (field == "name") {
            if (!v.is_string()) return fieldError(itemPath + ".name", "must be a string");
            ref.name = v.get<std::string>();
          } else if (field == "weight") {
            if (v.is_null()) continue;
            if (!v.is_number_integer()) return fieldError(itemPath + ".weight", "must be an integer");
            int64_t w = v.get<int64_t>();
            if (w < 0 || w > 100)
              return fieldError(itemPath + ".weight", "Invalid value: " + std::to_string(w) + ": must be in the range 1..100 (0 means the default, 1)");
            ref.weight = static_cast<int32_t>(w);
          } else {
            return fieldError(itemPath + "." + field, "unknown field");
          }
        }
        if (ref.name.empty()) return fieldError(itemPath + ".name", "Required value");
        bool isDisabled = key == "disabled";
        if (!(isDisabled && ref.name == "*"))
          if (auto known = checkKnown(ref.name, itemPath + ".name"); !known) return known.error();
        (isDisabled ? set.disabled : set.enabled).push_back(std::move(ref));
      }
    }
    return set;
  }

  Result<const Plugin*> instantiate(const std::string& name, const std::map<std::string, const json*, std::less<>>& args) {
    if (auto it = instances_.find(name); it != instances_.end()) return static_cast<const Plugin*>(it->second.get());
    static const json kNull;
    auto a = args.find(name);
    const json& pluginArgs = a == args.end() ? kNull : *a->second;
    Result<std::unique_ptr<Plugin>> made = [&]() -> Result<std::unique_ptr<Plugin>> {
      try {
        return registry_.find(name)->second(pluginArgs);
      } catch (const std::exception& e) {
        return Error{std::string(e.what())};
      }
    }();
    if (!made) {
      auto p = argsPath_.find(name);
      std::string where = p == argsPath_.end() ? path_ + ".pluginConfig" : p->second;
      return fieldError(where, made.error().message);
    }
    if (!*made) return fieldError(path_, "plugin " + quote(name) + " factory returned nothing");
    const Plugin* plugin = made->get();
    instances_.emplace(name, std::move(*made));
    return plugin;
  }

  // updatePluginList + expandMultiPointPlugins for one extension point.
  Result<std::vector<const Plugin*>> expand(Point point, const PluginSet& set, const PluginSet& multiPoint,
                                           const std::map<std::string, const json*, std::less<>>& args) {
    std::vector<std::string> enabled;  // explicit for this point, in order
    for (const PluginRef& p : set.enabled) {
      if (!registry_.contains(p.name)) continue;
      auto plugin = instantiate(p.name, args);
      if (!plugin) return plugin.error();
      if (!implements(*plugin, point))
        return fieldError(p.path, "plugin " + quote(p.name) + " does not extend " + std::string(interfaceName(point)));
      if (std::find(enabled.begin(), enabled.end(), p.name) != enabled.end())
        return fieldError(p.path, "plugin " + quote(p.name) + " already registered as " + quote(interfaceName(point)));
      enabled.push_back(p.name);
    }
    std::set<std::string, std::less<>> disabled;
    for (const PluginRef& p : set.disabled) disabled.insert(p.name);

    std::vector<std::string> fromMultiPoint;
    std::set<std::string, std::less<>> overridden;
    if (!disabled.contains("*")) {
      for (const PluginRef& p : multiPoint.enabled) {
        if (!registry_.contains(p.name)) continue;
        auto plugin = instantiate(p.name, args);
        if (!plugin) return plugin.error();
        if (!implements(*plugin, point)) continue;
        if (disabled.contains(p.name)) continue;
        if (std::find(enabled.begin(), enabled.end(), p.name) != enabled.end()) {
          overridden.insert(p.name);
          continue;
        }
        if (std::find(fromMultiPoint.begin(), fromMultiPoint.end(), p.name) != fromMultiPoint.end())
          return fieldError(p.path.empty() ? path_ + ".plugins.multiPoint" : p.path,
                            "plugin " + quote(p.name) + " already registered as " + quote(interfaceName(point)));
        fromMultiPoint.push_back(p.name);
      }
    }
    // Order: overridden ones (as in the point's list), then multiPoint's, then the point's others.
    std::vector<const Plugin*> out;
    for (const std::string& n : enabled)
      if (overridden.contains(n)) out.push_back(instances_.at(n).get());
    for (const std::string& n : fromMultiPoint) out.push_back(instances_.at(n).get());
    for (const std::string& n : enabled)
      if (!overridden.contains(n)) out.push_back(instances_.at(n).get());
    return out;
  }

  // getScoreWeights: score.enabled first, then multiPoint; 0 or absent means 1.
  static int32_t weightOf(std::string_view name, const PluginSet& score, const PluginSet& multiPoint) {
    for (const PluginSet* set : {&score, &multiPoint})
      for (const PluginRef& p : set->enabled)
        if (p.name == name) return p.weight == 0 ? 1 : p.weight;
    return 1;
  }

  const PluginRegistry& registry_;
  std::string path_;
  Profile* profile_ = nullptr;
  std::map<std::string, std::unique_ptr<Plugin>, std::less<>> instances_;
  std::map<std::string, std::string, std::less<>> argsPath_;
};

Result<std::shared_ptr<const Profile>> Profile::fromJson(const json& profile, const PluginRegistry& registry,
                                                         std::string_view path) {
  return ProfileBuilder(registry, path).build(profile);
}

std::shared_ptr<const Profile> Profile::defaults() {
  static const std::shared_ptr<const Profile> profile = [] {
    auto built = fromJson(json(nullptr));
    if (!built) std::abort();  // the built-in plugins must accept the default profile
    return *built;
  }();
  return profile;
}

}  // namespace placer
