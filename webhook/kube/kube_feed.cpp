#include "webhook/kube/kube_feed.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <unordered_set>
#include <vector>

#include "scoring/json_value.h"
#include "scoring/model.h"
#include "scoring/pod_decode_into.h"
#include "webhook/log.h"
#include "webhook/metrics.h"

namespace placer::kube {
namespace {

constexpr size_t kListBatch = 256;  // listed objects applied per exclusive lock
// Watch events are applied in batches: the first event of a batch waits at
// most kEventWindow for others (or until kEventBatch are queued), then the
// batch takes the view's exclusive lock once. Each exclusive lock waits for
// the decisions in flight and holds new ones back, so one per event (a busy
// cluster sends thousands per second) made admission latency a queue.
// Placer's own pods are covered by their reservations meanwhile.
constexpr auto kEventWindow = std::chrono::milliseconds(5);
constexpr size_t kEventBatch = 1024;

std::string metaString(const JsonValue& object, std::string_view key) {
  auto m = object.member("metadata");
  if (!m) return {};
  auto v = m->member(key);
  if (!v) return {};
  return std::string(v->string().value_or(std::string_view()));
}

class Handler final : public StateHandler {
 public:
  enum class Kind { Node, Pod };
  Handler(Kind kind, ClusterState& state, PodObserver* observer = nullptr)
      : kind_(kind), state_(state), observer_(observer), applier_([this] { applyEvents(); }) {}
  ~Handler() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    queued_.notify_all();
    applier_.join();  // applies what is queued first
  }

  // A list marks the view (ClusterState's resync): whatever the list does
  // not upsert is removed when it finishes. An object that fails to decode is
  // not upserted, so on a relist its stale version leaves the view too.
  void listStarted() override {
    drainEvents();  // events before the list apply before its resync begins
    oneByOne_.clear();
    state_.beginResync(resyncKind());
  }

  // A list's items decoded on its decode threads (ListBatch): nodes or pods,
  // and what failed to decode (logged and counted when the batch is applied).
  // The batch is reused for later batches of the list (ListDecoder keeps it):
  // its pods stay allocated when it is cleared and the next batch's pods are
  // decoded into them (decodePodInto), so that a pod like the one before it
  // in its slot costs no allocation. Nodes are moved into the view.
  struct Decoded final : ListBatch {
    explicit Decoded(Kind kind) : kind(kind) {}
    void add(const JsonValue& object) override {
      if (kind == Kind::Node) {
        auto node = decodeNode(object);
        if (node) return nodes.push_back(std::move(*node));
        failures.push_back({metaString(object, "namespace"), metaString(object, "name"), node.error()});
      } else {
        if (podCount == podSlots.size()) podSlots.emplace_back();
        Outcome decoded = decodePodInto(object, podSlots[podCount]);
        if (decoded) return void(++podCount);
        failures.push_back({metaString(object, "namespace"), metaString(object, "name"), decoded.error()});
      }
    }
    void clear() override {
      nodes.clear();
      podCount = 0;
      failures.clear();
    }
    std::span<const Pod> pods() const { return {podSlots.data(), podCount}; }
    size_t size() const { return nodes.size() + podCount + failures.size(); }
    struct Failure {
      std::string ns, name;
      Error error;
    };
    Kind kind;
    std::vector<Node> nodes;
    std::vector<Pod> podSlots;  // the first podCount are this batch's pods
    size_t podCount = 0;
    std::vector<Failure> failures;
  };

  std::unique_ptr<ListBatch> newListBatch() override { return std::make_unique<Decoded>(kind_); }

  // One exclusive lock of the view per batch; the batch's objects are freed
  // by whoever clears it (the decode thread, beside the next batch's apply).
  void listedBatch(ListBatch& batch) override {
    auto& decoded = static_cast<Decoded&>(batch);
    listedObjects_.fetch_add(decoded.size(), std::memory_order_relaxed);
    for (const Decoded::Failure& f : decoded.failures) decodeFailed(f.ns, f.name, f.error);
    if (observer_)
      for (const Pod& pod : decoded.pods()) observer_->observed(pod);
    if (decoded.nodes.empty() && decoded.pods().empty()) return;
    state_.update([&](MutableClusterView& view) {
      for (Node& node : decoded.nodes) view.upsertNode(std::move(node));
      for (const Pod& pod : decoded.pods()) view.upsertPod(pod);
    });
  }

  // Items handed one by one (a caller that does not take ListBatches) are
  // applied kListBatch at a time, as a batch.
  void listed(const JsonValue& object) override {
    oneByOne_.add(object);
    if (oneByOne_.size() >= kListBatch) applyOneByOne();
  }

  void listFinished() override {
    applyOneByOne();
    size_t removed = state_.finishResync(resyncKind());
    if (removed > 0)
      logEvent(LogLevel::Info, "relist removed objects that no longer exist",
               {{"resource", kind_ == Kind::Node ? "nodes" : "pods"}, {"removed", removed}});
  }

  void upserted(const JsonValue& object) override {
    Event event;
    if (kind_ == Kind::Node) {
      auto node = decodeNode(object);
      if (!node) return decodeFailed(object, node.error());
      event.node = std::move(*node);
    } else {
      auto pod = decodePod(object);
      if (!pod) return decodeFailed(object, pod.error());
      if (observer_) observer_->observed(*pod);
      event.key = podKey(*pod);
      event.pod = std::move(*pod);
    }
    enqueue(std::move(event));
  }

  void deleted(const JsonValue& object) override {
    // A pod turning Failed or Succeeded leaves the watch's field selector:
    // its last state comes as a deletion, which the observer must see too.
    if (observer_ != nullptr && kind_ == Kind::Pod)
      if (auto pod = decodePod(object)) observer_->observed(*pod);
    Event event;
    event.remove = true;
    event.key = metaString(object, kind_ == Kind::Node ? "name" : "uid");
    if (event.key.empty())
      return decodeFailed(object, Error{kind_ == Kind::Node ? "metadata.name: missing" : "metadata.uid: missing"});
    enqueue(std::move(event));
  }

  uint64_t decodeErrors() const override { return decodeErrors_.load(); }
  uint64_t listedObjects() const override { return listedObjects_.load(std::memory_order_relaxed); }

 private:
  ResyncKind resyncKind() const { return kind_ == Kind::Node ? ResyncKind::Nodes : ResyncKind::Pods; }

  void applyOneByOne() {
    listedBatch(oneByOne_);
    oneByOne_.clear();
  }

  void decodeFailed(const JsonValue& object, const Error& error) {
    decodeFailed(metaString(object, "namespace"), metaString(object, "name"), error);
  }
  void decodeFailed(const std::string& ns, const std::string& name, const Error& error) {
    uint64_t n = ++decodeErrors_;
    // The first few in full, then a reminder now and then: a bad object
    // re-sent on every relist must not flood the log.
    if (n <= 10 || n % 1000 == 0)
      logEvent(LogLevel::Warning, kind_ == Kind::Node ? "node not decodable, ignored" : "pod not decodable, ignored",
               {{"namespace", ns}, {"name", name}, {"error", error.message}, {"count", n}});
  }

  // A watch event, decoded on the watch's thread and applied on the applier's.
  struct Event {
    bool remove = false;
    std::string key;  // pods: podKey (upsert) or uid (remove); nodes: the name (remove)
    Node node;
    Pod pod;
  };

  void enqueue(Event event) {
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) firstQueued_ = std::chrono::steady_clock::now();
      queue_.push_back(std::move(event));
    }
    queued_.notify_one();
  }

  // Returns once every event queued so far is applied.
  void drainEvents() {
    std::unique_lock lock(mutex_);
    ++draining_;
    queued_.notify_one();
    applied_.wait(lock, [&] { return queue_.empty() && !applying_; });
    --draining_;
  }

  void applyEvents() {
    std::unique_lock lock(mutex_);
    for (;;) {
      queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      queued_.wait_until(lock, firstQueued_ + kEventWindow,
                         [&] { return stopping_ || draining_ > 0 || queue_.size() >= kEventBatch; });
      std::vector<Event> batch = std::move(queue_);
      queue_.clear();
      applying_ = true;
      lock.unlock();
      apply(batch);
      lock.lock();
      applying_ = false;
      applied_.notify_all();
    }
  }

  void apply(std::vector<Event>& batch) {
    // A pod event that changes nothing (most are status updates) is judged
    // under the shared lock and dropped; a pod an earlier event of this batch
    // changes is left to the exclusive pass, in order.
    std::vector<char> skip(batch.size(), 0);
    size_t skipped = 0;
    if (kind_ == Kind::Pod) {
      state_.readForDecision([&](const MutableClusterView& view) {
        std::unordered_set<std::string_view> touched;
        for (size_t i = 0; i < batch.size(); ++i) {
          const Event& e = batch[i];
          if (!e.remove && !touched.contains(e.key) && view.podUpsertChangesNothing(e.pod)) {
            skip[i] = 1;
            ++skipped;
          } else {
            touched.insert(e.key);
          }
        }
      });
    }
    if (skipped == batch.size()) return;
    state_.update([&](MutableClusterView& view) {
      for (size_t i = 0; i < batch.size(); ++i) {
        if (skip[i]) continue;
        Event& e = batch[i];
        if (kind_ == Kind::Node) {
          if (e.remove) view.removeNode(e.key);
          else view.upsertNode(std::move(e.node));
        } else {
          if (e.remove) view.removePod(e.key);
          else view.upsertPod(e.pod);
        }
      }
    });
  }

  Kind kind_;
  ClusterState& state_;
  PodObserver* observer_;
  Decoded oneByOne_{kind_};  // listed() items not applied yet
  std::atomic<uint64_t> decodeErrors_{0};
  std::atomic<uint64_t> listedObjects_{0};

  std::mutex mutex_;
  std::condition_variable queued_;   // an event was queued, a drain asked, or stopping
  std::condition_variable applied_;  // a batch was applied
  std::vector<Event> queue_;
  std::chrono::steady_clock::time_point firstQueued_;
  int draining_ = 0;
  bool applying_ = false;
  bool stopping_ = false;
  std::thread applier_;  // last: starts once the members above exist
};

// Namespaces and the objects that select pods: few and rarely changing, so
// each event is applied as it comes. Decisions read them fresh; no node changes.
class SelectorObjectHandler final : public StateHandler {
 public:
  // kind: nullopt for namespaces.
  SelectorObjectHandler(std::optional<WorkloadKind> kind, ClusterState& state) : kind_(kind), state_(state) {}

  void listStarted() override {
    pendingNamespaces_.clear();
    pendingWorkloads_.clear();
    state_.beginResync(resyncKind());
  }
  void listed(const JsonValue& object) override {
    listedObjects_.fetch_add(1, std::memory_order_relaxed);
    if (!decodeInto(object)) return;
    if (pendingNamespaces_.size() + pendingWorkloads_.size() >= kListBatch) flush();
  }
  void listFinished() override {
    flush();
    state_.finishResync(resyncKind());
  }
  void upserted(const JsonValue& object) override {
    if (decodeInto(object)) flush();
  }
  void deleted(const JsonValue& object) override {
    std::string name = metaString(object, "name");
    if (name.empty()) return failed(object, Error{"metadata.name: missing"});
    std::string ns = metaString(object, "namespace");
    state_.update([&](MutableClusterView& view) {
      if (kind_)
        view.removeWorkload(*kind_, ns, name);
      else
        view.removeNamespace(name);
    });
  }
  uint64_t decodeErrors() const override { return decodeErrors_.load(); }
  uint64_t listedObjects() const override { return listedObjects_.load(std::memory_order_relaxed); }

 private:
  ResyncKind resyncKind() const { return kind_ ? resyncKindOf(*kind_) : ResyncKind::Namespaces; }
  bool decodeInto(const JsonValue& object) {
    if (!kind_) {
      auto ns = decodeNamespace(object);
      if (!ns) return failed(object, ns.error()), false;
      pendingNamespaces_.push_back(std::move(*ns));
    } else {
      auto workload = decodeWorkloadSelector(*kind_, object);
      if (!workload) return failed(object, workload.error()), false;
      pendingWorkloads_.push_back(std::move(*workload));
    }
    return true;
  }
  void flush() {
    if (pendingNamespaces_.empty() && pendingWorkloads_.empty()) return;
    state_.update([&](MutableClusterView& view) {
      for (Namespace& ns : pendingNamespaces_) view.upsertNamespace(std::move(ns));
      for (WorkloadSelector& w : pendingWorkloads_) view.upsertWorkload(std::move(w));
    });
    pendingNamespaces_.clear();
    pendingWorkloads_.clear();
  }
  void failed(const JsonValue& object, const Error& error) {
    uint64_t n = ++decodeErrors_;
    if (n <= 10 || n % 1000 == 0)
      logEvent(LogLevel::Warning, "object not decodable, ignored",
               {{"kind", kind_ ? std::string(toString(*kind_)) : std::string("Namespace")},
                {"namespace", metaString(object, "namespace")},
                {"name", metaString(object, "name")},
                {"error", error.message},
                {"count", n}});
  }

  std::optional<WorkloadKind> kind_;
  ClusterState& state_;
  std::vector<Namespace> pendingNamespaces_;
  std::vector<WorkloadSelector> pendingWorkloads_;
  std::atomic<uint64_t> decodeErrors_{0};
  std::atomic<uint64_t> listedObjects_{0};
};

}  // namespace

std::unique_ptr<StateHandler> makeSelectorObjectHandler(std::optional<WorkloadKind> kind, ClusterState& state) {
  return std::make_unique<SelectorObjectHandler>(kind, state);
}

std::unique_ptr<StateHandler> makeNodeHandler(ClusterState& state) {
  return std::make_unique<Handler>(Handler::Kind::Node, state);
}
namespace {

// Hands the observer the pods that turn Failed while placer runs. What the
// list returns failed before placer started (or while its watch was
// re-listing): not counted again.
class FailedPodHandler final : public ResourceHandler {
 public:
  explicit FailedPodHandler(PodObserver& observer) : observer_(observer) {}
  void listStarted() override {}
  void listed(const JsonValue&) override {}
  void listFinished() override {}
  void upserted(const JsonValue& object) override {
    if (auto pod = decodePod(object)) observer_.observed(*pod);
  }
  void deleted(const JsonValue&) override {}

 private:
  PodObserver& observer_;
};

}  // namespace

std::unique_ptr<StateHandler> makePodHandler(ClusterState& state, PodObserver* observer) {
  return std::make_unique<Handler>(Handler::Kind::Pod, state, observer);
}

KubeClusterFeed::KubeClusterFeed(std::unique_ptr<ApiClient> client, std::string source, KubeFeedOptions options)
    : client_(std::move(client)), source_(std::move(source)), options_(std::move(options)) {}

KubeClusterFeed::~KubeClusterFeed() {
  if (metricsGuard_) {
    std::lock_guard lock(metricsGuard_->mutex);
    metricsGuard_->alive = false;
  }
  stop();
}

Result<std::unique_ptr<KubeClusterFeed>> KubeClusterFeed::create(const KubeConfig& config, KubeFeedOptions options) {
  auto client = ApiClient::create(config, options.client);
  if (!client) return client.error();
  std::string source = "api " + config.server + " (" + config.source + ")";
  return std::unique_ptr<KubeClusterFeed>(new KubeClusterFeed(std::move(*client), std::move(source), std::move(options)));
}

Outcome KubeClusterFeed::start(ClusterState& state) {
  if (nodes_) return Error{"feed already started"};
  nodeHandler_ = makeNodeHandler(state);
  podHandler_ = makePodHandler(state, options_.podObserver);
  nodes_ = std::make_unique<ListWatcher>(*client_, nodesKind(), *nodeHandler_, options_.listWatch);
  pods_ = std::make_unique<ListWatcher>(*client_, podsKind(), *podHandler_, options_.listWatch);
  if (options_.podObserver != nullptr) {
    failedPodHandler_ = std::make_unique<FailedPodHandler>(*options_.podObserver);
    failedPods_ = std::make_unique<ListWatcher>(*client_, failedPodsKind(), *failedPodHandler_, options_.listWatch);
  }
  const std::pair<std::optional<WorkloadKind>, ResourceKind> others[] = {
      {std::nullopt, namespacesKind()},
      {WorkloadKind::Service, servicesKind()},
      {WorkloadKind::ReplicationController, replicationControllersKind()},
      {WorkloadKind::ReplicaSet, replicaSetsKind()},
      {WorkloadKind::StatefulSet, statefulSetsKind()},
  };
  for (const auto& [kind, resource] : others) {
    otherHandlers_.push_back(makeSelectorObjectHandler(kind, state));
    others_.push_back(std::make_unique<ListWatcher>(*client_, resource, *otherHandlers_.back(), options_.listWatch));
  }
  registerMetrics();
  nodes_->start();
  pods_->start();
  if (failedPods_) failedPods_->start();
  for (auto& watcher : others_) watcher->start();
  logEvent(LogLevel::Info, "watching the cluster", {{"source", source_}});
  return {};
}

void KubeClusterFeed::stop() {
  for (auto& watcher : others_) watcher->stop();
  if (failedPods_) failedPods_->stop();
  if (pods_) pods_->stop();
  if (nodes_) nodes_->stop();
}

bool KubeClusterFeed::synced() const {
  return nodes_ && pods_ && nodes_->listed() && pods_->listed() &&
         std::all_of(others_.begin(), others_.end(), [](const auto& w) { return w->listed(); });
}

std::string KubeClusterFeed::describe() const { return source_; }

std::vector<ClusterFeed::KindProgress> KubeClusterFeed::syncProgress() const {
  std::vector<KindProgress> kinds;
  for (auto [watcher, handler] : {std::pair{nodes_.get(), nodeHandler_.get()}, std::pair{pods_.get(), podHandler_.get()}})
    if (watcher != nullptr) kinds.push_back({watcher->kind().name, handler->listedObjects(), watcher->listed()});
  for (size_t i = 0; i < others_.size(); ++i)
    kinds.push_back({others_[i]->kind().name, otherHandlers_[i]->listedObjects(), others_[i]->listed()});
  return kinds;
}

uint64_t KubeClusterFeed::nodeDecodeErrors() const { return nodeHandler_ ? nodeHandler_->decodeErrors() : 0; }
uint64_t KubeClusterFeed::podDecodeErrors() const { return podHandler_ ? podHandler_->decodeErrors() : 0; }

void KubeClusterFeed::registerMetrics() {
  MetricsRegistry* metrics = options_.metrics;
  if (!metrics) return;
  struct Series {
    const ListWatcher* watcher;
    const StateHandler* handler;
    Gauge* events;
    Gauge* relists;
    Gauge* failures;
    Gauge* decodeErrors;
  };
  std::vector<Series> series;
  std::vector<std::pair<const ListWatcher*, const StateHandler*>> watched = {{nodes_.get(), nodeHandler_.get()},
                                                                             {pods_.get(), podHandler_.get()}};
  for (size_t i = 0; i < others_.size(); ++i) watched.emplace_back(others_[i].get(), otherHandlers_[i].get());
  for (auto [watcher, handler] : watched) {
    MetricLabels labels{{"resource", watcher->kind().name}};
    series.push_back(Series{
        watcher, handler,
        &metrics->gauge("placer_watch_events", "Watch events (added, modified, deleted) applied since start.", labels),
        &metrics->gauge("placer_watch_relists", "Relists forced by an expired resourceVersion (410).", labels),
        &metrics->gauge("placer_watch_failures", "Failed list or watch requests.", labels),
        &metrics->gauge("placer_watch_decode_errors", "Objects that could not be decoded and were ignored.", labels)});
  }
  // placer_view_synced is the server's (webhook_routes.cpp); these are the watch's own.
  // The registry may outlive the feed: the collector reads through a guard
  // that the destructor clears.
  metricsGuard_ = std::make_shared<MetricsGuard>();
  metrics->addCollector([series, guard = metricsGuard_] {
    std::lock_guard lock(guard->mutex);
    if (!guard->alive) return;
    for (const Series& s : series) {
      s.events->set(static_cast<double>(s.watcher->stats().events.load()));
      s.relists->set(static_cast<double>(s.watcher->stats().expired.load()));
      s.failures->set(static_cast<double>(s.watcher->stats().failures.load()));
      s.decodeErrors->set(static_cast<double>(s.handler->decodeErrors()));
    }
  });
}

Result<std::unique_ptr<ClusterFeed>> makeKubeFeed(const std::string& kubeconfigPath, MetricsRegistry* metrics,
                                                  KubeFeedOptions options) {
  auto config = kubeconfigPath.empty() ? loadInClusterConfig() : loadKubeconfigFile(kubeconfigPath);
  if (!config) return config.error();
  options.metrics = metrics;
  auto feed = KubeClusterFeed::create(*config, std::move(options));
  if (!feed) return feed.error();
  return std::unique_ptr<ClusterFeed>(std::move(*feed));
}

}  // namespace placer::kube
