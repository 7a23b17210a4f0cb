#pragma once
// Internal to the cluster generator: the decisions (sizes, labels, taints,
// images, placement) behind each generated object, computed once and rendered
// both as Kubernetes JSON (cluster_generator.cpp) and as decoded structs
// (cluster_generator_view.cpp), so the two can never disagree.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "test/support/cluster_generator.h"

namespace placer::generator {

using StringPairs = std::vector<std::pair<std::string, std::string>>;

// splitmix64 over (seed, stream, index): independent, reproducible draws.
uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index);
double unit(uint64_t seed, uint64_t stream, uint64_t index);  // in [0, 1)

struct TaintSpec {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct ImageSpec {
  std::string repository;  // registry/path
  std::string tag;
  int64_t sizeBytes;
  std::string digest;  // 64 hex
};

struct NodeSpec {
  int index = 0;
  std::string name;
  std::string pool;           // general | compute | highmem | gpu | arm
  std::string instanceType;
  std::string zone;
  std::string region;
  std::string arch;           // amd64 | arm64
  int64_t capacityCpu = 0;    // cores
  int64_t capacityMemoryKi = 0;
  int64_t allocatableMilliCpu = 0;
  int64_t allocatableMemoryKi = 0;
  int64_t allocatableEphemeral = 0;  // bytes
  int64_t capacityEphemeral = 0;
  int64_t maxPods = 110;
  int64_t gpus = 0;
  int64_t ebsVolumes = 25;
  bool cordoned = false;
  StringPairs labels;  // in insertion order; the struct renderer sorts
  std::vector<TaintSpec> taints;
  std::vector<int> images;  // indices into imageCatalog()
  std::string internalIp;
};

struct ContainerSpec {
  std::string name;
  int image = 0;  // index into imageCatalog()
  int64_t milliCpu = -1;   // -1: no request
  int64_t memoryMi = -1;   // -1: no request
  int64_t ephemeralMi = -1;
  int64_t gpus = 0;
  int64_t limitMilliCpu = -1;
  int64_t limitMemoryMi = -1;
  int32_t containerPort = 0;
  int32_t hostPort = 0;
  bool restartable = false;  // init container with restartPolicy: Always (sidecar)
};

struct TolerationSpec {
  std::string key;
  std::string op;  // Equal | Exists
  std::string value;
  std::string effect;  // "" = all effects
  std::optional<int64_t> seconds;
};

struct PreferredSpec {
  int32_t weight;
  std::string key;
  std::vector<std::string> values;
};

struct PodSpec {
  int64_t index = 0;
  bool pending = false;
  std::string namespace_;
  std::string name;
  std::string generateName;
  std::string uid;
  std::string app;
  std::string ownerKind;  // DaemonSet | ReplicaSet | StatefulSet | Job
  std::string ownerApiVersion;
  std::string ownerName;
  std::string ownerUid;
  std::string nodeName;
  std::string nodeIp;
  std::string podIp;
  std::string serviceAccount;
  StringPairs labels;
  StringPairs annotations;
  std::vector<ContainerSpec> containers;
  std::vector<ContainerSpec> initContainers;
  int64_t overheadMilliCpu = 0;  // 0: no overhead (runtimeClass kata when set)
  int64_t overheadMemoryMi = 0;
  std::vector<TolerationSpec> tolerations;
  StringPairs nodeSelector;
  // Required node affinity: one term, key In values (or matchFields metadata.name for DaemonSets).
  std::string requiredKey;
  std::vector<std::string> requiredValues;
  bool requiredOnFields = false;
  std::vector<PreferredSpec> preferred;
  std::string instance;            // app.kubernetes.io/instance: the Deployment or StatefulSet
  bool antiAffinityByApp = false;  // preferred pod anti-affinity on hostname to its instance
  bool requiredAntiAffinity = false;  // required anti-affinity on hostname to its instance
  bool requiredZoneAffinity = false;  // required affinity on zone to its instance
  bool zoneSpread = false;            // DoNotSchedule zone spread (maxSkew 1) of its instance
  int32_t priority = 0;
  std::string priorityClassName;
  int64_t createdAt = 0;  // seconds since the base time
};

const std::vector<ImageSpec>& imageCatalog();
std::string imageName(int image);  // repository:tag

NodeSpec nodeSpec(const GeneratorParams& params, int nodeIndex);
PodSpec podSpec(const GeneratorParams& params, int64_t podIndex);
PodSpec pendingPodSpec(const GeneratorParams& params, int index);

}  // namespace placer::generator
