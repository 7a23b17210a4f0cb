// `placer check` (the real binary) against the fake API server holding an
// installation whose endpoint is a real `placer serve` on loopback, serving a
// certificate from `placer certs generate` for the Service's names: it passes
// when everything holds, and names the broken piece when the caBundle is
// another CA's, when no endpoint is Ready, and when the webhook configuration
// is missing.
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/integration/live_placer.h"

namespace placer::integration {
namespace {

using fakeapi::Kind;
using nlohmann::json;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakeapi::Options options;
    options.certDir = dir_.path();
    options.tokens = {"check-token"};
    auto started = fakeapi::FakeApiServer::start(options);
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(*started);
    GeneratorParams params;
    params.nodes = 10;
    params.podsPerNode = 2;
    ASSERT_TRUE(watchtest::loadGeneratedCluster(*server_, params));
    kubeconfig_ = dir_.path() + "/kubeconfig";
    ASSERT_TRUE(server_->writeKubeconfig(kubeconfig_));

    // The serving certificate as installed: for the Service's DNS names.
    for (const char* which : {"certs", "other-certs"}) {
      PlacerRun gen = runPlacer(dir_.path(), {"certs", "generate", "--service", "placer", "--namespace",
                                              "placer-system", "--out", dir_.path() + "/" + which});
      ASSERT_EQ(gen.exitCode, 0) << gen.err;
    }
    serve_ = std::make_unique<PlacerProcess>(
        dir_.path(), std::vector<std::string>{"serve", "--kubeconfig", kubeconfig_, "--listen", "127.0.0.1:0",
                                              "--tls-cert-file", dir_.path() + "/certs/tls.crt", "--tls-key-file",
                                              dir_.path() + "/certs/tls.key"});
    port_ = serve_->port("webhook");
    ASSERT_GT(port_, 0) << serve_->err();

    ASSERT_TRUE(server_->create(Kind::Namespace, json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "placer-system", "labels": {"placer.io/enabled": "false"}}})")));
    ASSERT_TRUE(server_->create(Kind::Namespace, json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "my-apps", "labels": {"placer.io/enabled": "true"}}})")));
    ASSERT_TRUE(server_->create(Kind::MutatingWebhookConfiguration, webhookConfiguration(caBundle("certs"))));
    ASSERT_TRUE(server_->create(Kind::Service, json::parse(R"({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "placer", "namespace": "placer-system"},
        "spec": {"selector": {"app.kubernetes.io/name": "placer"},
                 "ports": [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}]}})")));
    ASSERT_TRUE(server_->create(Kind::EndpointSlice, endpointSlice(true)));
    // placer's view is synced before anything is judged.
    PlacerRun last;
    ASSERT_TRUE(watchtest::waitFor(
        [&] {
          last = run();
          return last.out.find("ready, view synced") != std::string::npos;
        },
        std::chrono::seconds(60)))
        << "exit " << last.exitCode << "\n" << last.out << last.err;
  }

  std::string caBundle(const std::string& which) { return base64Encode(readFile(dir_.path() + "/" + which + "/ca.crt")); }

  static json webhookConfiguration(const std::string& caBundle) {
    json mwc = json::parse(R"({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "placer"},
        "webhooks": [{"name": "pods.placer.io", "admissionReviewVersions": ["v1"], "sideEffects": "NoneOnDryRun",
          "failurePolicy": "Ignore", "timeoutSeconds": 2,
          "clientConfig": {"service": {"namespace": "placer-system", "name": "placer", "path": "/mutate", "port": 443}},
          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
          "namespaceSelector": {"matchLabels": {"placer.io/enabled": "true"}}}]})");
    mwc["webhooks"][0]["clientConfig"]["caBundle"] = caBundle;
    return mwc;
  }

  json endpointSlice(bool ready) const {
    json slice = json::parse(R"({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "placer-x7k2p", "namespace": "placer-system",
                     "labels": {"kubernetes.io/service-name": "placer"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true},
                       "targetRef": {"kind": "Pod", "name": "placer-5d8f6b7c9d-x7k2p", "namespace": "placer-system"}}]})");
    slice["ports"] = {{{"name", "https"}, {"port", port_}, {"protocol", "TCP"}}};
    slice["endpoints"][0]["conditions"]["ready"] = ready;
    return slice;
  }

  PlacerRun run() { return runPlacer(dir_.path(), {"check", "--kubeconfig", kubeconfig_}); }

  watchtest::TempDir dir_;
  std::unique_ptr<fakeapi::FakeApiServer> server_;
  std::string kubeconfig_;
  std::unique_ptr<PlacerProcess> serve_;
  int port_ = -1;
};

TEST_F(CheckTest, PassesOnACorrectInstallation) {
  PlacerRun check = run();
  EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
  for (const char* line :
       {"OK    webhook configuration \"placer\": webhook pods.placer.io calls service placer-system/placer:443/mutate",
        "OK    service placer-system/placer: 1 Ready endpoint",
        "OK    replica placer-5d8f6b7c9d-x7k2p at 127.0.0.1:", "caBundle verifies the served certificate for "
        "placer.placer-system.svc", "certificate expires ", "ready, view synced",
        "INFO  namespaces opted in (namespaces with placer.io/enabled=true): 1: my-apps"})
    EXPECT_NE(check.out.find(line), std::string::npos) << line << "\n" << check.out;
  EXPECT_EQ(check.out.find("FAIL"), std::string::npos) << check.out;
}

TEST_F(CheckTest, NamesAWrongCaBundle) {
  json mwc = *server_->get(Kind::MutatingWebhookConfiguration, "", "placer");
  mwc["webhooks"][0]["clientConfig"]["caBundle"] = caBundle("other-certs");
  ASSERT_TRUE(server_->update(Kind::MutatingWebhookConfiguration, mwc));
  PlacerRun check = run();
  EXPECT_EQ(check.exitCode, 1) << check.out;
  EXPECT_NE(check.out.find("FAIL  replica placer-5d8f6b7c9d-x7k2p at 127.0.0.1:" + std::to_string(port_) +
                           ": caBundle does not verify the served certificate for placer.placer-system.svc"),
            std::string::npos)
      << check.out;
}

TEST_F(CheckTest, NamesAServiceWithoutReadyEndpoints) {
  ASSERT_TRUE(server_->update(Kind::EndpointSlice, endpointSlice(false)));
  PlacerRun check = run();
  EXPECT_EQ(check.exitCode, 1) << check.out;
  EXPECT_NE(check.out.find("FAIL  service placer-system/placer: no Ready endpoints (1 not ready)"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("WARN  replica placer-5d8f6b7c9d-x7k2p at 127.0.0.1:" + std::to_string(port_) + ": not Ready"),
            std::string::npos)
      << check.out;
}

TEST_F(CheckTest, NamesAMissingWebhookConfiguration) {
  ASSERT_TRUE(server_->remove(Kind::MutatingWebhookConfiguration, "", "placer"));
  PlacerRun check = run();
  EXPECT_EQ(check.exitCode, 1) << check.out;
  EXPECT_NE(check.out.find("FAIL  webhook configuration \"placer\": not found"), std::string::npos) << check.out;
}

TEST_F(CheckTest, AnUnreachableApiServerExitsTwo) {
  std::string text = readFile(kubeconfig_);
  text = std::regex_replace(text, std::regex(R"(https://127\.0\.0\.1:\d+)"), "https://127.0.0.1:1");
  PlacerRun check = runPlacer(dir_.path(), {"check", "--kubeconfig", dir_.write("unreachable", text), "--timeout", "2s"});
  EXPECT_EQ(check.exitCode, 2);
  EXPECT_NE(check.err.find("placer check: GET /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/placer"),
            std::string::npos)
      << check.err;
}

}  // namespace
}  // namespace placer::integration
