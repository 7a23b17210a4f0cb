#pragma once
// A cluster snapshot (DESIGN.md): the input of `placer explain`, of
// `placer serve --cluster-file` and of the benchmarks.
//
//   { "nodes":  [ v1.Node, ... ],
//     "pods":   [ v1.Pod already bound (spec.nodeName set), ... ],
//     "pod":    v1.Pod to place (explain only, optional here),
//     "config": KubeSchedulerConfiguration or PlacerConfiguration (optional),
//     "namespaces", "services", "replicationcontrollers", "replicasets",
//     "statefulsets": arrays of those objects (optional; what PodTopologySpread's
//     default constraints and InterPodAffinity's namespaceSelector read) }
//
// Decoding is strict about what would make a decision meaningless and names
// the element at fault ("pods[17].spec.containers[0].resources.requests.cpu:
// invalid quantity \"abc\""): wrong types, bad quantities, missing or duplicate
// node names, negative amounts and absurd ones (beyond 2^53 in their unit, or
// node totals beyond that). It never throws.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

struct Snapshot {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::optional<Pod> pod;
  nlohmann::json config;  // null when absent
  std::vector<Namespace> namespaces;
  std::vector<WorkloadSelector> workloads;
};

// The largest resource amount accepted, in the resource's unit (millicores, bytes, count).
inline constexpr int64_t kMaxSnapshotAmount = int64_t{1} << 53;

Result<Snapshot> decodeSnapshot(const nlohmann::json& document);
Result<Snapshot> parseSnapshot(std::string_view text);
// Reads a file ("-" reads standard input); errors name the file.
Result<Snapshot> loadSnapshotFile(const std::string& path);

// Upserts every node and pod of the snapshot into the view.
void fillView(MutableClusterView& view, const Snapshot& snapshot);

}  // namespace placer
