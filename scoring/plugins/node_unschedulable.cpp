#include "scoring/plugins/node_unschedulable.h"

#include <optional>
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
  bool resultsReusable() const override { return true; }  // see Plugin

  Status filter(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    if (!node.node.unschedulable) return Status::success();
    if (podToleratesUnschedulable(pod)) return Status::success();
    return rejected();
  }

  void filterAll(const CycleState&, const Pod& pod, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    std::optional<bool> tolerated;  // decided on the first cordoned node
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i]->node.unschedulable) continue;
      if (!tolerated) tolerated = podToleratesUnschedulable(pod);
      if (!*tolerated) sink.rejectWith(static_cast<uint32_t>(i), rejected());
    }
  }

 private:
  static const Status& rejected() {
    static const Status kRejected(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeUnschedulable));
    return kRejected;
  }
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
