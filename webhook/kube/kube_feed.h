#pragma once
// The live cluster view: nodes and non-terminal pods of every namespace, and
// the namespaces, Services, ReplicationControllers, ReplicaSets and
// StatefulSets the topology plugins read, listed and watched from the API
// server (list_watch.h) into a ClusterState.
// synced() turns true once the first complete lists of every kind are applied
// and stays true through re-watches and relists (the view is kept, then
// corrected, never emptied).
//
// Objects that fail to decode are logged and counted, and leave the view as it
// was. A relist replaces the view: objects the new list lacks are removed.
//
// Thread-safety: as ClusterFeed. The watch threads write the state only through
// ClusterState's methods.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <string>

#include "webhook/cluster_feed.h"
#include "webhook/kube/api_client.h"
#include "webhook/kube/kube_config.h"
#include "webhook/kube/list_watch.h"

namespace placer::kube {

// Applies one kind's objects to a ClusterState: nodes by name, pods by uid;
// a list is a resync (objects it lacks are removed). What the feed uses,
// exposed so that tests can drive a ListWatcher with it. Called on one thread;
// decodeErrors() from any.
class StateHandler : public ResourceHandler {
 public:
  virtual uint64_t decodeErrors() const = 0;
  // Objects received in lists since the handler was made.
  virtual uint64_t listedObjects() const = 0;
};
std::unique_ptr<StateHandler> makeNodeHandler(ClusterState& state);
// observer (may be null) sees every decoded pod, listed or watched.
std::unique_ptr<StateHandler> makePodHandler(ClusterState& state, PodObserver* observer = nullptr);
// Namespaces (kind nullopt) or one kind of object that selects pods.
std::unique_ptr<StateHandler> makeSelectorObjectHandler(std::optional<WorkloadKind> kind, ClusterState& state);

struct KubeFeedOptions {
  ApiClientOptions client;
  ListWatchOptions listWatch;
  MetricsRegistry* metrics = nullptr;  // may be null; outlives the feed
  PodObserver* podObserver = nullptr;  // may be null; outlives the feed
};

class KubeClusterFeed final : public ClusterFeed {
 public:
  static Result<std::unique_ptr<KubeClusterFeed>> create(const KubeConfig& config, KubeFeedOptions options = {});
  ~KubeClusterFeed() override;

  Outcome start(ClusterState& state) override;
  void stop() override;
  bool synced() const override;
  std::string describe() const override;
  std::vector<KindProgress> syncProgress() const override;

  // Observation, for metrics and tests. Null before start().
  const ListWatcher* nodeWatcher() const { return nodes_.get(); }
  const ListWatcher* podWatcher() const { return pods_.get(); }
  uint64_t nodeDecodeErrors() const;
  uint64_t podDecodeErrors() const;

 private:
  KubeClusterFeed(std::unique_ptr<ApiClient> client, std::string source, KubeFeedOptions options);
  void registerMetrics();

  std::unique_ptr<ApiClient> client_;
  std::string source_;
  KubeFeedOptions options_;
  std::unique_ptr<StateHandler> nodeHandler_;
  std::unique_ptr<StateHandler> podHandler_;
  std::unique_ptr<ListWatcher> nodes_;
  std::unique_ptr<ListWatcher> pods_;
  // Pods turning Failed leave the pod watch's field selector, and a watch
  // reports an object leaving its selector as DELETED with its previous
  // state: the kubelet's rejection is seen only by a watch of Failed pods,
  // which feeds the pod observer and nothing else.
  std::unique_ptr<ResourceHandler> failedPodHandler_;
  std::unique_ptr<ListWatcher> failedPods_;
  // Namespaces, Services, ReplicationControllers, ReplicaSets, StatefulSets.
  std::vector<std::unique_ptr<StateHandler>> otherHandlers_;
  std::vector<std::unique_ptr<ListWatcher>> others_;
  struct MetricsGuard {
    std::mutex mutex;
    bool alive = true;
  };
  std::shared_ptr<MetricsGuard> metricsGuard_;
};

// makeApiFeed's work: kubeconfig file or in-cluster credentials.
Result<std::unique_ptr<ClusterFeed>> makeKubeFeed(const std::string& kubeconfigPath, MetricsRegistry* metrics,
                                                  KubeFeedOptions options = {});

}  // namespace placer::kube
