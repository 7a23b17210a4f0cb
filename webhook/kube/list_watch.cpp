#include "webhook/kube/list_watch.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/json_stream_scanner.h"
#include "webhook/allocator.h"
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

// Parses a list's items and hands them to the handler on decode threads while
// the watcher's thread reads, decrypts and frames the next ones, so that an
// initial sync's reading and decoding overlap on several cores. Items travel
// in batches of ~1 MB, numbered in list order; at most kMaxQueued batches
// wait (the list is never held whole). A handler with ListBatches has each
// batch parsed and decoded by whichever decode thread took it, several at
// once; the batches are then applied (listedBatch) strictly in list order. A
// handler without them gets listed() per item, in list order. Either way the
// handler sees one call at a time: the decode threads between add() and
// drain()/discard(), the watcher's thread otherwise.
class ListDecoder {
 public:
  ListDecoder(ResourceHandler& handler, int threads) : handler_(handler) {
    if (threads <= 0) threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    workers_.reserve(static_cast<size_t>(threads));
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { run(); });
  }
  ~ListDecoder() {
    discard();
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }
  ListDecoder(const ListDecoder&) = delete;
  ListDecoder& operator=(const ListDecoder&) = delete;

  // Queues one item. An error is the first item that failed to decode (the
  // stream should stop: the list is not usable).
  Outcome add(std::string_view item) {
    if (failed_.load(std::memory_order_relaxed)) return firstError();
    // An item that spanned the reader's pieces was gathered in place
    // (itemBuffer()): it is already the batch's last bytes.
    const std::string& bytes = current_.bytes;
    const bool inPlace = !item.empty() && item.size() <= bytes.size() &&
                         item.data() == bytes.data() + (bytes.size() - item.size());
    if (!inPlace) current_.bytes.append(item);
    current_.ends.push_back(current_.bytes.size());
    if (current_.bytes.size() >= kBatchBytes) push();
    return {};
  }
  // Where the stream scanner may gather an item that spans pieces
  // (JsonStreamScanner::gatherValuesInto), so that it is copied once, straight
  // into the batch being filled. The same string for the decoder's life.
  std::string* itemBuffer() { return &current_.bytes; }
  // Every queued item has been handed to the handler (or the first error).
  Outcome drain() {
    push();
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
    if (failed_) return Error{error_};
    return {};
  }
  // Queued items are dropped; returns once no decode thread calls the handler.
  void discard() {
    current_.bytes.clear();
    current_.ends.clear();
    std::unique_lock lock(mutex_);
    queue_.clear();
    idle_.wait(lock, [this] { return busy_ == 0; });
    nextSeq_ = nextApply_;  // every batch taken is applied; the dropped ones never will be
  }

 private:
  // ~150 pods: a handler applies a batch under one exclusive lock of the view.
  static constexpr size_t kBatchBytes = 1024 * 1024;
  static constexpr size_t kMaxQueued = 2;
  // Room for the item that crosses kBatchBytes, and the parser's padding.
  static constexpr size_t kBatchSlack = 64 * 1024;
  struct Batch {
    std::string bytes;
    std::vector<size_t> ends;  // where each item ends in bytes
    uint64_t seq = 0;          // list order
    std::unique_ptr<ListBatch> decoded;  // null: the handler takes items one by one
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
    if (!current_.decoded) current_.decoded = handler_.newListBatch();
    Batch next;
    {
      std::unique_lock lock(mutex_);
      idle_.wait(lock, [this] { return queue_.size() < kMaxQueued; });
      current_.seq = nextSeq_++;
      queue_.push_back(std::move(current_));
      if (!spare_.empty()) {
        next = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    wake_.notify_one();
    next.bytes.clear();
    next.ends.clear();
    next.bytes.reserve(kBatchBytes + kBatchSlack);
    current_ = std::move(next);
  }
  // Marks the list failed at its first bad item (the lowest batch that failed
  // wins, so the error is the one a single thread would have met first).
  void fail(uint64_t seq, std::string message) {
    std::lock_guard lock(mutex_);
    if (failed_ && failedSeq_ <= seq) return;
    failedSeq_ = seq;
    error_ = std::move(message);
    failed_ = true;
  }
  // Parses the batch's items in order, each handed to `each`, up to the first
  // that is not valid JSON (which fails the list).
  template <typename Each>
  void parseItems(JsonParser& parser, const Batch& batch, Each&& each) {
    size_t begin = 0;
    for (size_t end : batch.ends) {
      auto object = parser.parse(std::string_view(batch.bytes).substr(begin, end - begin), /*padded=*/true);
      begin = end;
      if (!object) return fail(batch.seq, "list item: " + object.error().message);
      each(*object);
    }
  }
  void run() {
    JsonParser parser;  // this thread's
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      Batch batch = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
      lock.unlock();
      idle_.notify_all();  // room in the queue
      // With ListBatches the items are decoded here, beside other batches;
      // either way they reach the handler in list order.
      if (batch.decoded) parseItems(parser, batch, [&](const JsonValue& object) { batch.decoded->add(object); });
      lock.lock();
      applied_.wait(lock, [&] { return nextApply_ == batch.seq; });
      const bool apply = !failed_ || failedSeq_ >= batch.seq;  // nothing after the first bad item
      lock.unlock();
      if (apply) {
        if (batch.decoded)
          handler_.listedBatch(*batch.decoded);
        else
          parseItems(parser, batch, [&](const JsonValue& object) { handler_.listed(object); });
      }
      lock.lock();
      ++nextApply_;
      applied_.notify_all();
      if (batch.decoded) {
        lock.unlock();
        batch.decoded->clear();  // beside the next batch's apply
        lock.lock();
      }
      --busy_;
      // Kept for reuse: at most kMaxQueued + the workers + the one being
      // filled ever exist, and a fresh 1 MB buffer is fresh pages to fault in.
      spare_.push_back(std::move(batch));
      idle_.notify_all();
    }
  }

  ResourceHandler& handler_;
  Batch current_;  // the watcher thread's batch being filled
  std::mutex mutex_;
  std::condition_variable wake_;     // the workers: a batch is queued, or stop
  std::condition_variable idle_;     // the watcher: room in the queue, or the workers idle
  std::condition_variable applied_;  // the workers: the batch before theirs is applied
  std::deque<Batch> queue_;
  std::vector<Batch> spare_;  // emptied batches, their buffers (and ListBatches) reused
  uint64_t nextSeq_ = 0;      // the next batch pushed gets this number
  uint64_t nextApply_ = 0;    // the batch whose turn it is to reach the handler
  int busy_ = 0;              // batches taken by workers and not yet applied
  bool stop_ = false;
  std::atomic<bool> failed_{false};
  uint64_t failedSeq_ = 0;
  std::string error_;
  std::vector<std::thread> workers_;  // last: started once everything above exists
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
  std::optional<ListDecoder> decoder(std::in_place, handler_, options_.decodeThreads);
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
        [&](std::string_view bytes) -> Outcome { return decoder->add(bytes); },
        [&](std::string_view bytes) -> Outcome {
          auto meta = readListMetadata(bytes);
          if (!meta) return meta.error();
          pageContinue = std::move(meta->continueToken);
          pageRv = std::move(meta->resourceVersion);
          return {};
        });
    scanner.gatherValuesInto(decoder->itemBuffer());
    auto response = connection_.get(
        target, [&](std::string_view piece) { return scanner.feed(piece); }, options_.listReceiveTimeout);
    if (stopping_) return End::Failed;
    if (!response) {
      logEvent(LogLevel::Warning, "list failed", {{"resource", kind_.name}, {"error", response.error().message}});
      return End::Failed;
    }
    // The page's items reach the handler before anything else does.
    if (Outcome decoded = decoder->drain(); !decoded) {
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
  // What the decode threads held (their batches, parsers and the decoded
  // objects' blocks, in malloc arenas of their own) goes back to the system
  // rather than staying in malloc's free lists beside the view.
  decoder.reset();
  releaseFreeMemory();
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
