// A follower's forwarding to the leader over real TLS: the leader is an
// HttpServer serving a certificate for the Service's DNS name, signed by a CA
// of the test's own.
#include "webhook/review_forwarding.h"

#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

#include "certs/x509.h"
#include "webhook/http_server.h"
#include "webhook/log.h"

namespace placer {
namespace {

constexpr const char* kServiceName = "placer.placer-system.svc";

struct Pki {
  certs::PemPair ca;
  certs::PemPair serving;
};

Pki makePki(const std::vector<std::string>& names) {
  auto ca = certs::generateCa("forwarding-test-ca", 1, certs::KeyType::EcdsaP256);
  EXPECT_TRUE(ca);
  auto serving = certs::generateServingCert(*ca, names, {}, 1, certs::KeyType::EcdsaP256);
  EXPECT_TRUE(serving);
  return {*ca, *serving};
}

class ReviewForwardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogOutput(nullptr);
    pki_ = makePki(certs::serviceDnsNames("placer", "placer-system"));
    auto cert = ServingCertificate::fromPem(pki_.serving.certificatePem, pki_.serving.privateKeyPem);
    ASSERT_TRUE(cert);
    certificate_ = std::move(*cert);
    ListenerOptions o;
    o.name = "leader";
    o.address = "127.0.0.1:0";
    o.certificate = std::shared_ptr<const ServingCertificate>(certificate_.get(), [](const ServingCertificate*) {});
    o.workerThreads = 2;
    o.routes = {Route{"POST", "/mutate", [this](const HttpRequest& r) {
                        std::unique_lock lock(mutex_);
                        if (hold_) {
                          held_ = true;
                          changed_.notify_all();
                          changed_.wait(lock, [this] { return !hold_; });
                        }
                        return HttpResponse::json(200, "{\"from\":\"" + r.forwardedBy + "\",\"echo\":" + r.body + "}");
                      }}};
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s) << s.error().message;
    leader_ = std::move(*s);
  }
  void TearDown() override {
    {
      std::lock_guard lock(mutex_);
      hold_ = false;
    }
    changed_.notify_all();
    if (leader_) leader_->stop(std::chrono::seconds(5));
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(leader_->port()); }
  ReviewForwarderOptions options(std::string serverName = kServiceName, std::string caPem = "") const {
    return {"follower-1", std::move(serverName), caPem.empty() ? pki_.ca.certificatePem : caPem,
            std::chrono::milliseconds(500), 4};
  }

  Pki pki_;
  std::unique_ptr<ServingCertificate> certificate_;
  std::unique_ptr<HttpServer> leader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool hold_ = false;
  bool held_ = false;
};

TEST_F(ReviewForwardingTest, TheLeaderAnswersAndKnowsTheReviewWasForwarded) {
  ReviewForwarder forwarder(options());
  auto answer = forwarder.forward(address(), R"({"kind":"AdmissionReview"})");
  ASSERT_TRUE(answer) << answer.error().message;
  EXPECT_EQ(*answer, R"({"from":"follower-1","echo":{"kind":"AdmissionReview"}})");
}

TEST_F(ReviewForwardingTest, ConsecutiveForwardsReuseOneKeepAliveConnection) {
  ReviewForwarder forwarder(options());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(forwarder.forward(address(), "{}"));
  EXPECT_EQ(leader_->stats().openConnections, 1);
}

// The leader's certificate must be the one every replica carries: for the
// Service's DNS name, from the same CA. Anything else is refused.
TEST_F(ReviewForwardingTest, ALeaderThatCannotProveItsNameIsRefused) {
  struct Case {
    std::string name;
    ReviewForwarderOptions options;
  };
  const Pki other = makePki({kServiceName});
  const std::vector<Case> cases = {
      {"another name than the certificate's", options("placer.elsewhere.svc")},
      {"a CA that did not sign it", options(kServiceName, other.ca.certificatePem)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ReviewForwarder forwarder(c.options);
    auto answer = forwarder.forward(address(), "{}");
    EXPECT_FALSE(answer);
  }
}

TEST_F(ReviewForwardingTest, ALeaderThatDoesNotAnswerInTimeIsAFailureNotAStall) {
  {
    std::lock_guard lock(mutex_);
    hold_ = true;
  }
  ReviewForwarderOptions o = options();
  o.timeout = std::chrono::milliseconds(200);
  ReviewForwarder forwarder(o);
  // The leader holds the request until the test ends: only the timeout can
  // end this call (a forwarder without one would hang the test).
  auto answer = forwarder.forward(address(), "{}");
  EXPECT_FALSE(answer);
}

TEST_F(ReviewForwardingTest, NobodyListeningIsAFailure) {
  ReviewForwarder forwarder(options());
  const std::string gone = address();
  leader_->stop(std::chrono::seconds(5));
  leader_.reset();
  EXPECT_FALSE(forwarder.forward(gone, "{}"));
}

}  // namespace
}  // namespace placer
