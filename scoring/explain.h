#pragma once
// What `placer explain` prints for one decision (Detail::Full).
//
// JSON (DESIGN.md), one object:
//   { "pod": "namespace/name",
//     "feasible":   [node names, in the view's order],
//     "unfeasible": { node: [reasons] },
//     "scores":     { node: { <score plugin>: 0..100 before weight, ..., "total": weighted sum } },
//     "selected":   node name or null }
// plus "message" (kube-scheduler's FitError text) when no node is selected, and
// "error" when a plugin failed the cycle.
//
// The table is for people: one row per node, feasible ones by total (highest
// first, ties by name), then the rejected ones by name with their reasons.

#include <string>

#include <nlohmann/json.hpp>

#include "scoring/engine.h"
#include "scoring/model.h"

namespace placer {

// "namespace/name" ("default" when the namespace is empty; generateName when unnamed).
std::string explainPodName(const Pod& pod);

nlohmann::ordered_json explainJson(const Pod& pod, const Decision& decision);
std::string explainTable(const Pod& pod, const Decision& decision);

}  // namespace placer
