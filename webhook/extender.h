#pragma once
// The scheduler-extender endpoints (k8s.io/kube-scheduler/extender/v1) served
// from the same engine and cluster view as the webhook, on their own listener:
//
//   POST /filter          ExtenderArgs -> ExtenderFilterResult
//   POST /filter_onlyone  the same, answering only the best node (placer alone decides)
//   POST /prioritize      ExtenderArgs -> HostPriorityList (scores 0..10)
//   POST /bind            ExtenderBindingArgs -> ExtenderBindingResult; the pod is read
//                         from the API server and reserved on the node (when every filter
//                         still passes there) before the Binding is created, so a concurrent
//                         admission cannot take the same capacity; released when the watch
//                         shows the pod bound, or at once when binding fails
//   POST /preempt         ExtenderPreemptionArgs -> ExtenderPreemptionResult
//
// Wire format: the Go structs carry no json tags, so keys are the Go field
// names ("NodeNames", "FailedNodes", ...). Input keys are matched the way Go's
// encoding/json does (an exact match first, else case-insensitively), so the
// lowercase keys of schedulers up to 1.15 decode too. Absent values are null.
//
// nodeCacheCapable schedulers send NodeNames, resolved against placer's view
// (a name placer does not know fails with a reason); others send whole Nodes
// (a v1.NodeList), which are decoded, evaluated with the view's accounting for
// the node of that name, and echoed back in kind.
//
// Prioritize maps the engine's weighted totals onto 0..10 (MaxExtenderPriority):
// score = total * 10 / (best total among the candidates), rounded down; so the
// node placer would choose scores 10 and a node placer rejects scores 0.
//
// A malformed body is answered 400 with a message; nothing a client sends is a 500.
//
// Thread-safety: the handlers run concurrently on the listener's workers.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/engine.h"
#include "scoring/result.h"
#include "webhook/cluster_feed.h"
#include "webhook/http_server.h"
#include "webhook/metrics.h"

namespace placer {

// Creates a v1 Binding for a pod (pods/binding), with the pod's uid as the
// precondition. The error text is the API server's message (already assigned,
// not found, ...). getPod reads the pod as it is now (what /bind reserves
// for). Safe to call from several threads.
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual Outcome bind(const std::string& podNamespace, const std::string& podName, const std::string& podUid,
                       const std::string& nodeName) = 0;
  virtual Result<Pod> getPod(const std::string& podNamespace, const std::string& podName) = 0;
};

// A binder over the API server: kubeconfig, or in-cluster credentials when
// `kubeconfig` is empty (webhook/kube/pod_binder.cpp).
Result<std::unique_ptr<PodBinder>> makeApiBinder(const std::string& kubeconfig);

struct ExtenderContext {
  std::shared_ptr<const Engine> engine;
  ClusterState* state = nullptr;      // outlives the routes
  const ClusterFeed* feed = nullptr;  // null: the view counts as synced
  PodBinder* binder = nullptr;        // null: /bind answers an Error
  MetricsRegistry* metrics = nullptr; // outlives the routes
  // How long /bind's reservation waits for the watch to show the pod bound.
  std::chrono::milliseconds reservationTtl{30000};
};

std::vector<Route> extenderRoutes(const ExtenderContext& context);

// The handlers as functions of the request body (for tests and benchmarks).
HttpResponse extenderFilter(const ExtenderContext& context, std::string_view body, bool onlyOne);
HttpResponse extenderPrioritize(const ExtenderContext& context, std::string_view body);
HttpResponse extenderBind(const ExtenderContext& context, std::string_view body);
HttpResponse extenderPreempt(const ExtenderContext& context, std::string_view body);

// Whether an extender listen address is loopback-only ("127.0.0.1:8888",
// "localhost:8888", "[::1]:8888"); anything else must use TLS and a token.
bool isLoopbackAddress(std::string_view address);

}  // namespace placer
