#pragma once
// Deterministic synthetic clusters that look like what a real API server
// serves: nodes with dozens of labels, taints, conditions, status.images and
// managedFields; pods of about 6 KB with owner references, init containers,
// sidecars, probes, volumes, tolerations and a full status.
//
// Everything is a pure function of (GeneratorParams, index): the same
// parameters give byte-identical objects on every run and machine, and a
// 150,000-pod cluster can be streamed one object at a time without holding it.
//
// Layout: bound pod i lives on node i / podsPerNode. Slot 0 of every node is a
// node-exporter DaemonSet pod (hostPort 9100); the rest are Deployment,
// StatefulSet and Job pods sized so that no node is overcommitted (at most
// ~85% of any allocatable resource is requested). Pods on tainted nodes
// tolerate the taint; GPU pools run a few GPU pods per node.

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace placer {

class MutableClusterView;
struct Node;
struct Pod;

struct GeneratorParams {
  int nodes = 100;
  int podsPerNode = 30;
  uint64_t seed = 1;
  int zones = 3;                     // topology.kubernetes.io/zone values per region
  double taintedNodeFraction = 0.10; // "dedicated=<pool>:NoSchedule" pools (highmem)
  double gpuNodeFraction = 0.05;     // nvidia.com/gpu nodes, tainted "nvidia.com/gpu=present:NoSchedule"
  double cordonedNodeFraction = 0.01;
  int imagesPerNode = 40;            // entries in status.images (node-local cache)
  // Each app runs as Deployments (or StatefulSets) of about this many pods,
  // each with its own ReplicaSet and a Service selecting it (0: one per app).
  int replicasPerDeployment = 30;
  // The share of Deployments whose pods carry pod (anti-)affinity terms.
  double affinityFraction = 0.2;
};

int64_t generatedPodCount(const GeneratorParams& params);
inline constexpr int kPendingShapes = 9;
std::string generatedNodeName(const GeneratorParams& params, int nodeIndex);

// A v1.Node as `kubectl get node -o json` prints it.
nlohmann::json generateNode(const GeneratorParams& params, int nodeIndex);
// The index-th bound pod (0 <= index < generatedPodCount), on node index / podsPerNode.
nlohmann::json generatePod(const GeneratorParams& params, int64_t podIndex);
// A pod to place, as it reaches the admission webhook: no nodeName, no status,
// no uid. A new replica of one of the generated Deployments, varied by
// index % kPendingShapes: plain (system default spreading), node affinity and
// preferred anti-affinity, tolerations, sidecars and init containers, GPU
// requests, best effort, required anti-affinity on the hostname, required
// affinity on the zone, a DoNotSchedule zone spread.
nlohmann::json generatePendingPod(const GeneratorParams& params, int index);

// The Namespaces, Services, ReplicaSets and StatefulSets the pods belong to
// (what PodTopologySpread's default constraints read).
std::vector<nlohmann::json> generateWorkloadObjects(const GeneratorParams& params);

// Streams a snapshot (DESIGN.md): {"nodes": [...], "pods": [...], "pod": ...}.
// pendingPodIndex < 0 leaves "pod" out.
void writeSnapshot(std::ostream& out, const GeneratorParams& params, int pendingPodIndex = 0);

// The same objects as decoded structs, built directly (no JSON round trip), so
// that a 450,000-pod view fills in seconds. Equal to decodeNode/decodePod of
// the JSON above for every field the model keeps. Defined in
// cluster_generator_view.cpp (needs the object model).
Node generateNodeObject(const GeneratorParams& params, int nodeIndex);
Pod generatePodObject(const GeneratorParams& params, int64_t podIndex);
Pod generatePendingPodObject(const GeneratorParams& params, int index);
// Upserts every generated node and bound pod.
void fillClusterView(MutableClusterView& view, const GeneratorParams& params);

}  // namespace placer
