#include "scoring/plugins/node_resources_fit.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"
#include "scoring/resources.h"

namespace placer {

namespace {

constexpr std::string_view kArgsRoot = "NodeResourcesFitArgs";
// CycleState keys (upstream: "PreFilter" + Name, "PreScore" + Name).
constexpr std::string_view kPreFilterKey = "PreFilterNodeResourcesFit";
constexpr std::string_view kPreScoreKey = "PreScoreNodeResourcesFit";
// config.MaxCustomPriorityScore: shape scores are written on 0–10.
constexpr int64_t kMaxCustomPriorityScore = 10;

// ---------------------------------------------------------------------------
// Field errors worded like k8s.io/apimachinery/pkg/util/validation/field.

std::string invalid(std::string_view path, std::string_view value, std::string_view detail) {
  return std::string(path) + ": Invalid value: " + std::string(value) + ": " + std::string(detail);
}

// ---------------------------------------------------------------------------
// Decoding.

Result<std::vector<std::string>> decodeStringList(const nlohmann::json& value, const std::string& path) {
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return fieldError(path, "must be a list of strings");
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) return fieldError(indexedField(path, i), "must be a string");
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

Result<int64_t> decodeInt32(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number_integer()) return fieldError(path, "must be an integer");
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      return fieldError(path, "must fit in a 32-bit integer");
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  int64_t v = value.get<int64_t>();
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    return fieldError(path, "must fit in a 32-bit integer");
  return v;
}

struct DecodedStrategy {
  std::string type;
  std::vector<ResourceSpec> resources;
  bool hasRatio = false;  // requestedToCapacityRatio given (non-null)
  std::vector<ShapePoint> shape;
};

Result<std::vector<ShapePoint>> decodeShape(const nlohmann::json& value, const std::string& path) {
  std::vector<ShapePoint> shape;
  if (value.is_null()) return shape;
  if (!value.is_array()) return fieldError(path, "must be a list");
  for (size_t i = 0; i < value.size(); ++i) {
    const nlohmann::json& item = value[i];
    std::string itemPath = indexedField(path, i);
    if (!item.is_object()) return fieldError(itemPath, "must be an object");
    ShapePoint point;
    for (const auto& [key, v] : item.items()) {
      if (key == "utilization") {
        auto u = decodeInt32(v, itemPath + ".utilization");
        if (!u) return u.error();
        point.utilization = *u;
      } else if (key == "score") {
        auto s = decodeInt32(v, itemPath + ".score");
        if (!s) return s.error();
        point.score = *s;
      } else {
        return fieldError(itemPath + "." + key, "unknown field");
      }
    }
    shape.push_back(point);
  }
  return shape;
}

Result<DecodedStrategy> decodeStrategy(const nlohmann::json& value, const std::string& path) {
  DecodedStrategy out;
  if (!value.is_object()) return fieldError(path, "must be an object");
  for (const auto& [key, v] : value.items()) {
    if (key == "type") {
      if (!v.is_null() && !v.is_string()) return fieldError(path + ".type", "must be a string");
      if (v.is_string()) out.type = v.get<std::string>();
    } else if (key == "resources") {
      auto resources = decodeResourceSpecs(v, path + ".resources");
      if (!resources) return resources.error();
      out.resources = std::move(*resources);
    } else if (key == "requestedToCapacityRatio") {
      if (v.is_null()) continue;
      std::string ratioPath = path + ".requestedToCapacityRatio";
      if (!v.is_object()) return fieldError(ratioPath, "must be an object");
      out.hasRatio = true;
      for (const auto& [rkey, rv] : v.items()) {
        if (rkey != "shape") return fieldError(ratioPath + "." + rkey, "unknown field");
        auto shape = decodeShape(rv, ratioPath + ".shape");
        if (!shape) return shape.error();
        out.shape = std::move(*shape);
      }
    } else {
      return fieldError(path + "." + key, "unknown field");
    }
  }
  return out;
}

// validateFunctionShape (pkg/scheduler/apis/config/validation).
void validateShape(const std::vector<ShapePoint>& shape, const std::string& path, std::vector<std::string>& errs) {
  if (shape.empty()) {
    errs.push_back(path + ": Required value: at least one point must be specified");
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(invalid(indexedField(path, i) + ".utilization", std::to_string(shape[i].utilization),
                             "values must be sorted in increasing order"));
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    std::string pointPath = indexedField(path, i);
    if (shape[i].utilization < 0 || shape[i].utilization > 100)
      errs.push_back(invalid(pointPath + ".utilization", std::to_string(shape[i].utilization),
                             "not in valid range [0, 100]"));
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore)
      errs.push_back(invalid(pointPath + ".score", std::to_string(shape[i].score), "not in valid range [0, 10]"));
  }
}

// ---------------------------------------------------------------------------
// The plugin.

// What PreFilter computes once per pod: its requests, with the scalar resources
// that Filter has to check (non-zero, not ignored) sorted by name.
struct PodFitRequest final : StateData {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  int64_t ephemeralStorage = 0;
  std::vector<std::pair<std::string, int64_t>> scalars;
  size_t positiveScalars = 0;  // scalars with a quantity > 0: all short on a node that lacks them
};

// Past this many scalar resources, a node is checked from its own side: the
// few names it has (allocatable or in use) are looked up in the request, and
// every other requested name is one it lacks. Per node O(m log n) for m names
// on the node and n in the request, instead of O(n log m): a pod may request
// tens of thousands of distinct extended resources.
constexpr size_t kNodeSideScalars = 32;
// Reasons listed per node; past this, one more says how many were left out.
constexpr size_t kMaxListedShortfalls = 16;

constexpr std::string_view kRejectionsKey = "FilterNodeResourcesFitRejections";
struct Rejections final : StateData {
  std::deque<std::pair<uint64_t, Status>> byShape;  // by shortfall(); a deque: the Statuses stay put
  // For requests checked from the node's side: by (checks 0-3 and the
  // exceeds-node bit, then the request indices whose verdict differs from a
  // node lacking the name).
  std::deque<std::pair<std::vector<uint64_t>, Status>> byExceptions;
};

struct PodScoreRequests final : StateData {
  std::vector<int64_t> values;  // parallel to the configured resources
};

int64_t available(int64_t allocatable, int64_t requested) {
  return static_cast<int64_t>(static_cast<uint64_t>(allocatable) - static_cast<uint64_t>(requested));
}

class NodeResourcesFit final : public PreFilterPlugin, public FilterPlugin, public PreScorePlugin, public ScorePlugin {
 public:
  explicit NodeResourcesFit(NodeResourcesFitArgs args)
      : ignoredResources_(std::move(args.ignoredResources)),
        ignoredGroups_(std::move(args.ignoredResourceGroups)),
        strategy_(args.strategy),
        allocation_(std::move(args.resources), RequestBasis::NonZero) {
    std::sort(ignoredResources_.begin(), ignoredResources_.end());
    std::sort(ignoredGroups_.begin(), ignoredGroups_.end());
    for (const ShapePoint& p : args.shape)
      shape_.push_back(ShapePoint{p.utilization, p.score * (kMaxNodeScore / kMaxCustomPriorityScore)});
  }

  std::string_view name() const override { return names::kNodeResourcesFit; }
  bool resultsReusable() const override { return true; }  // see Plugin

  Status preFilter(CycleState& state, const Pod& pod, const ClusterView&) const override {
    auto request = std::make_unique<PodFitRequest>();
    request->milliCpu = pod.requests.milliCpu;
    request->memory = pod.requests.memory;
    request->ephemeralStorage = pod.requests.ephemeralStorage;
    for (const auto& [resource, quantity] : pod.requests.scalars) {
      if (quantity == 0 || !isScalarResourceName(resource)) continue;
      if (isExtendedResourceName(resource) && isIgnored(resource)) continue;
      request->scalars.emplace_back(resource, quantity);
      if (quantity > 0) ++request->positiveScalars;
    }
    state.write(kPreFilterKey, std::move(request));
    return Status::success();
  }

  Status filter(const CycleState& state, const Pod&, const NodeInfo& node) const override {
    const PodFitRequest* request = state.read<PodFitRequest>(kPreFilterKey);
    if (request == nullptr)
      return Status(Code::Error, "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");

    if (fits(*request, node)) return Status::success();
    return insufficientResources(*request, node);
  }

  void filterAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    const PodFitRequest* request = state.read<PodFitRequest>(kPreFilterKey);
    if (request == nullptr) return FilterPlugin::filterAll(state, pod, nodes, sink);
    // Rejections take one of a few shapes (which resources are short, and
    // whether one exceeds the node): one Status each.
    auto& byShape = state.memo<Rejections>(kRejectionsKey).byShape;
    auto reject = [&](size_t i, const NodeInfo& node) {
      uint64_t shape = shortfall(*request, node);
      if (shape == kUnkeyed) {
        std::vector<uint64_t> key = exceptionsKey(*request, node);
        auto& byExceptions = state.memo<Rejections>(kRejectionsKey).byExceptions;
        auto it = std::find_if(byExceptions.begin(), byExceptions.end(), [&](const auto& e) { return e.first == key; });
        if (it == byExceptions.end())
          it = byExceptions.insert(byExceptions.end(), {std::move(key), insufficientResources(*request, node)});
        sink.rejectWith(static_cast<uint32_t>(i), it->second);
        return;
      }
      auto it = std::find_if(byShape.begin(), byShape.end(), [&](const auto& e) { return e.first == shape; });
      if (it == byShape.end()) it = byShape.insert(byShape.end(), {shape, insufficientResources(*request, node)});
      sink.rejectWith(static_cast<uint32_t>(i), it->second);
    };
    // Most pods request no scalar resource: the base checks alone decide,
    // in a loop of their own (no scalar bookkeeping per node).
    if (request->scalars.empty()) {
      const BaseRequest base = baseOf(*request);  // in registers across the loop
      for (size_t i = 0; i < nodes.size(); ++i)
        if (!fitsBase(base, *nodes[i])) reject(i, *nodes[i]);
      return;
    }
    for (size_t i = 0; i < nodes.size(); ++i)
      if (!fits(*request, *nodes[i])) reject(i, *nodes[i]);
  }

  bool preScoreReadsFeasibleNodes() const override { return false; }

  Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const>,
                  const ClusterView&) const override {
    auto requests = std::make_unique<PodScoreRequests>();
    requests->values = allocation_.podRequests(pod);
    state.write(kPreScoreKey, std::move(requests));
    return Status::success();
  }

  int64_t score(const CycleState& state, const Pod& pod, const NodeInfo& node) const override {
    if (const PodScoreRequests* requests = state.read<PodScoreRequests>(kPreScoreKey))
      return scoreWith(node, requests->values);
    // PreScore did not run (upstream computes the requests on the spot).
    return scoreWith(node, allocation_.podRequests(pod));
  }

  void scoreAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const PodScoreRequests* requests = state.read<PodScoreRequests>(kPreScoreKey);
    std::vector<int64_t> computed;
    if (requests == nullptr) computed = allocation_.podRequests(pod);
    std::span<const int64_t> values = requests != nullptr ? std::span<const int64_t>(requests->values) : computed;
    switch (strategy_) {
      case ScoringStrategyType::LeastAllocated:
        allocation_.leastAllocatedAll(nodes, values, out);
        return;
      case ScoringStrategyType::MostAllocated:
        for (size_t i = 0; i < nodes.size(); ++i) out[i] = allocation_.mostAllocated(*nodes[i], values);
        return;
      case ScoringStrategyType::RequestedToCapacityRatio:
        for (size_t i = 0; i < nodes.size(); ++i)
          out[i] = allocation_.requestedToCapacityRatio(shape_, *nodes[i], values);
        return;
    }
  }

 private:
  bool isIgnored(std::string_view resource) const {
    if (std::binary_search(ignoredResources_.begin(), ignoredResources_.end(), resource)) return true;
    if (ignoredGroups_.empty()) return false;
    std::string_view group = resource.substr(0, resource.find('/'));
    return std::binary_search(ignoredGroups_.begin(), ignoredGroups_.end(), group);
  }

  int64_t scoreWith(const NodeInfo& node, std::span<const int64_t> podRequests) const {
    switch (strategy_) {
      case ScoringStrategyType::LeastAllocated: return allocation_.leastAllocated(node, podRequests);
      case ScoringStrategyType::MostAllocated: return allocation_.mostAllocated(node, podRequests);
      case ScoringStrategyType::RequestedToCapacityRatio:
        return allocation_.requestedToCapacityRatio(shape_, node, podRequests);
    }
    return 0;
  }

  // The pod count, cpu, memory and ephemeral storage checks of fits().
  struct BaseRequest {
    int64_t milliCpu;
    int64_t memory;
    int64_t ephemeralStorage;
  };
  static BaseRequest baseOf(const PodFitRequest& r) { return {r.milliCpu, r.memory, r.ephemeralStorage}; }
  static bool fitsBase(const BaseRequest& request, const NodeInfo& node) {
    const Resources& allocatable = node.allocatable();
    const Resources& used = node.requested;
    return static_cast<int64_t>(node.podCount) + 1 <= allocatable.pods &&
           !(request.milliCpu > 0 && request.milliCpu > available(allocatable.milliCpu, used.milliCpu)) &&
           !(request.memory > 0 && request.memory > available(allocatable.memory, used.memory)) &&
           !(request.ephemeralStorage > 0 &&
             request.ephemeralStorage > available(allocatable.ephemeralStorage, used.ephemeralStorage));
  }

  static bool fits(const PodFitRequest& request, const NodeInfo& node) {
    const Resources& allocatable = node.allocatable();
    const Resources& used = node.requested;
    bool fits = fitsBase(baseOf(request), node);
    if (fits && request.scalars.size() > kNodeSideScalars) return scalarShortfalls(request, node).count == 0;
    for (size_t i = 0; fits && i < request.scalars.size(); ++i) {
      const auto& [resource, quantity] = request.scalars[i];
      fits = quantity <= available(allocatable.scalar(resource), used.scalar(resource));
    }
    return fits;
  }

  // Calls f(check, resource, exceedsNode) for every resource the node lacks,
  // in upstream's order: check 0 is the pod count (resource ""), 1-3 cpu,
  // memory, ephemeral-storage, 4 + i the request's i-th scalar resource.
  // exceedsNode: larger than the whole node, so evicting pods cannot help.
  // Returning false from f stops the walk (only for the scalar resources).
  template <class F>
  static void forEachShortfall(const PodFitRequest& request, const NodeInfo& node, F&& f) {
    forEachBaseShortfall(request, node, f);
    const Resources& allocatable = node.allocatable();
    const Resources& used = node.requested;
    for (size_t i = 0; i < request.scalars.size(); ++i) {
      const auto& [resource, quantity] = request.scalars[i];
      int64_t alloc = allocatable.scalar(resource);
      if (quantity > available(alloc, used.scalar(resource)) && !f(4 + i, std::string_view(resource), quantity > alloc))
        return;
    }
  }

  // Checks 0-3 of forEachShortfall.
  template <class F>
  static void forEachBaseShortfall(const PodFitRequest& request, const NodeInfo& node, F&& f) {
    const Resources& allocatable = node.allocatable();
    const Resources& used = node.requested;
    if (static_cast<int64_t>(node.podCount) + 1 > allocatable.pods) f(size_t{0}, std::string_view(), false);
    auto check = [&](size_t index, int64_t requested, int64_t alloc, int64_t inUse, std::string_view resource) {
      if (requested > 0 && requested > available(alloc, inUse)) f(index, resource, requested > alloc);
    };
    check(1, request.milliCpu, allocatable.milliCpu, used.milliCpu, kResourceCpu);
    check(2, request.memory, allocatable.memory, used.memory, kResourceMemory);
    check(3, request.ephemeralStorage, allocatable.ephemeralStorage, used.ephemeralStorage, kResourceEphemeralStorage);
  }

  // Calls f(i, short, exceedsNode) for every request index i whose scalar
  // resource the node names (allocatable or in use), once each, in name
  // order. Every other requested name the node lacks: short and exceeding
  // the node exactly when its quantity is positive.
  template <class F>
  static void forEachNamedScalar(const PodFitRequest& request, const NodeInfo& node, F&& f) {
    const auto& alloc = node.allocatable().scalars;
    const auto& used = node.requested.scalars;
    auto a = alloc.begin();
    auto u = used.begin();
    while (a != alloc.end() || u != used.end()) {
      const std::string_view name = (u == used.end() || (a != alloc.end() && a->first <= u->first))
                                        ? std::string_view(a->first)
                                        : std::string_view(u->first);
      const int64_t allocated = (a != alloc.end() && a->first == name) ? (a++)->second : 0;
      const int64_t inUse = (u != used.end() && u->first == name) ? (u++)->second : 0;
      auto it = std::lower_bound(request.scalars.begin(), request.scalars.end(), name,
                                 [](const auto& e, std::string_view n) { return e.first < n; });
      if (it == request.scalars.end() || it->first != name) continue;
      const int64_t quantity = it->second;
      f(static_cast<size_t>(it - request.scalars.begin()), quantity > available(allocated, inUse), quantity > allocated);
    }
  }

  struct ScalarShortfalls {
    size_t count = 0;
    bool exceedsNode = false;
  };
  // How many of the request's scalar resources the node lacks, from the node's side.
  static ScalarShortfalls scalarShortfalls(const PodFitRequest& request, const NodeInfo& node) {
    size_t count = request.positiveScalars;
    size_t namedPositive = 0;
    bool exceeds = false;
    forEachNamedScalar(request, node, [&](size_t i, bool isShort, bool exceedsNode) {
      const bool positive = request.scalars[i].second > 0;
      namedPositive += positive ? 1 : 0;
      count = count - (positive ? 1 : 0) + (isShort ? 1 : 0);
      exceeds = exceeds || (isShort && exceedsNode);
    });
    return {count, exceeds || namedPositive < request.positiveScalars};
  }

  // The key of a rejection, for requests checked from the node's side:
  // checks 0-3 as bits, the exceeds-node bit, then every named index whose
  // verdict differs from a node lacking the name.
  static std::vector<uint64_t> exceptionsKey(const PodFitRequest& request, const NodeInfo& node) {
    std::vector<uint64_t> key{0};
    forEachBaseShortfall(request, node, [&](size_t check, std::string_view, bool exceedsNode) {
      key[0] |= uint64_t{1} << check;
      if (exceedsNode) key[0] |= kExceedsNode;
    });
    forEachNamedScalar(request, node, [&](size_t i, bool isShort, bool exceedsNode) {
      const bool positive = request.scalars[i].second > 0;
      if (isShort != positive || (isShort && exceedsNode != positive))
        key.push_back(uint64_t{i} << 2 | uint64_t{isShort} << 1 | uint64_t{isShort && exceedsNode});
    });
    return key;
  }

  // The shape of a rejection, which decides its reasons: one bit per check of
  // forEachShortfall that fails, and the top bit when one exceeds the node.
  // kUnkeyed when the request has more scalar resources than bits.
  static constexpr uint64_t kUnkeyed = ~uint64_t{0};
  static constexpr uint64_t kExceedsNode = uint64_t{1} << 63;
  static uint64_t shortfall(const PodFitRequest& request, const NodeInfo& node) {
    if (request.scalars.size() > 58) return kUnkeyed;
    uint64_t shape = 0;
    forEachShortfall(request, node, [&](size_t check, std::string_view, bool exceedsNode) {
      shape |= uint64_t{1} << check;
      if (exceedsNode) shape |= kExceedsNode;
      return true;
    });
    return shape;
  }

  // The slow path of Filter: the reasons in upstream's order (pods, cpu,
  // memory, ephemeral-storage, then scalar resources by name), at most
  // kMaxListedShortfalls of them, then "and N more insufficient resources".
  static Status insufficientResources(const PodFitRequest& request, const NodeInfo& node) {
    std::vector<std::string> reasons;
    bool unresolvable = false;
    size_t listedScalars = 0;
    size_t unlisted = 0;
    const bool nodeSide = request.scalars.size() > kNodeSideScalars;
    forEachShortfall(request, node, [&](size_t check, std::string_view resource, bool exceedsNode) {
      unresolvable = unresolvable || exceedsNode;
      if (reasons.size() == kMaxListedShortfalls) {
        ++unlisted;
        return !nodeSide;  // from the node's side, the rest is counted below
      }
      reasons.push_back(check == 0 ? std::string("Too many pods") : "Insufficient " + std::string(resource));
      if (check >= 4) ++listedScalars;
      return true;
    });
    if (nodeSide) {
      const ScalarShortfalls all = scalarShortfalls(request, node);
      unlisted = all.count - listedScalars;
      unresolvable = unresolvable || all.exceedsNode;
    }
    if (unlisted > 0) reasons.push_back("and " + std::to_string(unlisted) + " more insufficient resources");
    return Status(unresolvable ? Code::UnschedulableAndUnresolvable : Code::Unschedulable, std::move(reasons));
  }

  std::vector<std::string> ignoredResources_;  // sorted
  std::vector<std::string> ignoredGroups_;     // sorted
  ScoringStrategyType strategy_;
  std::vector<ShapePoint> shape_;  // scores scaled to 0–100
  ResourceAllocation allocation_;
};

}  // namespace

Result<NodeResourcesFitArgs> decodeNodeResourcesFitArgs(const nlohmann::json& args) {
  const std::string root(kArgsRoot);
  NodeResourcesFitArgs out;
  if (args.is_null()) return out;
  if (!args.is_object()) return fieldError(root, "must be an object");

  const nlohmann::json* strategy = nullptr;
  for (const auto& [key, value] : args.items()) {
    if (key == "apiVersion" || key == "kind") continue;
    if (key == "ignoredResources") {
      auto list = decodeStringList(value, root + ".ignoredResources");
      if (!list) return list.error();
      out.ignoredResources = std::move(*list);
    } else if (key == "ignoredResourceGroups") {
      auto list = decodeStringList(value, root + ".ignoredResourceGroups");
      if (!list) return list.error();
      out.ignoredResourceGroups = std::move(*list);
    } else if (key == "scoringStrategy") {
      if (!value.is_null()) strategy = &value;
    } else {
      return fieldError(root + "." + key, "unknown field");
    }
  }

  // Defaults (SetDefaults_NodeResourcesFitArgs): no strategy means LeastAllocated;
  // no resources means cpu and memory; weight 0 means 1.
  DecodedStrategy decoded;
  const std::string strategyPath = root + ".scoringStrategy";
  if (strategy == nullptr) {
    decoded.type = "LeastAllocated";
  } else {
    auto d = decodeStrategy(*strategy, strategyPath);
    if (!d) return d.error();
    decoded = std::move(*d);
  }
  if (decoded.resources.empty()) decoded.resources = defaultResourceSpecs();
  for (ResourceSpec& r : decoded.resources)
    if (r.weight == 0) r.weight = 1;

  // Validation (ValidateNodeResourcesFitArgs): every error is reported.
  std::vector<std::string> errs;
  for (size_t i = 0; i < out.ignoredResources.size(); ++i)
    for (const std::string& msg : qualifiedNameErrors(out.ignoredResources[i]))
      errs.push_back(invalid(root + ".ignoredResources[" + std::to_string(i) + "]", goQuote(out.ignoredResources[i]), msg));
  for (size_t i = 0; i < out.ignoredResourceGroups.size(); ++i) {
    const std::string& group = out.ignoredResourceGroups[i];
    std::string path = root + ".ignoredResourceGroups[" + std::to_string(i) + "]";
    if (group.find('/') != std::string::npos)
      errs.push_back(invalid(path, goQuote(group), "resource group name can't contain '/'"));
    for (const std::string& msg : qualifiedNameErrors(group)) errs.push_back(invalid(path, goQuote(group), msg));
  }

  if (decoded.type == "LeastAllocated") {
    out.strategy = ScoringStrategyType::LeastAllocated;
  } else if (decoded.type == "MostAllocated") {
    out.strategy = ScoringStrategyType::MostAllocated;
  } else if (decoded.type == "RequestedToCapacityRatio") {
    out.strategy = ScoringStrategyType::RequestedToCapacityRatio;
  } else {
    errs.push_back(strategyPath + ".type: Unsupported value: " + goQuote(decoded.type) +
                   ": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
  }
  for (size_t i = 0; i < decoded.resources.size(); ++i) {
    const ResourceSpec& r = decoded.resources[i];
    if (r.weight <= 0 || r.weight > 100)
      errs.push_back(invalid(strategyPath + ".resources[" + std::to_string(i) + "].weight", std::to_string(r.weight),
                             "resource weight of " + r.name + " not in valid range (0, 100]"));
  }
  const std::string ratioPath = strategyPath + ".requestedToCapacityRatio";
  if (decoded.type == "RequestedToCapacityRatio") {
    if (!decoded.hasRatio)
      errs.push_back(ratioPath + ": Required value: must be specified when type is RequestedToCapacityRatio");
    else
      validateShape(decoded.shape, ratioPath + ".shape", errs);
  } else if (decoded.hasRatio) {
    errs.push_back(ratioPath + ": Forbidden: must be nil when type is not RequestedToCapacityRatio");
  }
  if (!errs.empty()) return Error{aggregateErrors(errs)};

  out.resources = std::move(decoded.resources);
  out.shape = std::move(decoded.shape);
  return out;
}

std::unique_ptr<Plugin> makeNodeResourcesFit(NodeResourcesFitArgs args) {
  return std::make_unique<NodeResourcesFit>(std::move(args));
}

Result<std::unique_ptr<Plugin>> newNodeResourcesFit(const nlohmann::json& args) {
  auto decoded = decodeNodeResourcesFitArgs(args);
  if (!decoded) return decoded.error();
  return makeNodeResourcesFit(std::move(*decoded));
}

}  // namespace placer
