// ---------------------------------------------------------------------------
// APICLIENT: replace this body with the list+watch feed from webhook/kube/.
// Until then `placer serve` without --cluster-file or --demo exits 2 with this message.
// ---------------------------------------------------------------------------
#include "webhook/cluster_feed.h"

namespace placer {

Result<std::unique_ptr<ClusterFeed>> makeApiFeed(const ApiFeedOptions& options) {
  return Error{"serving from the Kubernetes API is not built yet; use --cluster-file SNAPSHOT or --demo"};
}

}  // namespace placer
