#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, with client-go's
// semantics (k8s.io/client-go/tools/leaderelection):
//  - the record is the Lease's spec: holderIdentity, leaseDurationSeconds,
//    acquireTime, renewTime (MicroTime), leaseTransitions;
//  - every write is a PUT carrying the resourceVersion just read, so two
//    replicas never both win: the loser gets 409 Conflict and reads again;
//  - another holder's lease is expired only when this replica has seen the
//    record unchanged for leaseDuration by its own monotonic clock (the
//    holder's timestamps are never compared with ours);
//  - the leader renews every retryPeriod; when it has not renewed within
//    renewDeadline of the last successful renewal it stops leading at once:
//    holdsLease() is computed from the steady time the last successful renewal
//    was sent, not from the loop, so a stuck or paused elector thread cannot
//    keep a replica assigning;
//  - on stop() a leader gives the lease up (no holderIdentity, duration 1 s),
//    as client-go's ReleaseOnCancel does: a lease without a holder is taken
//    at once, so a rolling upgrade hands over in one retryPeriod.
//
// placer adds: the leader writes the address followers forward to in the
// annotation placer.io/leader-address, and a takeover fence: a replica that
// takes the lease over from another holder assigns only once its pod watch
// has delivered every event up to the resourceVersion of its own takeover
// write (or retryPeriod later, when no pod event arrives to show it), so that
// what the old leader admitted is in its view (README, "More than one
// replica").
//
// Thread-safety: start() and stop() belong to one owning thread. While
// started, tryAcquireOrRenew() runs on the elector's own thread; tests that
// drive it by hand call it from one thread and never start(). mayAssign(),
// holdsLease(), leader(), decided() and identity() may be called from any
// thread at any time.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "scoring/result.h"
#include "webhook/kube/api_client.h"

namespace placer {

class Counter;
class Gauge;
class MetricsRegistry;

inline constexpr std::string_view kLeaderAddressAnnotation = "placer.io/leader-address";

// The Lease's spec as client-go's LeaderElectionRecord holds it. Times are
// the MicroTime text ("2026-11-26T17:35:05.123456Z"), kept as read.
struct LeaseRecord {
  std::string holderIdentity;
  int leaseDurationSeconds = 0;
  std::string acquireTime;
  std::string renewTime;
  int leaseTransitions = 0;
  bool operator==(const LeaseRecord&) const = default;
};

// RFC 3339 with microseconds, UTC, as metav1.MicroTime is written.
std::string formatMicroTime(std::chrono::system_clock::time_point t);

struct LeaderElectorOptions {
  std::string leaseNamespace;
  std::string leaseName = "placer";
  std::string identity;  // unique per process (client-go: hostname_uuid)
  std::string address;   // host:port followers forward to
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
  std::function<std::chrono::steady_clock::time_point()> clock = [] { return std::chrono::steady_clock::now(); };
  std::function<std::chrono::system_clock::time_point()> wallClock = [] { return std::chrono::system_clock::now(); };
  // Campaigning starts once this answers true (the view is synced): a leader
  // that cannot decide would only decline. Null: at once.
  std::function<bool()> readyToLead;
  // The takeover fence: true once the pod watch has delivered every event up
  // to resourceVersion `rv`. Null: the fence waits retryPeriod.
  std::function<bool(uint64_t rv)> viewReached;
  MetricsRegistry* metrics = nullptr;  // placer_leader, placer_leader_transitions_total; may be null
  uint64_t seed = 0;                   // jitter; 0: random
};

class LeaderElector {
 public:
  // `client` outlives the elector.
  LeaderElector(kube::ApiClient& client, LeaderElectorOptions options);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // The address published in placer.io/leader-address; before start() only
  // (the listener's port is known once it listens).
  void setAddress(std::string address) { options_.address = std::move(address); }
  void start();
  // Stops the loop; a leader releases the lease first when `release`.
  void stop(bool release = true);

  // One round of client-go's tryAcquireOrRenew: read the Lease (create it
  // when missing), and write it when this replica holds it or the holder's
  // lease expired by this replica's observation. True when this replica holds
  // the lease after the round.
  bool tryAcquireOrRenew();

  // This replica holds the lease by its own clock: it is leading and its last
  // successful renewal was sent less than renewDeadline ago.
  bool holdsLease() const;
  // holdsLease() and the takeover fence has cleared: admissions may assign.
  bool mayAssign() const;

  struct Leader {
    std::string identity;
    std::string address;
  };
  // Another replica that holds an unexpired lease (by this replica's
  // observation) and the address it published; nothing when there is none
  // or this replica holds the lease.
  std::optional<Leader> leader() const;
  // A first round has been made (the replica knows who leads, if anyone).
  bool decided() const { return decided_.load(); }
  const std::string& identity() const { return options_.identity; }

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  void run();
  bool release();
  bool round(bool rereadOnConflict);
  std::string leasePath() const;
  Result<kube::ApiResponse> readLease();
  void becameLeader(TimePoint sentAt, uint64_t rv, bool fence);
  void stoppedLeading(const char* why);
  void observeHolder(const std::string& holder);
  std::chrono::milliseconds nextWait();

  kube::ApiClient& client_;
  LeaderElectorOptions options_;
  kube::Connection connection_;
  std::string path_;
  Gauge* leaderGauge_ = nullptr;
  Counter* transitions_ = nullptr;

  // The loop thread's own.
  std::string lastHolderSeen_;  // the last non-empty holderIdentity read
  std::mt19937_64 random_;

  // Shared with readers.
  mutable std::mutex mutex_;
  LeaseRecord observed_;
  uint64_t observedRv_ = 0;
  TimePoint observedAt_{};
  std::string observedAddress_;
  std::atomic<bool> leading_{false};
  std::atomic<int64_t> renewedAtNs_{0};  // steady time the last successful write was sent
  mutable std::atomic<bool> fenceCleared_{false};
  uint64_t fenceRv_ = 0;                 // guarded by mutex_
  TimePoint fenceDeadline_{};            // guarded by mutex_
  std::atomic<bool> decided_{false};

  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace placer
