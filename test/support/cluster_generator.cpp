#include "test/support/cluster_generator.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <ostream>

#include "test/support/cluster_generator_spec.h"

namespace placer {
namespace generator {

uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream * 0xBF58476D1CE4E5B9ULL + index * 0x94D049BB133111EBULL +
               0x2545F4914F6CDD1DULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  return z ^ (z >> 31);
}

double unit(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(draw(seed, stream, index) >> 11) / 9007199254740992.0;
}

namespace {

// Draw streams: one per decision so that changing one never shifts another.
enum Stream : uint64_t {
  kPool = 1, kZone, kType, kCordon, kPreferTaint, kNodeImages, kNodeIp, kNodeId,
  kPodApp, kPodSize, kPodMem, kPodName, kPodUid, kPodIp, kPodEph, kPodMisc, kOwner, kPending,
  kDeployment, kAffinity,
};

std::string hex(uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string s(digits, '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) s[i] = d[v & 15];
  return s;
}

// Kubernetes' rand.String alphabet for generated name suffixes (no vowels).
std::string suffix(uint64_t v, int length) {
  static const char* alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < length; ++i, v /= 27) s.push_back(alphabet[v % 27]);
  return s;
}

std::string uuid(uint64_t a, uint64_t b) {
  std::string h = hex(a, 16) + hex(b, 16);
  h[12] = '4';
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
         h.substr(20, 12);
}

struct InstanceType {
  const char* name;
  int64_t cpu;       // cores
  int64_t memoryGi;
  int64_t maxPods;
  int64_t gpus;
  const char* arch;
};

// Allocatable follows the EKS reservation formula closely enough to look real.
constexpr InstanceType kGeneral[] = {{"m5.2xlarge", 8, 32, 58, 0, "amd64"},
                                     {"m5.4xlarge", 16, 64, 234, 0, "amd64"},
                                     {"m5.8xlarge", 32, 128, 234, 0, "amd64"},
                                     {"m6i.4xlarge", 16, 64, 234, 0, "amd64"}};
constexpr InstanceType kCompute[] = {{"c5.4xlarge", 16, 32, 234, 0, "amd64"},
                                     {"c5.9xlarge", 36, 72, 234, 0, "amd64"}};
constexpr InstanceType kHighmem[] = {{"r5.4xlarge", 16, 128, 234, 0, "amd64"},
                                     {"r5.8xlarge", 32, 256, 234, 0, "amd64"}};
constexpr InstanceType kGpu[] = {{"p3.8xlarge", 32, 244, 234, 4, "amd64"},
                                 {"g5.12xlarge", 48, 192, 234, 4, "amd64"}};
constexpr InstanceType kArm[] = {{"m6g.4xlarge", 16, 64, 234, 0, "arm64"},
                                 {"c6g.8xlarge", 32, 64, 234, 0, "arm64"}};

// System images on every node, then application images.
constexpr int kSystemImages = 8;

struct App {
  const char* name;
  const char* namespace_;
  int image;
  const char* kind;  // ReplicaSet | StatefulSet | Job
  int32_t port;
  bool sidecar;   // restartable init container (log shipper)
  bool init;      // ordinary init container (migrations)
  bool kata;      // runtimeClassName with pod overhead
  bool antiAffinity;
  const char* team;
};

constexpr App kApps[] = {
    {"checkout-api", "payments", 8, "ReplicaSet", 8080, true, true, false, true, "payments"},
    {"payment-gateway", "payments", 9, "ReplicaSet", 8443, true, false, false, true, "payments"},
    {"ledger", "payments", 10, "StatefulSet", 5432, false, true, false, false, "payments"},
    {"catalog", "storefront", 11, "ReplicaSet", 8080, false, false, false, true, "storefront"},
    {"search-indexer", "storefront", 12, "ReplicaSet", 9200, false, true, false, false, "storefront"},
    {"frontend", "storefront", 13, "ReplicaSet", 3000, true, false, false, true, "web"},
    {"image-resizer", "media", 14, "ReplicaSet", 8080, false, false, true, false, "media"},
    {"transcoder", "media", 15, "Job", 0, false, true, false, false, "media"},
    {"recommendations", "ml", 16, "ReplicaSet", 8501, true, false, false, true, "ml-platform"},
    {"feature-store", "ml", 17, "StatefulSet", 6379, false, false, false, false, "ml-platform"},
    {"kafka", "streaming", 18, "StatefulSet", 9092, false, true, false, true, "data"},
    {"stream-processor", "streaming", 19, "ReplicaSet", 8081, true, false, false, false, "data"},
    {"orders-worker", "orders", 20, "ReplicaSet", 0, false, true, false, false, "fulfilment"},
    {"orders-api", "orders", 21, "ReplicaSet", 8080, true, false, false, true, "fulfilment"},
    {"notifications", "messaging", 22, "ReplicaSet", 8080, false, false, true, false, "growth"},
    {"report-builder", "analytics", 23, "Job", 0, false, false, false, false, "data"},
    {"grafana", "monitoring", 24, "ReplicaSet", 3000, false, true, false, false, "sre"},
    {"prometheus", "monitoring", 25, "StatefulSet", 9090, true, true, false, false, "sre"},
    {"auth", "identity", 26, "ReplicaSet", 8443, true, false, false, true, "identity"},
    {"session-cache", "identity", 27, "StatefulSet", 6379, false, false, false, false, "identity"},
};
constexpr int kAppCount = sizeof(kApps) / sizeof(kApps[0]);
constexpr int kLogShipperImage = 4;
constexpr int kMigrateImage = 28;
constexpr int kGpuWorkerImage = 29;
constexpr int kNodeExporterImage = 3;

constexpr const char* kRegion = "us-east-1";
constexpr const char* kZoneLetters = "abcdefghijklmnopqrstuvwxyz";

const InstanceType& pickType(const char* pool, uint64_t r) {
  std::string_view p(pool);
  if (p == "compute") return kCompute[r % 2];
  if (p == "highmem") return kHighmem[r % 2];
  if (p == "gpu") return kGpu[r % 2];
  if (p == "arm") return kArm[r % 2];
  return kGeneral[r % 4];
}

const char* pickPool(const GeneratorParams& p, int i) {
  double u = unit(p.seed, kPool, i);
  if (u < p.gpuNodeFraction) return "gpu";
  u -= p.gpuNodeFraction;
  if (u < p.taintedNodeFraction) return "highmem";
  u -= p.taintedNodeFraction;
  if (u < 0.15) return "compute";
  if (u < 0.22) return "arm";
  return "general";
}

int64_t roundTo(int64_t v, int64_t step) { return std::max<int64_t>(step, v / step * step); }

}  // namespace

const std::vector<ImageSpec>& imageCatalog() {
  static const std::vector<ImageSpec> catalog = [] {
    struct Raw {
      const char* repo;
      const char* tag;
      int64_t mb;
    };
    const Raw raw[] = {
        {"registry.k8s.io/pause", "3.9", 1},
        {"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy", "v1.29.0-minimal-eksbuild.1", 38},
        {"602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni", "v1.16.0-eksbuild.1", 63},
        {"quay.io/prometheus/node-exporter", "v1.7.0", 11},
        {"cr.fluentbit.io/fluent/fluent-bit", "2.2.2", 31},
        {"public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver", "v1.26.1", 124},
        {"registry.k8s.io/sig-storage/csi-node-driver-registrar", "v2.9.3", 10},
        {"registry.k8s.io/sig-storage/livenessprobe", "v2.11.0", 9},
        {"registry.example.com/payments/checkout-api", "v2.14.1", 187},
        {"registry.example.com/payments/payment-gateway", "v1.8.0", 142},
        {"docker.io/library/postgres", "16.1", 412},
        {"registry.example.com/storefront/catalog", "v5.2.3", 231},
        {"docker.elastic.co/elasticsearch/elasticsearch", "8.11.3", 1288},
        {"registry.example.com/web/frontend", "2026.11.3", 96},
        {"registry.example.com/media/image-resizer", "v0.9.12", 318},
        {"docker.io/jrottenberg/ffmpeg", "6.1-ubuntu", 584},
        {"registry.example.com/ml/recommendations", "v3.0.4", 1874},
        {"docker.io/feastdev/feature-server", "0.35.0", 702},
        {"docker.io/bitnami/kafka", "3.6.1", 496},
        {"registry.example.com/data/stream-processor", "v1.22.0", 355},
        {"registry.example.com/fulfilment/orders-worker", "v4.1.7", 122},
        {"registry.example.com/fulfilment/orders-api", "v4.1.7", 128},
        {"registry.example.com/growth/notifications", "v2.3.9", 84},
        {"registry.example.com/data/report-builder", "v0.31.0", 640},
        {"docker.io/grafana/grafana", "10.2.3", 402},
        {"quay.io/prometheus/prometheus", "v2.48.1", 245},
        {"registry.example.com/identity/auth", "v7.0.2", 77},
        {"docker.io/library/redis", "7.2.4", 138},
        {"registry.example.com/tools/db-migrate", "v1.5.0", 54},
        {"nvcr.io/nvidia/pytorch", "23.12-py3", 9830},
        {"docker.io/library/nginx", "1.25.3", 187},
        {"docker.io/library/busybox", "1.36.1", 4},
        {"docker.io/istio/proxyv2", "1.20.2", 257},
        {"registry.example.com/platform/config-reloader", "v0.12.0", 21},
        {"docker.io/library/python", "3.12-slim", 131},
        {"docker.io/library/golang", "1.21", 814},
        {"registry.example.com/batch/etl", "v2.2.0", 505},
        {"registry.example.com/batch/exporter", "v1.0.3", 48},
        {"docker.io/library/memcached", "1.6.23", 86},
        {"docker.io/library/rabbitmq", "3.12-management", 252},
        {"ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-contrib", "0.91.0",
         223},
        {"registry.example.com/web/admin", "2026.10.7", 112},
        {"registry.example.com/ml/trainer", "v0.8.1", 6210},
        {"registry.example.com/ml/batch-infer", "v0.8.1", 4120},
        {"docker.io/library/mysql", "8.2.0", 577},
        {"docker.io/library/mongo", "7.0.4", 751},
        {"quay.io/jetstack/cert-manager-controller", "v1.13.3", 64},
        {"registry.k8s.io/ingress-nginx/controller", "v1.9.5", 283},
        {"docker.io/bitnami/zookeeper", "3.9.1", 445},
        {"registry.example.com/search/query", "v9.4.0", 166},
        {"registry.example.com/search/ranker", "v9.4.0", 910},
        {"docker.io/library/node", "20.10-alpine", 135},
        {"registry.example.com/web/ssr", "2026.11.1", 241},
        {"registry.example.com/tools/debug", "latest", 73},
        {"docker.io/library/haproxy", "2.9.1", 104},
        {"docker.io/envoyproxy/envoy", "v1.28.0", 168},
        {"registry.example.com/payments/fraud-model", "v12", 2210},
        {"registry.example.com/payments/reconciler", "v3.3.1", 91},
        {"docker.io/library/traefik", "v2.10.7", 150},
        {"docker.io/minio/minio", "RELEASE.2023-12-23T07-19-11Z", 151},
    };
    std::vector<ImageSpec> out;
    uint64_t i = 0;
    for (const Raw& r : raw) {
      // Sizes vary by a few percent from a round number, as real layers do.
      int64_t size = r.mb * 1000 * 1000 + static_cast<int64_t>(draw(7, 99, i) % 900000);
      out.push_back({r.repo, r.tag, size, hex(draw(1, 98, i), 16) + hex(draw(2, 98, i), 16) +
                                              hex(draw(3, 98, i), 16) + hex(draw(4, 98, i), 16)});
      ++i;
    }
    return out;
  }();
  return catalog;
}

std::string imageName(int image) {
  const ImageSpec& s = imageCatalog()[image];
  return s.repository + ":" + s.tag;
}

namespace {

int appOf(const GeneratorParams& p, int64_t podIndex) {
  return static_cast<int>(draw(p.seed, kPodApp, podIndex) % kAppCount);
}

// Deployments (or StatefulSets) per app: about replicasPerDeployment pods each.
int deploymentsPerApp(const GeneratorParams& p) {
  if (p.replicasPerDeployment <= 0) return 1;
  const int64_t appPods = static_cast<int64_t>(p.nodes) * std::max(0, p.podsPerNode - 1);
  return static_cast<int>(std::max<int64_t>(1, appPods / (int64_t{kAppCount} * p.replicasPerDeployment)));
}

int deploymentOf(const GeneratorParams& p, int64_t podIndex) {
  return static_cast<int>(draw(p.seed, kDeployment, podIndex) % deploymentsPerApp(p));
}

std::string instanceName(int app, int deployment) {
  return std::string(kApps[app].name) + "-" + std::to_string(deployment);
}

// The pod-template-hash of a Deployment's ReplicaSet.
std::string rsHashOf(const GeneratorParams& p, int app, int deployment) {
  return suffix(draw(p.seed, kOwner, app * 100003 + deployment + 10), 10);
}

bool deploymentHasAffinity(const GeneratorParams& p, int app, int deployment) {
  return kApps[app].antiAffinity && unit(p.seed, kAffinity, app * 100003 + deployment) < p.affinityFraction * 2.5;
}

}  // namespace

NodeSpec nodeSpec(const GeneratorParams& p, int i) {
  NodeSpec n;
  n.index = i;
  n.pool = pickPool(p, i);
  const InstanceType& t = pickType(n.pool.c_str(), draw(p.seed, kType, i));
  n.instanceType = t.name;
  n.arch = t.arch;
  n.region = kRegion;
  int zones = std::clamp(p.zones, 1, 26);
  n.zone = std::string(kRegion) + kZoneLetters[draw(p.seed, kZone, i) % zones];
  char name[64];
  std::snprintf(name, sizeof name, "%s-%05d", n.pool.c_str(), i);
  n.name = name;
  uint64_t ip = draw(p.seed, kNodeIp, i);
  n.internalIp = "10." + std::to_string(16 + (ip & 15)) + "." + std::to_string((ip >> 8) & 255) + "." +
                 std::to_string(1 + ((ip >> 16) % 254));

  n.capacityCpu = t.cpu;
  n.capacityMemoryKi = t.memoryGi * 1024 * 1024 - 512 * 1024 - static_cast<int64_t>((ip >> 24) % 4096);
  // kube-reserved cpu: 6% of the first core, 1% of the next, 0.5% of the next two, 0.25% above.
  int64_t reservedCpu = 60 + 10 + (t.cpu > 2 ? 10 : 0) + (t.cpu > 4 ? (t.cpu - 4) * 5 / 2 : 0);
  n.allocatableMilliCpu = t.cpu * 1000 - reservedCpu;
  int64_t reservedMemKi = (255 + 11 * t.maxPods) * 1024 + 100 * 1024;  // kube-reserved + eviction threshold
  n.allocatableMemoryKi = n.capacityMemoryKi - reservedMemKi;
  n.capacityEphemeral = 107361579008LL;  // 100Gi root volume as the kubelet reports it
  n.allocatableEphemeral = 95733943882LL;
  n.maxPods = std::max<int64_t>(t.maxPods, p.podsPerNode + 10);
  n.gpus = t.gpus;
  n.ebsVolumes = 25;
  n.cordoned = unit(p.seed, kCordon, i) < p.cordonedNodeFraction;

  std::string nodegroup = "prod-" + n.pool + "-" + std::string(t.name).substr(0, std::string(t.name).find('.'));
  bool spot = (draw(p.seed, kNodeId, i) % 5) == 0 && n.pool != "gpu";
  n.labels = {
      {"beta.kubernetes.io/arch", n.arch},
      {"beta.kubernetes.io/instance-type", n.instanceType},
      {"beta.kubernetes.io/os", "linux"},
      {"eks.amazonaws.com/capacityType", spot ? "SPOT" : "ON_DEMAND"},
      {"eks.amazonaws.com/nodegroup", nodegroup},
      {"eks.amazonaws.com/nodegroup-image", n.arch == "arm64" ? "ami-0b8c5d1f2a9e7c3d4" : "ami-07e1f3b2c9d8a6e51"},
      {"eks.amazonaws.com/sourceLaunchTemplateId", "lt-0" + hex(draw(p.seed, 77, std::hash<std::string>{}(nodegroup)), 16)},
      {"eks.amazonaws.com/sourceLaunchTemplateVersion", "3"},
      {"failure-domain.beta.kubernetes.io/region", n.region},
      {"failure-domain.beta.kubernetes.io/zone", n.zone},
      {"k8s.io/cloud-provider-aws", "9f4c1e2b7d3a5f60c8e1b2d4a6f7c9e0"},
      {"kubernetes.io/arch", n.arch},
      {"kubernetes.io/hostname", n.name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", n.instanceType},
      {"node-role.kubernetes.io/worker", ""},
      {"topology.ebs.csi.aws.com/zone", n.zone},
      {"topology.kubernetes.io/region", n.region},
      {"topology.kubernetes.io/zone", n.zone},
      {"placer.io/pool", n.pool},
      {"example.com/node-priority", std::to_string(1 + draw(p.seed, kNodeId, i) % 10)},
      {"environment", "production"},
      {"cost-center", n.pool == "gpu" ? "ml-platform" : "shared-compute"},
      {"feature.node.kubernetes.io/cpu-cpuid.AVX2", n.arch == "amd64" ? "true" : "false"},
      {"feature.node.kubernetes.io/cpu-cpuid.AVX512F", n.pool == "compute" ? "true" : "false"},
      {"feature.node.kubernetes.io/cpu-hardware_multithreading", "true"},
      {"feature.node.kubernetes.io/kernel-version.major", "5"},
      {"feature.node.kubernetes.io/kernel-version.minor", "10"},
      {"feature.node.kubernetes.io/system-os_release.ID", "amzn"},
      {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "2"},
      {"feature.node.kubernetes.io/storage-nonrotationaldisk", "true"},
  };
  if (n.gpus > 0) {
    n.labels.push_back({"nvidia.com/gpu.present", "true"});
    n.labels.push_back({"nvidia.com/gpu.product", n.instanceType[0] == 'p' ? "Tesla-V100-SXM2-16GB" : "NVIDIA-A10G"});
    n.labels.push_back({"nvidia.com/gpu.count", std::to_string(n.gpus)});
  }

  if (n.pool == "highmem") n.taints.push_back({"dedicated", "highmem", "NoSchedule"});
  if (n.pool == "gpu") n.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
  if (n.pool == "arm") n.taints.push_back({"kubernetes.io/arch", "arm64", "PreferNoSchedule"});
  if (n.pool == "general" && unit(p.seed, kPreferTaint, i) < 0.05)
    n.taints.push_back({"node.example.com/maintenance-soon", "true", "PreferNoSchedule"});
  if (n.cordoned) n.taints.push_back({"node.kubernetes.io/unschedulable", "", "NoSchedule"});

  // Images: the system ones, those of the pods placed here, then a few more
  // from past workloads, up to imagesPerNode.
  std::vector<int> images;
  for (int k = 0; k < kSystemImages && k < p.imagesPerNode; ++k) images.push_back(k);
  auto addImage = [&](int image) {
    if (static_cast<int>(images.size()) >= p.imagesPerNode) return;
    if (std::find(images.begin(), images.end(), image) == images.end()) images.push_back(image);
  };
  for (int s = 1; s < p.podsPerNode; ++s) {
    const App& app = kApps[appOf(p, static_cast<int64_t>(i) * p.podsPerNode + s)];
    addImage(app.image);
  }
  if (n.gpus > 0) addImage(kGpuWorkerImage);
  int catalogSize = static_cast<int>(imageCatalog().size());
  for (uint64_t k = 0; static_cast<int>(images.size()) < std::min(p.imagesPerNode, catalogSize) && k < 1000; ++k)
    addImage(kSystemImages + static_cast<int>(draw(p.seed, kNodeImages, static_cast<uint64_t>(i) * 1000 + k) %
                                              (catalogSize - kSystemImages)));
  n.images = std::move(images);
  return n;
}

namespace {

void addDefaultTolerations(PodSpec& s) {
  s.tolerations.push_back({"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300});
  s.tolerations.push_back({"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300});
}

void addPoolTolerations(PodSpec& s, const NodeSpec& n) {
  for (const TaintSpec& t : n.taints) {
    if (t.effect != "NoSchedule" || t.key == "node.kubernetes.io/unschedulable") continue;
    s.tolerations.push_back({t.key, "Equal", t.value, "NoSchedule", std::nullopt});
  }
}

}  // namespace

PodSpec podSpec(const GeneratorParams& p, int64_t podIndex) {
  PodSpec s;
  s.index = podIndex;
  int nodeIndex = static_cast<int>(podIndex / std::max(1, p.podsPerNode));
  int slot = static_cast<int>(podIndex % std::max(1, p.podsPerNode));
  NodeSpec n = nodeSpec(p, nodeIndex);
  s.nodeName = n.name;
  s.nodeIp = n.internalIp;
  uint64_t ipDraw = draw(p.seed, kPodIp, podIndex);
  s.podIp = "10." + std::to_string(64 + (ipDraw & 63)) + "." + std::to_string((ipDraw >> 8) & 255) + "." +
            std::to_string(1 + ((ipDraw >> 16) % 254));
  s.createdAt = static_cast<int64_t>(draw(p.seed, kPodMisc, podIndex) % (20 * 86400));
  s.uid = uuid(draw(p.seed, kPodUid, podIndex), draw(p.seed, kPodUid + 100, podIndex));

  if (slot == 0) {
    // node-exporter: a DaemonSet pod, pinned by matchFields like the controller does.
    s.app = "node-exporter";
    s.namespace_ = "monitoring";
    s.ownerKind = "DaemonSet";
    s.ownerApiVersion = "apps/v1";
    s.ownerName = "node-exporter";
    s.ownerUid = uuid(draw(p.seed, kOwner, 1), draw(p.seed, kOwner, 2));
    s.generateName = "node-exporter-";
    s.name = "node-exporter-" + suffix(draw(p.seed, kPodName, podIndex), 5);
    s.serviceAccount = "node-exporter";
    s.labels = {{"app.kubernetes.io/name", "node-exporter"},
                {"app.kubernetes.io/part-of", "kube-prometheus"},
                {"app.kubernetes.io/version", "1.7.0"},
                {"controller-revision-hash", "6d9f8b7c4"},
                {"pod-template-generation", "4"}};
    s.annotations = {{"kubectl.kubernetes.io/default-container", "node-exporter"}};
    ContainerSpec c;
    c.name = "node-exporter";
    c.image = kNodeExporterImage;
    c.milliCpu = 50;
    c.memoryMi = 64;
    c.limitMilliCpu = 250;
    c.limitMemoryMi = 180;
    c.containerPort = 9100;
    c.hostPort = 9100;
    s.containers.push_back(c);
    s.requiredKey = "metadata.name";
    s.requiredValues = {n.name};
    s.requiredOnFields = true;
    s.tolerations.push_back({"", "Exists", "", "", std::nullopt});  // DaemonSets tolerate everything
    s.priority = 2000001000;
    s.priorityClassName = "system-node-critical";
    return s;
  }

  const int appIndex = appOf(p, podIndex);
  const int deployment = deploymentOf(p, podIndex);
  const App& app = kApps[appIndex];
  s.app = app.name;
  s.instance = instanceName(appIndex, deployment);
  s.namespace_ = app.namespace_;
  s.ownerKind = app.kind;
  s.ownerApiVersion = s.ownerKind == "Job" ? "batch/v1" : "apps/v1";
  s.serviceAccount = app.name;
  uint64_t nameDraw = draw(p.seed, kPodName, podIndex);
  std::string rsHash = rsHashOf(p, appIndex, deployment);
  if (s.ownerKind == "StatefulSet") {
    s.ownerName = s.instance;
    // The ordinal is the pod index: unique across the cluster (a StatefulSet
    // never has two pods of one name), however many pods the app gets.
    s.name = std::string(app.name) + "-" + std::to_string(podIndex);
  } else if (s.ownerKind == "Job") {
    s.ownerName = std::string(app.name) + "-" + std::to_string(28391000 + podIndex % 1000);
    s.generateName = s.ownerName + "-";
    s.name = s.generateName + suffix(nameDraw, 5);
  } else {
    s.ownerName = s.instance + "-" + rsHash;
    s.generateName = s.ownerName + "-";
    s.name = s.generateName + suffix(nameDraw, 5);
  }
  s.ownerUid = uuid(draw(p.seed, kOwner, 1000 + appIndex * 100003 + deployment), draw(p.seed, kOwner, 2000));
  s.labels = {{"app.kubernetes.io/name", app.name},
              {"app.kubernetes.io/instance", s.instance},
              {"app.kubernetes.io/component", s.ownerKind == "StatefulSet" ? "database" : "server"},
              {"app.kubernetes.io/part-of", app.namespace_},
              {"app.kubernetes.io/managed-by", "Helm"},
              {"app.kubernetes.io/version", imageCatalog()[app.image].tag},
              {"team", app.team},
              {"tier", s.ownerKind == "Job" ? "batch" : "online"}};
  if (s.ownerKind == "ReplicaSet") s.labels.push_back({"pod-template-hash", rsHash});
  if (s.ownerKind == "StatefulSet") {
    s.labels.push_back({"controller-revision-hash", std::string(app.name) + "-" + rsHash.substr(0, 9)});
    s.labels.push_back({"statefulset.kubernetes.io/pod-name", s.name});
  }
  if (s.ownerKind == "Job") {
    s.labels.push_back({"batch.kubernetes.io/job-name", s.ownerName});
    s.labels.push_back({"batch.kubernetes.io/controller-uid", s.ownerUid});
  }
  s.annotations = {{"kubectl.kubernetes.io/restartedAt", "2026-11-14T09:12:44Z"},
                   {"prometheus.io/scrape", app.port ? "true" : "false"},
                   {"prometheus.io/port", std::to_string(app.port ? app.port : 9090)},
                   {"checksum/config", hex(draw(p.seed, 55, appOf(p, podIndex)), 16) +
                                           hex(draw(p.seed, 56, appOf(p, podIndex)), 16) +
                                           hex(draw(p.seed, 57, appOf(p, podIndex)), 16) +
                                           hex(draw(p.seed, 58, appOf(p, podIndex)), 16)},
                   {"cluster-autoscaler.kubernetes.io/safe-to-evict", s.ownerKind == "StatefulSet" ? "false" : "true"}};

  // Size: the node's capacity (minus the DaemonSet pod) shared by the other slots,
  // at most 85% of it in total, each pod taking 25-100% of its share.
  int others = std::max(1, p.podsPerNode - 1);
  double f = 0.25 + 0.75 * unit(p.seed, kPodSize, podIndex);
  double fm = 0.25 + 0.75 * unit(p.seed, kPodMem, podIndex);
  int64_t shareCpu = (n.allocatableMilliCpu * 85 / 100 - 50) / others;
  int64_t shareMemMi = (n.allocatableMemoryKi / 1024 * 85 / 100 - 64) / others;
  int64_t shareEphMi = (n.allocatableEphemeral / (1024 * 1024) * 85 / 100) / others;
  int64_t podCpu = static_cast<int64_t>(shareCpu * f);
  int64_t podMem = static_cast<int64_t>(shareMemMi * fm);
  if (app.kata) {
    s.overheadMilliCpu = std::max<int64_t>(1, podCpu / 20);
    s.overheadMemoryMi = std::max<int64_t>(1, podMem / 20);
  }
  int64_t sidecarCpu = app.sidecar ? podCpu * 15 / 100 : 0;
  int64_t sidecarMem = app.sidecar ? podMem * 15 / 100 : 0;
  int64_t mainCpu = podCpu - sidecarCpu - s.overheadMilliCpu;
  int64_t mainMem = podMem - sidecarMem - s.overheadMemoryMi;
  bool bestEffort = draw(p.seed, kPodMisc + 1, podIndex) % 25 == 0 && !app.sidecar && !app.kata;

  if (app.init) {
    ContainerSpec init;
    init.name = "migrate";
    init.image = kMigrateImage;
    init.milliCpu = roundTo(std::max<int64_t>(1, mainCpu / 2), 1);
    init.memoryMi = std::max<int64_t>(1, mainMem / 2);
    s.initContainers.push_back(init);
  }
  if (app.sidecar) {
    ContainerSpec side;
    side.name = "log-shipper";
    side.image = kLogShipperImage;
    side.restartable = true;
    side.milliCpu = std::max<int64_t>(1, sidecarCpu);
    side.memoryMi = std::max<int64_t>(1, sidecarMem);
    side.limitMemoryMi = side.memoryMi * 2;
    side.containerPort = 2020;
    s.initContainers.push_back(side);
  }
  ContainerSpec main;
  main.name = app.name;
  main.image = app.image;
  main.containerPort = app.port;
  if (!bestEffort) {
    main.milliCpu = std::max<int64_t>(1, mainCpu);
    main.memoryMi = std::max<int64_t>(1, mainMem);
    main.limitMilliCpu = main.milliCpu * 2;
    main.limitMemoryMi = main.memoryMi;
    if (draw(p.seed, kPodEph, podIndex) % 3 == 0) main.ephemeralMi = std::max<int64_t>(1, shareEphMi / 2);
  }
  if (n.gpus > 0 && slot <= n.gpus) {
    main.name = "gpu-worker";
    main.image = kGpuWorkerImage;
    main.gpus = 1;
  }
  s.containers.push_back(main);
  if (app.sidecar && draw(p.seed, kPodMisc + 2, podIndex) % 2 == 0 && !bestEffort) {
    // A second regular container with no cpu request: exercises the non-zero defaults.
    ContainerSpec reloader;
    reloader.name = "config-reloader";
    reloader.image = 33;
    reloader.memoryMi = 16;
    reloader.limitMemoryMi = 32;
    s.containers.push_back(reloader);
  }
  addDefaultTolerations(s);
  addPoolTolerations(s, n);
  if (deploymentHasAffinity(p, appIndex, deployment)) s.antiAffinityByApp = true;
  if (s.ownerKind == "StatefulSet") {
    s.requiredKey = "topology.kubernetes.io/zone";
    s.requiredValues = {n.zone};  // its volume lives in this zone
  }
  if (s.ownerKind == "Job") s.preferred.push_back({50, "eks.amazonaws.com/capacityType", {"SPOT"}});
  if (n.pool == "gpu") s.nodeSelector.push_back({"nvidia.com/gpu.present", "true"});
  return s;
}

PodSpec pendingPodSpec(const GeneratorParams& p, int index) {
  // The pending pod looks like a fresh replica of a Deployment: what the webhook sees.
  PodSpec s;
  s.pending = true;
  s.index = index;
  int kind = index % kPendingShapes;
  // A Deployment of one of the ReplicaSet apps (apps 0, 1, 3, 4, 5, ...):
  // the pending pod is its next replica, under its ReplicaSet and Service.
  int appIndex = (index * 7 + 3) % kAppCount;
  while (std::string_view(kApps[appIndex].kind) != "ReplicaSet") appIndex = (appIndex + 1) % kAppCount;
  const int deployment = static_cast<int>(draw(p.seed, kPending, index) % deploymentsPerApp(p));
  const App& app = kApps[appIndex];
  s.app = app.name;
  s.instance = instanceName(appIndex, deployment);
  s.namespace_ = app.namespace_;
  s.ownerKind = "ReplicaSet";
  s.ownerApiVersion = "apps/v1";
  std::string rsHash = rsHashOf(p, appIndex, deployment);
  s.ownerName = s.instance + "-" + rsHash;
  s.ownerUid = uuid(draw(p.seed, kOwner, 1000 + appIndex * 100003 + deployment), draw(p.seed, kOwner, 2000));
  s.generateName = s.ownerName + "-";
  s.serviceAccount = app.name;
  s.labels = {{"app.kubernetes.io/name", app.name},
              {"app.kubernetes.io/instance", s.instance},
              {"app.kubernetes.io/part-of", app.namespace_},
              {"app.kubernetes.io/managed-by", "Helm"},
              {"pod-template-hash", rsHash},
              {"team", app.team}};
  s.annotations = {{"kubectl.kubernetes.io/restartedAt", "2026-11-21T20:02:13Z"},
                   {"prometheus.io/scrape", "true"}};
  ContainerSpec main;
  main.name = app.name;
  main.image = app.image;
  main.containerPort = app.port;
  main.milliCpu = 500;
  main.memoryMi = 1024;
  main.limitMilliCpu = 1000;
  main.limitMemoryMi = 1024;
  addDefaultTolerations(s);
  switch (kind) {
    case 0:  // plain
      break;
    case 1:  // zone preference and spread away from its own replicas
      s.preferred.push_back({80, "topology.kubernetes.io/zone", {std::string(kRegion) + "a"}});
      s.preferred.push_back({20, "eks.amazonaws.com/capacityType", {"ON_DEMAND"}});
      s.antiAffinityByApp = true;
      break;
    case 2:  // highmem: tolerates the dedicated taint and requires the pool
      main.memoryMi = 16384;
      main.limitMemoryMi = 16384;
      s.tolerations.push_back({"dedicated", "Equal", "highmem", "NoSchedule", std::nullopt});
      s.requiredKey = "placer.io/pool";
      s.requiredValues = {"highmem"};
      break;
    case 3: {  // sidecar + init container
      ContainerSpec init;
      init.name = "migrate";
      init.image = kMigrateImage;
      init.milliCpu = 1500;
      init.memoryMi = 256;
      s.initContainers.push_back(init);
      ContainerSpec side;
      side.name = "log-shipper";
      side.image = kLogShipperImage;
      side.restartable = true;
      side.milliCpu = 100;
      side.memoryMi = 128;
      s.initContainers.push_back(side);
      break;
    }
    case 4:  // GPU training job
      main.image = kGpuWorkerImage;
      main.name = "trainer";
      main.milliCpu = 4000;
      main.memoryMi = 32768;
      main.limitMemoryMi = 32768;
      main.gpus = 1;
      s.tolerations.push_back({"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt});
      s.nodeSelector.push_back({"nvidia.com/gpu.present", "true"});
      break;
    case 5:  // best effort on arm, tolerating its preference taint
      main.milliCpu = -1;
      main.memoryMi = -1;
      main.limitMilliCpu = -1;
      main.limitMemoryMi = -1;
      s.tolerations.push_back({"kubernetes.io/arch", "Equal", "arm64", "PreferNoSchedule", std::nullopt});
      s.preferred.push_back({100, "kubernetes.io/arch", {"arm64"}});
      break;
    case 6:  // one replica per node: required anti-affinity on the hostname
      s.requiredAntiAffinity = true;
      break;
    case 7:  // next to its replicas: required affinity on the zone
      s.requiredZoneAffinity = true;
      break;
    case 8:  // spread evenly across zones: DoNotSchedule, maxSkew 1
      s.zoneSpread = true;
      break;
  }
  s.containers.push_back(main);
  return s;
}

}  // namespace generator

namespace {

using namespace generator;
using nlohmann::json;

constexpr int64_t kBaseTime = 1793404800;  // 2026-10-31T00:00:00Z

std::string timestamp(int64_t offsetSeconds) {
  std::time_t t = static_cast<std::time_t>(kBaseTime + offsetSeconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cpuQuantity(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string memQuantityMi(int64_t mi) {
  if (mi % 1024 == 0) return std::to_string(mi / 1024) + "Gi";
  return std::to_string(mi) + "Mi";
}

json labelsJson(const StringPairs& pairs) {
  json o = json::object();
  for (const auto& [k, v] : pairs) o[k] = v;
  return o;
}

// managedFields shaped like the real ones: a fieldsV1 tree naming each set field.
json fieldsFor(const StringPairs& labels, const char* section) {
  json f = json::object();
  for (const auto& [k, v] : labels) f["f:" + k] = json::object();
  return json{{"f:metadata", {{std::string("f:") + section, f}}}};
}

json nodeJson(const GeneratorParams& p, const NodeSpec& n) {
  json capacity = {{"cpu", std::to_string(n.capacityCpu)},
                   {"memory", std::to_string(n.capacityMemoryKi) + "Ki"},
                   {"ephemeral-storage", std::to_string(n.capacityEphemeral / 1024) + "Ki"},
                   {"pods", std::to_string(n.maxPods)},
                   {"hugepages-1Gi", "0"},
                   {"hugepages-2Mi", "0"},
                   {"attachable-volumes-aws-ebs", std::to_string(n.ebsVolumes)}};
  json allocatable = {{"cpu", cpuQuantity(n.allocatableMilliCpu)},
                      {"memory", std::to_string(n.allocatableMemoryKi) + "Ki"},
                      {"ephemeral-storage", std::to_string(n.allocatableEphemeral)},
                      {"pods", std::to_string(n.maxPods)},
                      {"hugepages-1Gi", "0"},
                      {"hugepages-2Mi", "0"},
                      {"attachable-volumes-aws-ebs", std::to_string(n.ebsVolumes)}};
  if (n.gpus > 0) {
    capacity["nvidia.com/gpu"] = std::to_string(n.gpus);
    allocatable["nvidia.com/gpu"] = std::to_string(n.gpus);
  }
  std::string heartbeat = timestamp(20 * 86400 + 3600);
  std::string since = timestamp(static_cast<int64_t>(draw(p.seed, kNodeId, n.index) % (10 * 86400)));
  json conditions = json::array();
  auto condition = [&](const char* type, const char* status, const char* reason, const char* message) {
    conditions.push_back({{"type", type},
                          {"status", status},
                          {"lastHeartbeatTime", heartbeat},
                          {"lastTransitionTime", since},
                          {"reason", reason},
                          {"message", message}});
  };
  condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available");
  condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure");
  condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available");
  condition("Ready", "True", "KubeletReady", "kubelet is posting ready status");

  json images = json::array();
  for (int i : n.images) {
    const ImageSpec& img = imageCatalog()[i];
    images.push_back({{"names", {img.repository + "@sha256:" + img.digest, img.repository + ":" + img.tag}},
                      {"sizeBytes", img.sizeBytes}});
  }
  json taints = json::array();
  for (const TaintSpec& t : n.taints) {
    json tj = {{"key", t.key}, {"effect", t.effect}};
    if (!t.value.empty()) tj["value"] = t.value;
    if (t.key == "node.kubernetes.io/unschedulable") tj["timeAdded"] = since;
    taints.push_back(tj);
  }
  std::string instanceId = "i-0" + hex(draw(p.seed, kNodeId, n.index), 16);
  std::string dns = "ip-" + n.internalIp + ".ec2.internal";
  std::replace(dns.begin(), dns.begin() + static_cast<long>(dns.find(".ec2")), '.', '-');
  std::string podCidr = "10." + std::to_string(128 + n.index / 256 % 128) + "." + std::to_string(n.index % 256) + ".0/24";

  json spec = {{"providerID", "aws:///" + n.zone + "/" + instanceId}, {"podCIDR", podCidr}, {"podCIDRs", {podCidr}}};
  if (!taints.empty()) spec["taints"] = taints;
  if (n.cordoned) spec["unschedulable"] = true;

  json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", n.name},
        {"uid", uuid(draw(p.seed, kNodeId + 50, n.index), draw(p.seed, kNodeId + 51, n.index))},
        {"resourceVersion", std::to_string(4000000 + n.index * 17)},
        {"creationTimestamp", timestamp(static_cast<int64_t>(draw(p.seed, kNodeId + 52, n.index) % (10 * 86400)))},
        {"labels", labelsJson(n.labels)},
        {"annotations",
         {{"alpha.kubernetes.io/provided-node-ip", n.internalIp},
          {"csi.volume.kubernetes.io/nodeid", "{\"ebs.csi.aws.com\":\"" + instanceId + "\"}"},
          {"node.alpha.kubernetes.io/ttl", "0"},
          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
        {"managedFields",
         {{{"manager", "kubelet"},
           {"operation", "Update"},
           {"apiVersion", "v1"},
           {"time", heartbeat},
           {"fieldsType", "FieldsV1"},
           {"fieldsV1", fieldsFor(n.labels, "labels")}},
          {{"manager", "kubelet"},
           {"operation", "Update"},
           {"apiVersion", "v1"},
           {"time", heartbeat},
           {"fieldsType", "FieldsV1"},
           {"fieldsV1",
            {{"f:status",
              {{"f:conditions", {{"k:{\"type\":\"Ready\"}", {{".", json::object()}, {"f:lastHeartbeatTime", json::object()}}}}},
               {"f:images", json::object()}}}}},
           {"subresource", "status"}}}}}},
      {"spec", spec},
      {"status",
       {{"capacity", capacity},
        {"allocatable", allocatable},
        {"conditions", conditions},
        {"addresses",
         {{{"type", "InternalIP"}, {"address", n.internalIp}},
          {{"type", "InternalDNS"}, {"address", dns}},
          {{"type", "Hostname"}, {"address", dns}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
        {"nodeInfo",
         {{"machineID", hex(draw(p.seed, kNodeId + 60, n.index), 16) + hex(draw(p.seed, kNodeId + 61, n.index), 16)},
          {"systemUUID", "ec2" + hex(draw(p.seed, kNodeId + 62, n.index), 13) + "-0000-0000-0000-000000000000"},
          {"bootID", uuid(draw(p.seed, kNodeId + 63, n.index), draw(p.seed, kNodeId + 64, n.index))},
          {"kernelVersion", "5.10.201-191.748.amzn2.x86_64"},
          {"osImage", "Amazon Linux 2"},
          {"containerRuntimeVersion", "containerd://1.7.11"},
          {"kubeletVersion", "v1.29.0-eks-5e0fdde"},
          {"kubeProxyVersion", "v1.29.0-eks-5e0fdde"},
          {"operatingSystem", "linux"},
          {"architecture", n.arch}}},
        {"images", images}}}};
  return node;
}

json containerJson(const PodSpec& s, const ContainerSpec& c, bool init) {
  json requests = json::object();
  json limits = json::object();
  if (c.milliCpu >= 0) requests["cpu"] = cpuQuantity(c.milliCpu);
  if (c.memoryMi >= 0) requests["memory"] = memQuantityMi(c.memoryMi);
  if (c.ephemeralMi >= 0) requests["ephemeral-storage"] = memQuantityMi(c.ephemeralMi);
  if (c.limitMilliCpu >= 0) limits["cpu"] = cpuQuantity(c.limitMilliCpu);
  if (c.limitMemoryMi >= 0) limits["memory"] = memQuantityMi(c.limitMemoryMi);
  if (c.gpus > 0) {
    requests["nvidia.com/gpu"] = std::to_string(c.gpus);
    limits["nvidia.com/gpu"] = std::to_string(c.gpus);
  }
  json resources = json::object();
  if (!requests.empty()) resources["requests"] = requests;
  if (!limits.empty()) resources["limits"] = limits;

  std::string token = "kube-api-access-" + s.uid.substr(0, 5);
  json container = {
      {"name", c.name},
      {"image", imageName(c.image)},
      {"imagePullPolicy", "IfNotPresent"},
      {"resources", resources},
      {"terminationMessagePath", "/dev/termination-log"},
      {"terminationMessagePolicy", "File"},
      {"volumeMounts",
       {{{"name", token}, {"readOnly", true}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}}},
  };
  if (c.restartable) container["restartPolicy"] = "Always";
  if (!init) {
    container["env"] = {{{"POD_NAME", ""}},
                        {{"name", "POD_NAMESPACE"},
                         {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}},
                        {{"name", "GOMAXPROCS"},
                         {"valueFrom", {{"resourceFieldRef", {{"resource", "limits.cpu"}, {"divisor", "0"}}}}}},
                        {{"name", "LOG_LEVEL"}, {"value", "info"}},
                        {{"name", "OTEL_EXPORTER_OTLP_ENDPOINT"}, {"value", "http://otel-collector.monitoring:4317"}}};
    container["env"][0] = {{"name", "POD_NAME"},
                           {"valueFrom", {{"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.name"}}}}}};
    container["securityContext"] = {{"allowPrivilegeEscalation", false},
                                    {"readOnlyRootFilesystem", true},
                                    {"runAsNonRoot", true},
                                    {"capabilities", {{"drop", {"ALL"}}}}};
    container["volumeMounts"].push_back({{"name", "config"}, {"mountPath", "/etc/" + s.app}});
    container["volumeMounts"].push_back({{"name", "tmp"}, {"mountPath", "/tmp"}});
  }
  if (c.containerPort > 0) {
    json port = {{"name", c.hostPort > 0 ? "metrics" : "http"}, {"containerPort", c.containerPort}, {"protocol", "TCP"}};
    if (c.hostPort > 0) port["hostPort"] = c.hostPort;
    container["ports"] = {port};
    if (!init || c.restartable) {
      container["readinessProbe"] = {{"httpGet", {{"path", "/ready"}, {"port", c.containerPort}, {"scheme", "HTTP"}}},
                                     {"initialDelaySeconds", 5},
                                     {"periodSeconds", 10},
                                     {"timeoutSeconds", 1},
                                     {"successThreshold", 1},
                                     {"failureThreshold", 3}};
      container["livenessProbe"] = {{"httpGet", {{"path", "/healthz"}, {"port", c.containerPort}, {"scheme", "HTTP"}}},
                                    {"initialDelaySeconds", 15},
                                    {"periodSeconds", 20},
                                    {"timeoutSeconds", 1},
                                    {"successThreshold", 1},
                                    {"failureThreshold", 3}};
    }
  }
  return container;
}

json containerStatusJson(const GeneratorParams& p, const PodSpec& s, const ContainerSpec& c, bool init, int n) {
  const ImageSpec& img = imageCatalog()[c.image];
  std::string started = timestamp(s.createdAt + 20 + n);
  json st = {{"name", c.name},
             {"image", imageName(c.image)},
             {"imageID", img.repository + "@sha256:" + img.digest},
             {"containerID", "containerd://" + hex(draw(p.seed, 300 + n, s.index), 16) +
                                 hex(draw(p.seed, 310 + n, s.index), 16) + hex(draw(p.seed, 320 + n, s.index), 16) +
                                 hex(draw(p.seed, 330 + n, s.index), 16)},
             {"lastState", json::object()},
             {"restartCount", static_cast<int>(draw(p.seed, 340 + n, s.index) % 7 == 0 ? 1 : 0)}};
  if (init && !c.restartable) {
    st["state"] = {{"terminated",
                    {{"exitCode", 0},
                     {"reason", "Completed"},
                     {"startedAt", started},
                     {"finishedAt", timestamp(s.createdAt + 25 + n)},
                     {"containerID", st["containerID"]}}}};
    st["ready"] = true;
    st["started"] = false;
  } else {
    st["state"] = {{"running", {{"startedAt", started}}}};
    st["ready"] = true;
    st["started"] = true;
  }
  return st;
}

json tolerationJson(const TolerationSpec& t) {
  json j = json::object();
  if (!t.key.empty()) j["key"] = t.key;
  j["operator"] = t.op;
  if (!t.value.empty()) j["value"] = t.value;
  if (!t.effect.empty()) j["effect"] = t.effect;
  if (t.seconds) j["tolerationSeconds"] = *t.seconds;
  return j;
}

json podJson(const GeneratorParams& p, const PodSpec& s) {
  json metadata = {{"namespace", s.namespace_}, {"labels", labelsJson(s.labels)}};
  if (!s.annotations.empty()) metadata["annotations"] = labelsJson(s.annotations);
  if (!s.generateName.empty()) metadata["generateName"] = s.generateName;
  json owner = {{"apiVersion", s.ownerApiVersion},
                {"kind", s.ownerKind},
                {"name", s.ownerName},
                {"uid", s.ownerUid},
                {"controller", true},
                {"blockOwnerDeletion", true}};
  metadata["ownerReferences"] = {owner};
  std::string created = timestamp(s.createdAt);
  if (!s.pending) {
    metadata["name"] = s.name;
    metadata["uid"] = s.uid;
    metadata["resourceVersion"] = std::to_string(5000000 + s.index * 3);
    metadata["creationTimestamp"] = created;
    metadata["managedFields"] = {
        {{"manager", "kube-controller-manager"},
         {"operation", "Update"},
         {"apiVersion", "v1"},
         {"time", created},
         {"fieldsType", "FieldsV1"},
         {"fieldsV1",
          {{"f:metadata",
            {{"f:generateName", json::object()},
             {"f:labels", fieldsFor(s.labels, "labels")["f:metadata"]["f:labels"]},
             {"f:ownerReferences", {{"k:{\"uid\":\"" + s.ownerUid + "\"}", json::object()}}}}},
           {"f:spec",
            {{"f:containers", {{"k:{\"name\":\"" + s.containers[0].name + "\"}", {{".", json::object()},
                                                                                   {"f:image", json::object()},
                                                                                   {"f:resources", json::object()}}}}},
             {"f:dnsPolicy", json::object()},
             {"f:restartPolicy", json::object()},
             {"f:schedulerName", json::object()},
             {"f:tolerations", json::object()}}}}}},
        {{"manager", "kubelet"},
         {"operation", "Update"},
         {"apiVersion", "v1"},
         {"time", timestamp(s.createdAt + 30)},
         {"fieldsType", "FieldsV1"},
         {"fieldsV1",
          {{"f:status",
            {{"f:conditions", {{"k:{\"type\":\"Ready\"}", {{".", json::object()}, {"f:status", json::object()}}}}},
             {"f:containerStatuses", json::object()},
             {"f:hostIP", json::object()},
             {"f:phase", json::object()},
             {"f:podIP", json::object()},
             {"f:startTime", json::object()}}}}},
         {"subresource", "status"}}};
  }

  std::string token = "kube-api-access-" + (s.pending ? std::string("x7k2q") : s.uid.substr(0, 5));
  json volumes = {
      {{"name", token},
       {"projected",
        {{"defaultMode", 420},
         {"sources",
          {{{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}},
           {{"configMap", {{"name", "kube-root-ca.crt"}, {"items", {{{"key", "ca.crt"}, {"path", "ca.crt"}}}}}}},
           {{"downwardAPI",
             {{"items",
               {{{"path", "namespace"},
                 {"fieldRef", {{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}}}}}}}}}}}};
  if (s.ownerKind != "DaemonSet") {
    volumes.push_back({{"name", "config"}, {"configMap", {{"name", s.app + "-config"}, {"defaultMode", 420}}}});
    volumes.push_back({{"name", "tmp"}, {"emptyDir", {{"sizeLimit", "1Gi"}}}});
  }

  json containers = json::array();
  for (const ContainerSpec& c : s.containers) {
    json cj = containerJson(s, c, false);
    if (!s.pending) cj["volumeMounts"][0]["name"] = token;
    containers.push_back(cj);
  }
  json spec = {{"containers", containers},
               {"volumes", volumes},
               {"restartPolicy", s.ownerKind == "Job" ? "OnFailure" : "Always"},
               {"terminationGracePeriodSeconds", 30},
               {"dnsPolicy", "ClusterFirst"},
               {"serviceAccountName", s.serviceAccount},
               {"serviceAccount", s.serviceAccount},
               {"securityContext", {{"runAsUser", 10001}, {"runAsGroup", 10001}, {"fsGroup", 10001}}},
               {"schedulerName", "default-scheduler"},
               {"priority", s.priority},
               {"enableServiceLinks", false},
               {"preemptionPolicy", "PreemptLowerPriority"}};
  if (!s.priorityClassName.empty()) spec["priorityClassName"] = s.priorityClassName;
  if (!s.initContainers.empty()) {
    json inits = json::array();
    for (const ContainerSpec& c : s.initContainers) inits.push_back(containerJson(s, c, true));
    spec["initContainers"] = inits;
  }
  if (s.overheadMilliCpu > 0) {
    spec["runtimeClassName"] = "kata-qemu";
    spec["overhead"] = {{"cpu", cpuQuantity(s.overheadMilliCpu)}, {"memory", memQuantityMi(s.overheadMemoryMi)}};
  }
  if (!s.nodeName.empty()) spec["nodeName"] = s.nodeName;
  if (!s.nodeSelector.empty()) spec["nodeSelector"] = labelsJson(s.nodeSelector);
  json tolerations = json::array();
  for (const TolerationSpec& t : s.tolerations) tolerations.push_back(tolerationJson(t));
  spec["tolerations"] = tolerations;

  json affinity = json::object();
  if (!s.requiredKey.empty()) {
    json req = {{"key", s.requiredKey}, {"operator", "In"}, {"values", s.requiredValues}};
    json term = s.requiredOnFields ? json{{"matchFields", {req}}} : json{{"matchExpressions", {req}}};
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", {term}}};
  }
  for (const PreferredSpec& pref : s.preferred) {
    affinity["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"].push_back(
        {{"weight", pref.weight},
         {"preference", {{"matchExpressions", {{{"key", pref.key}, {"operator", "In"}, {"values", pref.values}}}}}}});
  }
  const json instanceSelector = {{"matchLabels", {{"app.kubernetes.io/name", s.app}, {"app.kubernetes.io/instance", s.instance}}}};
  if (s.antiAffinityByApp) {
    affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = {
        {{"weight", 100},
         {"podAffinityTerm", {{"labelSelector", instanceSelector}, {"topologyKey", "kubernetes.io/hostname"}}}}};
  }
  if (s.requiredAntiAffinity) {
    affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {{"labelSelector", instanceSelector}, {"topologyKey", "kubernetes.io/hostname"}}};
  }
  if (s.requiredZoneAffinity) {
    affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {{"labelSelector", instanceSelector}, {"topologyKey", "topology.kubernetes.io/zone"}}};
  }
  if (!affinity.empty()) spec["affinity"] = affinity;
  if (s.zoneSpread) {
    spec["topologySpreadConstraints"] = {{{"maxSkew", 1},
                                          {"topologyKey", "topology.kubernetes.io/zone"},
                                          {"whenUnsatisfiable", "DoNotSchedule"},
                                          {"labelSelector", instanceSelector}}};
  }

  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", spec}};
  if (s.pending) {
    pod["status"] = json::object();
    return pod;
  }
  std::string ready = timestamp(s.createdAt + 40);
  json conditions = {
      {{"type", "PodReadyToStartContainers"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", timestamp(s.createdAt + 8)}},
      {{"type", "Initialized"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", timestamp(s.createdAt + 26)}},
      {{"type", "Ready"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", ready}},
      {{"type", "ContainersReady"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", ready}},
      {{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr}, {"lastTransitionTime", timestamp(s.createdAt + 1)}}};
  json containerStatuses = json::array();
  int n = 0;
  for (const ContainerSpec& c : s.containers) containerStatuses.push_back(containerStatusJson(p, s, c, false, n++));
  json status = {{"phase", "Running"},
                 {"conditions", conditions},
                 {"hostIP", s.nodeIp},
                 {"hostIPs", {{{"ip", s.nodeIp}}}},
                 {"podIP", s.podIp},
                 {"podIPs", {{{"ip", s.podIp}}}},
                 {"startTime", timestamp(s.createdAt + 2)},
                 {"containerStatuses", containerStatuses},
                 {"qosClass", s.containers[0].milliCpu < 0 ? "BestEffort" : "Burstable"}};
  if (!s.initContainers.empty()) {
    json initStatuses = json::array();
    for (const ContainerSpec& c : s.initContainers) initStatuses.push_back(containerStatusJson(p, s, c, true, n++));
    status["initContainerStatuses"] = initStatuses;
  }
  pod["status"] = status;
  return pod;
}

}  // namespace

int64_t generatedPodCount(const GeneratorParams& params) {
  return static_cast<int64_t>(std::max(0, params.nodes)) * std::max(0, params.podsPerNode);
}

std::string generatedNodeName(const GeneratorParams& params, int nodeIndex) {
  return nodeSpec(params, nodeIndex).name;
}

nlohmann::json generateNode(const GeneratorParams& params, int nodeIndex) {
  return nodeJson(params, nodeSpec(params, nodeIndex));
}

nlohmann::json generatePod(const GeneratorParams& params, int64_t podIndex) {
  return podJson(params, podSpec(params, podIndex));
}

nlohmann::json generatePendingPod(const GeneratorParams& params, int index) {
  return podJson(params, pendingPodSpec(params, index));
}

std::vector<nlohmann::json> generateWorkloadObjects(const GeneratorParams& params) {
  std::vector<json> out;
  std::vector<std::string> namespaces = {"monitoring"};
  for (const App& app : kApps) namespaces.push_back(app.namespace_);
  std::sort(namespaces.begin(), namespaces.end());
  namespaces.erase(std::unique(namespaces.begin(), namespaces.end()), namespaces.end());
  for (const std::string& ns : namespaces)
    out.push_back({{"apiVersion", "v1"},
                   {"kind", "Namespace"},
                   {"metadata", {{"name", ns}, {"labels", {{"kubernetes.io/metadata.name", ns}, {"placer.io/enabled", "true"}}}}}});
  const int deployments = deploymentsPerApp(params);
  for (int a = 0; a < kAppCount; ++a) {
    const App& app = kApps[a];
    if (std::string_view(app.kind) == "Job") continue;
    for (int d = 0; d < deployments; ++d) {
      const std::string instance = instanceName(a, d);
      const json selector = {{"app.kubernetes.io/name", app.name}, {"app.kubernetes.io/instance", instance}};
      if (app.port != 0)
        out.push_back({{"apiVersion", "v1"},
                       {"kind", "Service"},
                       {"metadata", {{"name", instance}, {"namespace", app.namespace_}}},
                       {"spec", {{"selector", selector}, {"ports", {{{"port", app.port}, {"targetPort", app.port}}}}}}});
      if (std::string_view(app.kind) == "ReplicaSet") {
        json matchLabels = selector;
        matchLabels["pod-template-hash"] = rsHashOf(params, a, d);
        out.push_back({{"apiVersion", "apps/v1"},
                       {"kind", "ReplicaSet"},
                       {"metadata", {{"name", instance + "-" + rsHashOf(params, a, d)}, {"namespace", app.namespace_}}},
                       {"spec", {{"replicas", params.replicasPerDeployment}, {"selector", {{"matchLabels", matchLabels}}}}}});
      } else {
        out.push_back({{"apiVersion", "apps/v1"},
                       {"kind", "StatefulSet"},
                       {"metadata", {{"name", instance}, {"namespace", app.namespace_}}},
                       {"spec", {{"replicas", params.replicasPerDeployment}, {"selector", {{"matchLabels", selector}}}}}});
      }
    }
  }
  return out;
}

void writeSnapshot(std::ostream& out, const GeneratorParams& params, int pendingPodIndex) {
  std::map<std::string, std::vector<json>> workloads;
  for (json& o : generateWorkloadObjects(params)) {
    std::string kind = o["kind"];
    std::string key = kind == "Namespace" ? "namespaces" : kind == "Service" ? "services"
                      : kind == "ReplicaSet" ? "replicasets" : "statefulsets";
    workloads[key].push_back(std::move(o));
  }
  out << "{";
  for (const auto& [key, list] : workloads) {
    out << "\"" << key << "\":[";
    for (size_t i = 0; i < list.size(); ++i) out << (i ? ",\n" : "\n") << list[i].dump();
    out << "],\n";
  }
  out << "\"nodes\":[";
  for (int i = 0; i < params.nodes; ++i) out << (i ? ",\n" : "\n") << generateNode(params, i).dump();
  out << "],\n\"pods\":[";
  int64_t pods = generatedPodCount(params);
  for (int64_t i = 0; i < pods; ++i) out << (i ? ",\n" : "\n") << generatePod(params, i).dump();
  out << "]";
  if (pendingPodIndex >= 0) out << ",\n\"pod\":" << generatePendingPod(params, pendingPodIndex).dump();
  out << "}\n";
}

}  // namespace placer
