// The listener over real sockets and real TLS: routing, limits, keep-alive,
// protocol versions, failure isolation, bearer tokens, graceful stop.
#include "webhook/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

class HttpServerTest : public ::testing::Test {
 protected:
  void start(bool tls = true, std::string token = "", std::function<void(ListenerOptions&)> adjust = nullptr) {
    setLogOutput(nullptr);
    ListenerOptions o;
    o.name = "test";
    o.address = "127.0.0.1:0";
    if (tls) o.certificate = testCertificate();
    o.maxBodyBytes = 1024;
    o.workerThreads = 4;
    o.bearerToken = std::move(token);
    o.routes = {
        Route{"POST", "/echo", [](const HttpRequest& r) { return HttpResponse::text(200, r.body); }},
        Route{"GET", "/echo", [](const HttpRequest& r) { return HttpResponse::text(200, "query=" + r.query); }},
        Route{"GET", "/throw", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); }},
        Route{"GET", "/slow",
              [this](const HttpRequest&) {
                {
                  std::unique_lock lock(mutex_);
                  slowEntered_ = true;
                  cv_.notify_all();
                  cv_.wait(lock, [this] { return slowRelease_; });
                }
                return HttpResponse::text(200, "slow done");
              }},
    };
    if (adjust) adjust(o);
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(*s);
    tls_ = tls;
  }

  std::unique_ptr<HttpTestClient> client(int maxTlsVersion = 0) {
    ClientOptions o;
    o.port = server_->port();
    if (tls_) o.caPem = testPki().ca.certificatePem;
    o.maxTlsVersion = maxTlsVersion;
    auto c = HttpTestClient::connect(o);
    if (!c) {
      ADD_FAILURE() << c.error().message;
      return nullptr;
    }
    return std::move(*c);
  }

  // Waits, with a bound, until the listener's stats satisfy `done`.
  bool waitForStats(const std::function<bool(const HttpServer::Stats&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done(server_->stats())) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Runs `body` twice, over TLS and over plain HTTP, each time against a
  // fresh server that writes to a metrics registry of its own; the server is
  // stopped before its registry goes, however the case ends.
  void onTlsAndPlain(const std::function<void(MetricsRegistry&)>& body) {
    for (const bool tls : {true, false}) {
      SCOPED_TRACE(tls ? "tls" : "plain");
      MetricsRegistry metrics;
      struct StopServerFirst {
        std::unique_ptr<HttpServer>& server;
        ~StopServerFirst() { server.reset(); }
      } stopFirst{server_};
      start(tls, "", [&](ListenerOptions& o) { o.metrics = &metrics; });
      body(metrics);
      if (HasFatalFailure()) return;
    }
  }

  void releaseSlow() {
    {
      std::lock_guard lock(mutex_);
      slowRelease_ = true;
    }
    cv_.notify_all();
  }

  std::unique_ptr<HttpServer> server_;
  bool tls_ = true;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool slowEntered_ = false;
  bool slowRelease_ = false;
};

TEST_F(HttpServerTest, RoutesOnThePathAloneAndAnswersUnknownPathsAndMethods) {
  start();
  auto c = client();
  ASSERT_TRUE(c);
  struct Case {
    std::string method, target, body;
    int status;
    std::string replyBody, allow;
  };
  std::vector<Case> cases = {
      {"POST", "/echo", "hello", 200, "hello", ""},
      {"POST", "/echo?timeout=10s", "with query", 200, "with query", ""},
      {"GET", "/echo?timeout=10s", "", 200, "query=timeout=10s", ""},
      {"GET", "/nowhere", "", 404, "", ""},
      {"DELETE", "/echo", "", 405, "", "POST, GET"},
      {"PUT", "/echo", "body that is drained", 405, "", "POST, GET"},
      {"POST", "/echo", "still alive", 200, "still alive", ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.method + " " + k.target);
    auto r = c->request(k.method, k.target, k.body);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, k.status);
    if (!k.replyBody.empty()) {
      EXPECT_EQ(r->body, k.replyBody);
    }
    EXPECT_EQ(r->header("allow"), k.allow);
    EXPECT_TRUE(r->keepAlive);  // every answer above came over the same connection
  }
}

TEST_F(HttpServerTest, ServesTls12AndTls13ButRefusesOlderProtocols) {
  start();
  auto c13 = client();
  ASSERT_TRUE(c13);
  EXPECT_EQ(c13->protocol(), "TLSv1.3");
  auto c12 = client(TLS1_2_VERSION);
  ASSERT_TRUE(c12);
  EXPECT_EQ(c12->protocol(), "TLSv1.2");
  EXPECT_EQ(c12->request("GET", "/echo")->status, 200);

  ClientOptions old;
  old.port = server_->port();
  old.caPem = testPki().ca.certificatePem;
  old.maxTlsVersion = TLS1_1_VERSION;
  EXPECT_FALSE(HttpTestClient::connect(old).ok());
}

TEST_F(HttpServerTest, BodiesAboveTheCapAre413ByContentLengthAndWhileReadingChunks) {
  start();
  {
    auto c = client();
    ASSERT_TRUE(c);
    auto r = c->sendRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 413);
    EXPECT_FALSE(r->keepAlive);
  }
  {
    auto c = client();
    ASSERT_TRUE(c);
    std::string chunk(600, 'x');
    std::string req = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 2; ++i) req += "258\r\n" + chunk + "\r\n";  // 0x258 = 600
    req += "0\r\n\r\n";
    auto r = c->sendRaw(req);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 413);
  }
  {
    auto c = client();
    ASSERT_TRUE(c);
    std::string req = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n";
    auto r = c->sendRaw(req);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello");
  }
}

TEST_F(HttpServerTest, AnExceptionInAHandlerIsA500AndTheServerCarriesOn) {
  start();
  auto c = client();
  ASSERT_TRUE(c);
  auto r = c->request("GET", "/throw");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(c->request("POST", "/echo", "after")->body, "after");
}

TEST_F(HttpServerTest, GarbageOnTheWireNeverStopsTheServer) {
  start();
  for (std::string garbage : {std::string("\r\n\r\n"), std::string("NOT HTTP AT ALL\r\n\r\n"),
                              std::string("GET / HTTP/1.1\r\nBad Header Line\r\n\r\n")}) {
    auto c = client();
    ASSERT_TRUE(c);
    (void)c->sendRaw(garbage);  // whatever the answer, if any
  }
  {
    // A request line that never ends, then the client goes away.
    auto c = client();
    ASSERT_TRUE(c);
    (void)c->writeRaw(std::string(50000, 'A'));
  }
  // Plain text sent to the TLS port.
  {
    ClientOptions o;
    o.port = server_->port();
    auto plain = HttpTestClient::connect(o);
    ASSERT_TRUE(plain.ok());
    (void)(*plain)->sendRaw("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  auto c = client();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->request("POST", "/echo", "alive")->body, "alive");
}

TEST_F(HttpServerTest, PlainHttpListenerWithBearerToken) {
  start(/*tls=*/false, "s3cret");
  auto c = client();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->request("POST", "/echo", "x")->status, 401);
  EXPECT_EQ(c->request("POST", "/echo", "x", {{"Authorization", "Bearer wrong"}})->status, 401);
  auto ok = c->request("POST", "/echo", "x", {{"Authorization", "Bearer s3cret"}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "x");
  EXPECT_EQ(c->protocol(), "plain");
}

TEST_F(HttpServerTest, StopFinishesTheRequestInFlightAndClosesIdleConnections) {
  start();
  auto idle = client();
  ASSERT_TRUE(idle);
  ASSERT_EQ(idle->request("GET", "/echo")->status, 200);

  auto busy = client();
  ASSERT_TRUE(busy);
  auto reply = std::async(std::launch::async, [&] { return busy->request("GET", "/slow"); });
  {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [this] { return slowEntered_; }));
  }
  auto stopped = std::async(std::launch::async, [&] { return server_->stop(std::chrono::seconds(10)); });
  // stop() waits for the slow request...
  EXPECT_EQ(stopped.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  {
    std::lock_guard lock(mutex_);
    slowRelease_ = true;
  }
  cv_.notify_all();
  auto r = reply.get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "slow done");
  EXPECT_TRUE(stopped.get());
  // ...and the idle keep-alive connection was closed, new ones are refused.
  EXPECT_FALSE(idle->request("GET", "/echo").ok());
  ClientOptions o;
  o.port = server_->port();
  o.caPem = testPki().ca.certificatePem;
  EXPECT_FALSE(HttpTestClient::connect(o).ok());
}

// Enough descriptors for a thousand connections at both ends.
void raiseOpenFileLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// A TCP connection that sends only what it is told to.
int rawConnect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The API server keeps a pool of idle keep-alive connections per replica:
// they hold no worker, so fresh requests are answered while they stay open.
TEST_F(HttpServerTest, AThousandIdleKeepAliveConnectionsLeaveFreshRequestsAnswered) {
  raiseOpenFileLimit();
  start(true, "", [](ListenerOptions& o) {
    o.workerThreads = 2;
    o.keepAliveTimeout = std::chrono::seconds(600);  // however slowly the thousand are opened
  });
  std::vector<std::unique_ptr<HttpTestClient>> idle;
  for (int i = 0; i < 1000; ++i) {
    auto c = client();
    ASSERT_TRUE(c) << "connection " << i;
    auto r = c->request("POST", "/echo", "warm");
    ASSERT_TRUE(r.ok()) << "connection " << i << ": " << r.error().message;
    ASSERT_EQ(r->status, 200);
    idle.push_back(std::move(c));
  }
  ASSERT_TRUE(waitForStats([](const HttpServer::Stats& s) { return s.idleConnections == 1000; }))
      << server_->stats().idleConnections;
  EXPECT_EQ(server_->stats().openConnections, 1000);
  for (int i = 0; i < 20; ++i) {
    auto fresh = client();
    ASSERT_TRUE(fresh);
    auto r = fresh->request("POST", "/echo", "fresh " + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->body, "fresh " + std::to_string(i));
  }
  // The idle ones still work.
  EXPECT_EQ(idle.front()->request("POST", "/echo", "again")->body, "again");
  EXPECT_EQ(idle.back()->request("POST", "/echo", "again")->body, "again");
}

// Clients that open a connection and send their handshake or headers a byte
// at a time (or never) hold no worker, and are closed at their deadline.
TEST_F(HttpServerTest, SlowlorisConnectionsDelayNobodyAndAreClosedAtTheirDeadline) {
  raiseOpenFileLimit();
  start(true, "", [](ListenerOptions& o) {
    o.workerThreads = 2;
    o.handshakeTimeout = std::chrono::milliseconds(3000);
    o.headerTimeout = std::chrono::milliseconds(3000);
  });
  std::vector<std::unique_ptr<HttpTestClient>> slowHeaders;
  for (int i = 0; i < 100; ++i) {
    auto c = client();
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->writeRaw("POST /echo HTTP/1.1\r\nHo").ok());
    slowHeaders.push_back(std::move(c));
  }
  std::vector<int> silent;  // connected, never a ClientHello
  for (int i = 0; i < 100; ++i) {
    int fd = rawConnect(server_->port());
    ASSERT_GE(fd, 0);
    silent.push_back(fd);
  }
  // (However slowly they were opened, some may already have passed their
  // deadline: nothing here depends on how many are still open.)
  for (int i = 0; i < 20; ++i) {
    auto fresh = client();
    ASSERT_TRUE(fresh);
    auto r = fresh->request("POST", "/echo", "through");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->body, "through");
  }
  // Every slow connection is closed by its deadline; the server counts them.
  ASSERT_TRUE(waitForStats([](const HttpServer::Stats& s) { return s.openConnections == 0; }))
      << server_->stats().openConnections;
  EXPECT_EQ(server_->stats().handshakeFailures, 100u);
  for (int fd : silent) ::close(fd);
}

// A connection whose headers arrive in pieces moves to the listener's slow
// lane (its own thread, at a lower CPU priority; placer_http_slow_connections
// counts them): it is still answered, in full and with keep-alive, a request
// whose headers arrive whole is not moved, and stop() closes the connections
// on either lane.
TEST_F(HttpServerTest, AConnectionWhoseHeadersArriveInPiecesMovesToTheSlowLaneAndIsStillAnswered) {
  onTlsAndPlain([&](MetricsRegistry& metrics) {
    auto slowConnections = [&] {
      return metrics.gauge("placer_http_slow_connections", "", {{"listener", "test"}}).value();
    };
    auto waitForSlow = [&](double n) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (slowConnections() != n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return slowConnections() == n;
    };
    auto slow = client();
    ASSERT_TRUE(slow);
    ASSERT_TRUE(slow->writeRaw("POST /echo HTTP/1.1\r\nHo").ok());
    ASSERT_TRUE(waitForSlow(1)) << slowConnections();
    // Another connection sending its request whole stays on the fast lane.
    auto fast = client();
    ASSERT_TRUE(fast);
    auto r = fast->request("POST", "/echo", "whole");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->body, "whole");
    EXPECT_EQ(slowConnections(), 1);
    // The slow one's request completes, byte by byte, and is answered there.
    for (char byte : std::string("st: placer\r\nContent-Length: 5\r\n\r\nhello"))
      ASSERT_TRUE(slow->writeRaw(std::string_view(&byte, 1)).ok());
    auto answered = slow->readReply();
    ASSERT_TRUE(answered.ok()) << answered.error().message;
    EXPECT_EQ(answered->status, 200);
    EXPECT_EQ(answered->body, "hello");
    EXPECT_TRUE(answered->keepAlive);
    auto again = slow->request("POST", "/echo", "again");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->body, "again");
    EXPECT_EQ(slowConnections(), 1);
    // A second slow one, left unfinished: stop() closes both lanes' connections.
    auto unfinished = client();
    ASSERT_TRUE(unfinished);
    ASSERT_TRUE(unfinished->writeRaw("GET /ec").ok());
    ASSERT_TRUE(waitForSlow(2)) << slowConnections();
    EXPECT_TRUE(server_->stop(std::chrono::seconds(10)));
    EXPECT_EQ(server_->stats().openConnections, 0);
    EXPECT_EQ(slowConnections(), 0);
  });
}

// On the slow lane a connection's headers are read at most every 250 ms,
// whatever has arrived in one go (placer_http_slow_reads_total): clients
// sending a byte every few milliseconds cost the server a wakeup per 250 ms,
// not one per byte, and their requests are still answered in full.
TEST_F(HttpServerTest, ASlowLaneConnectionsBytesAreReadInBatchesAndItIsStillAnswered) {
  onTlsAndPlain([&](MetricsRegistry& metrics) {
    auto slowReads = [&] {
      return metrics.counter("placer_http_slow_reads_total", "", {{"listener", "test"}}).value();
    };
    constexpr int kClients = 4;
    const std::string head = "POST /echo HTTP/1.1\r\nHost: placer\r\nX-Pad: " + std::string(120, 'a') +
                             "\r\nContent-Length: 5\r\n\r\n";
    std::vector<std::unique_ptr<testing::HttpTestClient>> slow;
    for (int i = 0; i < kClients; ++i) {
      auto client = this->client();
      ASSERT_TRUE(client);
      slow.push_back(std::move(client));
    }
    // Each client sends its headers a byte at a time, 2 ms apart: the pace
    // of a slowloris client, not a condition to wait for.
    const auto begin = std::chrono::steady_clock::now();
    for (char byte : head)
      for (auto& client : slow) {
        ASSERT_TRUE(client->writeRaw(std::string_view(&byte, 1)).ok());
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    for (auto& client : slow) {
      ASSERT_TRUE(client->writeRaw("hello").ok());
      auto answered = client->readReply();
      ASSERT_TRUE(answered.ok()) << answered.error().message;
      EXPECT_EQ(answered->status, 200);
      EXPECT_EQ(answered->body, "hello");
    }
    const double elapsedMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    // At most one read per 250 ms and connection (+ the first, and one for
    // the pace under way when the body came); a read per byte would be
    // kClients x head.size().
    const double bound = kClients * (elapsedMs / 250.0 + 2);
    EXPECT_LE(slowReads(), bound) << "in " << elapsedMs << " ms";
    EXPECT_LT(bound, kClients * static_cast<double>(head.size()) / 4) << "the case must tell batches from bytes";
    EXPECT_GE(slowReads(), kClients);
  });
}

TEST_F(HttpServerTest, SixtyFourConcurrentKeepAliveClientsAreAllAnswered) {
  raiseOpenFileLimit();
  start();
  constexpr int kClients = 64;
  constexpr int kRequests = 40;
  std::atomic<int> answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t)
    threads.emplace_back([&, t] {
      auto c = client();
      if (!c) return;
      for (int i = 0; i < kRequests; ++i) {
        const std::string body = std::to_string(t) + ":" + std::to_string(i);
        auto r = c->request("POST", "/echo", body);
        if (r.ok() && r->status == 200 && r->body == body && r->keepAlive) ++answered;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(answered.load(), kClients * kRequests);
}

// Every worker busy and the queue full: the route's shed answer at once, or a
// 503 with Retry-After for routes without one; counted.
TEST_F(HttpServerTest, AFullQueueAnswersAtOnceWithTheShedAnswer) {
  start(true, "", [](ListenerOptions& o) {
    o.workerThreads = 1;
    o.maxQueuedRequests = 1;
    o.routes.push_back(Route{"POST", "/shed-aware", [](const HttpRequest&) { return HttpResponse::text(200, "worked"); },
                             [](const HttpRequest& r) { return HttpResponse::json(200, "{\"shed\":\"" + r.body + "\"}"); }});
  });
  auto busy = client();
  ASSERT_TRUE(busy);
  auto first = std::async(std::launch::async, [&] { return busy->request("GET", "/slow"); });
  {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [this] { return slowEntered_; }));
  }
  auto queuedClient = client();
  ASSERT_TRUE(queuedClient);
  auto queued = std::async(std::launch::async, [&] { return queuedClient->request("POST", "/echo", "queued"); });
  ASSERT_TRUE(waitForStats([](const HttpServer::Stats& s) { return s.queuedRequests == 1; }));

  auto c = client();
  ASSERT_TRUE(c);
  auto shed = c->request("POST", "/shed-aware", "x");
  ASSERT_TRUE(shed.ok()) << shed.error().message;
  EXPECT_EQ(shed->status, 200);
  EXPECT_EQ(shed->body, "{\"shed\":\"x\"}");
  auto plain = c->request("POST", "/echo", "y");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->status, 503);
  EXPECT_EQ(plain->header("retry-after"), "1");
  EXPECT_EQ(server_->stats().shedRequests, 2u);

  releaseSlow();
  EXPECT_EQ(first.get()->body, "slow done");
  EXPECT_EQ(queued.get()->body, "queued") << "a queued request is answered once a worker is free";
  EXPECT_EQ(c->request("POST", "/shed-aware", "z")->body, "worked");
}

TEST_F(HttpServerTest, AnInvalidContentLengthIs400AndClosesTheConnection) {
  start();
  for (std::string length : {"-1", "abc", "1, 2", "99999999999999999999999"}) {
    SCOPED_TRACE(length);
    auto c = client();
    ASSERT_TRUE(c);
    auto r = c->sendRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + "\r\n\r\n");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, 400);
    EXPECT_FALSE(r->keepAlive);
  }
  auto c = client();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->request("POST", "/echo", "fine")->body, "fine");
}

TEST_F(HttpServerTest, ABodyIsRefusedWithoutTheTokenBeforeItIsRead) {
  start(/*tls=*/true, "s3cret", [](ListenerOptions& o) { o.maxBodyBytes = 256u * 1024 * 1024; });
  auto c = client();
  ASSERT_TRUE(c);
  // Headers announcing 200 MB, and not one byte of it: the answer comes anyway.
  auto r = c->sendRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 401);
  EXPECT_FALSE(r->keepAlive);
}

TEST_F(HttpServerTest, ExpectContinueGetsA100BeforeTheBody) {
  start();
  auto c = client();
  ASSERT_TRUE(c);
  auto interim = c->sendRaw("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  ASSERT_TRUE(interim.ok()) << interim.error().message;
  EXPECT_EQ(interim->status, 100);
  auto r = c->sendRaw("hello");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello");
}

TEST_F(HttpServerTest, ConnectionsBeyondTheCapAreClosedAndCounted) {
  start(true, "", [](ListenerOptions& o) { o.maxConnections = 4; });
  std::vector<std::unique_ptr<HttpTestClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(client());
    ASSERT_TRUE(held.back());
  }
  ClientOptions o;
  o.port = server_->port();
  o.caPem = testPki().ca.certificatePem;
  EXPECT_FALSE(HttpTestClient::connect(o).ok());
  EXPECT_EQ(server_->stats().refusedConnections, 1u);
  held.pop_back();
  ASSERT_TRUE(waitForStats([](const HttpServer::Stats& s) { return s.openConnections == 3; }));
  auto again = client();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->request("POST", "/echo", "room again")->body, "room again");
}

TEST(HttpServerStart, AnAddressAlreadyInUseIsAStartUpError) {
  setLogOutput(nullptr);
  ListenerOptions first;
  first.address = "127.0.0.1:0";
  auto a = HttpServer::start(first);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ListenerOptions second;
  second.address = "127.0.0.1:" + std::to_string((*a)->port());
  auto b = HttpServer::start(second);
  ASSERT_FALSE(b.ok()) << "a second listener on the same address must not share it";
  EXPECT_NE(b.error().message.find("in use"), std::string::npos) << b.error().message;
}

TEST(SplitHostPortTest, Forms) {
  EXPECT_EQ(*splitHostPort("0.0.0.0:8443"), std::make_pair(std::string("0.0.0.0"), uint16_t(8443)));
  EXPECT_EQ(*splitHostPort(":9000"), std::make_pair(std::string(""), uint16_t(9000)));
  EXPECT_EQ(*splitHostPort("[::1]:443"), std::make_pair(std::string("::1"), uint16_t(443)));
  EXPECT_FALSE(splitHostPort("localhost").ok());
  EXPECT_FALSE(splitHostPort("host:99999").ok());
  EXPECT_FALSE(splitHostPort("host:http").ok());
}

}  // namespace
}  // namespace placer::testing
