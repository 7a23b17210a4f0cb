// The certificates `placer certs` writes, served by placer's own TLS listener:
// verified by real clients (curl, openssl s_client), and rotated while clients
// keep handshaking, with zero failures.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "certs/cert_files.h"
#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "test/certs/cert_test_support.h"
#include "test/support/http_test_client.h"
#include "webhook/cluster_feed.h"
#include "webhook/demo_cluster.h"
#include "webhook/http_server.h"
#include "webhook/metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/webhook_routes.h"

namespace placer::certs {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::runCommand;
using testing::slurp;
using testing::TempDir;

const std::string kHost = "placer.placer-system.svc";

CertificateSpec spec() {
  CertificateSpec s;
  s.service = "placer";
  s.ns = "placer-system";
  return s;
}

// `placer serve` in-process: the webhook routes over the demo cluster, TLS
// from DIR/tls.crt and DIR/tls.key, polled for rotation.
class WebhookServer {
 public:
  explicit WebhookServer(const fs::path& dir, std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
    auto cert = ServingCertificate::fromFiles((dir / kServingCertFile).string(), (dir / kServingKeyFile).string());
    if (!cert) throw std::runtime_error(cert.error().message);
    certificate_ = std::move(*cert);
    certificate_->startPolling(poll);
    feed_ = makeDemoFeed();
    if (Outcome o = feed_->start(state_); !o) throw std::runtime_error(o.error().message);
    auto config = configurationFromJson(json());
    if (!config) throw std::runtime_error(config.error().message);
    context_.engine = std::make_shared<const Engine>(config->profile);
    context_.state = &state_;
    context_.settings = config->settings;
    context_.feed = feed_.get();
    context_.metrics = &metrics_;
    ListenerOptions options;
    options.address = "127.0.0.1:0";
    options.certificate = std::shared_ptr<const ServingCertificate>(certificate_.get(), [](const ServingCertificate*) {});
    options.routes = webhookRoutes(context_);
    options.workerThreads = 8;
    auto server = HttpServer::start(std::move(options));
    if (!server) throw std::runtime_error(server.error().message);
    server_ = std::move(*server);
  }
  ~WebhookServer() {
    server_->stop(std::chrono::seconds(5));
    feed_->stop();
    certificate_->stopPolling();
  }
  uint16_t port() const { return server_->port(); }
  const ServingCertificate& certificate() const { return *certificate_; }

 private:
  std::unique_ptr<ServingCertificate> certificate_;
  std::unique_ptr<ClusterFeed> feed_;
  ClusterState state_;
  MetricsRegistry metrics_;
  WebhookContext context_;
  std::unique_ptr<HttpServer> server_;
};

// The demo AdmissionReview as a dry run: a full decision, nothing reserved,
// so any number of requests get the same answer.
std::string dryRunReview() {
  json review = demoAdmissionReview();
  review["request"]["dryRun"] = true;
  return review.dump();
}

TEST(ServedChain, CurlAndOpensslVerifyItAgainstTheGeneratedCa) {
  TempDir tmp;
  ASSERT_TRUE(ensureCertificateDir(tmp.path(), spec(), Clock::now()).ok());
  WebhookServer server(tmp.path());
  const std::string port = std::to_string(server.port());
  const std::string ca = (tmp.path() / kCaCertFile).string();

  if (testing::haveCommand("curl")) {
    // The API server dials placer.placer-system.svc:443; here the name resolves to the listener.
    const std::string curl = "curl -sS -o /dev/null -w '%{http_code}' --max-time 10 --resolve " + kHost + ":" + port +
                             ":127.0.0.1 https://" + kHost + ":" + port + "/healthz ";
    auto ok = runCommand(curl + "--cacert '" + ca + "'");
    EXPECT_EQ(ok.status, 0) << ok.output;
    EXPECT_EQ(ok.output, "200");

    auto stranger = generateCa("someone-else", 1, KeyType::EcdsaP256);
    ASSERT_TRUE(stranger.ok());
    ASSERT_TRUE(writeFileAtomically(tmp.path() / "other-ca.crt", stranger->certificatePem, 0644));
    auto wrongCa = runCommand(curl + "--cacert '" + (tmp.path() / "other-ca.crt").string() + "'");
    EXPECT_EQ(wrongCa.status, 60) << "curl: peer certificate cannot be authenticated: " << wrongCa.output;

    auto wrongName = runCommand("curl -sS -o /dev/null --max-time 10 --cacert '" + ca + "' --resolve other.svc:" +
                                port + ":127.0.0.1 https://other.svc:" + port + "/healthz");
    EXPECT_NE(wrongName.status, 0) << "a name outside the SANs is refused";
  }
  if (testing::haveCommand("openssl")) {
    auto sclient = runCommand("openssl s_client -connect 127.0.0.1:" + port + " -servername " + kHost +
                              " -verify_hostname " + kHost + " -verify_return_error -CAfile '" + ca +
                              "' </dev/null");
    EXPECT_EQ(sclient.status, 0) << sclient.output;
    EXPECT_NE(sclient.output.find("Verify return code: 0 (ok)"), std::string::npos) << sclient.output;
  }
}

// Environment knobs for a longer run (figures in test/bench/RESULTS.md):
// PLACER_ROTATION_ROUNDS (default 6), PLACER_ROTATION_CLIENTS (default 4).
int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

TEST(Rotation, UnderLoadNoHandshakeOrRequestFails) {
  TempDir tmp;
  CertificateSpec s = spec();
  s.extraDnsNames = {"placer.example.com"};
  // Shorter than the 5 minutes certificates are backdated by, so that the pass
  // "after the delay" below issues a leaf already valid now.
  s.trustPropagation = std::chrono::minutes(1);
  ASSERT_TRUE(ensureCertificateDir(tmp.path(), s, Clock::now()).ok());
  WebhookServer server(tmp.path());
  const std::string body = dryRunReview();

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> handshakes{0}, requests{0}, failedHandshakes{0}, failedRequests{0};
  std::mutex errorsMutex;
  std::vector<std::string> errors;
  auto note = [&](std::string e) {
    std::lock_guard lock(errorsMutex);
    if (errors.size() < 5) errors.push_back(std::move(e));
  };

  // Each client acts as the API server: it trusts the current bundle (ca.crt,
  // the webhook's caBundle) and opens a new connection every few requests, so
  // handshakes happen throughout each rotation.
  const int clients = envInt("PLACER_ROTATION_CLIENTS", 4);
  std::vector<std::atomic<uint64_t>> bundleReads(clients);
  auto client = [&](int id) {
    while (!stop) {
      placer::testing::ClientOptions options;
      options.port = server.port();
      options.caPem = slurp(tmp.path() / kCaCertFile);
      ++bundleReads[id];
      options.serverName = kHost;
      auto c = placer::testing::HttpTestClient::connect(options);
      ++handshakes;
      if (!c) {
        ++failedHandshakes;
        note("handshake: " + c.error().message);
        continue;
      }
      for (int i = 0; i < 1 + id % 3 && !stop; ++i) {
        auto reply = (*c)->request("POST", "/mutate?timeout=2s", body, {{"Content-Type", "application/json"}});
        ++requests;
        bool ok = reply.ok() && reply->status == 200;
        if (ok) {
          json answer = json::parse(reply->body, nullptr, false);
          ok = !answer.is_discarded() && answer["response"]["allowed"] == true;
        }
        if (!ok) {
          ++failedRequests;
          note(reply.ok() ? "status " + std::to_string(reply->status) : reply.error().message);
          break;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  // Stops and joins the clients however the test ends (an ASSERT returns early).
  struct Joiner {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~Joiner() {
      stop = true;
      for (std::thread& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{stop, threads};
  for (int i = 0; i < clients; ++i) threads.emplace_back(client, i);

  // Waits (bounded) until the server has installed a pair it had not served
  // before and clients have made progress with it.
  auto waitForServing = [&](uint64_t generationBefore) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (server.certificate().generation() == generationBefore && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GT(server.certificate().generation(), generationBefore) << "the rotated files were not picked up";
    const uint64_t progress = requests + 20;
    while (requests < progress && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };

  const int rounds = envInt("PLACER_ROTATION_ROUNDS", 6);
  const auto started = std::chrono::steady_clock::now();
  int caRotations = 0;
  for (int round = 0; round < rounds; ++round) {
    const uint64_t generation = server.certificate().generation();
    if (round % 2 == 0) {
      // A leaf renewal (names changed): same CA, new serving pair.
      s.extraDnsNames = {round % 4 == 0 ? "placer.example.org" : "placer.example.com"};
      auto r = ensureCertificateDir(tmp.path(), s, Clock::now());
      ASSERT_TRUE(r.ok()) << r.error().message;
      ASSERT_EQ(r->action, RenewalAction::ReissuedLeaf) << r->reason;
    } else {
      // A new CA (its key lost): trust first — the bundle gains the new CA
      // while the old leaf keeps serving; once propagated, the leaf moves.
      ASSERT_TRUE(writeFileAtomically(tmp.path() / kCaKeyFile, "lost", 0600));
      auto first = ensureCertificateDir(tmp.path(), s, Clock::now());
      ASSERT_TRUE(first.ok()) << first.error().message;
      ASSERT_EQ(first->action, RenewalAction::Created) << first->reason;
      // Propagation: every client has read the new bundle (as the API server
      // observes the patched caBundle) before the leaf moves.
      std::vector<uint64_t> readsBefore(clients);
      for (int i = 0; i < clients; ++i) readsBefore[i] = bundleReads[i];
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      for (int i = 0; i < clients; ++i) {
        while (bundleReads[i] < readsBefore[i] + 2 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
      // The next pass, after the propagation delay (within the certificates' backdating).
      auto second = ensureCertificateDir(tmp.path(), s, Clock::now() + s.trustPropagation + std::chrono::seconds(1));
      ASSERT_TRUE(second.ok()) << second.error().message;
      ASSERT_EQ(second->action, RenewalAction::ReissuedLeaf) << second->reason;
      ++caRotations;
    }
    waitForServing(generation);
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::printf("rotation under load: %d rotations (%d of the CA) in %.1f s, %d clients: %llu handshakes "
              "(%llu failed), %llu requests (%llu failed)\n",
              rounds, caRotations, seconds, clients, static_cast<unsigned long long>(handshakes.load()),
              static_cast<unsigned long long>(failedHandshakes.load()),
              static_cast<unsigned long long>(requests.load()), static_cast<unsigned long long>(failedRequests.load()));
  for (const std::string& e : errors) ADD_FAILURE() << e;
  EXPECT_EQ(failedHandshakes, 0u) << (errors.empty() ? "" : errors.front());
  EXPECT_EQ(failedRequests, 0u) << (errors.empty() ? "" : errors.front());
  EXPECT_GT(requests, static_cast<uint64_t>(rounds) * 20);
}

}  // namespace
}  // namespace placer::certs
