// A listener's route that relays its requests to another server (a
// follower's reviews, to the leader), over real TLS: the upstream is an
// HttpServer serving a certificate for the Service's DNS name, signed by a CA
// of the test's own; a client talks to the relaying listener over TLS too.
#include "webhook/http_relay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "certs/x509.h"
#include "test/fakeapi/https_client.h"
#include "webhook/http_server.h"
#include "webhook/log.h"

namespace placer {
namespace {

using namespace std::chrono_literals;

constexpr const char* kServiceName = "placer.placer-system.svc";

struct Pki {
  certs::PemPair ca;
  certs::PemPair serving;
};

Pki makePki(const std::vector<std::string>& names) {
  auto ca = certs::generateCa("relay-test-ca", 1, certs::KeyType::EcdsaP256);
  EXPECT_TRUE(ca);
  auto serving = certs::generateServingCert(*ca, names, {}, 1, certs::KeyType::EcdsaP256);
  EXPECT_TRUE(serving);
  return {*ca, *serving};
}

template <class Condition>
bool waitFor(Condition condition, std::chrono::milliseconds bound = 10s) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// An upstream: answers POST /mutate with what it received, or holds the
// request while `hold` is set, or answers `status` when it is not 200.
struct Upstream {
  std::mutex mutex;
  std::condition_variable changed;
  bool hold = false;
  int status = 200;
  std::unique_ptr<HttpServer> server;

  std::string address() const { return "127.0.0.1:" + std::to_string(server->port()); }
};

class HttpRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogOutput(nullptr);
    pki_ = makePki(certs::serviceDnsNames("placer", "placer-system"));
    auto cert = ServingCertificate::fromPem(pki_.serving.certificatePem, pki_.serving.privateKeyPem);
    ASSERT_TRUE(cert);
    certificate_ = std::move(*cert);
    a_ = startUpstream("a");
    b_ = startUpstream("b");
    auto relaying = startRelaying(relayOptions());
    ASSERT_TRUE(relaying) << relaying.error().message;
    relaying_ = std::move(*relaying);
  }

  void TearDown() override {
    for (Upstream* u : {a_.get(), b_.get()}) {
      if (u == nullptr) continue;
      {
        std::lock_guard lock(u->mutex);
        u->hold = false;
      }
      u->changed.notify_all();
    }
    if (relaying_) relaying_->stop(5s);
    for (Upstream* u : {a_.get(), b_.get()})
      if (u != nullptr && u->server) u->server->stop(5s);
  }

  std::shared_ptr<const ServingCertificate> certificate() const {
    return std::shared_ptr<const ServingCertificate>(certificate_.get(), [](const ServingCertificate*) {});
  }

  std::unique_ptr<Upstream> startUpstream(const std::string& name) {
    auto u = std::make_unique<Upstream>();
    ListenerOptions o;
    o.name = name;
    o.address = "127.0.0.1:0";
    o.certificate = certificate();
    o.workerThreads = 2;
    o.keepAliveTimeout = 1s;
    Upstream* self = u.get();
    o.routes = {Route{"POST", "/mutate", [self, name](const HttpRequest& r) {
                        std::unique_lock lock(self->mutex);
                        self->changed.wait(lock, [self] { return !self->hold; });
                        nlohmann::json answer = {{"upstream", name},
                                                 {"from", r.forwardedBy},
                                                 {"query", r.query},
                                                 {"contentType", r.contentType},
                                                 {"body", r.body}};
                        return HttpResponse::json(self->status, answer.dump());
                      }}};
    auto s = HttpServer::start(std::move(o));
    EXPECT_TRUE(s) << s.error().message;
    if (s) u->server = std::move(*s);
    return u;
  }

  RelayOptions relayOptions() const {
    RelayOptions o;
    o.serverName = kServiceName;
    o.caPem = pki_.ca.certificatePem;
    o.timeout = 500ms;
    o.headers = {{"X-Placer-Forwarded-By", "follower-1"}};
    return o;
  }

  // The relaying listener: POST /mutate goes to target() when it is not
  // empty; a failed relay is answered 299 with the error.
  Result<std::unique_ptr<HttpServer>> startRelaying(RelayOptions options) {
    ListenerOptions o;
    o.name = "relaying";
    o.address = "127.0.0.1:0";
    o.certificate = certificate();
    o.workerThreads = 2;
    Route route{"POST", "/mutate", [this](const HttpRequest&) {
                  ++handled_;
                  return HttpResponse::json(200, R"({"upstream":"none"})");
                }};
    route.relay = std::make_shared<const Route::Relay>(
        Route::Relay{std::move(options), [this](const HttpRequest&) { return target(); },
                     [this](const HttpRequest&, Result<std::string> answer) {
                       if (!answer) {
                         ++failed_;
                         return HttpResponse::text(299, answer.error().message);
                       }
                       return HttpResponse::json(200, std::move(*answer));
                     }});
    o.routes = {std::move(route)};
    return HttpServer::start(std::move(o));
  }

  void relayTo(const std::string& address) {
    std::lock_guard lock(mutex_);
    target_ = address;
  }
  std::string target() {
    std::lock_guard lock(mutex_);
    return target_;
  }

  std::unique_ptr<fakeapi::HttpsConnection> client(const HttpServer& server) const {
    auto c =
        fakeapi::HttpsConnection::open("127.0.0.1", server.port(), pki_.ca.certificatePem, 5s, kServiceName);
    EXPECT_TRUE(c) << c.error().message;
    return c ? std::move(*c) : nullptr;
  }

  // One review through `c`: the status and the body.
  static std::pair<int, std::string> post(fakeapi::HttpsConnection& c, const std::string& body) {
    if (!c.sendRequest("POST", "/mutate?timeout=10s", {{"Content-Type", "application/json"}}, body))
      return {0, ""};
    auto r = c.readResponse();
    if (!r) return {0, r.error().message};
    return {r->status, r->body};
  }

  Pki pki_;
  std::unique_ptr<ServingCertificate> certificate_;
  std::unique_ptr<Upstream> a_, b_;
  std::unique_ptr<HttpServer> relaying_;
  std::mutex mutex_;
  std::string target_;
  std::atomic<int> handled_{0}, failed_{0};
};

TEST_F(HttpRelayTest, ARelayedRequestIsAnsweredByTheUpstreamWithTheMarkerAndTheSameBody) {
  relayTo(a_->address());
  auto c = client(*relaying_);
  ASSERT_TRUE(c);
  const std::string review = R"({"kind":"AdmissionReview","request":{"uid":"u-1"}})";
  auto [status, body] = post(*c, review);
  ASSERT_EQ(status, 200) << body;
  const auto answer = nlohmann::json::parse(body);
  EXPECT_EQ(answer["upstream"], "a");
  EXPECT_EQ(answer["from"], "follower-1");
  EXPECT_EQ(answer["body"], review) << "the bytes received, relayed unchanged";
  EXPECT_EQ(answer["contentType"], "application/json");
  EXPECT_EQ(answer["query"], "timeout=500ms") << "the relay's own timeout, not the caller's";
  EXPECT_EQ(handled_, 0) << "no worker of the relaying listener ran the handler";
}

TEST_F(HttpRelayTest, NoTargetRunsTheRoutesOwnHandler) {
  relayTo("");
  auto c = client(*relaying_);
  ASSERT_TRUE(c);
  auto [status, body] = post(*c, "{}");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, R"({"upstream":"none"})");
  EXPECT_EQ(handled_, 1);
  EXPECT_EQ(a_->server->stats().openConnections, 0);
}

TEST_F(HttpRelayTest, ConsecutiveRelaysReuseOneKeepAliveConnection) {
  relayTo(a_->address());
  auto c = client(*relaying_);
  ASSERT_TRUE(c);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(post(*c, "{}").first, 200);
  EXPECT_EQ(a_->server->stats().openConnections, 1);
}

TEST_F(HttpRelayTest, ConcurrentClientsEachGetTheirOwnAnswerOnPooledConnections) {
  relayTo(a_->address());
  constexpr int kClients = 8, kEach = 25;
  std::atomic<int> right{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t)
    clients.emplace_back([&, t] {
      auto c = client(*relaying_);
      if (!c) return;
      for (int i = 0; i < kEach; ++i) {
        const std::string review = R"({"uid":")" + std::to_string(t) + "-" + std::to_string(i) + R"("})";
        auto [status, body] = post(*c, review);
        if (status == 200 && nlohmann::json::parse(body)["body"] == review) ++right;
      }
    });
  for (auto& t : clients) t.join();
  EXPECT_EQ(right, kClients * kEach);
  EXPECT_LE(a_->server->stats().openConnections, kClients) << "at most one connection per request in flight";
}

// An idle connection the upstream closed (its keep-alive timeout) is not
// used for the next request: that request is answered on a new connection.
TEST_F(HttpRelayTest, AConnectionTheUpstreamClosedWhileIdleIsReplaced) {
  relayTo(a_->address());
  auto c = client(*relaying_);
  ASSERT_TRUE(c);
  ASSERT_EQ(post(*c, "{}").first, 200);
  ASSERT_TRUE(waitFor([&] { return a_->server->stats().openConnections == 0; }))
      << "the upstream closes its idle connection after 1 s";
  auto [status, body] = post(*c, "{}");
  EXPECT_EQ(status, 200) << body;
  EXPECT_EQ(failed_, 0);
}

// The leader changes: requests go to the new address, and the connections
// to the old one are closed, not kept.
TEST_F(HttpRelayTest, ANewTargetGetsTheNextRequestAndTheOldConnectionsClose) {
  auto c = client(*relaying_);
  ASSERT_TRUE(c);
  relayTo(a_->address());
  ASSERT_EQ(nlohmann::json::parse(post(*c, "{}").second)["upstream"], "a");
  relayTo(b_->address());
  ASSERT_EQ(nlohmann::json::parse(post(*c, "{}").second)["upstream"], "b");
  EXPECT_TRUE(waitFor([&] { return a_->server->stats().openConnections == 0; }));
  relayTo(a_->address());
  EXPECT_EQ(nlohmann::json::parse(post(*c, "{}").second)["upstream"], "a");
}

// Every way a relay can fail reaches `answered` with an error, within the
// relay's timeout, and the caller gets that answer (a follower's: allowed
// unchanged).
TEST_F(HttpRelayTest, EveryFailureIsAnsweredByTheRouteWithTheReason) {
  const Pki other = makePki({kServiceName});
  struct Case {
    std::string name;
    std::function<void(RelayOptions&)> configure;
    std::function<std::string()> target;
    std::string reason;  // in the error
  };
  const std::vector<Case> cases = {
      {"a certificate for another name", [](RelayOptions& o) { o.serverName = "placer.elsewhere.svc"; },
       [&] { return a_->address(); }, "tls handshake"},
      {"a CA that did not sign it", [&](RelayOptions& o) { o.caPem = other.ca.certificatePem; },
       [&] { return a_->address(); }, "tls handshake"},
      {"nobody listening", [](RelayOptions&) {},
       [&] {
         const std::string gone = b_->address();
         b_->server->stop(5s);
         return gone;
       },
       "connect"},
      {"an answer other than 200",
       [&](RelayOptions&) {
         std::lock_guard lock(a_->mutex);
         a_->status = 500;
       },
       [&] { return a_->address(); }, "answered HTTP 500"},
      {"no answer within the timeout",
       [&](RelayOptions& o) {
         o.timeout = 200ms;
         std::lock_guard lock(a_->mutex);
         a_->status = 200;
         a_->hold = true;
       },
       [&] { return a_->address(); }, "no answer within 200ms"},
      {"not an address", [](RelayOptions&) {}, [] { return std::string("no-port-here"); }, "host:port"},
  };
  relaying_->stop(5s);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RelayOptions options = relayOptions();
    c.configure(options);
    auto started = startRelaying(options);
    ASSERT_TRUE(started) << started.error().message;
    relaying_ = std::move(*started);
    relayTo(c.target());
    auto connection = client(*relaying_);
    ASSERT_TRUE(connection);
    const int failedBefore = failed_;
    auto [status, body] = post(*connection, "{}");
    EXPECT_EQ(status, 299) << body;
    EXPECT_NE(body.find(c.reason), std::string::npos) << body;
    EXPECT_EQ(failed_, failedBefore + 1);
    EXPECT_EQ(handled_, 0);
    relaying_->stop(5s);
  }
}

TEST_F(HttpRelayTest, ABadCaOrNoNameRefusesToStart) {
  struct Case {
    std::string name;
    std::function<void(RelayOptions&)> configure;
  };
  const std::vector<Case> cases = {
      {"no certificate in the CA", [](RelayOptions& o) { o.caPem = "not a certificate"; }},
      {"no server name", [](RelayOptions& o) { o.serverName.clear(); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    RelayOptions options = relayOptions();
    c.configure(options);
    EXPECT_FALSE(startRelaying(options));
  }
}

}  // namespace
}  // namespace placer
