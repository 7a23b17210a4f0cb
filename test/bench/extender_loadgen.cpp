// Load generator for the extender: kube-scheduler-shaped requests over a
// keep-alive loopback HTTP connection against a large generated view.
//
//   extender_loadgen [--nodes 5000] [--pods-per-node 30] [--requests 500]
//                    [--profile default|trivial] [--full-runs N]
//                    [--decision-cache ENTRIES] [--churn NODES]
//
// Reports, for nodeCacheCapable requests (NodeNames of every node), the round
// trip of /filter and /prioritize (p50/p99/p99.9), the same handled in process
// (no socket), and Engine::evaluate(Detail::Full) alone over the same
// candidates, so handling minus engine is the extender's own share. For a full
// v1.NodeList of every node (nodeCacheCapable: false): the round trip and the
// decode throughput in MB of request body per second of handling.
//
// --profile trivial runs a profile with every plugin disabled (every node
// feasible, total 0): what is left is decode, candidate lookup and encoding.
//
// --decision-cache ENTRIES sizes the engine's decision cache (default: the
// engine's default; 0: none, every candidate computed per request). The
// requests cycle through 16 pods, so with the cache most find their results.
// --churn NODES changes that many nodes' accounting between two requests (a
// reservation taken and released, as pods bound meanwhile do), so that the
// cache recomputes them: the cached figures then include what a busy cluster
// costs it. The engine-alone line never uses the cache.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
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

// CPU time of the calling thread, in microseconds: on a shared machine the
// wall time of a handling includes waiting for a core; this does not.
double threadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

struct Options {
  int nodes = 5000;
  int podsPerNode = 30;
  int requests = 500;
  int fullRuns = -1;  // default: max(5, requests / 50); 0 skips the full-NodeList phase
  std::string profile = "default";
  bool handlingOnly = false;  // no socket phases (for callgrind: --handling-only 1)
  int decisionCache = static_cast<int>(Engine::kDefaultCacheCapacity);
  int churn = 0;  // nodes changed between two requests
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
    if (flag == "--profile") o.profile = argv[i + 1];
    else if (flag == "--handling-only") o.handlingOnly = value != 0;
    else if (flag == "--full-runs") o.fullRuns = value;
    else if (flag == "--nodes") o.nodes = value;
    else if (flag == "--pods-per-node") o.podsPerNode = value;
    else if (flag == "--requests") o.requests = value;
    else if (flag == "--decision-cache") o.decisionCache = value;
    else if (flag == "--churn") o.churn = value;
    else {
      std::fprintf(stderr, "usage: extender_loadgen [--nodes N] [--pods-per-node M] [--requests R] [--profile default|trivial] [--full-runs N] [--handling-only 1] [--decision-cache ENTRIES] [--churn NODES]\n");
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
  std::shared_ptr<const Profile> profile = Profile::defaults();
  if (o.profile == "trivial") {
    auto trivial = Profile::fromJson(json::parse(R"({"plugins":{"multiPoint":{"disabled":[{"name":"*"}]}}})"));
    if (!trivial) {
      std::fprintf(stderr, "%s\n", trivial.error().message.c_str());
      return 1;
    }
    profile = *trivial;
  } else if (o.profile != "default") {
    std::fprintf(stderr, "--profile: default or trivial\n");
    return 2;
  }
  context.engine = std::make_shared<const Engine>(profile, static_cast<size_t>(std::max(0, o.decisionCache)));
  const Engine uncached(profile, 0);
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

  std::printf("extender, %d nodes, %lld pods in view, %s profile, loopback HTTP keep-alive, one client, "
              "decision cache %d entries, churn %d nodes per request\n",
              o.nodes, static_cast<long long>(generatedPodCount(params)), o.profile.c_str(), o.decisionCache, o.churn);
  // Between two requests (not timed): o.churn nodes' accounting changes.
  int64_t churned = 0;
  auto churn = [&] {
    if (o.churn <= 0) return;
    state.update([&](MutableClusterView& view) {
      for (int k = 0; k < o.churn; ++k, ++churned) {
        Reservation r;
        r.id = "churn-" + std::to_string(churned);
        r.nodeName = generatedNodeName(params, static_cast<int>((churned * 7919) % o.nodes));
        r.requests.milliCpu = 100;
        r.nonZeroRequests.milliCpu = 100;
        view.reserve(r);
        view.release(r.id);
      }
    });
  };
  // Each phase first sends every distinct body once, unmeasured, as a
  // scheduler that has been running a while would have: the figures are the
  // steady state, not the first touch of each buffer and cache entry.
  auto run = [&](const char* name, const char* path, const std::vector<std::string>& bodies, int n) {
    for (const std::string& body : bodies) {
      auto reply = (*client)->request("POST", path, body, {{"Content-Type", "application/json"}});
      if (!reply || reply->status != 200) {
        std::fprintf(stderr, "%s: %s\n", path, reply ? reply->body.c_str() : reply.error().message.c_str());
        std::exit(1);
      }
    }
    std::vector<double> micros;
    for (int i = 0; i < n; ++i) {
      const std::string& body = bodies[static_cast<size_t>(i) % bodies.size()];
      churn();
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
  if (!o.handlingOnly) {
    run("filter (NodeNames)", "/filter", cacheBodies, o.requests);
    run("prioritize (NodeNames)", "/prioritize", cacheBodies, o.requests);
  }

  // The same requests handled in process (no socket), and the engine alone over
  // the same candidates: handling minus engine is the extender's own cost.
  auto handle = [&](const char* name, auto&& call) {
    std::vector<double> micros;
    std::vector<double> cpu;
    for (int i = 0; i < o.requests; ++i) {
      const std::string& body = cacheBodies[static_cast<size_t>(i) % cacheBodies.size()];
      churn();
      auto start = Clock::now();
      double cpuStart = threadCpuMicros();
      HttpResponse r = call(body);
      cpu.push_back(threadCpuMicros() - cpuStart);
      micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (r.status != 200) std::exit(1);
    }
    report(name, micros, cacheBodies[0].size());
    std::printf("%-34s CPU p50=%8.1f us  p99=%8.1f us\n", "", percentile(cpu, 0.5), percentile(cpu, 0.99));
    return percentile(cpu, 0.5);
  };
  double filterHandling =
      handle("  handling /filter", [&](const std::string& b) { return extenderFilter(context, b, false); });
  double prioritizeHandling =
      handle("  handling /prioritize", [&](const std::string& b) { return extenderPrioritize(context, b); });
  std::vector<Pod> pods;
  for (int i = 0; i < 16; ++i) pods.push_back(generatePendingPodObject(params, i));
  std::vector<double> engineMicros;
  std::vector<double> engineCpu;
  state.read([&](const ClusterView& view) {
    std::vector<const NodeInfo*> candidates;
    for (int i = 0; i < o.nodes; ++i) candidates.push_back(view.findNode(generatedNodeName(params, i)));
    for (int i = 0; i < o.requests; ++i) {
      auto start = Clock::now();
      double cpuStart = threadCpuMicros();
      Decision d = uncached.evaluate(pods[static_cast<size_t>(i) % pods.size()], view, candidates, Detail::Full);
      engineCpu.push_back(threadCpuMicros() - cpuStart);
      engineMicros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (d.nodes.size() != candidates.size()) std::exit(1);
    }
  });
  report("  Engine::evaluate(Full) alone", engineMicros, 0);
  std::printf("%-34s CPU p50=%8.1f us  p99=%8.1f us\n", "", percentile(engineCpu, 0.5), percentile(engineCpu, 0.99));
  // What /filter and /prioritize ask of the engine, through the decision cache
  // when there is one (in readForDecision, as the handlers call it).
  for (Detail detail : {Detail::FilterOnly, Detail::Totals}) {
    std::vector<double> micros;
    state.readForDecision([&](const ClusterView& view) {
      std::vector<const NodeInfo*> candidates;
      for (int i = 0; i < o.nodes; ++i) candidates.push_back(view.findNode(generatedNodeName(params, i)));
      for (int i = 0; i < o.requests; ++i) {
        double cpuStart = threadCpuMicros();
        Decision d = context.engine->evaluate(pods[static_cast<size_t>(i) % pods.size()], view, candidates, detail,
                                              Engine::CacheUse::Reuse);
        micros.push_back(threadCpuMicros() - cpuStart);
        if (d.nodes.size() != candidates.size()) std::exit(1);
      }
      return 0;
    });
    std::printf("  Engine::evaluate(%s) as served    CPU p50=%8.1f us  p99=%8.1f us\n",
                detail == Detail::FilterOnly ? "FilterOnly" : "Totals    ", percentile(micros, 0.5),
                percentile(micros, 0.99));
  }
  double engine = percentile(engineCpu, 0.5);
  std::printf("handling less the engine alone (CPU p50; negative when the decision cache answers): filter %.0f us, "
              "prioritize %.0f us\n",
              filterHandling - engine, prioritizeHandling - engine);
  if (const DecisionCache* cache = context.engine->cache()) {
    const DecisionCache::Stats stats = cache->stats();
    std::printf("decision cache: hits=%llu misses=%llu bypassed=%llu\n", (unsigned long long)stats.hits,
                (unsigned long long)stats.misses, (unsigned long long)stats.bypassed);
  }

  int fullRuns = o.fullRuns >= 0 ? o.fullRuns : std::max(5, o.requests / 50);
  if (fullRuns > 0) {
    std::vector<double> full = {0};
    if (!o.handlingOnly) full = run("filter (full NodeList)", "/filter", {fullBody}, fullRuns);
    // Handling alone (no socket), to separate decode from transport.
    std::vector<double> handling;
    std::vector<double> handlingCpu;
    for (int i = 0; i < fullRuns; ++i) {
      auto start = Clock::now();
      double cpuStart = threadCpuMicros();
      HttpResponse r = extenderFilter(context, fullBody, false);
      handlingCpu.push_back(threadCpuMicros() - cpuStart);
      handling.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (r.status != 200) return 1;
    }
    double mb = static_cast<double>(fullBody.size()) / 1e6;
    std::printf("full NodeList: %.1f MB; handling p50 %.1f ms = %.0f MB/s (CPU %.1f ms = %.0f MB/s); "
                "round trip p50 %.1f ms = %.0f MB/s\n",
                mb, percentile(handling, 0.5) / 1000, mb / (percentile(handling, 0.5) / 1e6),
                percentile(handlingCpu, 0.5) / 1000, mb / (percentile(handlingCpu, 0.5) / 1e6),
                percentile(full, 0.5) / 1000, mb / (percentile(full, 0.5) / 1e6));
  }
  (*server)->stop(std::chrono::seconds(5));
  return 0;
}
