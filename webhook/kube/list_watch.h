#pragma once
// List + watch of one resource kind, as client-go's Reflector does it: a
// (paginated) list, then a watch from the list's resourceVersion with
// bookmarks; re-watch from the last seen version when a watch ends; relist
// when the server says the version is gone (410); back off exponentially with
// jitter after failures. Objects are framed as they stream in (scoring/json_stream_scanner.h),
// parsed (scoring/json_value.h) and handed to a ResourceHandler.
//
// Thread-safety: start() and stop() from one owning thread; the handler is
// called by one thread at a time and never after stop() returns: the
// watcher's own thread, and during a list also its decode threads (list items
// are parsed and decoded there while the next ones are read), each call
// ordered after the previous one; only ListBatch::add runs on several decode
// threads at once, each on a batch of its own. listed(), resourceVersion() and
// stats() from any thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "scoring/json_value.h"
#include "scoring/result.h"
#include "webhook/kube/api_client.h"

namespace placer::kube {

struct ResourceKind {
  std::string name;           // "nodes" | "pods", for logs and metrics
  std::string path;           // "/api/v1/nodes"
  std::string fieldSelector;  // "" or e.g. "status.phase!=Succeeded,status.phase!=Failed"
};
ResourceKind nodesKind();
// All namespaces, without terminal pods (as kube-scheduler's informer).
ResourceKind podsKind();
// Failed pods only (the kubelet's rejections), for the pod observer.
ResourceKind failedPodsKind();
// What the topology plugins read besides nodes and pods: namespaces (labels)
// and the Services, ReplicationControllers, ReplicaSets and StatefulSets of
// every namespace (selectors).
ResourceKind namespacesKind();
ResourceKind servicesKind();
ResourceKind replicationControllersKind();
ResourceKind replicaSetsKind();
ResourceKind statefulSetsKind();

// A handler's decoded list items, filled on a list's decode threads and applied
// by ResourceHandler::listedBatch. add() decodes one item into the batch and
// clear() empties it once applied (so that what it held is freed off the
// applying thread); both may run while other batches of the same handler are
// filled or applied on other threads, so they touch nothing the handler shares.
class ListBatch {
 public:
  virtual ~ListBatch() = default;
  virtual void add(const JsonValue& object) = 0;
  virtual void clear() = 0;
};

// What a watcher reports. Each object is the whole object as sent, parsed
// (scoring/json_value.h) and valid only during the call: the handler decodes
// what it keeps (decodePod, decodeNode, ...) straight from it.
class ResourceHandler {
 public:
  virtual ~ResourceHandler() = default;
  // A list begins (also when a list restarts after an expired continue token).
  virtual void listStarted() = 0;
  virtual void listed(const JsonValue& object) = 0;
  // A handler that answers a ListBatch has its list items decoded on several
  // threads at once: each batch is filled by ListBatch::add on a decode thread,
  // then handed to listedBatch() (which applies it), batches in list order and
  // one at a time, as listed() would have been called, then cleared. A
  // handler that answers null (the default) gets listed() for each item.
  // newListBatch() is called by the watcher's thread.
  virtual std::unique_ptr<ListBatch> newListBatch() { return nullptr; }
  virtual void listedBatch(ListBatch& /*batch*/) {}
  // The list is complete: whatever it did not contain no longer exists.
  virtual void listFinished() = 0;
  // ADDED or MODIFIED.
  virtual void upserted(const JsonValue& object) = 0;
  virtual void deleted(const JsonValue& object) = 0;
};

struct ListWatchOptions {
  int pageSize = 500;
  // Threads that parse and decode a list's items while the watcher's thread
  // reads the next ones; 0: one per core, at most 4.
  int decodeThreads = 0;
  // Watch timeoutSeconds is drawn uniformly from this range (upstream: 5-10 min)
  // so that many clients do not re-watch at the same moment.
  std::chrono::seconds minWatchTimeout{300};
  std::chrono::seconds maxWatchTimeout{600};
  // Exponential backoff after failures: initial * 2^n, capped, with jitter up to
  // the same amount again (client-go: 800 ms, 30 s, factor 2, jitter 1.0).
  std::chrono::milliseconds initialBackoff{800};
  std::chrono::milliseconds maxBackoff{30'000};
  // Longest silence tolerated inside a list response.
  std::chrono::milliseconds listReceiveTimeout{60'000};
  uint64_t seed = 0;  // 0: random
};

struct ListWatchStats {
  std::atomic<uint64_t> lists{0};         // complete lists
  std::atomic<uint64_t> listRestarts{0};  // lists restarted (expired continue token)
  std::atomic<uint64_t> expired{0};       // 410 answers that forced a relist
  std::atomic<uint64_t> watches{0};       // watch requests that streamed
  std::atomic<uint64_t> events{0};        // ADDED / MODIFIED / DELETED applied
  std::atomic<uint64_t> bookmarks{0};
  std::atomic<uint64_t> failures{0};      // failed requests (transport, 4xx/5xx)
  std::atomic<uint64_t> unauthorized{0};  // 401 answers
  std::atomic<uint64_t> malformed{0};     // events that could not be parsed
};

class ListWatcher {
 public:
  ListWatcher(ApiClient& client, ResourceKind kind, ResourceHandler& handler, ListWatchOptions options = {});
  ~ListWatcher();
  ListWatcher(const ListWatcher&) = delete;
  ListWatcher& operator=(const ListWatcher&) = delete;

  void start();
  // Stops and joins; the handler is not called after it returns. Idempotent.
  void stop();

  // The first complete list has been handed to the handler.
  bool listed() const { return listed_.load(); }
  std::string resourceVersion() const;
  const ListWatchStats& stats() const { return stats_; }
  const ResourceKind& kind() const { return kind_; }

 private:
  enum class End { Closed, Expired, Failed };
  void run();
  End list(bool fromCache);
  End watch();
  // Handles a non-200 answer: token invalidation, Retry-After. Returns how it ends.
  End refused(const ApiResponse& response, const char* what);
  bool sleepFor(std::chrono::milliseconds delay);  // false when stopping
  std::chrono::milliseconds nextBackoff();
  void setResourceVersion(std::string rv);

  ApiClient& client_;
  ResourceKind kind_;
  ResourceHandler& handler_;
  ListWatchOptions options_;
  Connection connection_;
  std::mt19937_64 random_;

  std::atomic<bool> listed_{false};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards rv_ and the stop wait
  std::condition_variable wake_;
  std::string rv_;
  int failuresInARow_ = 0;
  bool retryNow_ = false;             // retry the next request without backoff
  bool unauthorizedRetried_ = false;  // a 401 was already retried at once
  std::chrono::milliseconds retryAfter_{0};
  ListWatchStats stats_;
  std::thread thread_;
};

}  // namespace placer::kube
