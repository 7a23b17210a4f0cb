#include "scoring/plugins/node_name.h"

#include <string>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

class NodeName final : public PreFilterPlugin, public FilterPlugin {
 public:
  std::string_view name() const override { return names::kNodeName; }
  bool resultsReusable() const override { return true; }  // see Plugin

  // Not an upstream extension point for this plugin: it only lets the engine
  // skip Filter for the common pod without spec.nodeName.
  Status preFilter(CycleState&, const Pod& pod, const ClusterView&) const override {
    return pod.nodeName.empty() ? Status::skip() : Status::success();
  }

  Status filter(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    if (pod.nodeName.empty() || pod.nodeName == node.name()) return Status::success();
    return Status(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeName));
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> newNodeName(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "NodeNameArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<NodeName>());
}

}  // namespace placer
