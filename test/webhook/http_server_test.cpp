// The listener over real sockets and real TLS: routing, limits, keep-alive,
// protocol versions, failure isolation, bearer tokens, graceful stop.
#include "webhook/http_server.h"

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
  void start(bool tls = true, std::string token = "") {
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
