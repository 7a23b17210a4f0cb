#include "scoring/plugins/balanced_allocation.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"

namespace placer {

namespace {

constexpr std::string_view kArgsRoot = "NodeResourcesBalancedAllocationArgs";
constexpr std::string_view kPreScoreKey = "PreScoreNodeResourcesBalancedAllocation";

struct PodBalanceRequests final : StateData {
  std::vector<int64_t> values;  // parallel to the configured resources
};

bool requestsNone(std::span<const int64_t> podRequests) {
  return std::all_of(podRequests.begin(), podRequests.end(), [](int64_t r) { return r == 0; });
}

class BalancedAllocation final : public PreScorePlugin, public ScorePlugin {
 public:
  explicit BalancedAllocation(NodeResourcesBalancedAllocationArgs args)
      : allocation_(std::move(args.resources), RequestBasis::Actual) {}

  std::string_view name() const override { return names::kNodeResourcesBalancedAllocation; }
  bool resultsReusable() const override { return true; }  // see Plugin

  bool preScoreReadsFeasibleNodes() const override { return false; }

  Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const>,
                  const ClusterView&) const override {
    auto requests = std::make_unique<PodBalanceRequests>();
    requests->values = allocation_.podRequests(pod);
    // Best-effort pods would otherwise all prefer the same node
    // (kubernetes/kubernetes#129138).
    if (requestsNone(requests->values)) return Status::skip();
    state.write(kPreScoreKey, std::move(requests));
    return Status::success();
  }

  int64_t score(const CycleState& state, const Pod& pod, const NodeInfo& node) const override {
    if (const PodBalanceRequests* requests = state.read<PodBalanceRequests>(kPreScoreKey))
      return allocation_.balanced(node, requests->values);
    // PreScore did not run (upstream computes the requests on the spot).
    std::vector<int64_t> podRequests = allocation_.podRequests(pod);
    if (requestsNone(podRequests)) return 0;
    return allocation_.balanced(node, podRequests);
  }

  void scoreAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const PodBalanceRequests* requests = state.read<PodBalanceRequests>(kPreScoreKey);
    if (requests == nullptr) return ScorePlugin::scoreAll(state, pod, nodes, out);
    allocation_.balancedAll(nodes, requests->values, out);
  }

 private:
  ResourceAllocation allocation_;
};

}  // namespace

Result<NodeResourcesBalancedAllocationArgs> decodeNodeResourcesBalancedAllocationArgs(const nlohmann::json& args) {
  const std::string root(kArgsRoot);
  NodeResourcesBalancedAllocationArgs out;
  if (args.is_null()) return out;
  if (!args.is_object()) return fieldError(root, "must be an object");

  std::vector<ResourceSpec> resources;
  for (const auto& [key, value] : args.items()) {
    if (key == "apiVersion" || key == "kind") continue;
    if (key != "resources") return fieldError(root + "." + key, "unknown field");
    auto decoded = decodeResourceSpecs(value, root + ".resources");
    if (!decoded) return decoded.error();
    resources = std::move(*decoded);
  }

  // Defaults (SetDefaults_NodeResourcesBalancedAllocationArgs).
  if (resources.empty()) resources = defaultResourceSpecs();
  for (ResourceSpec& r : resources)
    if (r.weight == 0) r.weight = 1;

  // Validation (ValidateNodeResourcesBalancedAllocationArgs).
  std::vector<std::string> errs;
  std::vector<std::string_view> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceSpec& r = resources[i];
    std::string path = root + ".resources[" + std::to_string(i) + "]";
    if (std::find(seen.begin(), seen.end(), r.name) != seen.end())
      errs.push_back(path + ".name: Duplicate value: \"" + r.name + "\"");
    else
      seen.push_back(r.name);
    if (r.weight != 1) errs.push_back(path + ".weight: Invalid value: " + std::to_string(r.weight) + ": must be 1");
  }
  if (!errs.empty()) return Error{aggregateErrors(errs)};

  out.resources = std::move(resources);
  return out;
}

std::unique_ptr<Plugin> makeNodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs args) {
  return std::make_unique<BalancedAllocation>(std::move(args));
}

Result<std::unique_ptr<Plugin>> newNodeResourcesBalancedAllocation(const nlohmann::json& args) {
  auto decoded = decodeNodeResourcesBalancedAllocationArgs(args);
  if (!decoded) return decoded.error();
  return makeNodeResourcesBalancedAllocation(std::move(*decoded));
}

}  // namespace placer
