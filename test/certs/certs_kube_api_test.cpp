// The Kubernetes side of `placer certs ensure`: the wire format of the Secret
// and of the caBundle patch, and the command run end to end against a small
// API server that stores one Secret and one MutatingWebhookConfiguration.

#include "webhook/certs_kube_api.h"

#include <mutex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "certs/cert_files.h"
#include "scoring/base64.h"
#include "test/certs/cert_test_support.h"
#include "webhook/http_server.h"
#include "placer_test_paths.h"

namespace placer::certs {
namespace {

using nlohmann::json;
using testing::runCommand;
using testing::slurp;
using testing::TempDir;

TEST(SecretWireFormat, IsATlsSecretWithBase64DataThatRoundTrips) {
  const SecretData data{{"tls.crt", "-----BEGIN CERTIFICATE-----\nabc\n"}, {"tls.key", std::string("\0\x01\xff", 3)}};
  json secret = encodeSecret("placer-system", "placer-certs", data, "42");
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret["metadata"]["namespace"], "placer-system");
  EXPECT_EQ(secret["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(secret["data"]["tls.key"], "AAH/");
  auto back = decodeSecret(secret);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->data, data);
  EXPECT_EQ(back->resourceVersion, "42");
  EXPECT_FALSE(encodeSecret("ns", "n", data, "")["metadata"].contains("resourceVersion")) << "a create";
}

TEST(SecretWireFormat, BadSecretsAreErrorsNamingTheField) {
  struct Case {
    const char* name;
    json secret;
    const char* field;
  };
  const Case cases[] = {
      {"NoMetadata", {{"data", json::object()}}, "metadata"},
      {"DataNotAMap", {{"metadata", json::object()}, {"data", json::array()}}, "data"},
      {"ValueNotAString", {{"metadata", json::object()}, {"data", {{"tls.crt", 5}}}}, "data.tls.crt"},
      {"ValueNotBase64", {{"metadata", json::object()}, {"data", {{"tls.crt", "%%%%"}}}}, "data.tls.crt"},
  };
  for (const Case& c : cases) {
    auto r = decodeSecret(c.secret);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().message.rfind(c.field, 0), 0u) << c.name << ": " << r.error().message;
  }
}

TEST(WebhookConfigurationWireFormat, ReadsEachWebhooksBundleAndPatchesByIndexWithANameTest) {
  json config = {{"metadata", {{"name", "placer"}, {"resourceVersion", "7"}}},
                 {"webhooks",
                  {{{"name", "pods.placer.io"}, {"clientConfig", {{"caBundle", base64Encode("PEM")}}}},
                   {{"name", "second.placer.io"}, {"clientConfig", {{"service", {{"name", "placer"}}}}}},
                   {{"name", "broken.placer.io"}, {"clientConfig", {{"caBundle", "not base64!"}}}}}}};
  auto state = decodeWebhookConfiguration(config);
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->webhooks.size(), 3u);
  EXPECT_EQ(state->webhooks[0].caBundlePem, "PEM");
  EXPECT_EQ(state->webhooks[1].caBundlePem, "");
  EXPECT_NE(state->webhooks[2].caBundlePem, "") << "an undecodable bundle differs from any wanted one";
  EXPECT_EQ(state->resourceVersion, "7");

  json patch = caBundlePatch({{1, "second.placer.io"}}, "PEM");
  EXPECT_EQ(patch, json::parse(R"([
    {"op": "test", "path": "/webhooks/1/name", "value": "second.placer.io"},
    {"op": "add", "path": "/webhooks/1/clientConfig/caBundle", "value": "UEVN"}])"));
  // Applied to the object, it sets exactly that bundle; on a reordered list the test fails.
  EXPECT_EQ(config.patch(patch)["webhooks"][1]["clientConfig"]["caBundle"], "UEVN");
  json reordered = config;
  std::swap(reordered["webhooks"][0], reordered["webhooks"][1]);
  EXPECT_THROW(reordered.patch(caBundlePatch({{0, "pods.placer.io"}}, "PEM")), json::exception);

  EXPECT_FALSE(decodeWebhookConfiguration({{"webhooks", {{{"clientConfig", json::object()}}}}}).ok());
}

// A tiny API server over plain HTTP: one Secret and one webhook configuration,
// with resourceVersions, 404/409/422 as upstream, and a log of writes.
class TinyApiServer {
 public:
  TinyApiServer() {
    webhookConfig_ = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                      {"kind", "MutatingWebhookConfiguration"},
                      {"metadata", {{"name", "placer"}, {"resourceVersion", "1"}}},
                      {"webhooks", {{{"name", "pods.placer.io"}, {"clientConfig", {{"service", {{"name", "placer"}}}}}}}}};
    const std::string secrets = "/api/v1/namespaces/placer-system/secrets";
    const std::string config = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/placer";
    ListenerOptions options;
    options.name = "tiny-apiserver";
    options.address = "127.0.0.1:0";
    options.workerThreads = 2;
    options.bearerToken = "t0ken";
    options.routes = {
        {"GET", secrets + "/placer-certs", [this](const HttpRequest&) { return getSecret(); }},
        {"POST", secrets, [this](const HttpRequest& r) { return writeSecret(r, true); }},
        {"PUT", secrets + "/placer-certs", [this](const HttpRequest& r) { return writeSecret(r, false); }},
        {"GET", config, [this](const HttpRequest&) { return getConfig(); }},
        {"PATCH", config, [this](const HttpRequest& r) { return patchConfig(r); }},
    };
    auto server = HttpServer::start(std::move(options));
    if (!server) throw std::runtime_error(server.error().message);
    server_ = std::move(*server);
  }
  ~TinyApiServer() { server_->stop(std::chrono::seconds(5)); }

  std::string kubeconfig() const {
    return "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
           "clusters:\n- name: test\n  cluster:\n    server: http://127.0.0.1:" +
           std::to_string(server_->port()) +
           "\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
           "users:\n- name: test\n  user:\n    token: t0ken\n";
  }
  json secret() const {
    std::lock_guard lock(mutex_);
    return secret_;
  }
  json webhookConfig() const {
    std::lock_guard lock(mutex_);
    return webhookConfig_;
  }
  void setCaBundle(const std::string& base64) {
    std::lock_guard lock(mutex_);
    webhookConfig_["webhooks"][0]["clientConfig"]["caBundle"] = base64;
  }
  std::vector<std::string> writes() const {
    std::lock_guard lock(mutex_);
    return writes_;
  }
  void clearWrites() {
    std::lock_guard lock(mutex_);
    writes_.clear();
  }

 private:
  static HttpResponse status(int code, const std::string& reason) {
    return HttpResponse::json(code, json({{"kind", "Status"}, {"status", "Failure"}, {"reason", reason},
                                          {"message", reason}, {"code", code}})
                                        .dump());
  }
  HttpResponse getSecret() {
    std::lock_guard lock(mutex_);
    if (secret_.is_null()) return status(404, "NotFound");
    return HttpResponse::json(200, secret_.dump());
  }
  HttpResponse writeSecret(const HttpRequest& r, bool create) {
    std::lock_guard lock(mutex_);
    json body = json::parse(r.body, nullptr, false);
    if (body.is_discarded() || body.value("type", "") != "kubernetes.io/tls") return status(400, "BadRequest");
    if (create && !secret_.is_null()) return status(409, "AlreadyExists");
    if (!create && (secret_.is_null() || body["metadata"].value("resourceVersion", "") !=
                                             secret_["metadata"]["resourceVersion"].get<std::string>())) {
      return status(409, "Conflict");
    }
    body["metadata"]["resourceVersion"] = std::to_string(++version_);
    secret_ = body;
    writes_.push_back(create ? "create secret" : "update secret");
    return HttpResponse::json(create ? 201 : 200, secret_.dump());
  }
  HttpResponse getConfig() {
    std::lock_guard lock(mutex_);
    return HttpResponse::json(200, webhookConfig_.dump());
  }
  HttpResponse patchConfig(const HttpRequest& r) {
    std::lock_guard lock(mutex_);
    if (r.contentType != "application/json-patch+json") return status(415, "UnsupportedMediaType");
    try {
      webhookConfig_ = webhookConfig_.patch(json::parse(r.body));
    } catch (const json::exception&) {
      return status(422, "Invalid");
    }
    webhookConfig_["metadata"]["resourceVersion"] = std::to_string(++version_);
    writes_.push_back("patch webhook");
    return HttpResponse::json(200, webhookConfig_.dump());
  }

  mutable std::mutex mutex_;
  json secret_;
  json webhookConfig_;
  int version_ = 1;
  std::vector<std::string> writes_;
  std::unique_ptr<HttpServer> server_;
};

TEST(CertsEnsureCommand, BootstrapsThenKeepsThenRestoresAnOverwrittenCaBundle) {
  TinyApiServer api;
  TempDir tmp;
  const auto kubeconfig = tmp.path() / "kubeconfig";
  ASSERT_TRUE(writeFileAtomically(kubeconfig, api.kubeconfig(), 0600));
  const auto out = tmp.path() / "certs";
  const std::string ensure = std::string(PLACER_BINARY) + " certs ensure --service placer --namespace placer-system" +
                             " --kubeconfig '" + kubeconfig.string() + "' --out '" + out.string() + "'";

  auto first = runCommand(ensure);
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_EQ(api.writes(), (std::vector<std::string>{"patch webhook", "create secret"})) << first.output;
  auto stored = decodeSecret(api.secret());
  ASSERT_TRUE(stored.ok());
  const std::string bundle = stored->data.at("ca.crt");
  auto injected = base64Decode(api.webhookConfig()["webhooks"][0]["clientConfig"]["caBundle"].get<std::string>());
  ASSERT_TRUE(injected.ok());
  EXPECT_EQ(*injected, bundle);
  EXPECT_TRUE(verifyServingChain(stored->data.at("tls.crt"), *injected, "placer.placer-system.svc"));
  EXPECT_EQ(slurp(out / "tls.crt"), stored->data.at("tls.crt")) << "the files placer serve reads";

  api.clearWrites();
  auto second = runCommand(ensure);
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_NE(second.output.find("kept"), std::string::npos) << second.output;
  EXPECT_TRUE(api.writes().empty());

  api.setCaBundle(base64Encode("something else"));
  auto third = runCommand(ensure);
  ASSERT_EQ(third.status, 0) << third.output;
  EXPECT_EQ(api.writes(), std::vector<std::string>{"patch webhook"});
  EXPECT_EQ(api.webhookConfig()["webhooks"][0]["clientConfig"]["caBundle"], base64Encode(bundle));
}

TEST(CertsEnsureCommand, UnreachableApiServerFailsWithTheUrl) {
  TempDir tmp;
  const auto kubeconfig = tmp.path() / "kubeconfig";
  ASSERT_TRUE(writeFileAtomically(kubeconfig,
                                  "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n"
                                  "    server: http://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n"
                                  "    user: u\nusers:\n- name: u\n  user:\n    token: x\n",
                                  0600));
  auto r = runCommand(std::string(PLACER_BINARY) + " certs ensure --service placer --namespace placer-system" +
                      " --kubeconfig '" + kubeconfig.string() + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("secrets/placer-system/placer-certs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("127.0.0.1:1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace placer::certs
