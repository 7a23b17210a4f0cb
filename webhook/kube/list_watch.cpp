#include "webhook/kube/list_watch.h"

#include <algorithm>
#include <deque>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/json_stream_scanner.h"
#include "webhook/kube/watch_bodies.h"
#include "webhook/log.h"

namespace placer::kube {
namespace {

using nlohmann::json;

// A watch that ends this quickly without a single event counts as a failure,
// so that a server closing watches at once is not hammered (client-go does the same).
constexpr auto kShortWatch = std::chrono::seconds(1);
constexpr int kMaxListRestarts = 5;

std::string statusMessage(const std::string& body) {
  json status = json::parse(body, nullptr, false);
  if (status.is_object()) {
    auto m = status.find("message");
    if (m != status.end() && m->is_string()) return m->get<std::string>();
  }
  return body.substr(0, 200);
}

// Parses a list's items and hands them to the handler on a second thread
// while the watcher's thread reads, decrypts and frames the next ones, so that
// the two halves of an initial sync overlap on two cores. Items travel in
// batches of ~256 KB; at most kMaxQueued batches wait (the list is never held
// whole). The handler is called by one thread at a time: the worker between
// add() and drain()/discard(), the watcher's thread otherwise.
class ListDecoder {
 public:
  explicit ListDecoder(ResourceHandler& handler) : handler_(handler), thread_([this] { run(); }) {}
  ~ListDecoder() {
    discard();
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  ListDecoder(const ListDecoder&) = delete;
  ListDecoder& operator=(const ListDecoder&) = delete;

  // Queues one item. An error is the first item that failed to decode (the
  // stream should stop: the list is not usable).
  Outcome add(std::string_view item) {
    if (failed_.load(std::memory_order_relaxed)) return firstError();
    current_.bytes.append(item);
    current_.ends.push_back(current_.bytes.size());
    if (current_.bytes.size() >= kBatchBytes) push();
    return {};
  }
  // Every queued item has been handed to the handler (or the first error).
  Outcome drain() {
    push();
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
    if (failed_) return Error{error_};
    return {};
  }
  // Queued items are dropped; returns once the worker no longer calls the handler.
  void discard() {
    current_.bytes.clear();
    current_.ends.clear();
    std::unique_lock lock(mutex_);
    queue_.clear();
    idle_.wait(lock, [this] { return !busy_; });
  }

 private:
  static constexpr size_t kBatchBytes = 256 * 1024;
  static constexpr size_t kMaxQueued = 4;
  struct Batch {
    std::string bytes;
    std::vector<size_t> ends;  // where each item ends in bytes
  };

  Outcome firstError() {
    std::lock_guard lock(mutex_);
    return Error{error_};
  }
  void push() {
    if (current_.ends.empty()) return;
    // The parser may read this far past the last item (every other item is
    // followed by the next one): no item is copied again to pad it.
    current_.bytes.append(JsonParser::kPadding, ' ');
    Batch next;
    {
      std::unique_lock lock(mutex_);
      idle_.wait(lock, [this] { return queue_.size() < kMaxQueued; });
      queue_.push_back(std::move(current_));
      if (!spare_.empty()) {
        next = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    wake_.notify_one();
    next.bytes.clear();
    next.ends.clear();
    current_ = std::move(next);
  }
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      Batch batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      idle_.notify_all();  // room in the queue
      size_t begin = 0;
      for (size_t end : batch.ends) {
        if (failed_.load(std::memory_order_relaxed)) break;
        auto object = parser_.parse(std::string_view(batch.bytes).substr(begin, end - begin), /*padded=*/true);
        begin = end;
        if (!object) {
          std::lock_guard errorLock(mutex_);
          error_ = "list item: " + object.error().message;
          failed_ = true;
          break;
        }
        handler_.listed(*object);
      }
      lock.lock();
      busy_ = false;
      if (spare_.size() < 2) spare_.push_back(std::move(batch));
      idle_.notify_all();
    }
  }

  ResourceHandler& handler_;
  JsonParser parser_;  // the worker's
  Batch current_;  // the watcher thread's batch being filled
  std::mutex mutex_;
  std::condition_variable wake_;  // the worker: a batch is queued, or stop
  std::condition_variable idle_;  // the watcher: room in the queue, or the worker idle
  std::deque<Batch> queue_;
  std::vector<Batch> spare_;  // emptied batches, their buffers reused
  bool busy_ = false;
  bool stop_ = false;
  std::atomic<bool> failed_{false};
  std::string error_;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace

ResourceKind nodesKind() { return {"nodes", "/api/v1/nodes", ""}; }
ResourceKind podsKind() { return {"pods", "/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed"}; }
ResourceKind failedPodsKind() { return {"failed-pods", "/api/v1/pods", "status.phase=Failed"}; }
ResourceKind namespacesKind() { return {"namespaces", "/api/v1/namespaces", ""}; }
ResourceKind servicesKind() { return {"services", "/api/v1/services", ""}; }
ResourceKind replicationControllersKind() {
  return {"replicationcontrollers", "/api/v1/replicationcontrollers", ""};
}
ResourceKind replicaSetsKind() { return {"replicasets", "/apis/apps/v1/replicasets", ""}; }
ResourceKind statefulSetsKind() { return {"statefulsets", "/apis/apps/v1/statefulsets", ""}; }

ListWatcher::ListWatcher(ApiClient& client, ResourceKind kind, ResourceHandler& handler, ListWatchOptions options)
    : client_(client), kind_(std::move(kind)), handler_(handler), options_(options), connection_(client),
      random_(options.seed ? options.seed : std::random_device{}()) {}

ListWatcher::~ListWatcher() { stop(); }

void ListWatcher::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void ListWatcher::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  connection_.abort();
  if (thread_.joinable()) thread_.join();
}

std::string ListWatcher::resourceVersion() const {
  std::lock_guard lock(mutex_);
  return rv_;
}

void ListWatcher::setResourceVersion(std::string rv) {
  if (rv.empty()) return;
  std::lock_guard lock(mutex_);
  rv_ = std::move(rv);
}

bool ListWatcher::sleepFor(std::chrono::milliseconds delay) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, delay, [this] { return stopping_.load(); });
  return !stopping_;
}

std::chrono::milliseconds ListWatcher::nextBackoff() {
  int steps = std::min(failuresInARow_, 16);
  ++failuresInARow_;
  auto base = std::min<int64_t>(options_.initialBackoff.count() << steps, options_.maxBackoff.count());
  std::uniform_int_distribution<int64_t> jitter(0, base);
  auto delay = std::chrono::milliseconds(std::min<int64_t>(base + jitter(random_), options_.maxBackoff.count()));
  // A server that said when to come back (429, 503) is believed, within reason.
  delay = std::max(delay, std::min(retryAfter_, options_.maxBackoff));
  retryAfter_ = std::chrono::milliseconds(0);
  return delay;
}

void ListWatcher::run() {
  bool needList = true;
  bool fromCache = true;  // the first list may be served by the watch cache (resourceVersion=0)
  while (!stopping_) {
    End end = needList ? list(fromCache) : watch();
    if (stopping_) break;
    switch (end) {
      case End::Closed:
        if (needList) {
          needList = false;
          listed_ = true;
          failuresInARow_ = 0;
          unauthorizedRetried_ = false;
        }
        continue;
      case End::Expired:
        ++stats_.expired;
        needList = true;
        fromCache = false;  // the cache is behind: read the latest state
        logEvent(LogLevel::Info, "watch expired, relisting", {{"resource", kind_.name}});
        continue;
      case End::Failed:
        ++stats_.failures;
        if (retryNow_) {
          retryNow_ = false;
          continue;
        }
        sleepFor(nextBackoff());
        continue;
    }
  }
}

ListWatcher::End ListWatcher::refused(const ApiResponse& response, const char* what) {
  if (response.status == 410) return End::Expired;
  if (response.status == 401) {
    ++stats_.unauthorized;
    client_.token().invalidate();  // re-read the token file on the next request
    // The first refusal in a row is retried at once with the fresh token.
    if (!unauthorizedRetried_) retryNow_ = unauthorizedRetried_ = true;
  }
  if ((response.status == 429 || response.status == 503) && !response.retryAfter.empty()) {
    int seconds = std::atoi(response.retryAfter.c_str());
    if (seconds > 0) retryAfter_ = std::chrono::seconds(seconds);
  }
  logEvent(LogLevel::Warning, std::string(what) + " refused",
           {{"resource", kind_.name}, {"status", response.status}, {"message", statusMessage(response.body)}});
  return End::Failed;
}

ListWatcher::End ListWatcher::list(bool fromCache) {
  handler_.listStarted();
  ListDecoder decoder(handler_);
  std::string next;      // continue token for the next page
  std::string listRv;
  int restarts = 0;
  while (true) {
    std::string target = kind_.path + "?limit=" + std::to_string(options_.pageSize);
    if (!kind_.fieldSelector.empty()) target += "&fieldSelector=" + urlEncode(kind_.fieldSelector);
    if (!next.empty())
      target += "&continue=" + urlEncode(next);
    else if (fromCache)
      target += "&resourceVersion=0";
    const bool continued = !next.empty();
    std::string pageContinue, pageRv;
    std::string itemError;

    JsonStreamScanner scanner(
        JsonStreamScanner::Mode::ListItems,
        [&](std::string_view bytes) -> Outcome { return decoder.add(bytes); },
        [&](std::string_view bytes) -> Outcome {
          auto meta = readListMetadata(bytes);
          if (!meta) return meta.error();
          pageContinue = std::move(meta->continueToken);
          pageRv = std::move(meta->resourceVersion);
          return {};
        });
    auto response = connection_.get(
        target, [&](std::string_view piece) { return scanner.feed(piece); }, options_.listReceiveTimeout);
    if (stopping_) return End::Failed;
    if (!response) {
      logEvent(LogLevel::Warning, "list failed", {{"resource", kind_.name}, {"error", response.error().message}});
      return End::Failed;
    }
    // The page's items reach the handler before anything else does.
    if (Outcome decoded = decoder.drain(); !decoded) {
      logEvent(LogLevel::Warning, "list response malformed", {{"resource", kind_.name}, {"error", decoded.error().message}});
      return End::Failed;
    }
    if (response->status == 410 && continued && restarts < kMaxListRestarts) {
      // The continue token expired (the snapshot it pages through was
      // compacted): start over from the latest state.
      ++restarts;
      ++stats_.listRestarts;
      logEvent(LogLevel::Info, "list continue token expired, restarting the list", {{"resource", kind_.name}});
      next.clear();
      fromCache = false;
      handler_.listStarted();
      continue;
    }
    if (response->status != 200) return refused(*response, "list");
    if (Outcome done = scanner.finish(); !done) {
      logEvent(LogLevel::Warning, "list response malformed", {{"resource", kind_.name}, {"error", done.error().message}});
      return End::Failed;
    }
    if (!pageRv.empty()) listRv = pageRv;
    if (pageContinue.empty()) break;
    next = std::move(pageContinue);
  }
  if (listRv.empty()) {
    logEvent(LogLevel::Warning, "list without resourceVersion", {{"resource", kind_.name}});
    return End::Failed;
  }
  setResourceVersion(listRv);
  handler_.listFinished();
  ++stats_.lists;
  return End::Closed;
}

ListWatcher::End ListWatcher::watch() {
  std::uniform_int_distribution<int64_t> pick(options_.minWatchTimeout.count(),
                                              std::max(options_.minWatchTimeout, options_.maxWatchTimeout).count());
  const int64_t timeoutSeconds = pick(random_);
  const std::string from = resourceVersion();
  std::string target = kind_.path + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + urlEncode(from) +
                       "&timeoutSeconds=" + std::to_string(timeoutSeconds);
  if (!kind_.fieldSelector.empty()) target += "&fieldSelector=" + urlEncode(kind_.fieldSelector);

  bool expired = false;
  uint64_t received = 0;
  std::string streamError;
  JsonParser parser;
  JsonStreamScanner scanner(JsonStreamScanner::Mode::TopLevelValues, [&](std::string_view bytes) -> Outcome {
    auto event = readWatchEvent(parser, bytes);
    if (!event) {
      ++stats_.malformed;
      return event.error();
    }
    ++received;
    switch (event->type) {
      case WatchEvent::Type::Expired:
        expired = true;
        return Error{"resourceVersion expired"};
      case WatchEvent::Type::Failed:
        return Error{"watch ERROR event: " + event->message};
      case WatchEvent::Type::Upserted:
        handler_.upserted(event->object);
        ++stats_.events;
        break;
      case WatchEvent::Type::Deleted:
        handler_.deleted(event->object);
        ++stats_.events;
        break;
      case WatchEvent::Type::Bookmark:
        ++stats_.bookmarks;
        break;
      case WatchEvent::Type::Unknown:
        ++stats_.malformed;
        return {};  // an unknown type is skipped, its version not trusted
    }
    setResourceVersion(std::move(event->resourceVersion));
    return {};
  });

  const auto started = std::chrono::steady_clock::now();
  ++stats_.watches;
  auto response = connection_.get(
      target, [&](std::string_view piece) { return scanner.feed(piece); },
      std::chrono::seconds(timeoutSeconds + 30));
  if (stopping_) return End::Failed;
  if (expired) return End::Expired;
  if (received > 0) failuresInARow_ = 0, unauthorizedRetried_ = false;
  if (!response) {
    // A stream cut mid-way: resume from the last version seen. Right away if
    // the stream was healthy, after a backoff if it never delivered anything.
    logEvent(LogLevel::Info, "watch ended", {{"resource", kind_.name}, {"error", response.error().message}});
    return received > 0 ? End::Closed : End::Failed;
  }
  if (response->status != 200) return refused(*response, "watch");
  if (Outcome done = scanner.finish(); !done) {
    logEvent(LogLevel::Info, "watch stream ended mid-event", {{"resource", kind_.name}, {"error", done.error().message}});
    return received > 0 ? End::Closed : End::Failed;
  }
  if (received == 0 && std::chrono::steady_clock::now() - started < kShortWatch) return End::Failed;
  return End::Closed;
}

}  // namespace placer::kube
