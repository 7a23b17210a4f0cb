// fake-apiserver: the fake kube-apiserver as a standalone process, serving a
// generated cluster (test/support/cluster_generator.h) for benchmarks and the
// demo. It writes a kubeconfig for `placer serve --kubeconfig FILE`, can call
// placer as its mutating webhook, and can create pods through that admission
// chain at a given rate, then report how they were placed and whether any
// node ended up overcommitted by the server's own count.

#include <atomic>
#include <chrono>
#include <pthread.h>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/model.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/https_client.h"
#include "test/support/cluster_generator.h"

namespace {

using nlohmann::json;
using placer::fakeapi::Kind;
using Clock = std::chrono::steady_clock;

const char* const kUsage =
    "usage: fake-apiserver [options]\n"
    "  --nodes N                  generated nodes (default 100)\n"
    "  --pods-per-node M          generated bound pods per node (default 30)\n"
    "  --seed S                   generator seed (default 1)\n"
    "  --gpu-node-fraction F      share of nodes in the GPU pool (default 0.05)\n"
    "  --highmem-node-fraction F  share of nodes in the tainted highmem pool (default 0.10)\n"
    "  --bind HOST                listen address (default 127.0.0.1)\n"
    "  --port P                   listen port (default 0: any free port)\n"
    "  --cert-dir DIR             where ca.crt, tls.crt, tls.key live (generated when missing)\n"
    "  --token T                  the bearer token clients must send (default test-token)\n"
    "  --kubeconfig-out FILE      where to write the kubeconfig (default: fake-kubeconfig.yaml)\n"
    "  --webhook-url URL          mutating webhook called on every pod create (e.g. https://127.0.0.1:8443/mutate)\n"
    "  --webhook-ca FILE          the webhook's CA bundle (PEM)\n"
    "  --webhook-failure-policy P Ignore (default) or Fail\n"
    "  --webhook-namespace-label K=V  only namespaces with this label are sent to the webhook;\n"
    "                             every generated namespace gets it\n"
    "  --create N                 create N pending pods through the admission chain\n"
    "  --create-rate R            pods per second (default 200; 0 = as fast as possible)\n"
    "  --create-concurrency C     concurrent creates (default 8)\n"
    "  --create-after-watches W   wait until W watches are open before creating (default 0)\n"
    "  --exit-after-create        print the report and exit instead of serving on\n"
    "  --bookmark-interval-ms MS  bookmark period (default 60000)\n"
    "  --history-limit N          events kept for watches (default 0: unbounded)\n"
    "  --measure-list             after loading, list all pods over HTTPS in pages of 500 and report the time\n"
    "  --write-snapshot FILE      write the generated cluster as a snapshot (DESIGN.md: namespaces, workloads,\n"
    "                             nodes, pods and one pending pod) to FILE and exit, serving nothing; for\n"
    "                             `placer explain --snapshot` and `placer serve --cluster-file`\n"
    "  --load FILE                also load the objects in FILE (repeatable): JSON objects of any served kind,\n"
    "                             told by apiVersion and kind, or Lists of them (kubectl get -o json), one or\n"
    "                             several concatenated; loaded after the generated cluster\n";

struct Args {
  placer::GeneratorParams params;
  placer::fakeapi::Options options;
  std::string kubeconfigOut = "fake-kubeconfig.yaml";
  std::string webhookUrl;
  std::string webhookCa;
  std::string failurePolicy = "Ignore";
  std::string namespaceLabel;
  int create = 0;
  double createRate = 200;
  int concurrency = 8;
  int createAfterWatches = 0;
  bool exitAfterCreate = false;
  bool measureList = false;
  std::vector<std::string> loadFiles;
  std::string writeSnapshot;
};

bool parseArgs(int argc, char** argv, Args& a, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        error = flag + " needs a value";
        return "";
      }
      return argv[++i];
    };
    try {
      if (flag == "--nodes") a.params.nodes = std::stoi(value());
      else if (flag == "--pods-per-node") a.params.podsPerNode = std::stoi(value());
      else if (flag == "--seed") a.params.seed = std::stoull(value());
      else if (flag == "--gpu-node-fraction") a.params.gpuNodeFraction = std::stod(value());
      else if (flag == "--highmem-node-fraction") a.params.taintedNodeFraction = std::stod(value());
      else if (flag == "--bind") a.options.bindHost = value();
      else if (flag == "--port") a.options.port = static_cast<uint16_t>(std::stoi(value()));
      else if (flag == "--cert-dir") a.options.certDir = value();
      else if (flag == "--token") a.options.tokens = {value()};
      else if (flag == "--kubeconfig-out") a.kubeconfigOut = value();
      else if (flag == "--webhook-url") a.webhookUrl = value();
      else if (flag == "--webhook-ca") a.webhookCa = value();
      else if (flag == "--webhook-failure-policy") a.failurePolicy = value();
      else if (flag == "--webhook-namespace-label") a.namespaceLabel = value();
      else if (flag == "--create") a.create = std::stoi(value());
      else if (flag == "--create-rate") a.createRate = std::stod(value());
      else if (flag == "--create-concurrency") a.concurrency = std::max(1, std::stoi(value()));
      else if (flag == "--create-after-watches") a.createAfterWatches = std::stoi(value());
      else if (flag == "--exit-after-create") a.exitAfterCreate = true;
      else if (flag == "--measure-list") a.measureList = true;
      else if (flag == "--load") a.loadFiles.push_back(value());
      else if (flag == "--write-snapshot") a.writeSnapshot = value();
      else if (flag == "--bookmark-interval-ms") a.options.bookmarkInterval = std::chrono::milliseconds(std::stoll(value()));
      else if (flag == "--history-limit") a.options.historyLimit = std::stoull(value());
      else if (flag == "--help" || flag == "-h") {
        std::cout << kUsage;
        std::exit(0);
      } else {
        error = "unknown flag " + flag;
        return false;
      }
    } catch (const std::exception&) {
      error = "bad value for " + flag;
      return false;
    }
    if (!error.empty()) return false;
  }
  if (a.failurePolicy != "Ignore" && a.failurePolicy != "Fail") {
    error = "--webhook-failure-policy must be Ignore or Fail";
    return false;
  }
  if (!a.namespaceLabel.empty() && a.namespaceLabel.find('=') == std::string::npos) {
    error = "--webhook-namespace-label must be KEY=VALUE";
    return false;
  }
  return true;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Loads every JSON object (or List) in a file of concatenated JSON values.
placer::Result<std::size_t> loadFile(placer::fakeapi::FakeApiServer& server, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return placer::Error{"cannot read " + path};
  std::size_t loaded = 0;
  int index = 0;
  while (f >> std::ws && f.peek() != std::char_traits<char>::eof()) {
    ++index;
    json value;
    try {
      f >> value;  // one value; the stream stays after it
    } catch (const std::exception& e) {
      return placer::Error{path + ": value " + std::to_string(index) + ": " + e.what()};
    }
    auto n = server.loadAny(std::move(value));
    if (!n) return placer::Error{path + ": value " + std::to_string(index) + ": " + n.error().message};
    loaded += *n;
  }
  if (index == 0) return placer::Error{path + ": no JSON object in it"};
  return loaded;
}

// Server-side accounting: per node, the requests of its non-terminal pods
// against its allocatable, as the kubelet would admit them.
json overcommitReport(const placer::fakeapi::FakeApiServer& server) {
  std::map<std::string, placer::Node> nodes;
  server.forEachText(Kind::Node, [&](std::string_view text) {
    auto node = placer::decodeNode(json::parse(text));
    if (node.ok()) nodes.emplace(node->name, std::move(*node));
  });
  std::map<std::string, placer::Resources> requested;
  std::map<std::string, int64_t> podCount;
  int64_t undecodable = 0;
  server.forEachText(Kind::Pod, [&](std::string_view text) {
    auto pod = placer::decodePod(json::parse(text));
    if (!pod.ok()) {
      ++undecodable;
      return;
    }
    if (pod->nodeName.empty() || pod->isTerminal()) return;
    requested[pod->nodeName].add(pod->requests);
    ++podCount[pod->nodeName];
  });
  json over = json::array();
  for (const auto& [name, node] : nodes) {
    const placer::Resources& r = requested[name];
    std::vector<std::string> what;
    if (r.milliCpu > node.allocatable.milliCpu) what.push_back("cpu");
    if (r.memory > node.allocatable.memory) what.push_back("memory");
    if (r.ephemeralStorage > node.allocatable.ephemeralStorage && r.ephemeralStorage > 0)
      what.push_back("ephemeral-storage");
    if (podCount[name] > node.allocatable.pods) what.push_back("pods");
    for (const auto& [scalar, amount] : r.scalars)
      if (amount > node.allocatable.scalar(scalar)) what.push_back(scalar);
    if (!what.empty()) over.push_back({{"node", name}, {"resources", what}});
  }
  return {{"nodes", nodes.size()}, {"overcommittedNodes", over}, {"undecodablePods", undecodable}};
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!parseArgs(argc, argv, args, error)) {
    std::cerr << "fake-apiserver: " << error << "\n" << kUsage;
    return 2;
  }
  if (!args.writeSnapshot.empty()) {
    std::ofstream out(args.writeSnapshot, std::ios::binary);
    placer::writeSnapshot(out, args.params);
    out.close();
    if (!out) {
      std::cerr << "fake-apiserver: cannot write " << args.writeSnapshot << "\n";
      return 1;
    }
    return 0;
  }
  // Block the stop signals in every thread; the main thread waits for them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  auto started = placer::fakeapi::FakeApiServer::start(args.options);
  if (!started) {
    std::cerr << "fake-apiserver: " << started.error().message << "\n";
    return 1;
  }
  auto& server = **started;

  // The generated cluster, loaded on both cores.
  const auto loadStart = Clock::now();
  for (nlohmann::json& o : placer::generateWorkloadObjects(args.params)) {
    if (auto n = server.loadAny(std::move(o)); !n) {
      std::cerr << "fake-apiserver: workload: " << n.error().message << "\n";
      return 1;
    }
  }
  for (int i = 0; i < args.params.nodes; ++i) {
    if (auto o = server.load(Kind::Node, placer::generateNode(args.params, i)); !o) {
      std::cerr << "fake-apiserver: node " << i << ": " << o.error().message << "\n";
      return 1;
    }
  }
  const int64_t podTotal = placer::generatedPodCount(args.params);
  std::atomic<int64_t> renamed{0};
  std::atomic<int64_t> generateNanos{0};  // summed over the loader threads
  {
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    std::vector<std::thread> loaders;
    for (int t = 0; t < 2; ++t)
      loaders.emplace_back([&] {
        for (int64_t i = next++; i < podTotal && !failed; i = next++) {
          const auto g0 = Clock::now();
          json pod = placer::generatePod(args.params, i);
          generateNanos += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - g0).count();
          if (server.contains(Kind::Pod, pod["metadata"].value("namespace", "default"), pod["metadata"].value("name", ""))) {
            // The generator may repeat a name (StatefulSet ordinals); the API
            // server cannot hold two, so the later one gets a unique name.
            pod["metadata"]["name"] = pod["metadata"]["name"].get<std::string>() + "-i" + std::to_string(i);
            ++renamed;
          }
          if (auto o = server.load(Kind::Pod, std::move(pod)); !o) {
            std::cerr << "fake-apiserver: pod " << i << ": " << o.error().message << "\n";
            failed = true;
          }
        }
      });
    for (auto& t : loaders) t.join();
    if (failed) return 1;
  }
  std::size_t loadedFromFiles = 0;
  for (const auto& path : args.loadFiles) {
    auto n = loadFile(server, path);
    if (!n) {
      std::cerr << "fake-apiserver: --load " << n.error().message << "\n";
      return 1;
    }
    loadedFromFiles += *n;
  }
  const double loadSeconds = seconds(Clock::now() - loadStart);

  if (!args.namespaceLabel.empty()) {
    const auto eq = args.namespaceLabel.find('=');
    std::map<std::string, std::string> label = {
        {args.namespaceLabel.substr(0, eq), args.namespaceLabel.substr(eq + 1)}};
    std::set<std::string> namespaces;
    for (int i = 0; i < std::max(args.create, 64); ++i)
      namespaces.insert(placer::generatePendingPod(args.params, i)["metadata"].value("namespace", "default"));
    server.forEachText(Kind::Pod, [&](std::string_view text) {
      auto at = text.find("\"namespace\":\"");
      if (at == std::string_view::npos) return;
      at += 13;
      namespaces.insert(std::string(text.substr(at, text.find('"', at) - at)));
    });
    for (const auto& ns : namespaces) server.setNamespaceLabels(ns, label);
  }
  if (!args.webhookUrl.empty()) {
    placer::fakeapi::MutatingWebhook hook;
    hook.url = args.webhookUrl;
    if (!args.webhookCa.empty()) {
      std::ifstream f(args.webhookCa);
      std::stringstream ss;
      ss << f.rdbuf();
      hook.caBundlePem = ss.str();
      if (hook.caBundlePem.empty()) {
        std::cerr << "fake-apiserver: cannot read --webhook-ca " << args.webhookCa << "\n";
        return 1;
      }
    }
    hook.failurePolicy = args.failurePolicy == "Fail" ? placer::fakeapi::MutatingWebhook::FailurePolicy::Fail
                                                      : placer::fakeapi::MutatingWebhook::FailurePolicy::Ignore;
    if (!args.namespaceLabel.empty()) {
      const auto eq = args.namespaceLabel.find('=');
      hook.namespaceSelector = {
          {"matchLabels", {{args.namespaceLabel.substr(0, eq), args.namespaceLabel.substr(eq + 1)}}}};
    }
    hook.objectSelector = {{"matchExpressions", json::array({{{"key", "placer.io/skip"},
                                                              {"operator", "NotIn"},
                                                              {"values", {"true"}}}})}};
    server.setMutatingWebhooks({hook});
  }
  if (auto o = server.writeKubeconfig(args.kubeconfigOut); !o) {
    std::cerr << "fake-apiserver: " << o.error().message << "\n";
    return 1;
  }
  std::cout << json{{"event", "ready"},
                    {"url", server.url()},
                    {"kubeconfig", args.kubeconfigOut},
                    {"caFile", server.caFile()},
                    {"nodes", server.count(Kind::Node)},
                    {"pods", server.count(Kind::Pod)},
                    {"resourceVersion", server.resourceVersion()},
                    {"loadSeconds", loadSeconds},
                    {"loadedFromFiles", loadedFromFiles},
                    {"renamedDuplicatePods", renamed.load()},
                    {"generatorThreadSeconds", generateNanos.load() / 1e9}}
                   .dump()
            << std::endl;

  if (args.measureList) {
    // What a client's initial sync costs the server: every pod, 500 a page.
    const auto start = Clock::now();
    std::string token;
    int64_t items = 0, bytes = 0, pages = 0;
    const placer::fakeapi::Headers headers = {
        {"Authorization", "Bearer " + (args.options.tokens.empty() ? std::string() : args.options.tokens.front())}};
    do {
      auto r = placer::fakeapi::httpsRequest("GET", server.url() + "/api/v1/pods?limit=500" +
                                                        (token.empty() ? "" : "&continue=" + token),
                                             server.caPem(), headers, "", std::chrono::seconds(60));
      if (!r || r->status != 200) {
        std::cerr << "fake-apiserver: list failed: " << (r ? std::to_string(r->status) : r.error().message) << "\n";
        return 1;
      }
      // The list metadata comes first; the items are not parsed, so that the
      // figure is the server's and the transport's, not the JSON parser's.
      const std::string head = r->body.substr(0, r->body.find("\"items\":["));
      token.clear();
      if (auto at = head.find("\"continue\":\""); at != std::string::npos) {
        at += 12;
        token = head.substr(at, head.find('"', at) - at);
      }
      items += token.empty() ? static_cast<int64_t>(json::parse(r->body)["items"].size()) : 500;
      bytes += static_cast<int64_t>(r->body.size());
      ++pages;
    } while (!token.empty());
    const double s = seconds(Clock::now() - start);
    std::cout << json{{"event", "listed"}, {"items", items}, {"pages", pages}, {"bytes", bytes}, {"seconds", s},
                      {"megabytesPerSecond", bytes / 1e6 / s}}
                     .dump()
              << std::endl;
  }

  if (args.create > 0) {
    if (args.createAfterWatches > 0) {
      while (!server.waitForOpenWatches(static_cast<std::size_t>(args.createAfterWatches), std::chrono::seconds(1))) {
        timespec zero{0, 0};
        if (sigtimedwait(&stopSignals, nullptr, &zero) > 0) return 0;
      }
    }
    std::atomic<int> next{0};
    std::atomic<int> created{0}, assigned{0}, refused{0};
    std::mutex latencyMu;
    std::vector<double> latencies;
    std::map<int, int> refusalCodes;
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < args.concurrency; ++t)
      workers.emplace_back([&] {
        for (int i = next++; i < args.create; i = next++) {
          if (args.createRate > 0)
            std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(i / args.createRate)));
          json pod = placer::generatePendingPod(args.params, i);
          const std::string ns = pod["metadata"].value("namespace", "default");
          const auto t0 = Clock::now();
          auto r = server.createPod(std::move(pod), ns);
          const double ms = seconds(Clock::now() - t0) * 1000;
          std::lock_guard lock(latencyMu);
          latencies.push_back(ms);
          if (r.ok()) {
            ++created;
            if (r.body["spec"].contains("nodeName")) ++assigned;
          } else {
            ++refused;
            ++refusalCodes[r.code];
            if (refused <= 5) std::cerr << "fake-apiserver: create refused: " << r.code << " " << r.message() << "\n";
          }
        }
      });
    for (auto& t : workers) t.join();
    const double elapsed = seconds(Clock::now() - start);
    std::sort(latencies.begin(), latencies.end());
    auto pct = [&](double p) {
      return latencies.empty() ? 0.0 : latencies[std::min(latencies.size() - 1, std::size_t(p * latencies.size()))];
    };
    json codes = json::object();
    for (const auto& [code, n] : refusalCodes) codes[std::to_string(code)] = n;
    std::cout << json{{"event", "created"},
                      {"requested", args.create},
                      {"created", created.load()},
                      {"assignedByWebhook", assigned.load()},
                      {"refused", refused.load()},
                      {"refusalCodes", codes},
                      {"seconds", elapsed},
                      {"podsPerSecond", elapsed > 0 ? created / elapsed : 0},
                      {"admissionMsP50", pct(0.50)},
                      {"admissionMsP99", pct(0.99)},
                      {"admissionMsMax", latencies.empty() ? 0.0 : latencies.back()},
                      {"webhookCalls", server.admissionCalls()},
                      {"accounting", overcommitReport(server)}}
                     .dump()
              << std::endl;
    if (args.exitAfterCreate) return 0;
  }

  int sig = 0;
  sigwait(&stopSignals, &sig);
  return 0;
}
