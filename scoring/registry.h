#pragma once
// The explicit registry of in-tree plugins: name -> factory. A factory decodes,
// defaults and validates the plugin's typed args (the pluginConfig "args"
// object, or null when none is given) and fails with a message naming the field.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

using PluginFactory = std::function<Result<std::unique_ptr<Plugin>>(const nlohmann::json& args)>;
using PluginRegistry = std::map<std::string, PluginFactory, std::less<>>;

const PluginRegistry& builtinPlugins();

}  // namespace placer
