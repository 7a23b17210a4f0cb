#pragma once
// The progress line of an initial sync: while a feed is not synced, every
// `interval` one log line with the objects listed so far per kind and the
// rate since start,
//   {"msg":"initial sync","nodes":5000,"pods":73000,"objectsPerSecond":39112}
// and one line when the view is complete,
//   {"msg":"initial sync complete","nodes":5000,"pods":150000,"seconds":3.9}
// A feed that reports no kinds (snapshot, demo) logs nothing.
//
// Thread-safety: constructed and destroyed on one thread; logs from its own.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "webhook/cluster_feed.h"

namespace placer {

class SyncProgressLog {
 public:
  // Starts reporting on `feed`, which must outlive this object.
  SyncProgressLog(const ClusterFeed& feed, std::chrono::milliseconds interval);
  ~SyncProgressLog();
  SyncProgressLog(const SyncProgressLog&) = delete;
  SyncProgressLog& operator=(const SyncProgressLog&) = delete;

  // Returns once the sync is complete (and its line logged) or `bound` passed;
  // true when complete.
  bool waitSynced(std::chrono::milliseconds bound);

 private:
  void run();

  const ClusterFeed& feed_;
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace placer
