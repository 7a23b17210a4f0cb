#pragma once
// Shared by the webhook tests: objects shaped as the API server sends them,
// a generated PKI, a feed whose completeness the test controls, and a running
// webhook listener on 127.0.0.1:0 over real TLS.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "certs/x509.h"
#include "scoring/base64.h"
#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/support/http_test_client.h"
#include "webhook/admission.h"
#include "webhook/cluster_feed.h"
#include "webhook/http_server.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/webhook_routes.h"

namespace placer::testing {

using nlohmann::json;

struct TestPki {
  certs::PemPair ca;
  certs::PemPair serving;  // for localhost and 127.0.0.1
};

// Generated once per process (key generation is the slow part).
inline const TestPki& testPki() {
  static const TestPki pki = [] {
    TestPki p;
    auto ca = certs::generateCa("placer-test-ca", 2, certs::KeyType::EcdsaP256);
    if (!ca) throw std::runtime_error(ca.error().message);
    p.ca = *ca;
    auto serving = certs::generateServingCert(p.ca, {"localhost"}, {"127.0.0.1"}, 2, certs::KeyType::EcdsaP256);
    if (!serving) throw std::runtime_error(serving.error().message);
    p.serving = *serving;
    return p;
  }();
  return pki;
}

inline json nodeJson(const std::string& name, const std::string& cpu, const std::string& memory, int pods = 110,
                     json labels = json::object(), json taints = json::array()) {
  labels["kubernetes.io/hostname"] = name;
  labels["kubernetes.io/os"] = "linux";
  json alloc = {{"cpu", cpu}, {"memory", memory}, {"pods", std::to_string(pods)}, {"ephemeral-storage", "100Gi"}};
  json spec = json::object();
  if (!taints.empty()) spec["taints"] = taints;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", labels}}},
          {"spec", spec},
          {"status", {{"capacity", alloc}, {"allocatable", alloc}}}};
}

// A pod as it reaches the webhook: defaulted by the API server, no nodeName,
// no uid; generateName when `name` is empty.
inline json podJson(const std::string& name, const std::string& ns, const std::string& cpu,
                    const std::string& memory) {
  json metadata = {{"namespace", ns}, {"creationTimestamp", nullptr}, {"labels", {{"app", "web"}}}};
  if (name.empty()) {
    metadata["generateName"] = "web-7d4b9c8f5-";
  } else {
    metadata["name"] = name;
  }
  json requests = json::object();
  if (!cpu.empty()) requests["cpu"] = cpu;
  if (!memory.empty()) requests["memory"] = memory;
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", metadata},
          {"spec",
           {{"containers",
             json::array({{{"name", "web"},
                           {"image", "nginx:1.27"},
                           {"resources", {{"requests", requests}}},
                           {"terminationMessagePath", "/dev/termination-log"},
                           {"terminationMessagePolicy", "File"},
                           {"imagePullPolicy", "IfNotPresent"}}})},
            {"restartPolicy", "Always"},
            {"terminationGracePeriodSeconds", 30},
            {"dnsPolicy", "ClusterFirst"},
            {"serviceAccountName", "default"},
            {"securityContext", json::object()},
            {"schedulerName", "default-scheduler"},
            {"tolerations",
             json::array({{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"},
                           {"tolerationSeconds", 300}},
                          {{"key", "node.kubernetes.io/unreachable"}, {"operator", "Exists"},
                           {"effect", "NoExecute"}, {"tolerationSeconds", 300}}})},
            {"priority", 0},
            {"enableServiceLinks", true},
            {"preemptionPolicy", "PreemptLowerPriority"}}},
          {"status", json::object()}};
}

// A bound, running pod (for the initial view).
inline json boundPodJson(const std::string& name, const std::string& node, const std::string& cpu,
                         const std::string& memory) {
  json pod = podJson(name, "default", cpu, memory);
  pod["metadata"]["uid"] = "uid-" + name;
  pod["spec"]["nodeName"] = node;
  pod["status"] = {{"phase", "Running"}};
  return pod;
}

inline json admissionReview(const std::string& uid, const json& pod, const std::string& operation = "CREATE",
                            bool dryRun = false) {
  std::string ns = pod["metadata"].value("namespace", "");
  return {{"kind", "AdmissionReview"},
          {"apiVersion", "admission.k8s.io/v1"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"name", pod["metadata"].value("name", "")},
            {"namespace", ns},
            {"operation", operation},
            {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
                          {"groups", json::array({"system:serviceaccounts", "system:authenticated"})}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", dryRun},
            {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}}}};
}

// The JSONPatch of an AdmissionReview response body, or null when there is none.
inline json patchOf(const std::string& responseBody) {
  json review = json::parse(responseBody);
  const json& response = review.at("response");
  if (!response.contains("patch")) return nullptr;
  return json::parse(base64Decode(response.at("patch").get<std::string>()).value());
}

class FakeFeed : public ClusterFeed {
 public:
  Outcome start(ClusterState&) override { return {}; }
  void stop() override {}
  bool synced() const override { return synced_.load(); }
  std::string describe() const override { return "test"; }
  void setSynced(bool s) { synced_.store(s); }

 private:
  std::atomic<bool> synced_{true};
};

inline void loadView(ClusterState& state, const std::vector<json>& nodes, const std::vector<json>& pods = {}) {
  for (const json& n : nodes) {
    auto node = decodeNode(n);
    ASSERT_TRUE(node.ok()) << node.error().message;
    state.upsertNode(std::move(*node));
  }
  for (const json& p : pods) {
    auto pod = decodePod(p);
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    state.upsertPod(*pod);
  }
}

inline std::shared_ptr<const ServingCertificate> testCertificate() {
  auto cert = ServingCertificate::fromPem(testPki().serving.certificatePem, testPki().serving.privateKeyPem);
  if (!cert) throw std::runtime_error(cert.error().message);
  return std::shared_ptr<const ServingCertificate>(std::move(*cert));
}

// A webhook listener over TLS on 127.0.0.1:0 with the default profile.
struct WebhookHarness {
  ClusterState state;
  MetricsRegistry metrics;
  FakeFeed feed;
  PlacerSettings settings;
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  std::unique_ptr<HttpServer> server;

  void start(int workers = 8) {
    setLogOutput(nullptr);
    WebhookContext context;
    context.engine = std::make_shared<const Engine>(Profile::defaults());
    context.state = &state;
    context.settings = settings;
    context.feed = &feed;
    context.metrics = &metrics;
    context.clock = [this] { return now; };
    ListenerOptions options;
    options.address = "127.0.0.1:0";
    options.certificate = testCertificate();
    options.routes = webhookRoutes(context);
    options.workerThreads = workers;
    options.maxBodyBytes = settings.maxRequestBytes;
    auto started = HttpServer::start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    server = std::move(*started);
  }

  std::unique_ptr<HttpTestClient> client() {
    ClientOptions o;
    o.port = server->port();
    o.caPem = testPki().ca.certificatePem;
    auto c = HttpTestClient::connect(o);
    if (!c) {
      ADD_FAILURE() << c.error().message;
      return nullptr;
    }
    return std::move(*c);
  }
};

}  // namespace placer::testing
