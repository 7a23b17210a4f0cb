// Failover under load: N real `placer serve` replicas (the Lease elects one,
// the others forward) behind one webhook Service, against the in-process fake
// API server. An open-loop generator plays the API server: each pod's review
// goes to the next ready replica (round robin, a keep-alive TLS connection
// per worker and replica, the webhook's 2 s timeout, failurePolicy Ignore),
// and the pod, patched or not, is stored. Meanwhile the leader is killed
// (SIGKILL, then restarted) and paused (SIGSTOP, then SIGCONT) in turn.
//
//   failover_loadgen [--replicas 3] [--rate 1000] [--seconds 60] [--kills 10] [--pauses 5]
//                    [--nodes 200] [--lease-duration 15s] [--renew-deadline 10s] [--retry-period 2s]
//                    [--unready-after MS (2000)] [--workers 256] [--live-pods 3000]
//   failover_loadgen --forwarding [--requests 5000]
//
// Reported: pods created (every one must be), the share placed by placer and
// the share left to kube-scheduler, overcommitted nodes by the server's own
// count (must be 0), and per event the failover time: the last assignment
// answered before the event -> the first answered after it (every answer
// after a SIGKILL or SIGSTOP comes from another replica: a killed replica
// answers nothing, a paused one nothing before the caller's timeout).
//
// A killed replica leaves the Service's endpoints at once (its pod is gone);
// a paused one after --unready-after (its readiness probe failing). Pods are
// deleted oldest first beyond --live-pods, so the cluster never fills up.
//
// --forwarding: 2 replicas, one client sending each dry-run review (decided,
// nothing reserved) to the leader directly and to the follower, which
// forwards it, in turn on two keep-alive connections: the difference is what
// forwarding costs.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "test/integration/placer_process.h"
#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "test/support/service_admission.h"
#include "webhook/log.h"

namespace placer {
namespace {

using fakeapi::Kind;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using integration::PlacerProcess;

constexpr const char* kServiceName = "kubernetes.default.svc";

struct Args {
  int replicas = 3;
  int rate = 1000;
  int seconds = 60;
  int kills = 10;
  int pauses = 5;
  int nodes = 200;
  std::string leaseDuration = "15s", renewDeadline = "10s", retryPeriod = "2s";
  std::chrono::milliseconds unreadyAfter{2000};
  int workers = 256;
  size_t livePods = 3000;
  bool forwarding = false;
  int requests = 5000;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

class Cluster {
 public:
  explicit Cluster(const Args& args) : args_(args) {}

  bool start() {
    fakeapi::Options options;
    options.certDir = dir_.path();
    options.tokens = {"bench-token"};
    options.maxThreads = 512;
    auto started = fakeapi::FakeApiServer::start(options);
    if (!started) return std::fprintf(stderr, "fake API server: %s\n", started.error().message.c_str()), false;
    server_ = std::move(*started);
    GeneratorParams params;
    params.nodes = args_.nodes;
    params.podsPerNode = 10;
    if (!watchtest::loadGeneratedCluster(*server_, params)) return false;
    kubeconfig_ = dir_.path() + "/kubeconfig";
    if (!server_->writeKubeconfig(kubeconfig_)) return false;
    config_ = dir_.path() + "/placer.yaml";
    std::ofstream(config_) << "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nownNamespace: placer-system\n"
                           << "leaderElection:\n  leaseDuration: " << args_.leaseDuration
                           << "\n  renewDeadline: " << args_.renewDeadline << "\n  retryPeriod: " << args_.retryPeriod
                           << "\n";
    const int replicas = args_.forwarding ? 2 : args_.replicas;
    processes_.resize(replicas);
    ports_.resize(replicas);
    for (int i = 0; i < replicas; ++i)
      if (!startReplica(i)) return false;
    return true;
  }

  bool startReplica(int i) {
    processes_[i] = std::make_unique<PlacerProcess>(
        dir_.path(), std::vector<std::string>{"serve", "--kubeconfig", kubeconfig_, "--config", config_, "--listen",
                                              "127.0.0.1:0", "--tls-cert-file", dir_.path() + "/tls.crt",
                                              "--tls-key-file", dir_.path() + "/tls.key"});
    ports_[i] = processes_[i]->port("webhook", 60s);
    if (ports_[i] <= 0) return std::fprintf(stderr, "replica %d did not start:\n%s\n", i, processes_[i]->err().c_str()), false;
    bool ready = watchtest::waitFor(
        [&] {
          auto r = fakeapi::httpsRequest("GET", "https://127.0.0.1:" + std::to_string(ports_[i]) + "/readyz",
                                         server_->caPem(), {}, "", 2s);
          return r && r->status == 200;
        },
        120s);
    if (!ready) std::fprintf(stderr, "replica %d never became ready\n", i);
    return ready;
  }

  int leaderIndex() const { return testing::leaderIndex(*server_, ports_); }
  std::string holder() const { return testing::readLease(*server_).holder; }
  int overcommittedNodes() const { return int(testing::overcommittedNodes(*server_).size()); }

  const Args& args_;
  watchtest::TempDir dir_;
  std::unique_ptr<fakeapi::FakeApiServer> server_;
  std::string kubeconfig_, config_;
  std::vector<std::unique_ptr<PlacerProcess>> processes_;
  std::vector<int> ports_;
};

json podToPlace(uint64_t i) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "fo-" + std::to_string(i)}, {"namespace", "bench"}, {"labels", {{"app", "failover"}}}}},
          {"spec",
           {{"containers", json::array({{{"name", "app"},
                                         {"image", "nginx:1.25"},
                                         {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}})}}}};
}

struct Percentiles {
  double p50, p99, max;
};
Percentiles percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {0, 0, 0};
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)], v.back()};
}

int runForwarding(const Args& args) {
  Cluster cluster(args);
  if (!cluster.start()) return 2;
  if (!watchtest::waitFor([&] { return cluster.leaderIndex() >= 0; }, 30s)) return 2;
  const int leader = cluster.leaderIndex(), follower = 1 - leader;
  // The same review to the leader and to the follower in turn (which goes
  // first alternates), so that both paths see the same moments of the machine.
  auto toLeader = fakeapi::HttpsConnection::open("127.0.0.1", cluster.ports_[leader], cluster.server_->caPem(), 5s,
                                                 kServiceName);
  auto toFollower = fakeapi::HttpsConnection::open("127.0.0.1", cluster.ports_[follower], cluster.server_->caPem(),
                                                   5s, kServiceName);
  if (!toLeader || !toFollower) return 2;
  auto call = [](fakeapi::HttpsConnection& connection, const std::string& body) -> std::optional<double> {
    auto t0 = Clock::now();
    if (!connection.sendRequest("POST", "/mutate", {{"Content-Type", "application/json"}}, body)) return std::nullopt;
    auto r = connection.readResponse();
    if (!r || r->status != 200 || r->body.find("\"patch\"") == std::string::npos) return std::nullopt;
    return seconds(Clock::now() - t0) * 1e6;
  };
  std::vector<double> directUs, forwardedUs;
  for (int i = 0; i < args.requests + 500; ++i) {
    json review = {{"kind", "AdmissionReview"},
                   {"apiVersion", "admission.k8s.io/v1"},
                   {"request",
                    {{"uid", "fwd-" + std::to_string(i)},
                     {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                     {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                     {"namespace", "bench"},
                     {"operation", "CREATE"},
                     {"object", podToPlace(i)},
                     {"dryRun", true}}}};
    const std::string body = review.dump();
    std::optional<double> direct, forwarded;
    if (i % 2 == 0) {
      direct = call(**toLeader, body);
      forwarded = call(**toFollower, body);
    } else {
      forwarded = call(**toFollower, body);
      direct = call(**toLeader, body);
    }
    if (!direct || !forwarded) {
      std::fprintf(stderr, "review %d failed (%s)\n", i, direct ? "via the follower" : "to the leader");
      return 2;
    }
    if (i < 500) continue;  // warm-up
    directUs.push_back(*direct);
    forwardedUs.push_back(*forwarded);
  }
  auto direct = percentiles(directUs);
  auto forwarded = percentiles(forwardedUs);
  std::printf("forwarding: %d dry-run reviews, each to the leader and via the follower in turn "
              "(a keep-alive connection to each), %d nodes\n",
              args.requests, args.nodes);
  std::printf("  to the leader:   p50 %.0f us  p99 %.0f us  max %.0f us\n", direct.p50, direct.p99, direct.max);
  std::printf("  via a follower:  p50 %.0f us  p99 %.0f us  max %.0f us\n", forwarded.p50, forwarded.p99,
              forwarded.max);
  std::printf("  forwarding adds: p50 %.0f us  p99 %.0f us\n", forwarded.p50 - direct.p50, forwarded.p99 - direct.p99);
  return 0;
}

int runFailover(const Args& args) {
  Cluster cluster(args);
  if (!cluster.start()) return 2;
  if (!watchtest::waitFor([&] { return cluster.leaderIndex() >= 0; }, 30s)) return 2;
  testing::ServiceAdmission service(*cluster.server_, cluster.server_->caPem(), kServiceName, 2s);
  service.setEndpoints(cluster.ports_);

  // Open loop: ticket k is due at t0 + k / rate.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> issued{0}, stored{0}, assigned{0}, answeredUnassigned{0}, failedCalls{0}, late{0};
  std::mutex mutex;
  std::vector<double> assignedAt;  // seconds since t0 of each assigned answer
  std::deque<std::string> live;
  const auto t0 = Clock::now();
  const auto period = std::chrono::nanoseconds(1'000'000'000 / args.rate);
  std::vector<std::thread> workers;
  for (int w = 0; w < args.workers; ++w)
    workers.emplace_back([&] {
      testing::ServiceAdmission::Client client(service);
      while (!stop) {
        const uint64_t k = issued++;
        const auto due = t0 + period * k;
        if (Clock::now() < due) std::this_thread::sleep_until(due);
        else if (Clock::now() - due > 100ms) ++late;
        if (stop) break;
        auto created = client.create(podToPlace(k));
        const double at = seconds(created.answeredAt - t0);
        std::string evict;
        {
          std::lock_guard lock(mutex);
          if (created.stored) {
            live.push_back("fo-" + std::to_string(k));
            if (live.size() > args.livePods) evict = live.front(), live.pop_front();
          }
          if (!created.node.empty()) assignedAt.push_back(at);
        }
        if (created.stored) ++stored;
        if (!created.node.empty()) ++assigned;
        else if (created.answered) ++answeredUnassigned;
        else ++failedCalls;
        if (!evict.empty()) (void)cluster.server_->remove(Kind::Pod, "bench", evict);
      }
    });

  struct EventRecord {
    std::string kind;
    double at;
    int oldLeader, newLeader;
  };
  std::vector<EventRecord> events;
  std::this_thread::sleep_until(t0 + 5s);  // warm-up under load before the first event
  const int total = args.kills + args.pauses;
  for (int e = 0; e < total; ++e) {
    // Kills and pauses interleaved: kill, kill, pause, kill, kill, pause, ...
    const bool pause = args.pauses > 0 && (e % ((total + args.pauses - 1) / args.pauses)) == 2 &&
                       std::count_if(events.begin(), events.end(), [](auto& r) { return r.kind == "pause"; }) < args.pauses;
    const bool kill = !pause;
    const int old = cluster.leaderIndex();
    const std::string oldHolder = cluster.holder();
    if (old < 0) {
      std::fprintf(stderr, "no leader before event %d\n", e);
      break;
    }
    const double at = seconds(Clock::now() - t0);
    cluster.processes_[old]->signal(kill ? SIGKILL : SIGSTOP);
    std::thread unready;
    if (kill) {
      std::vector<int> ready;
      for (int p : service.endpoints()) if (p != cluster.ports_[old]) ready.push_back(p);
      service.setEndpoints(ready);
    } else {
      unready = std::thread([&, port = cluster.ports_[old]] {
        std::this_thread::sleep_for(args.unreadyAfter);
        std::vector<int> ready;
        for (int p : service.endpoints()) if (p != port) ready.push_back(p);
        service.setEndpoints(ready);
      });
    }
    bool took = watchtest::waitFor([&] { return cluster.holder() != oldHolder && cluster.leaderIndex() >= 0; }, 120s);
    const int now = cluster.leaderIndex();
    // The new leader's first assignment.
    watchtest::waitFor(
        [&] {
          std::lock_guard lock(mutex);
          return !assignedAt.empty() && assignedAt.back() > at;
        },
        60s);
    if (unready.joinable()) unready.join();
    events.push_back({kill ? "kill" : "pause", at, old, took ? now : -1});
    // Back into the Service: restarted or resumed, then ready.
    if (kill) {
      cluster.processes_[old]->exitCode(5s);
      if (!cluster.startReplica(old)) break;
    } else {
      cluster.processes_[old]->signal(SIGCONT);
    }
    {
      std::vector<int> ready = service.endpoints();
      ready.push_back(cluster.ports_[old]);
      service.setEndpoints(ready);
    }
    std::this_thread::sleep_for(1s);  // the next event hits a settled set of replicas
  }
  while (Clock::now() < t0 + std::chrono::seconds(args.seconds)) std::this_thread::sleep_for(100ms);
  stop = true;
  for (auto& w : workers) w.join();
  const double elapsed = seconds(Clock::now() - t0);

  // Failover times from the answers.
  std::sort(assignedAt.begin(), assignedAt.end());
  std::printf("failover: %d replicas, %d nodes, lease %s / renew %s / retry %s, open loop %d reviews/s, %.1f s\n",
              int(cluster.ports_.size()), args.nodes, args.leaseDuration.c_str(), args.renewDeadline.c_str(),
              args.retryPeriod.c_str(), args.rate, elapsed);
  // The failover of an event: the longest gap between two consecutive
  // assignments from 1 s before the event to its end (the next event), since
  // answers the old leader gave just before the event may arrive just after it.
  double worst = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const double end = i + 1 < events.size() ? events[i + 1].at : elapsed;
    auto from = std::lower_bound(assignedAt.begin(), assignedAt.end(), e.at - 1.0);
    auto to = std::upper_bound(assignedAt.begin(), assignedAt.end(), end);
    double gap = -1, last = 0, first = -1;
    for (auto it = from; it != to && it + 1 != to; ++it)
      if (*(it + 1) - *it > gap) gap = *(it + 1) - *it, last = *it, first = *(it + 1);
    worst = std::max(worst, gap);
    std::printf("  %-5s at %6.2f s: leader %d -> %d, last assignment %6.2f s, first by the new leader %6.2f s, "
                "failover %.2f s\n",
                e.kind.c_str(), e.at, e.oldLeader, e.newLeader, last, first, gap);
  }
  const uint64_t created = stored.load();
  const uint64_t reviews = assigned + answeredUnassigned + failedCalls;
  std::printf("  pods created: %llu of %llu reviews (%s)\n", (unsigned long long)created, (unsigned long long)reviews,
              created == reviews ? "every pod created" : "SOME PODS MISSING");
  std::printf("  placed by placer: %llu (%.2f%%); left to kube-scheduler: %llu (%.2f%%: %llu answered unchanged, "
              "%llu calls failed)\n",
              (unsigned long long)assigned.load(), 100.0 * double(assigned) / double(std::max<uint64_t>(reviews, 1)),
              (unsigned long long)(answeredUnassigned + failedCalls),
              100.0 * double(answeredUnassigned + failedCalls) / double(std::max<uint64_t>(reviews, 1)),
              (unsigned long long)answeredUnassigned.load(), (unsigned long long)failedCalls.load());
  std::printf("  achieved %.0f reviews/s (%llu sent more than 100 ms late)\n", double(reviews) / elapsed,
              (unsigned long long)late.load());
  // Let the replicas' watches settle, then the server's own count.
  std::this_thread::sleep_for(1s);
  const int over = cluster.overcommittedNodes();
  std::printf("  overcommitted nodes: %d\n", over);
  std::printf("  worst failover: %.2f s\n", worst);
  for (auto& p : cluster.processes_) p->stop();
  return over == 0 && created == reviews ? 0 : 1;
}

}  // namespace
}  // namespace placer

int main(int argc, char** argv) {
  using namespace placer;
  setLogOutput(nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--replicas") args.replicas = std::stoi(next());
    else if (a == "--rate") args.rate = std::stoi(next());
    else if (a == "--seconds") args.seconds = std::stoi(next());
    else if (a == "--kills") args.kills = std::stoi(next());
    else if (a == "--pauses") args.pauses = std::stoi(next());
    else if (a == "--nodes") args.nodes = std::stoi(next());
    else if (a == "--lease-duration") args.leaseDuration = next();
    else if (a == "--renew-deadline") args.renewDeadline = next();
    else if (a == "--retry-period") args.retryPeriod = next();
    else if (a == "--unready-after") args.unreadyAfter = std::chrono::milliseconds(std::stoi(next()));
    else if (a == "--workers") args.workers = std::stoi(next());
    else if (a == "--live-pods") args.livePods = size_t(std::stoul(next()));
    else if (a == "--forwarding") args.forwarding = true;
    else if (a == "--requests") args.requests = std::stoi(next());
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  return args.forwarding ? runForwarding(args) : runFailover(args);
}
