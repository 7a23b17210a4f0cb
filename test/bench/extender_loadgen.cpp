// Load generator for the extender: kube-scheduler-shaped requests over a
// keep-alive loopback HTTP connection against a large generated view.
//
//   extender_loadgen [--nodes 5000] [--pods-per-node 30] [--requests 500]
//
// Reports, for nodeCacheCapable requests (NodeNames of every node), the round
// trip of /filter and /prioritize (p50/p99/p99.9), and for a full v1.NodeList
// of every node (nodeCacheCapable: false) the round trip and the decode
// throughput in MB of request body per second of handling.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/support/cluster_generator.h"
#include "test/support/http_test_client.h"
#include "webhook/extender.h"
#include "webhook/http_server.h"
#include "webhook/metrics.h"

using namespace placer;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int nodes = 5000;
  int podsPerNode = 30;
  int requests = 500;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

void report(const char* name, const std::vector<double>& micros, size_t bodyBytes) {
  std::printf("%-34s n=%-5zu body=%8.2f KB  p50=%8.1f us  p99=%8.1f us  p99.9=%8.1f us\n", name, micros.size(),
              static_cast<double>(bodyBytes) / 1024.0, percentile(micros, 0.50), percentile(micros, 0.99),
              percentile(micros, 0.999));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int value = std::atoi(argv[i + 1]);
    if (flag == "--nodes") o.nodes = value;
    else if (flag == "--pods-per-node") o.podsPerNode = value;
    else if (flag == "--requests") o.requests = value;
    else {
      std::fprintf(stderr, "usage: extender_loadgen [--nodes N] [--pods-per-node M] [--requests R]\n");
      return 2;
    }
  }

  GeneratorParams params;
  params.nodes = o.nodes;
  params.podsPerNode = o.podsPerNode;
  ClusterState state;
  state.update([&](MutableClusterView& view) { fillClusterView(view, params); });
  MetricsRegistry metrics;
  ExtenderContext context;
  context.engine = std::make_shared<const Engine>(Profile::defaults());
  context.state = &state;
  context.metrics = &metrics;

  ListenerOptions listener;
  listener.name = "extender";
  listener.address = "127.0.0.1:0";
  listener.routes = extenderRoutes(context);
  listener.maxBodyBytes = 512u * 1024 * 1024;
  auto server = HttpServer::start(std::move(listener));
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message.c_str());
    return 1;
  }
  testing::ClientOptions clientOptions;
  clientOptions.port = (*server)->port();
  clientOptions.timeoutMs = 120000;
  auto client = testing::HttpTestClient::connect(clientOptions);
  if (!client) {
    std::fprintf(stderr, "%s\n", client.error().message.c_str());
    return 1;
  }

  json names = json::array();
  json items = json::array();
  for (int i = 0; i < o.nodes; ++i) {
    names.push_back(generatedNodeName(params, i));
    items.push_back(generateNode(params, i));
  }
  std::vector<std::string> cacheBodies;
  for (int i = 0; i < 16; ++i)
    cacheBodies.push_back(json{{"Pod", generatePendingPod(params, i)}, {"Nodes", nullptr}, {"NodeNames", names}}.dump());
  std::string fullBody =
      json{{"Pod", generatePendingPod(params, 0)}, {"Nodes", {{"metadata", json::object()}, {"items", items}}},
           {"NodeNames", nullptr}}
          .dump();

  std::printf("extender, %d nodes, %lld pods in view, loopback HTTP keep-alive, one client\n", o.nodes,
              static_cast<long long>(generatedPodCount(params)));
  auto run = [&](const char* name, const char* path, const std::vector<std::string>& bodies, int n) {
    std::vector<double> micros;
    for (int i = 0; i < n; ++i) {
      const std::string& body = bodies[static_cast<size_t>(i) % bodies.size()];
      auto start = Clock::now();
      auto reply = (*client)->request("POST", path, body, {{"Content-Type", "application/json"}});
      double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      if (!reply || reply->status != 200) {
        std::fprintf(stderr, "%s: %s\n", path, reply ? reply->body.c_str() : reply.error().message.c_str());
        std::exit(1);
      }
      micros.push_back(us);
    }
    report(name, micros, bodies[0].size());
    return micros;
  };
  run("filter (NodeNames)", "/filter", cacheBodies, o.requests);
  run("prioritize (NodeNames)", "/prioritize", cacheBodies, o.requests);
  int fullRuns = std::max(5, o.requests / 50);
  auto full = run("filter (full NodeList)", "/filter", {fullBody}, fullRuns);

  // Handling alone (no socket), to separate decode from transport.
  std::vector<double> handling;
  for (int i = 0; i < fullRuns; ++i) {
    auto start = Clock::now();
    HttpResponse r = extenderFilter(context, fullBody, false);
    handling.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (r.status != 200) return 1;
  }
  double mb = static_cast<double>(fullBody.size()) / 1e6;
  std::printf("full NodeList: %.1f MB; handling p50 %.1f ms = %.0f MB/s; round trip p50 %.1f ms = %.0f MB/s\n", mb,
              percentile(handling, 0.5) / 1000, mb / (percentile(handling, 0.5) / 1e6),
              percentile(full, 0.5) / 1000, mb / (percentile(full, 0.5) / 1e6));
  (*server)->stop(std::chrono::seconds(5));
  return 0;
}
