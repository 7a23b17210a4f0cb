#include "webhook/kube/event_recorder.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "webhook/json_text.h"
#include "webhook/log.h"

namespace placer::kube {
namespace {

constexpr auto kSendTimeout = std::chrono::seconds(10);
constexpr std::string_view kReportingController = "placer.io/placer";
constexpr size_t kNoteLimit = 1024;  // events.k8s.io/v1 validation: note at most 1 kB
// The sender's niceness above the process's: Events are best effort, so when
// the cores are busy admissions run first (a nice +10 thread gets about a
// tenth of a nice-0 thread's share of a contended core).
constexpr int kSenderNiceness = 10;

// metav1.MicroTime: RFC 3339 with microseconds, UTC.
void appendMicroTime(std::string& out, std::chrono::system_clock::time_point t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const int n = std::snprintf(text, sizeof text, "\"%04d-%02d-%02dT%02d:%02d:%02d.%06dZ\"", utc.tm_year + 1900,
                              utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                              static_cast<int>(micros % 1000000));
  out.append(text, static_cast<size_t>(n));
}

}  // namespace

void appendEventJson(std::string& out, const PodEvent& event, const std::string& reportingInstance,
                     std::chrono::system_clock::time_point now) {
  // The name as client-go's event recorder makes it: <regarding name>.<unix nanoseconds in hex>.
  char suffix[24];
  const int suffixLength = std::snprintf(
      suffix, sizeof suffix, ".%llx",
      static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  std::string name;
  name.reserve(event.podName.size() + static_cast<size_t>(suffixLength));
  name.append(event.podName).append(suffix, static_cast<size_t>(suffixLength));
  // Keys in sorted order, as a JSON object's keys are usually written (and as
  // the nlohmann DOM this replaces wrote them).
  out += R"({"action":)";
  appendJsonString(out, event.action);
  out += R"(,"apiVersion":"events.k8s.io/v1","eventTime":)";
  appendMicroTime(out, now);
  out += R"(,"kind":"Event","metadata":{"name":)";
  appendJsonString(out, name);
  out += R"(,"namespace":)";
  appendJsonString(out, event.podNamespace);
  out += R"(},"note":)";
  appendJsonString(out, std::string_view(event.note).substr(0, kNoteLimit));
  out += R"(,"reason":)";
  appendJsonString(out, event.reason);
  out += R"(,"regarding":{"apiVersion":"v1","kind":"Pod","name":)";
  appendJsonString(out, event.podName);
  out += R"(,"namespace":)";
  appendJsonString(out, event.podNamespace);
  out += R"(,"uid":)";
  appendJsonString(out, event.podUid);
  out += R"(},"reportingController":)";
  appendJsonString(out, kReportingController);
  out += R"(,"reportingInstance":)";
  appendJsonString(out, reportingInstance);
  out += R"(,"type":)";
  appendJsonString(out, event.type);
  out += '}';
}

std::chrono::milliseconds RetryBackoff::afterRound(bool leftToRetry) {
  if (!leftToRetry) {
    current_ = std::chrono::milliseconds(0);
    return current_;
  }
  current_ = current_.count() == 0 ? initial_ : std::min(current_ * 2, max_);
  return current_;
}

ApiEventRecorder::ApiEventRecorder(std::unique_ptr<ApiClient> client, MetricsRegistry& metrics, Options options)
    : client_(std::move(client)),
      options_(std::move(options)),
      sent_(metrics.counter("placer_events_sent_total", "Events (events.k8s.io/v1) about placed pods created.")),
      droppedFull_(metrics.counter("placer_events_dropped_total",
                                   "Events not sent: the queue was full, the API server refused one, or it kept failing.",
                                   {{"reason", "queue_full"}})),
      droppedRefused_(metrics.counter("placer_events_dropped_total",
                                      "Events not sent: the queue was full, the API server refused one, or it kept failing.",
                                      {{"reason", "refused"}})),
      droppedRetries_(metrics.counter("placer_events_dropped_total",
                                      "Events not sent: the queue was full, the API server refused one, or it kept failing.",
                                      {{"reason", "retries_exhausted"}})),
      thread_([this] { run(); }) {}

ApiEventRecorder::~ApiEventRecorder() { stop(); }

void ApiEventRecorder::emit(PodEvent event) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() + held_ >= options_.queueCapacity) {
      droppedFull_.inc();
      return;
    }
    queue_.push_back(Pending{std::move(event), 0});
    // The sender waits either for a first event or for a batch to fill.
    wake = waiting_ && (queue_.size() == 1 || queue_.size() == options_.batch);
  }
  if (wake) wake_.notify_one();
}

void ApiEventRecorder::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ApiEventRecorder::Round ApiEventRecorder::sendRound(Connection& connection, std::vector<Pending>& pending) {
  const size_t n = std::min(pending.size(), std::max<size_t>(options_.pipeline, 1));
  round_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    ApiRequest& r = round_[i];
    const PodEvent& event = pending[i].event;
    r.method = "POST";
    r.target = "/apis/events.k8s.io/v1/namespaces/" + urlEncode(event.podNamespace) + "/events";
    r.contentType = "application/json";
    r.body.clear();
    appendEventJson(r.body, event, options_.reportingInstance, std::chrono::system_clock::now());
  }
  const Connection::Pipelined result = connection.sendPipelined(round_, kSendTimeout);

  // Each event's fate; those to try again keep their order at the front.
  Round round;
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    Pending& p = pending[i];
    bool retry = false;
    bool counts = true;  // the retry counts as a try (and backs off)
    if (i < result.answers.size()) {
      const ApiResponse& answer = result.answers[i];
      if (answer.status == 401) client_->token().invalidate();
      if (answer.status == 200 || answer.status == 201) {
        sent_.inc();
      } else if (answer.status == 401 || answer.status == 429 || answer.status >= 500) {
        retry = true;
      } else {
        logEvent(LogLevel::Warning, "event refused by the API server",
                 {{"pod", p.event.podNamespace + "/" + p.event.podName}, {"reason", p.event.reason},
                  {"status", answer.status}, {"body", answer.body.substr(0, 512)}});
        droppedRefused_.inc();
      }
    } else {
      // No answer: the connection failed. When earlier events of the round
      // were answered, it was only closed (the server may end a keep-alive
      // connection at any answer): the rest go again at once, no try lost.
      retry = true;
      counts = result.answers.empty();
    }
    round.failed = round.failed || retry;
    if (retry && counts && ++p.tries >= options_.attempts) {
      droppedRetries_.inc();
      continue;
    }
    if (retry) {
      round.leftToRetry = round.leftToRetry || counts;
      if (kept != i) pending[kept] = std::move(p);
      ++kept;
    }
  }
  pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(kept), pending.begin() + static_cast<std::ptrdiff_t>(n));
  return round;
}

void ApiEventRecorder::run() {
  pthread_setname_np(pthread_self(), "placer-events");  // for top -H and the loadgens
  // Linux applies a niceness to the one thread named by its id; a thread may
  // always lower its own priority. Failing that, it runs at the process's.
  errno = 0;
  const int processNice = getpriority(PRIO_PROCESS, 0);
  if (errno == 0) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), std::min(19, processNice + kSenderNiceness));
  std::unique_ptr<Connection> connection;
  RetryBackoff backoff(options_.initialBackoff, options_.maxBackoff);
  std::vector<Pending> pending;  // taken from the queue, in order
  std::unique_lock lock(mutex_);
  for (;;) {
    if (pending.empty()) {
      held_ = 0;
      waiting_ = true;
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      // Let a batch gather: one wake and one swap for many events.
      wake_.wait_for(lock, options_.window, [&] { return stopping_ || queue_.size() >= options_.batch; });
      waiting_ = false;
      if (stopping_) return;
      pending.swap(queue_);  // the queue keeps the emptied vector's storage
      held_ = pending.size();
    }
    lock.unlock();
    if (!connection) connection = std::make_unique<Connection>(*client_);
    const Round round = sendRound(*connection, pending);
    // After a failure, a fresh connection: a server that refused a request
    // early may not have read its body, which would spoil the next one.
    if (round.failed) connection.reset();
    const std::chrono::milliseconds wait = backoff.afterRound(round.leftToRetry);
    if (wait.count() > 0 && options_.backingOff) options_.backingOff(wait);
    lock.lock();
    held_ = pending.size();
    if (wait.count() > 0) wake_.wait_for(lock, wait, [&] { return stopping_; });
    if (stopping_) return;
  }
}

Result<std::unique_ptr<ApiEventRecorder>> makeApiEventRecorder(const std::string& kubeconfig, MetricsRegistry& metrics,
                                                               ApiEventRecorder::Options options) {
  auto config = kubeconfig.empty() ? loadInClusterConfig() : loadKubeconfigFile(kubeconfig);
  if (!config) return config.error();
  auto client = ApiClient::create(*config);
  if (!client) return client.error();
  return std::make_unique<ApiEventRecorder>(std::move(*client), metrics, std::move(options));
}

}  // namespace placer::kube
