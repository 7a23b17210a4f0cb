#include "scoring/registry.h"

#include <nlohmann/json.hpp>

namespace placer {

const PluginRegistry& builtinPlugins() {
  // One line per plugin: name -> factory (declared in the plugin's header).
  static const PluginRegistry registry = {
  };
  return registry;
}

}  // namespace placer
