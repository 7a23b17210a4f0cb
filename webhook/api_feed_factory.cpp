// The live API feed: list + watch from the Kubernetes API (webhook/kube/).
#include "webhook/cluster_feed.h"
#include "webhook/kube/kube_feed.h"

namespace placer {

Result<std::unique_ptr<ClusterFeed>> makeApiFeed(const ApiFeedOptions& options) {
  kube::KubeFeedOptions feedOptions;
  feedOptions.podObserver = options.podObserver;
  return kube::makeKubeFeed(options.kubeconfigPath, options.metrics, std::move(feedOptions));
}

}  // namespace placer
