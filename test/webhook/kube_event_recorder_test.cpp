// The Event sender: what it POSTs (events.k8s.io/v1, byte for byte what the
// nlohmann DOM it replaces wrote), its back-off between failing rounds, and
// its counting of sent and dropped Events, against the fake API server over
// real TLS.
#include "webhook/kube/event_recorder.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/fakeapi/fake_apiserver.h"
#include "webhook/kube/kube_config.h"
#include "webhook/log.h"
#include "webhook/metrics.h"

namespace placer::kube {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using fakeapi::Kind;

constexpr const char* kNs = "shop";

// The Event as the recorder built it before it wrote its bodies directly: an
// nlohmann DOM, dumped compact (keys sorted), invalid UTF-8 replaced.
std::string domEventJson(const PodEvent& event, const std::string& instance,
                         std::chrono::system_clock::time_point now) {
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, ".%llx",
                static_cast<unsigned long long>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char time[64];
  std::snprintf(time, sizeof time, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(micros % 1000000));
  json object = {{"apiVersion", "events.k8s.io/v1"},
                 {"kind", "Event"},
                 {"metadata", {{"name", event.podName + suffix}, {"namespace", event.podNamespace}}},
                 {"eventTime", time},
                 {"reportingController", "placer.io/placer"},
                 {"reportingInstance", instance},
                 {"action", event.action},
                 {"reason", event.reason},
                 {"regarding",
                  {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"namespace", event.podNamespace},
                   {"name", event.podName},
                   {"uid", event.podUid}}},
                 {"note", event.note.size() > 1024 ? event.note.substr(0, 1024) : event.note},
                 {"type", event.type}};
  return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

PodEvent scheduled(const std::string& name, const std::string& node = "node-a") {
  return PodEvent{kNs, name, "uid-" + name, "Scheduled", "Binding",
                  "Successfully assigned " + std::string(kNs) + "/" + name + " to " + node};
}

TEST(EventJson, TheBodyIsWhatTheJsonDomWrote) {
  struct Case {
    std::string name;
    PodEvent event;
    bool validUtf8 = true;
  };
  PodEvent quoted = scheduled("web-1");
  quoted.note = "0/3 nodes: \"zone\" full\n\tnext line \\ back\x01slash";
  PodEvent declined{kNs, "batch-x", "u-2", "NotPlaced", "Scheduling", "0/5 nodes are available: 5 Insufficient cpu."};
  PodEvent unicode = scheduled("caf\xc3\xa9-\xe2\x82\xac", "n\xc3\xb6" "de");
  PodEvent longNote = scheduled("web-2");
  longNote.note = std::string(3000, 'x');
  PodEvent splitAtLimit = scheduled("web-3");  // the 1,024-byte cut falls inside a two-byte character
  splitAtLimit.note = std::string(1023, 'a') + "\xc3\xa9" + "tail";
  PodEvent invalid = scheduled("web-4");
  invalid.note = "bad \xff byte";
  PodEvent warning = scheduled("web-5");
  warning.type = "Warning";
  const std::vector<Case> cases = {
      {"a Scheduled event", scheduled("web-0")},
      {"a NotPlaced event", declined},
      {"escapes in the note", quoted},
      {"UTF-8 names and node", unicode},
      {"a note past 1 kB is cut", longNote},
      {"a cut inside a character", splitAtLimit, false},
      {"invalid UTF-8 in the note", invalid, false},
      {"another type", warning},
  };
  const auto now = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'764'201'600'123'456'789LL));
  for (const Case& c : cases) {
    std::string body;
    appendEventJson(body, c.event, "placer-0", now);
    const std::string dom = domEventJson(c.event, "placer-0", now);
    if (c.validUtf8) {
      EXPECT_EQ(body, dom) << c.name;
    } else {
      // The DOM wrote U+FFFD as its UTF-8 bytes, the direct writer as \ufffd: the same JSON value.
      EXPECT_EQ(json::parse(body), json::parse(dom)) << c.name;
    }
  }
  std::string body;
  appendEventJson(body, scheduled("web-0"), "placer-0", now);
  const json parsed = json::parse(body);
  EXPECT_EQ(parsed["eventTime"], "2025-11-27T00:00:00.123456Z");
  EXPECT_EQ(parsed["metadata"]["name"], "web-0.187bb4021788cd15");
}

TEST(RetryBackoff, DoublesWhileRoundsFailAndStartsAfreshOnceNothingIsLeft) {
  struct Case {
    std::string name;
    std::vector<bool> leftToRetry;           // after each round
    std::vector<int> waitsMs;                 // the waits that follow
  };
  const std::vector<Case> cases = {
      {"doubles up to the cap", {true, true, true, true, true}, {100, 200, 400, 500, 500}},
      {"nothing left: no wait", {false, false}, {0, 0}},
      {"a round that sends all starts afresh", {true, true, false, true}, {100, 200, 0, 100}},
      {"from the cap, afresh", {true, true, true, true, false, true}, {100, 200, 400, 500, 0, 100}},
  };
  for (const Case& c : cases) {
    RetryBackoff backoff(100ms, 500ms);
    std::vector<int> waits;
    for (bool left : c.leftToRetry) waits.push_back(int(backoff.afterRound(left).count()));
    EXPECT_EQ(waits, c.waitsMs) << c.name;
  }
}

// A recorder with its own metrics, and the back-off waits its sender took.
struct Sender {
  MetricsRegistry metrics;
  std::mutex mutex;
  std::vector<int> waitsMs;
  std::unique_ptr<ApiEventRecorder> recorder;  // last: stops first

  double counter(const std::string& series) const {
    const std::string text = metrics.render();
    const size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 2);
  }
  double sent() const { return counter("placer_events_sent_total"); }
  double dropped(const std::string& reason) const {
    return counter("placer_events_dropped_total{reason=\"" + reason + "\"}");
  }
  // Waits (bounded) until the sent and dropped Events add up to n.
  bool through(double n) const {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    auto total = [&] { return sent() + dropped("queue_full") + dropped("refused") + dropped("retries_exhausted"); };
    while (total() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    return total() >= n;
  }
  std::vector<int> waits() {
    std::lock_guard lock(mutex);
    return waitsMs;
  }
};

class EventRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogOutput(nullptr);
    auto started = fakeapi::FakeApiServer::start();
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(*started);
  }

  // A client of the fake, as placer builds one from its kubeconfig.
  std::unique_ptr<ApiClient> client() {
    auto config = parseKubeconfig(server_->kubeconfig(), "/");
    EXPECT_TRUE(config) << config.error().message;
    auto client = ApiClient::create(*config);
    EXPECT_TRUE(client) << client.error().message;
    return client ? std::move(*client) : nullptr;
  }

  std::unique_ptr<Sender> sender(ApiEventRecorder::Options options) {
    auto s = std::make_unique<Sender>();
    auto client = this->client();
    options.reportingInstance = "placer-test-0";
    options.backingOff = [s = s.get()](std::chrono::milliseconds wait) {
      std::lock_guard lock(s->mutex);
      s->waitsMs.push_back(int(wait.count()));
    };
    s->recorder = std::make_unique<ApiEventRecorder>(std::move(client), s->metrics, std::move(options));
    return s;
  }

  std::unique_ptr<fakeapi::FakeApiServer> server_;
};

TEST_F(EventRecorderTest, EveryEventIsCreatedOnceWithKubeSchedulersFields) {
  // More events than a batch and a round hold: several batches, several pipelined rounds.
  auto s = sender({.reportingInstance = "placer-test-0", .batch = 16, .window = 1ms, .pipeline = 8});
  constexpr int kEvents = 150;
  for (int i = 0; i < kEvents; ++i) s->recorder->emit(scheduled("web-" + std::to_string(i), "node-" + std::to_string(i % 3)));
  ASSERT_TRUE(s->through(kEvents));
  EXPECT_EQ(s->sent(), kEvents);
  const std::vector<json> stored = server_->list(Kind::Event, kNs);
  ASSERT_EQ(stored.size(), size_t(kEvents));
  std::map<std::string, int> seen;
  for (const json& e : stored) {
    const std::string pod = e["regarding"]["name"];
    ++seen[pod];
    EXPECT_EQ(e["reason"], "Scheduled");
    EXPECT_EQ(e["action"], "Binding");
    EXPECT_EQ(e["type"], "Normal");
    EXPECT_EQ(e["reportingController"], "placer.io/placer");
    EXPECT_EQ(e["reportingInstance"], "placer-test-0");
    EXPECT_EQ(e["regarding"]["kind"], "Pod");
    EXPECT_EQ(e["regarding"]["uid"], "uid-" + pod);
    EXPECT_EQ(e["note"].get<std::string>().rfind("Successfully assigned shop/" + pod + " to node-", 0), 0u);
  }
  EXPECT_EQ(seen.size(), size_t(kEvents));
  EXPECT_TRUE(s->waits().empty()) << "no back-off without a failure";
}

// The niceness of this process's thread named `name` (/proc/self/task/*/stat
// field 19), or nullopt when there is no such thread.
std::optional<int> threadNiceness(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string threadName;
    std::getline(comm, threadName);
    if (threadName != name) continue;
    std::ifstream statFile(task.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(statFile)), std::istreambuf_iterator<char>());
    // The fields after the parenthesised name, from field 3 (state) on.
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
      if (i == 19) return std::stoi(field);
    }
  }
  return std::nullopt;
}

TEST_F(EventRecorderTest, TheSenderYieldsTheCpuToAdmissions) {
  // Events are best effort: the sender thread runs 10 nice levels below the
  // process (at most 19), so on busy cores admissions come first.
  auto s = sender({.reportingInstance = "placer-test-0", .window = 1ms});
  s->recorder->emit(scheduled("web-0"));
  ASSERT_TRUE(s->through(1));  // the thread has set its priority before its first round
  errno = 0;
  const int processNice = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  EXPECT_EQ(threadNiceness("placer-events"), std::min(19, processNice + 10));
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), processNice) << "the process's other threads keep their priority";
}

TEST_F(EventRecorderTest, FailuresAreRetriedRefusalsAndExhaustedRetriesDroppedAndCounted) {
  struct Case {
    std::string name;
    int failures;  // the next requests answered `status`
    int status;
    bool invalid;  // an Event the API server's validation refuses (no action)
    double sent, refused, exhausted;
    std::vector<int> waitsMs;
  };
  // One event per round (emitted after the last went through), 3 tries each.
  const std::vector<Case> cases = {
      {"a 503 is tried again after the back-off", 1, 503, false, 1, 0, 0, {10}},
      {"a 429 likewise, doubling while it lasts", 2, 429, false, 1, 0, 0, {10, 20}},
      {"a 500 on every try drops it", 3, 500, false, 0, 0, 1, {10, 20}},
      {"a 403 is dropped at once", 1, 403, false, 0, 1, 0, {}},
      {"an invalid Event (422) likewise", 0, 0, true, 0, 1, 0, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = sender({.reportingInstance = "placer-test-0", .window = 1ms, .initialBackoff = 10ms, .maxBackoff = 10s, .attempts = 3});
    if (c.failures > 0) server_->failNextRequests(c.failures, c.status, 0);
    PodEvent event = scheduled("web-" + std::to_string(c.failures) + "-" + std::to_string(c.status));
    if (c.invalid) event.action = "";
    s->recorder->emit(event);
    ASSERT_TRUE(s->through(1));
    s->recorder->stop();
    EXPECT_EQ(s->sent(), c.sent);
    EXPECT_EQ(s->dropped("refused"), c.refused);
    EXPECT_EQ(s->dropped("retries_exhausted"), c.exhausted);
    EXPECT_EQ(s->waits(), c.waitsMs);
  }
}

// The defect this guards against: after an event was dropped for failing on
// every try, the next event's first retry waited the doubled back-off of the
// dropped one (and kept doubling from there).
TEST_F(EventRecorderTest, TheBackOffStartsAfreshAfterADropAndAfterASuccess) {
  auto s = sender({.reportingInstance = "placer-test-0", .window = 1ms, .initialBackoff = 10ms, .maxBackoff = 10s, .attempts = 3});
  server_->failNextRequests(3, 503, 0);
  s->recorder->emit(scheduled("dropped"));
  ASSERT_TRUE(s->through(1));
  EXPECT_EQ(s->dropped("retries_exhausted"), 1);
  server_->failNextRequests(1, 503, 0);
  s->recorder->emit(scheduled("after-the-drop"));
  ASSERT_TRUE(s->through(2));
  server_->failNextRequests(2, 503, 0);
  s->recorder->emit(scheduled("after-the-success"));
  ASSERT_TRUE(s->through(3));
  EXPECT_EQ(s->sent(), 2);
  EXPECT_EQ(s->waits(), (std::vector<int>{10, 20, 10, 10, 20}));
}

TEST_F(EventRecorderTest, AFullQueueDropsAndCountsAndStopEndsABackOff) {
  // The first event fails and its retry waits an hour: the queue then fills.
  auto s = sender({.reportingInstance = "placer-test-0", .queueCapacity = 4, .window = 1ms, .initialBackoff = 1h, .maxBackoff = 2h, .attempts = 5});
  server_->failNextRequests(1, 503, 0);
  s->recorder->emit(scheduled("first"));
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (s->waits().empty() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(s->waits(), std::vector<int>{3'600'000});
  for (int i = 0; i < 6; ++i) s->recorder->emit(scheduled("queued-" + std::to_string(i)));
  // One held by the sender, three queued: the capacity of four; three dropped.
  EXPECT_EQ(s->dropped("queue_full"), 3);
  s->recorder->stop();  // returns without waiting out the hour
  EXPECT_EQ(s->sent(), 0);
}

TEST_F(EventRecorderTest, PipelinedAnswersComeInRequestOrder) {
  auto client = this->client();
  ASSERT_TRUE(client);
  auto& server = *server_;
  Connection connection(*client);
  const auto now = std::chrono::system_clock::now();
  std::vector<ApiRequest> requests;
  for (const char* name : {"a", "b", "c"}) {
    ApiRequest r{"POST", std::string("/apis/events.k8s.io/v1/namespaces/") + kNs + "/events", "application/json", ""};
    PodEvent event = scheduled(name);
    if (std::string_view(name) == "b") event.action = "";  // invalid: 422
    appendEventJson(r.body, event, "placer-test-0", now);
    requests.push_back(std::move(r));
  }
  requests.push_back({"GET", "/apis/events.k8s.io/v1/namespaces/shop/events/missing", "", ""});
  auto first = connection.sendPipelined(requests, 10s);
  ASSERT_EQ(first.answers.size(), requests.size()) << first.error;
  EXPECT_EQ(first.answers[0].status, 201);
  EXPECT_EQ(first.answers[1].status, 422);
  EXPECT_EQ(first.answers[2].status, 201);
  EXPECT_EQ(first.answers[3].status, 404);
  EXPECT_EQ(server.count(Kind::Event), 2u);
  // The same keep-alive connection serves the next round; the same Event
  // again is one the API server already has.
  ApiRequest next = requests[0];
  next.body.clear();
  appendEventJson(next.body, scheduled("d"), "placer-test-0", now);
  auto second = connection.sendPipelined({next, requests[0]}, 10s);
  ASSERT_EQ(second.answers.size(), 2u) << second.error;
  EXPECT_EQ(second.answers[0].status, 201);
  EXPECT_EQ(second.answers[1].status, 409);
  EXPECT_EQ(server.count(Kind::Event), 3u);
}

// The fake answers some requests before reading their body (an injected
// fault, a 401); like the real API server it reads and drops that body, so the
// next request on the same keep-alive connection is understood.
TEST_F(EventRecorderTest, TheFakeDropsTheBodyOfARequestItAnsweredEarly) {
  auto client = this->client();
  ASSERT_TRUE(client);
  auto& server = *server_;
  Connection connection(*client);
  const std::string target = std::string("/apis/events.k8s.io/v1/namespaces/") + kNs + "/events";
  auto body = [](const char* name) {
    std::string out;
    appendEventJson(out, scheduled(name), "placer-test-0", std::chrono::system_clock::now());
    return out;
  };
  server.failNextRequests(1, 500);
  auto failed = connection.send("POST", target, "application/json", body("first"), 10s);
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_EQ(failed->status, 500);
  auto next = connection.send("POST", target, "application/json", body("second"), 10s);
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->status, 201) << next->body;
  EXPECT_EQ(server.list(fakeapi::Kind::Event, kNs).size(), 1u);
}

}  // namespace
}  // namespace placer::kube
