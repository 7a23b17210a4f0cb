#include "webhook/sync_progress.h"

#include <algorithm>
#include <cmath>

#include "webhook/log.h"

namespace placer {
namespace {

// How often the thread looks whether the sync is complete, between lines.
constexpr auto kPoll = std::chrono::milliseconds(20);

}  // namespace

SyncProgressLog::SyncProgressLog(const ClusterFeed& feed, std::chrono::milliseconds interval)
    : feed_(feed), interval_(interval), thread_([this] { run(); }) {}

SyncProgressLog::~SyncProgressLog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool SyncProgressLog::waitSynced(std::chrono::milliseconds bound) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, bound, [this] { return done_; });
}

void SyncProgressLog::run() {
  const auto started = std::chrono::steady_clock::now();
  auto nextLine = started + interval_;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const bool synced = feed_.synced();
    const auto kinds = feed_.syncProgress();
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - started).count();
    nlohmann::json fields = nlohmann::json::object();
    uint64_t total = 0;
    for (const ClusterFeed::KindProgress& k : kinds) {
      fields[k.name] = k.listed;
      total += k.listed;
    }
    if (synced) {
      if (!kinds.empty()) {
        fields["seconds"] = std::round(seconds * 10) / 10;
        logEvent(LogLevel::Info, "initial sync complete", fields);
      }
      lock.lock();
      done_ = true;
      wake_.notify_all();
      return;
    }
    if (now >= nextLine && !kinds.empty()) {
      fields["objectsPerSecond"] = std::llround(double(total) / std::max(seconds, 1e-3));
      logEvent(LogLevel::Info, "initial sync", fields);
      nextLine = now + interval_;
    }
    lock.lock();
    wake_.wait_for(lock, kPoll, [this] { return stopping_; });
  }
}

}  // namespace placer
