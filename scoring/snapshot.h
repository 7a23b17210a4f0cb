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
// A snapshot is read as it streams, like a list page of the API path: the
// top-level members and the arrays' elements are split from the bytes
// (json_stream_scanner.h), each element is parsed on its own (json_value.h)
// and decoded by the same decoders as list items, and goes straight into the
// view. No document of the whole file is built, and no object is held twice.
//
// Decoding is strict about what would make a decision meaningless and names
// the element at fault ("pods[17].spec.containers[0].resources.requests.cpu:
// invalid quantity \"abc\""): wrong types, bad quantities, missing or duplicate
// node names, duplicate pods, negative amounts and absurd ones (beyond 2^53 in
// their unit, or node totals beyond that), a top-level key given twice. It
// never throws.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

// What a snapshot asks besides its cluster: the pod to place and the configuration.
struct SnapshotQuery {
  std::optional<Pod> pod;
  nlohmann::json config;  // null when absent
};

// A whole snapshot as values, for small documents (tests, the demo cluster).
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

// Reads a snapshot file ("-" reads standard input) piece by piece and upserts
// every object into the view as it is decoded; returns the pod and config.
// Errors name the file. On an error the view holds what came before it: the
// caller discards it (explain exits, serve does not start).
Result<SnapshotQuery> loadSnapshotFile(const std::string& path, MutableClusterView& view);
// The same into a live state: each object is upserted under the state's
// exclusive lock on its own, so readers are never held off for the whole load.
Result<SnapshotQuery> loadSnapshotFile(const std::string& path, ClusterState& state);

// Upserts every node and pod of the snapshot into the view.
void fillView(MutableClusterView& view, const Snapshot& snapshot);

}  // namespace placer
