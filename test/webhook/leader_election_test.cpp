// Leader election on a Lease of the fake API server, over real TLS: each case
// drives the electors' rounds by hand on a clock the test moves, so expiry and
// deadlines are facts about observed time, never about sleeping.
#include "webhook/leader_election.h"

#include <atomic>
#include <barrier>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test/fakeapi/fake_apiserver.h"
#include "webhook/kube/kube_config.h"
#include "webhook/log.h"
#include "webhook/metrics.h"

namespace placer {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using fakeapi::Kind;

constexpr const char* kNs = "placer-system";

// A steady clock the test moves by hand, shared by the electors of a case.
struct ManualClock {
  std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(1'000'000);
  void advance(std::chrono::milliseconds d) { *ms += d.count(); }
  std::function<std::chrono::steady_clock::time_point()> fn() const {
    return [ms = ms] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(ms->load())); };
  }
};

struct Replica {
  MetricsRegistry metrics;
  std::unique_ptr<LeaderElector> elector;
  uint64_t transitions() { return metrics.counter("placer_leader_transitions_total", "").value(); }
  double leaderGauge() { return metrics.gauge("placer_leader", "").value(); }
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogOutput(nullptr);
    auto started = fakeapi::FakeApiServer::start();
    ASSERT_TRUE(started) << started.error().message;
    server_ = std::move(*started);
    auto config = kube::parseKubeconfig(server_->kubeconfig(), "/");
    ASSERT_TRUE(config) << config.error().message;
    auto client = kube::ApiClient::create(*config);
    ASSERT_TRUE(client) << client.error().message;
    client_ = std::move(*client);
  }

  std::unique_ptr<Replica> replica(const std::string& identity, std::function<bool(uint64_t)> viewReached = nullptr,
                                   std::function<std::chrono::system_clock::time_point()> wallClock = nullptr) {
    auto r = std::make_unique<Replica>();
    LeaderElectorOptions o;
    o.leaseNamespace = kNs;
    o.identity = identity;
    o.address = identity + ".example:8443";
    o.clock = clock_.fn();
    if (wallClock) o.wallClock = std::move(wallClock);
    o.viewReached = std::move(viewReached);
    o.metrics = &r->metrics;
    o.seed = 1;
    r->elector = std::make_unique<LeaderElector>(*client_, std::move(o));
    return r;
  }

  json lease() const { return server_->get(Kind::Lease, kNs, "placer").value_or(json()); }

  std::unique_ptr<fakeapi::FakeApiServer> server_;
  std::unique_ptr<kube::ApiClient> client_;
  ManualClock clock_;
};

TEST_F(LeaderElectionTest, TheFirstReplicaCreatesTheLeaseAndAssignsAtOnce) {
  auto a = replica("a");
  EXPECT_FALSE(a->elector->mayAssign());
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  const json l = lease();
  EXPECT_EQ(l["spec"]["holderIdentity"], "a");
  EXPECT_EQ(l["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(l["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(l["spec"]["acquireTime"], l["spec"]["renewTime"]);
  EXPECT_EQ(l["metadata"]["annotations"]["placer.io/leader-address"], "a.example:8443");
  // Nobody led before: no takeover to wait for.
  EXPECT_TRUE(a->elector->mayAssign());
  EXPECT_EQ(a->leaderGauge(), 1);
  EXPECT_EQ(a->transitions(), 1u);
  EXPECT_FALSE(a->elector->leader().has_value()) << "a replica is not its own leader to forward to";
}

TEST_F(LeaderElectionTest, RenewingKeepsAcquireTimeAndTransitionsAndMovesRenewTime) {
  int64_t wallSeconds = 1'800'000'000;
  auto a = replica("a", nullptr, [&] { return std::chrono::system_clock::time_point(std::chrono::seconds(wallSeconds)); });
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  const json first = lease();
  clock_.advance(2s);
  wallSeconds += 2;
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  const json second = lease();
  EXPECT_EQ(second["spec"]["acquireTime"], first["spec"]["acquireTime"]);
  EXPECT_NE(second["spec"]["renewTime"], first["spec"]["renewTime"]);
  EXPECT_EQ(second["spec"]["renewTime"], "2027-01-15T08:00:02.000000Z");
  EXPECT_EQ(second["spec"]["leaseTransitions"], 0);
  EXPECT_NE(second["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
  EXPECT_EQ(a->transitions(), 1u) << "a renewal is no transition";
}

TEST_F(LeaderElectionTest, AFollowerKnowsTheLeaderAndItsAddress) {
  auto a = replica("a");
  auto b = replica("b");
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  EXPECT_FALSE(b->elector->tryAcquireOrRenew());
  ASSERT_TRUE(b->elector->leader().has_value());
  EXPECT_EQ(b->elector->leader()->identity, "a");
  EXPECT_EQ(b->elector->leader()->address, "a.example:8443");
  EXPECT_FALSE(b->elector->mayAssign());
  EXPECT_EQ(b->leaderGauge(), 0);
  EXPECT_EQ(b->transitions(), 0u) << "finding a leader at start is no transition";
}

// Expiry is judged from when this replica saw the record change, by its own
// clock: the holder's renewTime (here from a wall clock years off) plays no part.
TEST_F(LeaderElectionTest, ExpiryIsJudgedFromTheFollowersOwnObservation) {
  struct Case {
    std::string name;
    std::chrono::system_clock::time_point holderWallClock;
  };
  const std::vector<Case> cases = {
      {"holder clock far in the past", std::chrono::system_clock::time_point(std::chrono::seconds(946'684'800))},
      {"holder clock far in the future", std::chrono::system_clock::now() + std::chrono::hours(24 * 365)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    (void)server_->remove(Kind::Lease, kNs, "placer");
    auto a = replica("a-" + c.name, nullptr, [t = c.holderWallClock] { return t; });
    auto b = replica("b-" + c.name);
    ASSERT_TRUE(a->elector->tryAcquireOrRenew());
    EXPECT_FALSE(b->elector->tryAcquireOrRenew());  // b observes the record now
    clock_.advance(10s);
    ASSERT_TRUE(a->elector->tryAcquireOrRenew());   // a renews: the record changes
    clock_.advance(2s);
    EXPECT_FALSE(b->elector->tryAcquireOrRenew());  // b sees the change 12 s after its first look
    clock_.advance(14s);                             // 14 s after that: not yet expired
    EXPECT_FALSE(b->elector->tryAcquireOrRenew());
    EXPECT_TRUE(b->elector->leader().has_value());
    clock_.advance(1001ms);                          // 15 s and a little: expired
    EXPECT_FALSE(b->elector->leader().has_value());
    ASSERT_TRUE(b->elector->tryAcquireOrRenew());
    const json l = lease();
    EXPECT_EQ(l["spec"]["holderIdentity"], "b-" + c.name);
    EXPECT_EQ(l["spec"]["leaseTransitions"], 1);
    EXPECT_EQ(b->transitions(), 1u);
    EXPECT_NE(l["spec"]["acquireTime"], formatMicroTime(c.holderWallClock)) << "a new acquireTime";
  }
}

// The old leader can no longer renew (API server errors): it stops assigning
// as soon as renewDeadline has passed since its last renewal was sent, by its
// own clock, without waiting for a round of its loop.
TEST_F(LeaderElectionTest, ALeaderThatCannotRenewStopsAssigningAtTheRenewDeadline) {
  auto a = replica("a");
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  ASSERT_TRUE(a->elector->mayAssign());
  server_->failNextRequests(100, 503, 0);
  for (int i = 0; i < 4; ++i) {
    clock_.advance(2s);
    a->elector->tryAcquireOrRenew();
    EXPECT_TRUE(a->elector->mayAssign()) << "within the renew deadline after " << (i + 1) * 2 << " s";
  }
  clock_.advance(1999ms);
  EXPECT_TRUE(a->elector->mayAssign());
  clock_.advance(1ms);  // exactly renewDeadline (10 s) after the last renewal was sent
  EXPECT_FALSE(a->elector->holdsLease());
  EXPECT_FALSE(a->elector->mayAssign());
  EXPECT_FALSE(a->elector->tryAcquireOrRenew());
}

// Someone else's write between a leader's renewals (here a takeover written
// behind its back): the leader reads a holder that is not itself, not
// expired, and stops leading; it never overwrites it.
TEST_F(LeaderElectionTest, ALeaderWhoseLeaseWasTakenStopsAndDoesNotOverwrite) {
  auto a = replica("a");
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  ASSERT_TRUE(server_->mutate(Kind::Lease, kNs, "placer", [](json& l) {
    l["spec"]["holderIdentity"] = "c";
    l["spec"]["leaseTransitions"] = 1;
  }));
  clock_.advance(2s);
  EXPECT_FALSE(a->elector->tryAcquireOrRenew());
  EXPECT_FALSE(a->elector->mayAssign());
  EXPECT_EQ(a->leaderGauge(), 0);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "c");
  EXPECT_EQ(a->transitions(), 2u) << "a took it, then c";
}

// Many replicas race for an expired lease at the same moment: the writes
// carry the resourceVersion each read, so all but one get 409 Conflict, read
// again, and find the winner. Exactly one holds the lease after each round.
TEST_F(LeaderElectionTest, ConcurrentCandidatesElectExactlyOneLeader) {
  constexpr int kCandidates = 6;
  constexpr int kRounds = 8;
  std::vector<std::unique_ptr<Replica>> candidates;
  for (int i = 0; i < kCandidates; ++i) candidates.push_back(replica("c" + std::to_string(i)));
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Every candidate observes the current record, then it expires for all.
    for (auto& c : candidates) c->elector->tryAcquireOrRenew();
    clock_.advance(16s);
    std::barrier sync(kCandidates);
    std::vector<int> won(kCandidates, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kCandidates; ++i)
      threads.emplace_back([&, i] {
        sync.arrive_and_wait();
        won[i] = candidates[i]->elector->tryAcquireOrRenew() ? 1 : 0;
      });
    for (auto& t : threads) t.join();
    int winners = 0, winner = -1;
    for (int i = 0; i < kCandidates; ++i)
      if (won[i]) ++winners, winner = i;
    ASSERT_EQ(winners, 1);
    EXPECT_EQ(lease()["spec"]["holderIdentity"], candidates[winner]->elector->identity());
    for (int i = 0; i < kCandidates; ++i) EXPECT_EQ(candidates[i]->elector->holdsLease(), i == winner);
    // The winner stops renewing: the next round elects again.
    candidates[winner]->elector->stop(false);
    candidates[winner] = replica("c" + std::to_string(winner) + "-r" + std::to_string(round));
  }
}

// A replica that takes the lease over from another holder assigns only once
// its pod watch has caught up with its own takeover write (or, when no pod
// event comes to show it, retryPeriod later).
TEST_F(LeaderElectionTest, ATakeoverAssignsOnlyOnceTheViewHasCaughtUp) {
  auto a = replica("a");
  std::atomic<uint64_t> watched{0};
  auto b = replica("b", [&](uint64_t rv) { return watched.load() >= rv; });
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  EXPECT_FALSE(b->elector->tryAcquireOrRenew());
  clock_.advance(15001ms);
  ASSERT_TRUE(b->elector->tryAcquireOrRenew());
  EXPECT_TRUE(b->elector->holdsLease());
  EXPECT_FALSE(b->elector->mayAssign()) << "the watch has not delivered the takeover's revision yet";
  watched = server_->resourceVersion();
  EXPECT_TRUE(b->elector->mayAssign());
}

TEST_F(LeaderElectionTest, ATakeoverWithoutPodEventsAssignsAfterRetryPeriod) {
  auto a = replica("a");
  auto b = replica("b", [](uint64_t) { return false; });
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  EXPECT_FALSE(b->elector->tryAcquireOrRenew());
  clock_.advance(15001ms);
  ASSERT_TRUE(b->elector->tryAcquireOrRenew());
  clock_.advance(1999ms);
  EXPECT_FALSE(b->elector->mayAssign());
  clock_.advance(1ms);
  EXPECT_TRUE(b->elector->mayAssign());
}

// A leader that stops releases the lease as client-go does (no holder, a
// 1 s lease): the next replica takes it at its next round, not 15 s later.
TEST_F(LeaderElectionTest, ReleasingHandsTheLeaseOverAtTheNextRound) {
  auto a = replica("a");
  auto b = replica("b");
  ASSERT_TRUE(a->elector->tryAcquireOrRenew());
  EXPECT_FALSE(b->elector->tryAcquireOrRenew());
  a->elector->stop(true);
  EXPECT_FALSE(a->elector->mayAssign());
  const json released = lease();
  EXPECT_FALSE(released["spec"].contains("holderIdentity"));
  EXPECT_EQ(released["spec"]["leaseDurationSeconds"], 1);
  EXPECT_EQ(released["spec"]["leaseTransitions"], 0);
  EXPECT_FALSE(released["metadata"]["annotations"].contains("placer.io/leader-address"));
  ASSERT_TRUE(b->elector->tryAcquireOrRenew()) << "a released lease has no holder to wait for";
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
}

}  // namespace
}  // namespace placer
