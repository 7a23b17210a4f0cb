#pragma once
// LabelPriority: placer's own plugin. Prefers nodes by the integer value of a
// node label, e.g. a "placer.io/priority: 30" label set by the operator.
//
// Args (LabelPriorityArgs):
//   label                    string, required, the node label key
//   filterNodesWithoutLabel  bool, default false
//
// Score: the label's value parsed as a base-10 int64 (Go's strconv.ParseInt
// syntax: optional sign, digits) is the node's raw score; a missing label, a
// non-integer value or a negative value scores 0.
// NormalizeScore: linear onto 0-100 against the largest raw score among the
// scored nodes: score = raw * 100 / max (integer division, rounding down); when
// every raw score is 0, every node scores 0.
// Filter (only with filterNodesWithoutLabel: true): a node without the label,
// or whose value is not an integer, is rejected with UnschedulableAndUnresolvable
// "node(s) didn't have label <key>". Negative integers pass the filter.

#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

struct LabelPriorityArgs {
  std::string label;
  bool filterNodesWithoutLabel = false;
};

// Decodes and validates; errors name the field ("LabelPriorityArgs.label: ...").
Result<LabelPriorityArgs> decodeLabelPriorityArgs(const nlohmann::json& args);

Result<std::unique_ptr<Plugin>> newLabelPriority(const nlohmann::json& args);

}  // namespace placer
