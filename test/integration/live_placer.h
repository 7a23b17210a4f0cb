#pragma once
// A fake API server with a generated cluster and `placer serve --kubeconfig`
// (the real binary) watching it, with its webhook (TLS), extender and metrics
// listeners on loopback ports: what the tests of explain, check and the
// metrics need in common.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/base64.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/https_client.h"
#include "test/integration/placer_process.h"
#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "test/support/http_test_client.h"

namespace placer::integration {

struct LiveCluster {
  watchtest::TempDir dir;
  std::unique_ptr<fakeapi::FakeApiServer> server;
  std::string kubeconfig;
  std::unique_ptr<PlacerProcess> serve;
  int webhookPort = -1, extenderPort = -1, metricsPort = -1;

  std::string webhookUrl() const { return "https://127.0.0.1:" + std::to_string(webhookPort); }

  // Starts both; fails the test (returns false) if placer does not sync.
  bool start(const GeneratorParams& params) {
    fakeapi::Options options;
    options.certDir = dir.path();  // placer serves with a certificate of the server's CA
    options.tokens = {"live-token"};
    auto started = fakeapi::FakeApiServer::start(options);
    EXPECT_TRUE(started) << started.error().message;
    if (!started) return false;
    server = std::move(*started);
    EXPECT_TRUE(watchtest::loadGeneratedCluster(*server, params));
    kubeconfig = dir.path() + "/kubeconfig";
    EXPECT_TRUE(server->writeKubeconfig(kubeconfig));
    serve = std::make_unique<PlacerProcess>(
        dir.path(), std::vector<std::string>{"serve", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:0",
                                             "--extender-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                                             "--tls-cert-file", dir.path() + "/tls.crt", "--tls-key-file",
                                             dir.path() + "/tls.key"});
    webhookPort = serve->port("webhook");
    extenderPort = serve->port("extender");
    metricsPort = serve->port("metrics");
    EXPECT_GT(metricsPort, 0) << serve->err();
    if (metricsPort <= 0 || webhookPort <= 0 || extenderPort <= 0) return false;
    bool ready = watchtest::waitFor(
        [&] {
          auto r = fakeapi::httpsRequest("GET", webhookUrl() + "/readyz", server->caPem(), {}, "",
                                         std::chrono::seconds(5));
          return r && r->status == 200;
        },
        std::chrono::seconds(60));
    EXPECT_TRUE(ready) << "placer serve never became ready:\n" << serve->err();
    return ready;
  }

  // GET path on a plain-HTTP listener of placer's.
  std::string plainGet(int port, const std::string& path) const {
    testing::ClientOptions o;
    o.port = uint16_t(port);
    auto c = testing::HttpTestClient::connect(o);
    if (!c.ok()) return {};
    auto r = (*c)->request("GET", path);
    return r.ok() && r->status == 200 ? r->body : std::string();
  }
  std::string plainPost(int port, const std::string& path, const std::string& body) const {
    testing::ClientOptions o;
    o.port = uint16_t(port);
    auto c = testing::HttpTestClient::connect(o);
    if (!c.ok()) return {};
    auto r = (*c)->request("POST", path, body);
    return r.ok() ? r->body : std::string();
  }

  // serve's decision for `pod`, from a dry-run AdmissionReview (decided, not
  // reserved): {node, total score}; node empty when none is feasible.
  std::pair<std::string, int64_t> serveDecision(const nlohmann::json& pod) const {
    nlohmann::json review = {
        {"apiVersion", "admission.k8s.io/v1"},
        {"kind", "AdmissionReview"},
        {"request",
         {{"uid", "dry-run-" + pod["metadata"].value("name", "pod")},
          {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
          {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
          {"namespace", pod["metadata"].value("namespace", "default")},
          {"name", pod["metadata"].value("name", "")},
          {"operation", "CREATE"},
          {"object", pod},
          {"dryRun", true}}}};
    auto r = fakeapi::httpsRequest("POST", webhookUrl() + "/mutate", server->caPem(),
                                   {{"Content-Type", "application/json"}}, review.dump(), std::chrono::seconds(10));
    if (!r || r->status != 200) return {};
    nlohmann::json response = nlohmann::json::parse(r->body)["response"];
    if (!response.contains("patch")) return {};
    Result<std::string> decoded = base64Decode(response["patch"].get<std::string>());
    std::pair<std::string, int64_t> out;
    for (const nlohmann::json& op : nlohmann::json::parse(*decoded)) {
      if (op["path"] == "/spec/nodeName") out.first = op["value"];
      if (op["path"] == "/metadata/annotations") out.second = std::stoll(op["value"].value("placer.io/score", "0"));
    }
    return out;
  }
};

}  // namespace placer::integration
