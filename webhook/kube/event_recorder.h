#pragma once
// Sends PodEvents (webhook/placed_pods.h) as events.k8s.io/v1 Events, the
// way kube-scheduler reports its own decisions: reportingController
// placer.io/placer, reportingInstance the placer pod's name, the pod as
// `regarding`, eventTime now, type Normal.
//
// emit() only queues: a bounded queue (a full one drops the event, counted
// in placer_events_dropped_total{reason="queue_full"}), drained by one
// background thread. Its cost is kept off the admission path and low:
//  - emit() takes a lock for a push and wakes the sender only when it waits
//    for a first event, or for a batch to fill: not once per event;
//  - woken, the sender lets events gather for up to `window` (or until
//    `batch` are queued), takes the whole queue in one swap, and sends it in
//    rounds of up to `pipeline` POSTs written back to back on one keep-alive
//    connection (HTTP/1.1 pipelining), their answers read in order: one
//    round trip and a few system calls per round, not per event;
//  - each body is written directly as text (no JSON DOM).
// An event answered by a transport failure, 401, 429 or 5xx is tried again
// in the next round, after a back-off (initialBackoff doubling up to
// maxBackoff while rounds keep failing, back to initialBackoff once a round
// leaves nothing to retry), and dropped after `attempts` tries; any other
// refusal (403, 404, 422) drops it at once. So a failing Events API never
// slows admission nor grows memory: it costs at most queueCapacity events.
//
// Thread-safety: emit() from any thread; stop() (also the destructor) once,
// from the owner's thread. Events still queued at stop() are dropped.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scoring/result.h"
#include "webhook/kube/api_client.h"
#include "webhook/metrics.h"
#include "webhook/placed_pods.h"

namespace placer::kube {

// The sender's back-off between rounds that leave events to retry: the
// first wait is `initial`, each further one doubles, up to `max`; a round
// that leaves nothing to retry (every event sent, refused or dropped)
// starts it afresh. Not thread-safe: the sender's own.
class RetryBackoff {
 public:
  RetryBackoff(std::chrono::milliseconds initial, std::chrono::milliseconds max) : initial_(initial), max_(max) {}
  // After a round: how long to wait before the next one (0: go on at once).
  std::chrono::milliseconds afterRound(bool leftToRetry);

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds current_{0};
};

class ApiEventRecorder final : public EventSink {
 public:
  struct Options {
    std::string reportingInstance;  // the placer pod's name (POD_NAME, else the host name)
    size_t queueCapacity = 4096;
    size_t batch = 64;                        // a wake sends once this many are queued...
    std::chrono::milliseconds window{50};     // ...or this long after the first one
    size_t pipeline = 32;                     // POSTs written back to back per round
    std::chrono::milliseconds initialBackoff{200};
    std::chrono::milliseconds maxBackoff{30000};
    int attempts = 5;
    // Called by the sender before each back-off wait, with its length (a
    // seam for tests: which waits happen is a fact, how long they take is not).
    std::function<void(std::chrono::milliseconds)> backingOff = nullptr;
  };
  ApiEventRecorder(std::unique_ptr<ApiClient> client, MetricsRegistry& metrics, Options options);
  ~ApiEventRecorder() override;

  void emit(PodEvent event) override;
  void stop();

 private:
  // An event taken from the queue, with the tries it has had.
  struct Pending {
    PodEvent event;
    int tries = 0;
  };
  void run();
  // Sends one round (up to options_.pipeline of `pending`, from the front);
  // the events left to retry stay in `pending`, in order, the others are
  // counted and removed.
  struct Round {
    bool leftToRetry = false;  // some failed and have tries left (back off)
    bool failed = false;       // some got a failure (401, 429, 5xx) or no answer
  };
  Round sendRound(Connection& connection, std::vector<Pending>& pending);

  std::unique_ptr<ApiClient> client_;
  Options options_;
  std::vector<ApiRequest> round_;  // the sender's: one round's requests, reused
  Counter& sent_;
  Counter& droppedFull_;
  Counter& droppedRefused_;
  Counter& droppedRetries_;
  std::mutex mutex_;  // the members below
  std::condition_variable wake_;
  std::vector<Pending> queue_;
  size_t held_ = 0;        // taken by the sender and not yet through (counts against the capacity)
  bool waiting_ = false;   // the sender waits for events: emit() wakes it
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// An ApiEventRecorder over the API server: kubeconfig, or in-cluster
// credentials when `kubeconfig` is empty.
Result<std::unique_ptr<ApiEventRecorder>> makeApiEventRecorder(const std::string& kubeconfig, MetricsRegistry& metrics,
                                                               ApiEventRecorder::Options options);

// The events.k8s.io/v1 Event object for a PodEvent (what is POSTed), at `now`,
// appended to `out`: compact JSON, keys in sorted order.
void appendEventJson(std::string& out, const PodEvent& event, const std::string& reportingInstance,
                     std::chrono::system_clock::time_point now);

}  // namespace placer::kube
