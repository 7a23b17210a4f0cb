#include "scoring/plugins/label_priority.h"

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

class LabelPriority final : public PreFilterPlugin, public FilterPlugin, public ScorePlugin {
 public:
  explicit LabelPriority(LabelPriorityArgs args)
      : args_(std::move(args)), reason_("node(s) didn't have label " + args_.label) {}

  std::string_view name() const override { return names::kLabelPriority; }
  bool resultsReusable() const override { return true; }  // see Plugin

  Status preFilter(CycleState&, const Pod&, const ClusterView&) const override {
    return args_.filterNodesWithoutLabel ? Status::success() : Status::skip();
  }

  Status filter(const CycleState&, const Pod&, const NodeInfo& node) const override {
    if (!args_.filterNodesWithoutLabel || labelValue(node).has_value()) return Status::success();
    return Status(Code::UnschedulableAndUnresolvable, reason_);
  }

  int64_t score(const CycleState&, const Pod&, const NodeInfo& node) const override {
    return std::max<int64_t>(0, labelValue(node).value_or(0));
  }

  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    int64_t max = 0;
    for (int64_t s : scores) max = std::max(max, s);
    for (int64_t& s : scores) {
      // 128-bit intermediate: raw values may use the whole int64 range.
      s = max == 0 ? 0 : static_cast<int64_t>(static_cast<__int128>(s) * kMaxNodeScore / max);
    }
  }

 private:
  std::optional<int64_t> labelValue(const NodeInfo& node) const {
    const std::string* value = findLabel(node.node.labels, args_.label);
    if (value == nullptr) return std::nullopt;
    return parseGoInt64(*value);
  }

  LabelPriorityArgs args_;
  std::string reason_;
};

}  // namespace

Result<LabelPriorityArgs> decodeLabelPriorityArgs(const nlohmann::json& args) {
  constexpr std::string_view kType = "LabelPriorityArgs";
  if (args.is_null()) return fieldError("LabelPriorityArgs.label", "required");
  if (Outcome ok = checkArgsObject(args, kType, {"label", "filterNodesWithoutLabel"}); !ok) return ok.error();
  LabelPriorityArgs decoded;
  auto label = args.find("label");
  if (label == args.end() || label->is_null()) return fieldError("LabelPriorityArgs.label", "required");
  if (!label->is_string()) return fieldError("LabelPriorityArgs.label", "must be a string");
  decoded.label = label->get<std::string>();
  if (decoded.label.empty()) return fieldError("LabelPriorityArgs.label", "must not be empty");
  if (auto filter = args.find("filterNodesWithoutLabel"); filter != args.end() && !filter->is_null()) {
    if (!filter->is_boolean()) return fieldError("LabelPriorityArgs.filterNodesWithoutLabel", "must be a boolean");
    decoded.filterNodesWithoutLabel = filter->get<bool>();
  }
  return decoded;
}

Result<std::unique_ptr<Plugin>> newLabelPriority(const nlohmann::json& args) {
  Result<LabelPriorityArgs> decoded = decodeLabelPriorityArgs(args);
  if (!decoded) return decoded.error();
  return std::unique_ptr<Plugin>(std::make_unique<LabelPriority>(std::move(decoded).value()));
}

}  // namespace placer
