#pragma once
// Shared by the libFuzzer targets of test/fuzz: a small cluster loaded through
// the production snapshot decoder, the engine with the default profile, the
// chunkings that streaming decoders are fed in, and FUZZ_CHECK, which aborts
// (libFuzzer then keeps the input as a crash) when an invariant breaks.
//
// A target calls the decoder production calls and checks what must hold of
// its answer; it never re-implements what it checks. Each input leaves the
// shared cluster as it found it (reservations made are released), so a
// target's outcome depends on its input alone.
//
// Thread-safety: none; libFuzzer runs one input at a time.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/snapshot.h"
#include "webhook/log.h"

namespace placer::fuzz {

[[noreturn]] inline void violated(const char* condition, const char* file, int line, std::string_view detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n  %.*s\n", file, line, condition,
               static_cast<int>(std::min<size_t>(detail.size(), 4000)), detail.data());
  std::abort();
}

#define FUZZ_CHECK(condition, detail) \
  do { \
    if (!(condition)) ::placer::fuzz::violated(#condition, __FILE__, __LINE__, (detail)); \
  } while (0)

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Three nodes (one tainted, two zones, host ports in use) and three bound
// pods (one with anti-affinity and a spread constraint), namespaces with labels.
inline constexpr std::string_view kClusterSnapshot = R"json({
"nodes": [
 {"metadata": {"name": "node-a", "uid": "n-a", "labels": {"kubernetes.io/hostname": "node-a", "topology.kubernetes.io/zone": "z1", "kubernetes.io/arch": "amd64", "disktype": "ssd"}},
  "spec": {},
  "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi", "nvidia.com/gpu": "1"},
             "images": [{"names": ["docker.io/library/nginx:1.25", "nginx:1.25"], "sizeBytes": 70000000}]}},
 {"metadata": {"name": "node-b", "uid": "n-b", "labels": {"kubernetes.io/hostname": "node-b", "topology.kubernetes.io/zone": "z2", "kubernetes.io/arch": "amd64"}},
  "spec": {"taints": [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]},
  "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}},
 {"metadata": {"name": "node-c", "uid": "n-c", "labels": {"kubernetes.io/hostname": "node-c", "topology.kubernetes.io/zone": "z2", "kubernetes.io/arch": "arm64"}},
  "spec": {"unschedulable": false},
  "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
],
"pods": [
 {"metadata": {"name": "web-1", "namespace": "default", "uid": "p-1", "labels": {"app": "web"}},
  "spec": {"nodeName": "node-a", "containers": [{"name": "c", "image": "nginx:1.25", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
            "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}],
           "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}},
           "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}}}]},
  "status": {"phase": "Running"}},
 {"metadata": {"name": "batch-1", "namespace": "jobs", "uid": "p-2", "labels": {"app": "batch"}},
  "spec": {"nodeName": "node-b", "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}],
           "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]},
  "status": {"phase": "Running"}},
 {"metadata": {"name": "db-0", "namespace": "default", "uid": "p-3", "labels": {"app": "db"}},
  "spec": {"nodeName": "node-c", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]},
  "status": {"phase": "Running"}}
],
"namespaces": [
 {"metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}},
 {"metadata": {"name": "jobs", "labels": {"kubernetes.io/metadata.name": "jobs", "team": "batch"}}}
]
})json";

// An ordinary pod to place on a view the target built.
inline constexpr std::string_view kProbePod = R"json({
 "metadata": {"name": "probe", "namespace": "default", "uid": "probe-uid", "labels": {"app": "web"}},
 "spec": {"containers": [{"name": "c", "image": "nginx:1.25", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
          "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}})json";

inline const Pod& probePod() {
  static const Pod pod = [] {
    auto decoded = decodePod(nlohmann::json::parse(kProbePod));
    if (!decoded) violated("probe pod decodes", __FILE__, __LINE__, decoded.error().message);
    return *decoded;
  }();
  return pod;
}

struct Cluster {
  ClusterState state;
  PlacerSettings settings;
  std::shared_ptr<const Engine> engine;
};

// Built once per process through the production decoders.
inline Cluster& cluster() {
  static Cluster* built = [] {
    auto* c = new Cluster;
    auto snapshot = parseSnapshot(kClusterSnapshot);
    if (!snapshot) violated("cluster snapshot decodes", __FILE__, __LINE__, snapshot.error().message);
    c->state.update([&](MutableClusterView& view) { fillView(view, *snapshot); });
    auto config = configurationFromJson(nlohmann::json());
    if (!config) violated("default configuration", __FILE__, __LINE__, config.error().message);
    c->settings = config->settings;
    c->engine = std::make_shared<const Engine>(config->profile);
    return c;
  }();
  return *built;
}

// Every target's LLVMFuzzerInitialize: logs off (decoders log what they
// refuse), and what inputs share built before the first one, so that no
// input pays for it (nor shows it as new coverage).
inline int prepareTarget() {
  setLogOutput(nullptr);
  cluster();
  probePod();
  return 0;
}

// The keys of a JSON object, for "exactly these keys" checks.
inline std::set<std::string> keysOf(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

inline size_t reservationCount(const ClusterState& state) {
  return state.read([](const ClusterView& view) { return view.reservedPods()->pods.size(); });
}

// nlohmann's reading of `text` (the reference parser), nullopt when it is not JSON.
inline std::optional<nlohmann::json> referenceJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// `text` cut into pieces of 1 to ~64 bytes (now and then larger), chosen by a
// generator seeded from the text: how a socket may deliver it. The same text
// is always cut the same way.
inline std::vector<std::string_view> pieces(std::string_view text) {
  uint64_t state = std::hash<std::string_view>{}(text) | 1;
  auto next = [&] {
    state += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    uint64_t r = next();
    size_t len = (r & 7) == 0 ? 1 + (r >> 8) % 4096 : 1 + (r >> 8) % 64;
    len = std::min(len, text.size() - at);
    out.push_back(text.substr(at, len));
    at += len;
  }
  return out;
}

}  // namespace placer::fuzz
