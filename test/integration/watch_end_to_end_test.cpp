// End to end: `placer serve --kubeconfig` (the real binary) watches the fake
// API server and is its mutating webhook. Pods created through the server's
// admission chain are all assigned; afterwards no node is overcommitted by the
// server's own count, every reservation was replaced by its watched pod (none
// active, none expired) and no pod is counted twice.
// The 10,000-pod run of the same flow is test/bench/watch_sync.sh's sibling,
// recorded in test/bench/RESULTS.md.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "test/fakeapi/https_client.h"
#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "placer_test_paths.h"

namespace placer {
namespace {

using fakeapi::FakeApiServer;
using fakeapi::Kind;
using nlohmann::json;
using watchtest::metricValue;
using watchtest::waitFor;

uint16_t freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class PlacerProcess {
 public:
  explicit PlacerProcess(std::vector<std::string> args) {
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(PLACER_BINARY));
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      if (!getenv("PLACER_TEST_LOGS")) freopen("/dev/null", "w", stderr);
      execv(PLACER_BINARY, argv.data());
      _exit(127);
    }
  }
  ~PlacerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
};

TEST(WatchEndToEndTest, PodsCreatedThroughTheWebhookAreAllAssignedWithoutOvercommit) {
  watchtest::TempDir dir;
  fakeapi::Options options;
  options.certDir = dir.path();  // placer serves with the same CA's serving cert
  options.tokens = {"e2e-token"};
  auto started = FakeApiServer::start(options);
  ASSERT_TRUE(started) << started.error().message;
  FakeApiServer& server = **started;

  GeneratorParams params;
  params.nodes = 60;
  params.podsPerNode = 4;
  ASSERT_TRUE(watchtest::loadGeneratedCluster(server, params));
  const std::string kubeconfig = dir.path() + "/kubeconfig";
  ASSERT_TRUE(server.writeKubeconfig(kubeconfig));

  const uint16_t port = freePort();
  const std::string base = "https://127.0.0.1:" + std::to_string(port);
  PlacerProcess placer({"serve", "--kubeconfig", kubeconfig, "--listen", "127.0.0.1:" + std::to_string(port),
                        "--tls-cert-file", dir.path() + "/tls.crt", "--tls-key-file", dir.path() + "/tls.key"});
  auto get = [&](const std::string& path) {
    return fakeapi::httpsRequest("GET", base + path, server.caPem(), {}, "", std::chrono::seconds(5));
  };
  ASSERT_TRUE(waitFor(
      [&] {
        auto r = get("/readyz");
        return r && r->status == 200;
      },
      std::chrono::seconds(20)))
      << "placer never became ready";

  fakeapi::MutatingWebhook hook;
  hook.url = base + "/mutate";
  hook.caBundlePem = server.caPem();
  hook.failurePolicy = fakeapi::MutatingWebhook::FailurePolicy::Ignore;
  server.setMutatingWebhooks({hook});

  constexpr int kPods = 1000;
  std::atomic<int> next{0}, created{0}, assigned{0};
  std::mutex reasonsMu;
  std::map<std::string, int> unassignedReasons;
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t)
    workers.emplace_back([&] {
      for (int i = next++; i < kPods; i = next++) {
        // Plain Deployment-like pods that fit anywhere, so that "all assigned"
        // is the expectation (the generator's pending mix targets pools that fill up).
        json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"generateName", "e2e-"}, {"namespace", i % 2 ? "team-a" : "team-b"},
                                  {"labels", {{"app", "e2e-" + std::to_string(i % 7)}}}}},
                    {"spec", {{"containers", json::array({{{"name", "app"}, {"image", "nginx:1.25"},
                                                           {"resources", {{"requests", {{"cpu", std::to_string(50 + (i % 5) * 50) + "m"},
                                                                                        {"memory", std::to_string(64 + (i % 4) * 64) + "Mi"}}}}}}})}}}};
        std::string ns = pod["metadata"].value("namespace", "default");
        auto r = server.createPod(std::move(pod), ns);
        if (!r.ok()) continue;
        ++created;
        if (r.body["spec"].contains("nodeName")) {
          ++assigned;
        } else {
          std::lock_guard lock(reasonsMu);
          ++unassignedReasons[r.body["metadata"]["annotations"].value("placer.io/unassigned-reason", "(none)").substr(0, 120)];
        }
      }
    });
  for (auto& w : workers) w.join();
  EXPECT_EQ(created.load(), kPods);
  std::string reasons;
  for (const auto& [reason, n] : unassignedReasons) reasons += "\n  " + std::to_string(n) + " x " + reason;
  EXPECT_EQ(assigned.load(), kPods) << "every pod assigned by the webhook; unassigned:" << reasons;

  // The server's own count: no node over its allocatable.
  watchtest::Truth truth = watchtest::serverTruth(server);
  for (const auto& text : server.list(Kind::Node)) {
    auto node = decodeNode(text);
    ASSERT_TRUE(node);
    const Resources& used = truth.nodes[node->name].requested;
    EXPECT_LE(used.milliCpu, node->allocatable.milliCpu) << node->name;
    EXPECT_LE(used.memory, node->allocatable.memory) << node->name;
    EXPECT_LE(truth.nodes[node->name].pods, node->allocatable.pods) << node->name;
    for (const auto& [name, value] : used.scalars) EXPECT_LE(value, node->allocatable.scalar(name)) << node->name << " " << name;
  }

  // Every reservation replaced by its watched pod, none expired, none counted twice.
  std::string metrics;
  bool settled = waitFor(
      [&] {
        auto r = get("/metrics");
        if (!r || r->status != 200) return false;
        metrics = r->body;
        return metricValue(metrics, "placer_reservations_active") == 0 &&
               metricValue(metrics, "placer_pods_in_view") == static_cast<double>(truth.pods);
      },
      std::chrono::seconds(10));
  EXPECT_TRUE(settled) << "reservations_active=" << metricValue(metrics, "placer_reservations_active")
                       << " pods_in_view=" << metricValue(metrics, "placer_pods_in_view")
                       << " server pods=" << truth.pods;
  EXPECT_EQ(metricValue(metrics, "placer_reservations_expired_total"), 0);
  EXPECT_TRUE(placer.running());
}

}  // namespace
}  // namespace placer
