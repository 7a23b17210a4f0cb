// Three real `placer serve` replicas behind one webhook Service, against the
// fake API server: one leads (the Lease), the others forward to it; killing
// (SIGKILL) or pausing (SIGSTOP, a partitioned leader) the leader hands the
// Lease to another replica, which assigns again, and no node is ever
// overcommitted by the server's own count. A paused leader that comes back
// never assigns on its stale lease.
#include <signal.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/integration/placer_process.h"
#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "test/support/service_admission.h"

namespace placer::integration {
namespace {

using fakeapi::Kind;
using nlohmann::json;
using namespace std::chrono_literals;
using watchtest::waitFor;

constexpr const char* kServiceName = "kubernetes.default.svc";  // a name the fake's serving certificate carries

json podToPlace(int i) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "r-" + std::to_string(i)}, {"namespace", "team-a"}, {"labels", {{"app", "replicas-test"}}}}},
          {"spec",
           {{"containers", json::array({{{"name", "app"},
                                         {"image", "nginx:1.25"},
                                         {"resources", {{"requests", {{"cpu", "300m"}, {"memory", "256Mi"}}}}}}})}}}};
}

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fakeapi::Options options;
    options.certDir = dir_.path();
    options.tokens = {"replicas-token"};
    auto started = fakeapi::FakeApiServer::start(options);
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(*started);
    GeneratorParams params;
    params.nodes = 24;
    params.podsPerNode = 2;
    ASSERT_TRUE(watchtest::loadGeneratedCluster(*server_, params));
    kubeconfig_ = dir_.path() + "/kubeconfig";
    ASSERT_TRUE(server_->writeKubeconfig(kubeconfig_));
    config_ = dir_.path() + "/placer.yaml";
    std::ofstream(config_) << "apiVersion: placer.io/v1alpha1\n"
                              "kind: PlacerConfiguration\n"
                              "ownNamespace: placer-system\n"
                              "leaderElection:\n"
                              "  leaseDuration: 3s\n"
                              "  renewDeadline: 2s\n"
                              "  retryPeriod: 500ms\n"
                              "  forwardTimeout: 500ms\n";
    for (int i = 0; i < 3; ++i) startReplica(i);
    admission_ = std::make_unique<testing::ServiceAdmission>(*server_, server_->caPem(), kServiceName, 2s);
    admission_->setEndpoints(ports_);
  }

  void startReplica(int i) {
    if (replicas_.size() <= size_t(i)) replicas_.resize(i + 1), ports_.resize(i + 1);
    replicas_[i] = std::make_unique<PlacerProcess>(
        dir_.path(), std::vector<std::string>{"serve", "--kubeconfig", kubeconfig_, "--config", config_, "--listen",
                                              "127.0.0.1:0", "--tls-cert-file", dir_.path() + "/tls.crt",
                                              "--tls-key-file", dir_.path() + "/tls.key"});
    ports_[i] = replicas_[i]->port("webhook");
    ASSERT_GT(ports_[i], 0) << replicas_[i]->err();
    ASSERT_TRUE(waitFor([&] { return get(ports_[i], "/readyz").first == 200; }, 60s))
        << "replica " << i << " never became ready:\n"
        << replicas_[i]->err();
  }

  std::pair<int, std::string> get(int port, const std::string& path) const {
    auto r = fakeapi::httpsRequest("GET", "https://127.0.0.1:" + std::to_string(port) + path, server_->caPem(), {},
                                   "", 2s);
    if (!r) return {0, ""};
    return {r->status, r->body};
  }

  int leaderIndex() const { return testing::leaderIndex(*server_, ports_); }
  std::string holder() const { return testing::readLease(*server_).holder; }

  double metric(int port, const std::string& series) const {
    const std::string text = get(port, "/metrics").second;
    size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::atof(text.c_str() + at + series.size() + 2);
  }

  void withoutEndpoint(int port) {
    std::vector<int> ready;
    for (int p : admission_->endpoints())
      if (p != port) ready.push_back(p);
    admission_->setEndpoints(ready);
  }

  void expectNoOvercommit() const {
    const std::vector<std::string> over = testing::overcommittedNodes(*server_);
    EXPECT_TRUE(over.empty()) << over.size() << " overcommitted nodes, e.g. " << over.front();
  }

  watchtest::TempDir dir_;
  std::unique_ptr<fakeapi::FakeApiServer> server_;
  std::string kubeconfig_, config_;
  std::vector<std::unique_ptr<PlacerProcess>> replicas_;
  std::vector<int> ports_;
  std::unique_ptr<testing::ServiceAdmission> admission_;
};

TEST_F(ReplicasTest, OneReplicaLeadsAndTheOthersForwardToIt) {
  ASSERT_TRUE(waitFor([&] { return leaderIndex() >= 0; }, 20s));
  const int leader = leaderIndex();
  testing::ServiceAdmission::Client client(*admission_);
  int assigned = 0;
  for (int i = 0; i < 30; ++i) {
    auto created = client.create(podToPlace(i));
    ASSERT_TRUE(created.stored) << created.error;
    EXPECT_TRUE(created.answered) << created.error;
    if (!created.node.empty()) ++assigned;
  }
  EXPECT_EQ(assigned, 30) << "every review answered by the leader, directly or forwarded";
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("replica " + std::to_string(i));
    EXPECT_EQ(metric(ports_[i], "placer_leader"), i == leader ? 1 : 0);
    // Round robin over three endpoints: each follower received ten reviews.
    EXPECT_EQ(metric(ports_[i], "placer_forwarded_total{result=\"forwarded\"}"), i == leader ? 0 : 10);
    EXPECT_EQ(metric(ports_[i], "placer_admissions_total{outcome=\"assigned\"}"), i == leader ? 30 : 0);
  }
  expectNoOvercommit();
}

TEST_F(ReplicasTest, KillingOrPausingTheLeaderHandsOverWithoutOvercommit) {
  ASSERT_TRUE(waitFor([&] { return leaderIndex() >= 0; }, 20s));
  const size_t podsBefore = server_->count(Kind::Pod);
  std::atomic<bool> stop{false};
  std::atomic<int> next{0}, stored{0}, removed{0}, assignedAfterEvent{0};
  std::atomic<int> event{0};
  std::vector<std::thread> load;
  for (int t = 0; t < 2; ++t)
    load.emplace_back([&] {
      testing::ServiceAdmission::Client client(*admission_);
      // Churn: a pod is deleted 40 creations later, so the cluster never
      // fills up and "the new leader assigns" stays observable.
      std::deque<std::string> live;
      while (!stop) {
        const int seen = event.load();
        const int i = next++;
        auto created = client.create(podToPlace(i));
        if (created.stored) ++stored, live.push_back("r-" + std::to_string(i));
        if (!created.node.empty() && seen == event.load()) assignedAfterEvent += 1;
        if (live.size() > 40) {
          if (server_->remove(Kind::Pod, "team-a", live.front())) ++removed;
          live.pop_front();
        }
      }
    });

  struct Event {
    const char* name;
    int signal;
  };
  int directlyCreated = 0;
  int killed = -1;  // the replica the SIGKILL event ended: it stays down
  for (const Event& e : {Event{"SIGKILL", SIGKILL}, Event{"SIGSTOP", SIGSTOP}}) {
    SCOPED_TRACE(e.name);
    const int old = leaderIndex();
    ASSERT_GE(old, 0);
    const std::string oldHolder = holder();
    replicas_[old]->signal(e.signal);
    if (e.signal == SIGKILL) killed = old;
    withoutEndpoint(ports_[old]);  // the endpoints controller drops it
    if (e.signal == SIGSTOP) {
      // Until the paused leader's lease expires (3 s after the followers last
      // saw it renewed) they still forward to it: the forward fails at its
      // 500 ms timeout, and the review is answered allowed unchanged, counted.
      int follower = 0;  // a replica still running that is not the paused leader
      while (follower == old || follower == killed) ++follower;
      const std::string failed = "placer_forwarded_total{result=\"failed\"}";
      const double failedBefore = metric(ports_[follower], failed);
      testing::ServiceAdmission direct(*server_, server_->caPem(), kServiceName, 2s);
      direct.setEndpoints({ports_[follower]});
      testing::ServiceAdmission::Client client(direct);
      auto created = client.create(podToPlace(200000));
      ++directlyCreated;
      EXPECT_TRUE(created.answered) << created.error;
      EXPECT_TRUE(created.node.empty()) << "a failed forward leaves the pod to kube-scheduler";
      EXPECT_GT(metric(ports_[follower], failed), failedBefore);
    }
    ++event;
    assignedAfterEvent = 0;
    ASSERT_TRUE(waitFor([&] { return holder() != oldHolder && leaderIndex() >= 0; }, 30s))
        << "no replica took the Lease over";
    EXPECT_NE(leaderIndex(), old);
    ASSERT_TRUE(waitFor([&] { return assignedAfterEvent > 0; }, 30s)) << "the new leader never assigned";
    if (e.signal == SIGSTOP) {
      // The partitioned leader comes back on a lease another replica holds:
      // it must forward (or decline), never assign on its own.
      const std::string assigned = "placer_admissions_total{outcome=\"assigned\"}";
      const std::string forwarded = "placer_forwarded_total{result=\"forwarded\"}";
      replicas_[old]->signal(SIGCONT);
      ASSERT_TRUE(waitFor([&] { return metric(ports_[old], "placer_leader") == 0; }, 10s));
      const double oldAssigned = metric(ports_[old], assigned), oldForwarded = metric(ports_[old], forwarded);
      testing::ServiceAdmission direct(*server_, server_->caPem(), kServiceName, 2s);
      direct.setEndpoints({ports_[old]});
      testing::ServiceAdmission::Client client(direct);
      int placed = 0;
      for (int i = 0; i < 5; ++i) {
        auto created = client.create(podToPlace(100000 + i));
        ++directlyCreated;
        if (!created.node.empty()) ++placed;
      }
      EXPECT_EQ(metric(ports_[old], assigned), oldAssigned) << "the old leader assigned on a stale lease";
      EXPECT_EQ(metric(ports_[old], forwarded), oldForwarded + 5);
      EXPECT_EQ(placed, 5) << "forwarded to the new leader, which assigned them";
    }
  }
  stop = true;
  for (auto& t : load) t.join();
  EXPECT_EQ(podsBefore + stored.load() + directlyCreated - removed.load(), server_->count(Kind::Pod))
      << "every pod created";
  expectNoOvercommit();
}

}  // namespace
}  // namespace placer::integration
