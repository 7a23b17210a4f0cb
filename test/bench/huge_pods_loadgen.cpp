// Huge but legal pods against the webhook at scale, with ordinary admissions
// going on beside them: how long each huge pod takes to be answered, how much
// the process grows, and how much the ordinary admissions are delayed.
//
//   huge_pods_loadgen [--nodes 5000] [--pods-per-node 30] [--count 40000] [--shapes 80]
//                     [--shape-resources 80000] [--ordinary-rate 200]
//                     [--large-lane 1]
//
// --large-lane 0 runs large requests on the ordinary workers
// (ListenerOptions::largeBodyBytes past any body), as the server did before
// issue 15's second round (shapes15).
//
// Cases, one after the other, each over its own TLS connection, with the
// issue's sizes (each extended resource takes 35 bytes of the body, as in the
// issue's 1.4 MB for 40,000):
//   resources: a pod requesting --count distinct extended resources no node has
//              (example.com/resource-NNNNNNN), 1.4 MB, answered with no node
//              and a bounded reason;
//   ports:     a pod with --count host ports (placed, then released by the
//              reservation's expiry: the sweeper's exclusive-lock work);
//   shapes:    --shapes distinct dry-run pods of --shape-resources extended
//              resources each (2.8 MB), each a new decision-cache shape.
// Meanwhile a client sends ordinary admissions (generated Deployment pods,
// dry-run) at --ordinary-rate per second on its own connection; their
// latency is reported per case, beside a phase without huge pods.
//
// In one process: RSS includes the clients' request bodies (one huge body at
// a time, written as text: the client builds no JSON document of its own).
// It links the allocator `placer` links (jemalloc with transparent huge pages,
// webhook/CMakeLists.txt), with its defaults.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "certs/x509.h"
#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "test/support/cluster_generator.h"
#include "test/support/http_test_client.h"
#include "test/support/huge_pods.h"
#include "webhook/allocator.h"
#include "webhook/http_server.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/webhook_routes.h"

using namespace placer;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double rssMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

json review(const json& pod, const std::string& uid, bool dryRun) {
  return {{"kind", "AdmissionReview"},
          {"apiVersion", "admission.k8s.io/v1"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "default"},
            {"operation", "CREATE"},
            {"object", pod},
            {"dryRun", dryRun}}}};
}

json podWith(const std::string& name, const json& requests, const json& ports) {
  json container = {{"name", "app"}, {"image", "registry.example.com/app:1"}, {"resources", {{"requests", requests}}}};
  if (!ports.empty()) container["ports"] = ports;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", json::array({container})}}}};
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000, podsPerNode = 30, count = 40000, shapes = 80, shapeResources = 80000;
  double ordinaryRate = 200;
  bool largeLane = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--nodes") nodes = std::stoi(v);
    else if (a == "--pods-per-node") podsPerNode = std::stoi(v);
    else if (a == "--count") count = std::stoi(v);
    else if (a == "--shapes") shapes = std::stoi(v);
    else if (a == "--shape-resources") shapeResources = std::stoi(v);
    else if (a == "--ordinary-rate") ordinaryRate = std::stod(v);
    else if (a == "--large-lane") largeLane = v != "0";
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::FILE* devnull = std::fopen("/dev/null", "w");
  setLogOutput(devnull);

  GeneratorParams params;
  params.nodes = nodes;
  params.podsPerNode = podsPerNode;
  ClusterState state;
  state.update([&](MutableClusterView& view) { fillClusterView(view, params); });

  auto ca = certs::generateCa("huge-ca", 1, certs::KeyType::EcdsaP256);
  auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1"}, 1, certs::KeyType::EcdsaP256);
  auto cert = ServingCertificate::fromPem(serving->certificatePem, serving->privateKeyPem);
  auto config = configurationFromJson(json());
  if (!cert || !config) return 1;
  MetricsRegistry metrics;
  WebhookContext context;
  context.engine = std::make_shared<const Engine>(config->profile);
  context.state = &state;
  context.settings = config->settings;
  context.settings.reservationTtl = std::chrono::seconds(1);
  context.metrics = &metrics;
  ListenerOptions listener;
  listener.name = "huge";
  listener.address = "127.0.0.1:0";
  listener.certificate = std::shared_ptr<const ServingCertificate>(std::move(*cert));
  listener.routes = webhookRoutes(context);
  if (!largeLane) listener.largeBodyBytes = std::numeric_limits<size_t>::max();
  auto server = HttpServer::start(std::move(listener));
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message.c_str());
    return 1;
  }
  ReservationSweeper sweeper(state, metrics, [] { return Clock::now(); });
  sweeper.start(std::chrono::milliseconds(250));

  testing::ClientOptions co;
  co.port = (*server)->port();
  co.caPem = ca->certificatePem;

  // Ordinary admissions at a fixed rate on their own connection, latencies kept per phase.
  std::atomic<bool> done{false};
  std::atomic<int> phase{0};
  std::vector<std::vector<double>> ordinary(4);
  std::vector<std::string> ordinaryBodies;
  for (int i = 0; i < 64; ++i)
    ordinaryBodies.push_back(review(generatePendingPod(params, i), "ordinary-" + std::to_string(i), true).dump());
  std::thread background([&] {
    auto client = testing::HttpTestClient::connect(co);
    if (!client) return;
    const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / ordinaryRate));
    auto due = Clock::now();
    for (size_t i = 0; !done.load(); ++i) {
      std::this_thread::sleep_until(due);
      const auto start = due;
      due += period;
      auto r = (*client)->request("POST", "/mutate", ordinaryBodies[i % ordinaryBodies.size()]);
      if (!r || r->status != 200) continue;
      ordinary[size_t(phase.load())].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
  });

  auto send = [&](const std::string& body, std::string& reason) {
    auto client = testing::HttpTestClient::connect(co);
    if (!client) return -1.0;
    const auto start = Clock::now();
    auto r = (*client)->request("POST", "/mutate", body);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!r || r->status != 200) return -1.0;
    json answer = json::parse(r->body);
    reason = answer["response"].contains("patch") ? "patched" : "unchanged";
    return ms;
  };

  std::printf("view: %d nodes, %d pods; ordinary admissions at %.0f/s beside each case; allocator %s, large lane %s\n",
              nodes, nodes * podsPerNode, ordinaryRate, allocatorFigures().allocator.c_str(), largeLane ? "on" : "off");
  // Phase 0: ordinary admissions alone, 3 s.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const double rss0 = rssMb();

  // Phase 1: extended resources.
  phase = 1;
  {
    const json requests = {{"cpu", "100m"}, {"memory", "64Mi"}, {testing::kResourcesPlaceholder, ""}};
    const std::string body =
        testing::withResources(review(podWith("resources", requests, json::array()), "huge-resources", false).dump(),
                               "example.com/resource-", count, "1");
    std::string outcome;
    const double before = rssMb();
    const double ms = send(body, outcome);
    std::printf("resources: %d distinct extended resources, body %.1f MB: answered in %.0f ms (%s), RSS %+.0f MB\n",
                count, double(body.size()) / 1e6, ms, outcome.c_str(), rssMb() - before);
  }
  // Phase 2: host ports, placed, then released when the reservation expires.
  phase = 2;
  {
    json ports = json::array();
    for (int i = 0; i < count; ++i) ports.push_back({{"containerPort", 10000 + i}, {"hostPort", 10000 + i}});
    const std::string body =
        review(podWith("ports", {{"cpu", "100m"}, {"memory", "64Mi"}}, ports), "huge-ports", false).dump();
    std::string outcome;
    const double before = rssMb();
    const double ms = send(body, outcome);
    std::printf("ports: %d host ports, body %.1f MB: answered in %.0f ms (%s), RSS %+.0f MB\n", count,
                double(body.size()) / 1e6, ms, outcome.c_str(), rssMb() - before);
    // Wait for the sweeper to release it (reservationTTL 1 s).
    for (int i = 0; i < 100; ++i) {
      if (state.update([](MutableClusterView& v) { return v.reservationCount(); }) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // Phase 3: distinct large shapes, dry-run.
  phase = 3;
  {
    const double before = rssMb();
    double worst = 0;
    size_t bytes = 0;
    for (int s = 0; s < shapes; ++s) {
      const json requests = {
          {"cpu", std::to_string(100 + s) + "m"}, {"memory", "64Mi"}, {testing::kResourcesPlaceholder, ""}};
      const std::string body = testing::withResources(
          review(podWith("shape-" + std::to_string(s), requests, json::array()), "shape-" + std::to_string(s), true)
              .dump(),
          "example.com/shape-r-", shapeResources, std::to_string(10 + s));
      bytes = body.size();
      std::string outcome;
      worst = std::max(worst, send(body, outcome));
      if (s + 1 == 1 || (s + 1) % 20 == 0) {
        const AllocatorFigures heap = allocatorFigures();
        std::printf("  after %d shapes: RSS %+.0f MB; heap in use %.0f MB, free but held %.0f MB\n", s + 1,
                    rssMb() - before, heap.inUseMb, heap.heldFreeMb);
      }
    }
    std::printf("shapes: %d distinct dry-run pods of %.1f MB: slowest answered in %.0f ms, RSS %+.0f MB\n", shapes,
                double(bytes) / 1e6, worst, rssMb() - before);
  }
  done = true;
  background.join();
  const char* names[] = {"alone", "beside resources", "beside ports (and its release)", "beside shapes"};
  for (size_t p = 0; p < 4; ++p) {
    std::printf("ordinary admissions %-32s n=%zu p50=%.1f ms p99=%.1f ms max=%.1f ms", names[p], ordinary[p].size(),
                percentile(ordinary[p], 0.5), percentile(ordinary[p], 0.99), percentile(ordinary[p], 1.0));
    if (p > 0)
      std::printf("  (p99 %+.1f ms, max %+.1f ms against alone)", percentile(ordinary[p], 0.99) - percentile(ordinary[0], 0.99),
                  percentile(ordinary[p], 1.0) - percentile(ordinary[0], 1.0));
    std::printf("\n");
  }
  std::printf("RSS: %.0f MB at the start, %.0f MB at the end\n", rss0, rssMb());
  sweeper.stop();
  (*server)->stop(std::chrono::seconds(5));
  return 0;
}
