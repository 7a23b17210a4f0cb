#include "webhook/leader_election.h"

#include <ctime>

#include <nlohmann/json.hpp>

#include "webhook/log.h"
#include "webhook/metrics.h"

namespace placer {
namespace {

using nlohmann::json;

int64_t toNs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
std::chrono::steady_clock::time_point fromNs(int64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

LeaseRecord recordFrom(const json& lease) {
  LeaseRecord r;
  const json* spec = lease.contains("spec") && lease["spec"].is_object() ? &lease["spec"] : nullptr;
  if (spec == nullptr) return r;
  auto text = [&](const char* key) {
    auto it = spec->find(key);
    return it != spec->end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto number = [&](const char* key) {
    auto it = spec->find(key);
    return it != spec->end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  r.holderIdentity = text("holderIdentity");
  r.leaseDurationSeconds = number("leaseDurationSeconds");
  r.acquireTime = text("acquireTime");
  r.renewTime = text("renewTime");
  r.leaseTransitions = number("leaseTransitions");
  return r;
}

json specFrom(const LeaseRecord& r) {
  json spec = json::object();
  if (!r.holderIdentity.empty()) spec["holderIdentity"] = r.holderIdentity;
  spec["leaseDurationSeconds"] = r.leaseDurationSeconds;
  if (!r.acquireTime.empty()) spec["acquireTime"] = r.acquireTime;
  if (!r.renewTime.empty()) spec["renewTime"] = r.renewTime;
  spec["leaseTransitions"] = r.leaseTransitions;
  return spec;
}

std::string annotationOf(const json& lease, std::string_view key) {
  const json* meta = lease.contains("metadata") && lease["metadata"].is_object() ? &lease["metadata"] : nullptr;
  if (meta == nullptr || !meta->contains("annotations") || !(*meta)["annotations"].is_object()) return {};
  auto it = (*meta)["annotations"].find(std::string(key));
  return it != (*meta)["annotations"].end() && it->is_string() ? it->get<std::string>() : std::string();
}

uint64_t resourceVersionOf(const json& lease) {
  try {
    return std::stoull(lease["metadata"].value("resourceVersion", "0"));
  } catch (const std::exception&) {
    return 0;  // opaque to us: the fence then waits its bound
  }
}

Result<json> parseObject(const std::string& body) {
  try {
    json object = json::parse(body);
    if (!object.is_object()) return Error{"lease: not a JSON object"};
    return object;
  } catch (const json::exception& e) {
    return Error{std::string("lease: ") + e.what()};
  }
}

}  // namespace

std::string formatMicroTime(std::chrono::system_clock::time_point t) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t seconds = std::time_t(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];  // room for any int the format could print
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, int(us % 1'000'000));
  return buf;
}

LeaderElector::LeaderElector(kube::ApiClient& client, LeaderElectorOptions options)
    : client_(client),
      options_(std::move(options)),
      connection_(client),
      path_("/apis/coordination.k8s.io/v1/namespaces/" + kube::urlEncode(options_.leaseNamespace) + "/leases"),
      random_(options_.seed != 0 ? options_.seed : std::random_device{}()) {
  if (options_.metrics != nullptr) {
    leaderGauge_ = &options_.metrics->gauge("placer_leader", "1 while this replica holds the Lease and may assign.");
    transitions_ = &options_.metrics->counter(
        "placer_leader_transitions_total",
        "Changes of the Lease's holder this replica saw or made (its own takeovers included).");
  }
}

LeaderElector::~LeaderElector() { stop(false); }

bool LeaderElector::tryAcquireOrRenew() { return round(true); }

std::string LeaderElector::leasePath() const { return path_ + "/" + kube::urlEncode(options_.leaseName); }

// GET of the Lease: the status, and the object when it is 200.
Result<kube::ApiResponse> LeaderElector::readLease() {
  std::string body;
  auto got = connection_.get(
      leasePath(),
      [&](std::string_view piece) -> Outcome {
        body.append(piece);
        return {};
      },
      options_.retryPeriod);
  if (got && got->status == 200) got->body = std::move(body);
  return got;
}

bool LeaderElector::round(bool rereadOnConflict) {
  const auto timeout = options_.retryPeriod;
  // A renewal counts from the moment it was begun: others observe it later.
  const TimePoint sentAt = options_.clock();
  const std::string target = leasePath();
  auto got = readLease();
  if (!got) {
    logEvent(LogLevel::Warning, "leader election: reading the lease failed", {{"error", got.error().message}});
    return holdsLease();
  }
  if (got->status == 401) client_.token().invalidate();
  const auto durationSeconds = int(std::chrono::ceil<std::chrono::seconds>(options_.leaseDuration).count());
  const std::string nowText = formatMicroTime(options_.wallClock());

  if (got->status == 404) {
    LeaseRecord record{options_.identity, durationSeconds, nowText, nowText, 0};
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata",
                   {{"name", options_.leaseName},
                    {"namespace", options_.leaseNamespace},
                    {"annotations", {{std::string(kLeaderAddressAnnotation), options_.address}}}}},
                  {"spec", specFrom(record)}};
    auto created = connection_.send("POST", path_, "application/json", lease.dump(), timeout);
    if (!created || (created->status != 200 && created->status != 201)) {
      // 409 AlreadyExists: another replica created it first; read it next round.
      logEvent(LogLevel::Info, "leader election: creating the lease failed",
               {{"status", created ? created->status : 0}, {"error", created ? "" : created.error().message}});
      return false;
    }
    auto object = parseObject(created->body);
    {
      std::lock_guard lock(mutex_);
      observed_ = record;
      observedAt_ = options_.clock();
      observedAddress_ = options_.address;
    }
    observeHolder(options_.identity);
    // A lease that did not exist had no leader before: nothing to wait for.
    becameLeader(sentAt, object ? resourceVersionOf(*object) : 0, false);
    return true;
  }
  if (got->status != 200) {
    logEvent(LogLevel::Warning, "leader election: reading the lease failed", {{"status", got->status}});
    return holdsLease();
  }
  auto object = parseObject(got->body);
  if (!object) {
    logEvent(LogLevel::Warning, "leader election: undecodable lease", {{"error", object.error().message}});
    return holdsLease();
  }
  const LeaseRecord old = recordFrom(*object);
  const TimePoint now = options_.clock();
  bool heldByOther = false;
  {
    std::lock_guard lock(mutex_);
    // A change is any write (client-go compares the record; the
    // resourceVersion also catches a renewal by a holder whose clock stands).
    const uint64_t rv = resourceVersionOf(*object);
    if (old != observed_ || rv != observedRv_) {
      observed_ = old;
      observedRv_ = rv;
      observedAt_ = now;
      observedAddress_ = annotationOf(*object, kLeaderAddressAnnotation);
    }
    heldByOther = !old.holderIdentity.empty() && old.holderIdentity != options_.identity &&
                  now < observedAt_ + std::chrono::seconds(old.leaseDurationSeconds);
  }
  observeHolder(old.holderIdentity);
  if (heldByOther) {
    if (leading_) stoppedLeading("the lease is held by another replica");
    return false;
  }

  const bool renewing = old.holderIdentity == options_.identity && leading_;
  LeaseRecord next{options_.identity, durationSeconds, nowText, nowText, old.leaseTransitions};
  if (old.holderIdentity == options_.identity) {
    next.acquireTime = old.acquireTime;
  } else {
    next.leaseTransitions = old.leaseTransitions + 1;
  }
  json lease = std::move(*object);
  lease["spec"] = specFrom(next);
  json& meta = lease["metadata"];
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) meta["annotations"] = json::object();
  meta["annotations"][std::string(kLeaderAddressAnnotation)] = options_.address;
  // metadata.resourceVersion stays as read: the write's precondition.
  auto written = connection_.send("PUT", target, "application/json", lease.dump(), timeout);
  if (!written) {
    logEvent(LogLevel::Warning, "leader election: writing the lease failed", {{"error", written.error().message}});
    return holdsLease();
  }
  if (written->status == 409) {
    // Someone wrote since we read: read again (once), never overwrite.
    if (rereadOnConflict) return round(false);
    return holdsLease();
  }
  if (written->status != 200) {
    logEvent(LogLevel::Warning, "leader election: writing the lease failed", {{"status", written->status}});
    return holdsLease();
  }
  auto stored = parseObject(written->body);
  {
    std::lock_guard lock(mutex_);
    observed_ = next;
    observedRv_ = stored ? resourceVersionOf(*stored) : 0;
    observedAt_ = options_.clock();
    observedAddress_ = options_.address;
  }
  observeHolder(options_.identity);
  if (renewing) {
    renewedAtNs_ = toNs(sentAt);
  } else {
    becameLeader(sentAt, stored ? resourceVersionOf(*stored) : 0, true);
  }
  return true;
}

void LeaderElector::becameLeader(TimePoint sentAt, uint64_t rv, bool fence) {
  {
    std::lock_guard lock(mutex_);
    fenceRv_ = rv;
    fenceDeadline_ = options_.clock() + options_.retryPeriod;
  }
  fenceCleared_ = !fence;
  renewedAtNs_ = toNs(sentAt);
  leading_ = true;
  if (leaderGauge_) leaderGauge_->set(1);
  logEvent(LogLevel::Info, "started leading",
           {{"identity", options_.identity}, {"address", options_.address}, {"fenceResourceVersion", fence ? rv : 0}});
}

void LeaderElector::stoppedLeading(const char* why) {
  if (!leading_.exchange(false)) return;
  if (leaderGauge_) leaderGauge_->set(0);
  logEvent(LogLevel::Warning, "stopped leading", {{"identity", options_.identity}, {"reason", why}});
}

void LeaderElector::observeHolder(const std::string& holder) {
  if (holder.empty() || holder == lastHolderSeen_) return;
  // The first holder seen counts only when it is this replica (it took a
  // lease nobody held); an existing leader found at start is no transition.
  if (transitions_ && (!lastHolderSeen_.empty() || holder == options_.identity)) transitions_->inc();
  if (holder != options_.identity)
    logEvent(LogLevel::Info, "new leader observed", {{"leader", holder}, {"identity", options_.identity}});
  lastHolderSeen_ = holder;
}

bool LeaderElector::holdsLease() const {
  return leading_ && options_.clock() < fromNs(renewedAtNs_) + options_.renewDeadline;
}

bool LeaderElector::mayAssign() const {
  if (!holdsLease()) return false;
  if (fenceCleared_) return true;
  std::lock_guard lock(mutex_);
  if ((options_.viewReached && fenceRv_ != 0 && options_.viewReached(fenceRv_)) ||
      options_.clock() >= fenceDeadline_) {
    fenceCleared_ = true;
    logEvent(LogLevel::Info, "takeover fence cleared", {{"identity", options_.identity}});
  }
  return fenceCleared_;
}

std::optional<LeaderElector::Leader> LeaderElector::leader() const {
  std::lock_guard lock(mutex_);
  if (observed_.holderIdentity.empty() || observed_.holderIdentity == options_.identity) return std::nullopt;
  if (options_.clock() >= observedAt_ + std::chrono::seconds(observed_.leaseDurationSeconds)) return std::nullopt;
  return Leader{observed_.holderIdentity, observedAddress_};
}

std::chrono::milliseconds LeaderElector::nextWait() {
  using std::chrono::milliseconds;
  if (leading_) return options_.retryPeriod;
  // client-go's wait.JitterUntil(retryPeriod, JitterFactor 1.2)...
  std::uniform_real_distribution<double> jitter(0.0, 1.2);
  auto wait = milliseconds(int64_t(double(options_.retryPeriod.count()) * (1.0 + jitter(random_))));
  // ...but never past the moment the observed lease expires, so a takeover
  // comes within a few ms of the expiry rather than up to 2.2 periods later.
  std::lock_guard lock(mutex_);
  if (!observed_.holderIdentity.empty() && observed_.holderIdentity != options_.identity) {
    auto expiry = observedAt_ + std::chrono::seconds(observed_.leaseDurationSeconds) + milliseconds(1);
    auto untilExpiry = std::chrono::ceil<milliseconds>(expiry - options_.clock());
    // (Past the expiry, a round that failed waits the jittered period again.)
    if (untilExpiry > milliseconds(0) && untilExpiry < wait) wait = untilExpiry;
  }
  return wait;
}

void LeaderElector::run() {
  const auto notReadyPoll = std::min<std::chrono::milliseconds>(options_.retryPeriod, std::chrono::milliseconds(200));
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    std::chrono::milliseconds wait = notReadyPoll;
    if (!options_.readyToLead || options_.readyToLead()) {
      lock.unlock();
      tryAcquireOrRenew();
      decided_ = true;
      if (leading_ && !holdsLease()) stoppedLeading("not renewed within the renew deadline");
      wait = nextWait();
      lock.lock();
    }
    wake_.wait_for(lock, wait, [this] { return stopping_; });
  }
}

void LeaderElector::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::stop(bool releaseLease) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (releaseLease && leading_) release();
  stoppedLeading("stopping");
}

bool LeaderElector::release() {
  // Stop assigning first, then hand the lease over.
  const bool held = holdsLease();
  stoppedLeading("releasing the lease");
  if (!held) return false;
  const std::string target = leasePath();
  auto got = readLease();
  if (!got || got->status != 200) return false;
  auto object = parseObject(got->body);
  if (!object) return false;
  const LeaseRecord old = recordFrom(*object);
  if (old.holderIdentity != options_.identity) return false;
  const std::string nowText = formatMicroTime(options_.wallClock());
  // client-go's release record: no holder, a 1 s lease, the transitions kept.
  LeaseRecord released{"", 1, nowText, nowText, old.leaseTransitions};
  json lease = std::move(*object);
  lease["spec"] = specFrom(released);
  if (lease["metadata"].contains("annotations") && lease["metadata"]["annotations"].is_object())
    lease["metadata"]["annotations"].erase(std::string(kLeaderAddressAnnotation));
  auto written = connection_.send("PUT", target, "application/json", lease.dump(), options_.retryPeriod);
  const bool ok = written && written->status == 200;
  logEvent(ok ? LogLevel::Info : LogLevel::Warning, "lease released", {{"ok", ok}});
  return ok;
}

}  // namespace placer
