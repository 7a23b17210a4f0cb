#include "scoring/plugins/image_locality.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/exact_quotient.h"
#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

constexpr std::string_view kStateKey = "PreScoreImageLocality";

// One entry per container (init containers included) whose image is on at
// least one node; containers sharing an image each count, as upstream sums per container.
struct PodImages final : StateData {
  struct Image {
    std::string name;  // normalised
    double spread;     // nodes holding it / all nodes
    uint32_t id;       // ClusterView::imageId: NodeInfo::imageSize looks it up without string compares
  };
  std::vector<Image> images;
  int64_t numContainers = 0;
  // The node's score (imageLocalityPriority of the sum over the pod's images
  // held), by NodeInfo::id, built image-major from the view's holder lists
  // (one sequential pass instead of a search per node).
  // Owned: the engine's decision cache keeps this state for later decisions,
  // on other threads (a thread's reused buffer would be overwritten meanwhile).
  std::vector<int64_t> scoreByNodeId;
  const ClusterView* view = nullptr;  // whose NodeInfo::id index scoreByNodeId
};

int64_t sizeOnNode(const Node& node, std::string_view image) {
  int64_t size = -1;
  node.images.forEachName([&](std::string_view name, int64_t bytes) {
    if (size < 0 && name == image) size = bytes;
  });
  return size;
}

class ImageLocality final : public PreScorePlugin, public ScorePlugin {
 public:
  std::string_view name() const override { return names::kImageLocality; }
  bool resultsReusable() const override { return true; }  // see Plugin

  bool preScoreReadsFeasibleNodes() const override { return false; }

  Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const>,
                  const ClusterView& view) const override {
    auto data = std::make_unique<PodImages>();
    data->numContainers = static_cast<int64_t>(pod.initContainers.size() + pod.containers.size());
    const double totalNodes = static_cast<double>(view.nodes().size());
    auto add = [&](const Container& c) {
      std::string image = normalizedImageName(c.image);
      int32_t holders = view.imageNodeCount(image);
      if (holders <= 0 || totalNodes <= 0) return;
      uint32_t id = view.imageId(image);
      data->images.push_back({std::move(image), static_cast<double>(holders) / totalNodes, id});
    };
    for (const Container& c : pod.initContainers) add(c);
    for (const Container& c : pod.containers) add(c);
    if (data->images.empty()) return Status::skip();
    std::vector<int64_t>& sums = data->scoreByNodeId;
    sums.assign(view.nodeIdBound(), 0);
    for (const PodImages::Image& image : data->images)
      for (const auto& [nodeId, size] : view.imageHolders(image.id))
        if (size > 0) sums[nodeId] += static_cast<int64_t>(static_cast<double>(size) * image.spread);
    const int64_t none = imageLocalityPriority(0, data->numContainers);  // most nodes hold none of the images
    // Nodes holding the same images have the same sum: the last one's
    // priority serves the next (one division per distinct run, not per node).
    int64_t lastSum = 0;
    int64_t lastPriority = none;
    for (int64_t& sum : sums) {
      if (sum != lastSum) {
        lastSum = sum;
        lastPriority = imageLocalityPriority(sum, data->numContainers);
      }
      sum = lastPriority;
    }
    data->view = &view;
    state.write(kStateKey, std::move(data));
    return Status::success();
  }

  int64_t score(const CycleState& state, const Pod&, const NodeInfo& node) const override {
    const PodImages* images = state.read<PodImages>(kStateKey);
    if (images == nullptr) return 0;  // PreScore skipped: no node holds any of the images
    return scoreNode(*images, node);
  }

  void scoreAll(const CycleState& state, const Pod&, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const PodImages* images = state.read<PodImages>(kStateKey);
    if (images == nullptr) {
      std::fill(out.begin(), out.end(), 0);
      return;
    }
    // The view's nodes read their precomputed sums here, without a call per
    // node; the view's range and the sums in locals (registers) for the loop.
    const std::span<const int64_t> byId = images->scoreByNodeId;
    const std::span<const NodeInfo> viewNodes =
        images->view != nullptr ? images->view->nodes() : std::span<const NodeInfo>();
    const NodeInfo* const first = viewNodes.data();
    const NodeInfo* const last = first + viewNodes.size();
    const int64_t* const sums = byId.data();
    const size_t bound = byId.size();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo* node = nodes[i];
      out[i] = node >= first && node < last && node->id < bound ? sums[node->id] : scoreNode(*images, *node);
    }
  }

 private:
  static int64_t scoreNode(const PodImages& images, const NodeInfo& node) {
    // A node indexed by the view reads its precomputed sum; one built by hand
    // (not in the view) is searched directly.
    if (images.view != nullptr && images.view->holds(node) && node.id < images.scoreByNodeId.size())
      return images.scoreByNodeId[node.id];
    int64_t sum = 0;
    for (const PodImages::Image& image : images.images) {
      int64_t size = sizeOnNode(node.node, image.name);
      if (size > 0) sum += static_cast<int64_t>(static_cast<double>(size) * image.spread);
    }
    return imageLocalityPriority(sum, images.numContainers);
  }
};

}  // namespace

int64_t imageLocalityPriority(int64_t sumScores, int64_t numContainers) {
  const int64_t maxThreshold = kImageLocalityMaxContainerThreshold * numContainers;
  if (sumScores < kImageLocalityMinThreshold)
    sumScores = kImageLocalityMinThreshold;
  else if (sumScores > maxThreshold)
    sumScores = maxThreshold;
  if (maxThreshold <= kImageLocalityMinThreshold) return 0;  // a pod without containers
  const int64_t range = maxThreshold - kImageLocalityMinThreshold;
  const int64_t above = sumScores - kImageLocalityMinThreshold;  // 0 .. range
  if (range < kExactQuotientBound / kMaxNodeScore) return exactQuotient(kMaxNodeScore * above, range);
  return kMaxNodeScore * above / range;
}

Result<std::unique_ptr<Plugin>> newImageLocality(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "ImageLocalityArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<ImageLocality>());
}

}  // namespace placer
