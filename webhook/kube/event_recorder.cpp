#include "webhook/kube/event_recorder.h"

#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "webhook/log.h"

namespace placer::kube {
namespace {

constexpr auto kSendTimeout = std::chrono::seconds(10);
constexpr std::string_view kReportingController = "placer.io/placer";

// metav1.MicroTime: RFC 3339 with microseconds, UTC.
std::string microTime(std::chrono::system_clock::time_point t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char out[40];
  std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(micros % 1000000));
  return out;
}

}  // namespace

std::string eventJson(const PodEvent& event, const std::string& reportingInstance,
                      std::chrono::system_clock::time_point now) {
  // The name as client-go's event recorder makes it: <regarding name>.<unix nanoseconds in hex>.
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx",
                static_cast<unsigned long long>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  nlohmann::json object = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", event.podName + suffix}, {"namespace", event.podNamespace}}},
      {"eventTime", microTime(now)},
      {"reportingController", kReportingController},
      {"reportingInstance", reportingInstance},
      {"action", event.action},
      {"reason", event.reason},
      {"regarding",
       {{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", event.podNamespace}, {"name", event.podName},
        {"uid", event.podUid}}},
      {"note", event.note.size() > 1024 ? event.note.substr(0, 1024) : event.note},
      {"type", event.type}};
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= options_.queueCapacity) {
      droppedFull_.inc();
      return;
    }
    queue_.push_back(std::move(event));
  }
  wake_.notify_one();
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

ApiEventRecorder::Sent ApiEventRecorder::send(Connection& connection, const PodEvent& event) {
  const std::string target = "/apis/events.k8s.io/v1/namespaces/" + urlEncode(event.podNamespace) + "/events";
  auto response = connection.send("POST", target, "application/json",
                                  eventJson(event, options_.reportingInstance, std::chrono::system_clock::now()),
                                  kSendTimeout);
  if (!response) return Sent::Retry;
  if (response->status == 401) client_->token().invalidate();
  if (response->status == 200 || response->status == 201) return Sent::Ok;
  if (response->status == 401 || response->status == 429 || response->status >= 500) return Sent::Retry;
  logEvent(LogLevel::Warning, "event refused by the API server",
           {{"pod", event.podNamespace + "/" + event.podName}, {"reason", event.reason}, {"status", response->status},
            {"body", response->body.substr(0, 512)}});
  return Sent::Refused;
}

void ApiEventRecorder::run() {
  std::unique_ptr<Connection> connection;
  std::chrono::milliseconds backoff{0};
  int attempts = 0;  // of the event at the front
  std::unique_lock lock(mutex_);
  for (;;) {
    if (backoff.count() > 0) wake_.wait_for(lock, backoff, [&] { return stopping_; });
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    // A batch: up to options_.batch events back to back, the lock released while sending.
    for (size_t n = 0; n < options_.batch && !queue_.empty() && !stopping_; ++n) {
      PodEvent event = queue_.front();
      lock.unlock();
      if (!connection) connection = std::make_unique<Connection>(*client_);
      const Sent result = send(*connection, event);
      lock.lock();
      if (result == Sent::Retry) {
        connection.reset();
        if (++attempts < options_.attempts) {
          backoff = backoff.count() == 0 ? options_.initialBackoff : std::min(backoff * 2, options_.maxBackoff);
          break;
        }
        droppedRetries_.inc();
      } else {
        (result == Sent::Ok ? sent_ : droppedRefused_).inc();
        backoff = std::chrono::milliseconds(0);
      }
      attempts = 0;
      if (!queue_.empty()) queue_.pop_front();
    }
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
