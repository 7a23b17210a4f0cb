#include "scoring/registry.h"

#include <nlohmann/json.hpp>

#include "scoring/plugins/balanced_allocation.h"
#include "scoring/plugins/image_locality.h"
#include "scoring/plugins/inter_pod_affinity.h"
#include "scoring/plugins/label_priority.h"
#include "scoring/plugins/names.h"
#include "scoring/plugins/node_affinity.h"
#include "scoring/plugins/node_name.h"
#include "scoring/plugins/node_ports.h"
#include "scoring/plugins/node_resources_fit.h"
#include "scoring/plugins/node_unschedulable.h"
#include "scoring/plugins/pod_topology_spread.h"
#include "scoring/plugins/taint_toleration.h"

namespace placer {

const PluginRegistry& builtinPlugins() {
  // One line per plugin: name -> factory (declared in the plugin's header).
  static const PluginRegistry registry = {
      {std::string(names::kNodeUnschedulable), newNodeUnschedulable},
      {std::string(names::kNodeName), newNodeName},
      {std::string(names::kTaintToleration), newTaintToleration},
      {std::string(names::kNodeAffinity), newNodeAffinity},
      {std::string(names::kNodePorts), newNodePorts},
      {std::string(names::kNodeResourcesFit), newNodeResourcesFit},
      {std::string(names::kNodeResourcesBalancedAllocation), newNodeResourcesBalancedAllocation},
      {std::string(names::kImageLocality), newImageLocality},
      {std::string(names::kPodTopologySpread), newPodTopologySpread},
      {std::string(names::kInterPodAffinity), newInterPodAffinity},
      {std::string(names::kLabelPriority), newLabelPriority},
  };
  return registry;
}

}  // namespace placer
