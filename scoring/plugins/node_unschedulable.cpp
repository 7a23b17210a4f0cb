#include "scoring/plugins/node_unschedulable.h"

#include <string>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"
#include "scoring/plugins/taint_toleration.h"

namespace placer {
namespace {

class NodeUnschedulable final : public FilterPlugin {
 public:
  std::string_view name() const override { return names::kNodeUnschedulable; }

  Status filter(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    if (!node.node.unschedulable) return Status::success();
    if (podToleratesUnschedulable(pod)) return Status::success();
    return Status(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeUnschedulable));
  }

 private:
  static bool podToleratesUnschedulable(const Pod& pod) {
    if (pod.tolerations.empty()) return false;
    static const Taint kUnschedulable{std::string(kTaintNodeUnschedulable), "", TaintEffect::NoSchedule};
    return tolerationsTolerateTaint(pod.tolerations, kUnschedulable);
  }
};

}  // namespace

Result<std::unique_ptr<Plugin>> newNodeUnschedulable(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "NodeUnschedulableArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>());
}

}  // namespace placer
