#pragma once
// Sends PodEvents (webhook/placed_pods.h) as events.k8s.io/v1 Events, the
// way kube-scheduler reports its own decisions: reportingController
// placer.io/placer, reportingInstance the placer pod's name, the pod as
// `regarding`, eventTime now, type Normal.
//
// emit() only queues: a bounded queue (a full one drops the event, counted
// in placer_events_dropped_total{reason="queue_full"}), drained by one
// background thread that sends up to `batch` events back to back over one
// keep-alive connection per wake. A transport failure, 429 or 5xx backs off
// exponentially (initialBackoff doubling up to maxBackoff) and retries the
// same event, dropping it after `attempts` tries; any other refusal (403,
// 404, 422) drops it at once. So a failing Events API never slows admission
// nor grows memory: it costs at most queueCapacity events.
//
// Thread-safety: emit() from any thread; stop() (also the destructor) once,
// from the owner's thread. Events still queued at stop() are dropped.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "scoring/result.h"
#include "webhook/kube/api_client.h"
#include "webhook/metrics.h"
#include "webhook/placed_pods.h"

namespace placer::kube {

class ApiEventRecorder final : public EventSink {
 public:
  struct Options {
    std::string reportingInstance;  // the placer pod's name (POD_NAME, else the host name)
    size_t queueCapacity = 4096;
    size_t batch = 64;
    std::chrono::milliseconds initialBackoff{200};
    std::chrono::milliseconds maxBackoff{30000};
    int attempts = 5;
  };
  ApiEventRecorder(std::unique_ptr<ApiClient> client, MetricsRegistry& metrics, Options options);
  ~ApiEventRecorder() override;

  void emit(PodEvent event) override;
  void stop();

 private:
  void run();
  // What sending one event came to.
  enum class Sent { Ok, Retry, Refused };
  Sent send(Connection& connection, const PodEvent& event);

  std::unique_ptr<ApiClient> client_;
  Options options_;
  Counter& sent_;
  Counter& droppedFull_;
  Counter& droppedRefused_;
  Counter& droppedRetries_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<PodEvent> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// An ApiEventRecorder over the API server: kubeconfig, or in-cluster
// credentials when `kubeconfig` is empty.
Result<std::unique_ptr<ApiEventRecorder>> makeApiEventRecorder(const std::string& kubeconfig, MetricsRegistry& metrics,
                                                               ApiEventRecorder::Options options);

// The events.k8s.io/v1 Event object for a PodEvent (what is POSTed), at `now`.
std::string eventJson(const PodEvent& event, const std::string& reportingInstance,
                      std::chrono::system_clock::time_point now);

}  // namespace placer::kube
