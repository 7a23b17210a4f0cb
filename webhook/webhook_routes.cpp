#include "webhook/webhook_routes.h"

#include <mutex>

#include <nlohmann/json.hpp>

#include "webhook/admission.h"
#include "webhook/json_text.h"
#include "webhook/log.h"

namespace placer {
namespace {

struct AdmissionMetrics {
  Counter* outcomes[4];  // Assigned, Fallback, Skipped, Error
  Counter* badRequests;
  Histogram* latency;

  explicit AdmissionMetrics(MetricsRegistry& m) {
    const char* help = "Admission reviews answered, by outcome.";
    for (AdmissionOutcome o : {AdmissionOutcome::Assigned, AdmissionOutcome::Fallback, AdmissionOutcome::Skipped,
                               AdmissionOutcome::Error})
      outcomes[int(o)] = &m.counter("placer_admissions_total", help, {{"outcome", std::string(toString(o))}});
    badRequests = &m.counter("placer_admission_bad_requests_total",
                             "Requests to /mutate that were not an AdmissionReview (HTTP 400).");
    latency = &m.histogram("placer_admission_duration_seconds",
                           "Time to answer an AdmissionReview: decode, decide, reserve, encode.", latencyBuckets());
  }
};

// What a replica that may not assign does with a review.
enum class ForwardResult { Forwarded, Failed, NoLeader, Declined };
struct ForwardMetrics {
  Counter* results[4];
  explicit ForwardMetrics(MetricsRegistry& m) {
    const char* help =
        "Reviews this replica did not decide because another replica leads: forwarded (the leader answered), "
        "failed (forwarding failed; allowed unchanged), no_leader (no leader known, or this replica is still "
        "taking over; allowed unchanged), declined (a forwarded review reached a replica that may not assign; "
        "allowed unchanged).";
    const char* names[] = {"forwarded", "failed", "no_leader", "declined"};
    for (int i = 0; i < 4; ++i) results[i] = &m.counter("placer_forwarded_total", help, {{"result", names[i]}});
  }
};

struct MutateRoute {
  WebhookContext context;
  AdmissionMetrics metrics;
  ForwardMetrics forwarded;

  HttpResponse operator()(const HttpRequest& request) const {
    if (context.leader != nullptr && !context.leader->mayAssign()) return decline(request);
    return decide(request);
  }

  // On the I/O thread: where a follower relays a review, or "" to decide it
  // here (the leader) or decline it (no leader known, or forwarded already:
  // a review is forwarded once, never again).
  std::string leaderAddress(const HttpRequest& request) const {
    if (context.leader == nullptr || !request.forwardedBy.empty() || context.leader->mayAssign()) return "";
    auto leader = context.leader->leader();
    return leader ? leader->address : "";
  }

  // On the I/O thread: the leader's answer, or allowed unchanged when the
  // forward failed.
  HttpResponse relayed(const HttpRequest& request, Result<std::string> answer) const {
    if (!answer) return decline(request, ForwardResult::Failed, answer.error().message);
    forwarded.results[int(ForwardResult::Forwarded)]->inc();
    return HttpResponse::json(200, std::move(*answer));
  }

  // A replica that may not assign and did not forward.
  HttpResponse decline(const HttpRequest& request) const {
    return decline(request, request.forwardedBy.empty() ? ForwardResult::NoLeader : ForwardResult::Declined, "");
  }

  HttpResponse decline(const HttpRequest& request, ForwardResult result, const std::string& error) const {
    forwarded.results[int(result)]->inc();
    if (!error.empty()) logEvent(LogLevel::Warning, "forwarding to the leader failed", {{"error", error}});
    return shed(request);
  }

  HttpResponse decide(const HttpRequest& request) const {
    auto started = std::chrono::steady_clock::now();
    AdmissionInput input{*context.engine, *context.state, context.settings, context.clock(),
                         context.feed == nullptr || context.feed->synced()};
    AdmissionAnswer answer = reviewAdmission(request.body, input);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (answer.outcome == AdmissionOutcome::BadRequest) {
      metrics.badRequests->inc();
      logEvent(LogLevel::Warning, "bad admission request", {{"error", answer.reason}});
      return HttpResponse::text(answer.httpStatus, std::move(answer.body));
    }
    metrics.outcomes[int(answer.outcome)]->inc();
    metrics.latency->observe(seconds);
    if (context.placed != nullptr && !answer.dryRun) {
      if (answer.outcome == AdmissionOutcome::Assigned && answer.reserved)
        context.placed->assigned(answer.reservation, answer.pod, answer.node, answer.accounting);
      else if (answer.outcome == AdmissionOutcome::Fallback)
        context.placed->declined(answer.pod, summarize(answer.reason));
    }

    // One line per decision, fields in the order a JSON object sorts them.
    std::string fields;
    fields.reserve(256 + answer.reason.size());
    auto key = [&](std::string_view k) {
      if (!fields.empty()) fields += ',';
      appendJsonString(fields, k);
      fields += ':';
    };
    if (answer.dryRun) key("dryRun"), fields += "true";
    key("durationUs"), appendJsonInt(fields, int64_t(seconds * 1e6));
    if (answer.nodeCount > 0) key("feasible"), appendJsonInt(fields, int64_t(answer.feasibleCount));
    if (!answer.node.empty()) key("node"), appendJsonString(fields, answer.node);
    if (answer.nodeCount > 0) key("nodes"), appendJsonInt(fields, int64_t(answer.nodeCount));
    key("outcome"), appendJsonString(fields, toString(answer.outcome));
    key("pod"), appendJsonString(fields, answer.pod);
    if (!answer.reason.empty()) key("reason"), appendJsonString(fields, answer.reason);
    if (!answer.node.empty()) key("score"), appendJsonInt(fields, answer.score);
    key("uid"), appendJsonString(fields, answer.uid);
    logEventFields(answer.outcome == AdmissionOutcome::Error ? LogLevel::Warning : LogLevel::Info, "admission", fields);
    return HttpResponse::json(200, std::move(answer.body));
  }

  // Every worker busy and the queue full: allowed unchanged, at once.
  HttpResponse shed(const HttpRequest& request) const {
    AdmissionAnswer answer = shedAdmission(request.body);
    if (answer.outcome == AdmissionOutcome::BadRequest) {
      metrics.badRequests->inc();
      return HttpResponse::text(answer.httpStatus, std::move(answer.body));
    }
    return HttpResponse::json(200, std::move(answer.body));
  }
};

}  // namespace

std::vector<Route> webhookRoutes(const WebhookContext& context) {
  MetricsRegistry& m = *context.metrics;
  Gauge& nodes = m.gauge("placer_nodes_in_view", "Nodes in placer's view of the cluster.");
  Gauge& pods = m.gauge("placer_pods_in_view", "Bound pods counted in placer's view of the cluster.");
  Gauge& reservations = m.gauge("placer_reservations_active", "Reservations waiting for their pod to appear.");
  Gauge& synced = m.gauge("placer_view_synced", "1 when the cluster view is complete, else 0.");
  Gauge& nominated = m.gauge("placer_nominated_pods",
                             "Pending pods nominated to a node by preemption (status.nominatedNodeName), counted there "
                             "for pods of lower or equal priority.");
  ClusterState* state = context.state;
  const ClusterFeed* feed = context.feed;
  m.addCollector([=, &nodes, &pods, &reservations, &synced, &nominated] {
    state->update([&](MutableClusterView& view) {
      nodes.set(double(view.nodes().size()));
      pods.set(double(view.podCount()));
      reservations.set(double(view.reservationCount()));
      size_t nominees = 0;
      for (const auto& [node, list] : view.nominatedPods()) nominees += list.size();
      nominated.set(double(nominees));
    });
    synced.set(feed == nullptr || feed->synced() ? 1 : 0);
  });

  if (context.engine && context.engine->cache() != nullptr) {
    // Counters mirror the cache's own counts when scraped.
    constexpr std::string_view kName = "placer_decision_cache_lookups_total";
    constexpr std::string_view kHelp =
        "Decisions by what the engine's decision cache held for their pod: hit (results reused, recomputed only "
        "on nodes that changed), miss (computed in full and kept), bypass (computed without it: every entry in use, "
        "or a new pod shape not admitted while every entry holds current results).";
    Counter& hits = m.counter(kName, kHelp, {{"result", "hit"}});
    Counter& misses = m.counter(kName, kHelp, {{"result", "miss"}});
    Counter& bypassed = m.counter(kName, kHelp, {{"result", "bypass"}});
    auto scrapes = std::make_shared<std::mutex>();  // two scrapes at once must not add a difference twice
    m.addCollector([engine = context.engine, scrapes, &hits, &misses, &bypassed] {
      std::lock_guard lock(*scrapes);
      const DecisionCache::Stats stats = engine->cache()->stats();
      hits.inc(stats.hits - hits.value());
      misses.inc(stats.misses - misses.value());
      bypassed.inc(stats.bypassed - bypassed.value());
    });
  }

  auto mutate = std::make_shared<MutateRoute>(MutateRoute{context, AdmissionMetrics(m), ForwardMetrics(m)});
  const LeaderElector* leader = context.leader;
  MetricsRegistry* metrics = context.metrics;
  // Probes are answered even when the queue is full (a failed liveness probe
  // restarts placer): they are cheap enough for the I/O thread.
  RouteHandler healthz = [](const HttpRequest&) { return HttpResponse::text(200, "ok\n"); };
  // Every replica with a synced view is Ready (followers forward), once it
  // knows who leads.
  RouteHandler readyz = [feed, leader](const HttpRequest&) {
    if (feed != nullptr && !feed->synced()) return HttpResponse::text(503, "cluster view not synced yet\n");
    if (leader != nullptr && !leader->decided()) return HttpResponse::text(503, "leader election: first round pending\n");
    return HttpResponse::text(200, "ok\n");
  };
  Route mutateRoute{"POST", "/mutate", [mutate](const HttpRequest& r) { return (*mutate)(r); },
                    [mutate](const HttpRequest& r) { return mutate->shed(r); }};
  if (context.leader != nullptr && context.forwarding) {
    mutateRoute.relay = std::make_shared<const Route::Relay>(Route::Relay{
        *context.forwarding, [mutate](const HttpRequest& r) { return mutate->leaderAddress(r); },
        [mutate](const HttpRequest& r, Result<std::string> answer) { return mutate->relayed(r, std::move(answer)); }});
  }
  return {
      std::move(mutateRoute),
      Route{"GET", "/healthz", healthz, healthz},
      // Liveness: the process serves requests. Never tied to the API server or
      // the view, since a restart would bring neither back.
      Route{"GET", "/livez", healthz, healthz},
      Route{"GET", "/readyz", readyz, readyz},
      Route{"GET", "/metrics",
            [metrics](const HttpRequest&) {
              return HttpResponse{200, std::string(kPrometheusContentType), metrics->render(), {}};
            }},
  };
}

ReservationSweeper::ReservationSweeper(ClusterState& state, MetricsRegistry& metrics, SteadyClock clock)
    : state_(state),
      expired_(metrics.counter("placer_reservations_expired_total",
                               "Reservations released because their pod did not appear in time.")),
      clock_(std::move(clock)) {}

ReservationSweeper::~ReservationSweeper() { stop(); }

size_t ReservationSweeper::sweep() {
  auto now = clock_();
  // Most ticks find nothing expired: they look under the shared lock only.
  if (!state_.readForDecision([&](const MutableClusterView& view) { return view.anyReservationExpired(now); }))
    return 0;
  size_t n = state_.update([&](MutableClusterView& view) { return view.expireReservations(now); });
  if (n > 0) {
    expired_.inc(n);
    logEvent(LogLevel::Info, "reservations expired", {{"count", n}});
  }
  return n;
}

void ReservationSweeper::start(std::chrono::milliseconds interval) {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      sweep();
      lock.lock();
    }
  });
}

void ReservationSweeper::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace placer
