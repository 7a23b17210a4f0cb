#pragma once
// The webhook listener's routes — POST /mutate (decided here, or forwarded to
// the leader when another replica leads), GET /healthz, GET /livez,
// GET /readyz, GET /metrics — and the timer that expires reservations whose pod never
// appeared. Metrics and the one-line-per-decision log live here; the decision
// itself is reviewAdmission() (webhook/admission.h).
//
// Thread-safety: the handlers returned by routes() run concurrently on the
// listener's workers, /mutate's relay functions on its I/O thread. ReservationSweeper's start()/stop() belong to one thread.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "webhook/cluster_feed.h"
#include "webhook/http_server.h"
#include "webhook/leader_election.h"
#include "webhook/metrics.h"
#include "webhook/placed_pods.h"

namespace placer {

using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

struct WebhookContext {
  std::shared_ptr<const Engine> engine;
  ClusterState* state = nullptr;      // outlives the routes
  PlacerSettings settings;
  const ClusterFeed* feed = nullptr;  // null: the view counts as synced
  MetricsRegistry* metrics = nullptr; // outlives the routes
  SteadyClock clock = [] { return std::chrono::steady_clock::now(); };
  PlacedPods* placed = nullptr;  // null: decisions are not followed (no Events, rejections not tied to them)
  // Several replicas: only the replica whose `leader` may assign decides; the
  // others relay each review to the leader (POST /mutate over TLS, with
  // `forwarding`'s name, CA, timeout and X-Placer-Forwarded-By header), or
  // answer it allowed unchanged (placer_forwarded_total{result}). `leader`
  // null: this replica assigns alone; it outlives the routes. `forwarding`
  // empty: followers do not forward (no CA to verify the leader with).
  const LeaderElector* leader = nullptr;
  std::optional<RelayOptions> forwarding;
};

// Marks a review a follower forwarded; its value is the follower's identity.
// A replica that receives one decides it or declines it, and never forwards
// it again (no loops while the replicas disagree about who leads).
inline constexpr std::string_view kForwardedByHeader = "X-Placer-Forwarded-By";

// Registers the view gauges (nodes, pods, reservations, synced) as a collector
// on the context's registry and returns the route table.
std::vector<Route> webhookRoutes(const WebhookContext& context);

// Calls MutableClusterView::expireReservations every `interval` and counts
// what expired in placer_reservations_expired_total. A tick with nothing to
// expire holds only the view's shared lock, so decisions go on meanwhile.
class ReservationSweeper {
 public:
  ReservationSweeper(ClusterState& state, MetricsRegistry& metrics, SteadyClock clock);
  ~ReservationSweeper();
  void start(std::chrono::milliseconds interval);
  void stop();
  // One sweep now; returns how many reservations expired.
  size_t sweep();

 private:
  ClusterState& state_;
  Counter& expired_;
  SteadyClock clock_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace placer
