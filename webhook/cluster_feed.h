#pragma once
// A source that fills a ClusterState: the live API server (list + watch, see
// webhook/kube/), a snapshot file (`placer serve --cluster-file`), or the
// built-in demo cluster (`placer serve --demo`).
//
// The server asks synced() before every admission and for /readyz: a decision
// made on an incomplete view could overcommit a node, so until the view is
// complete every pod is left to kube-scheduler.
//
// Thread-safety: start() and stop() are called from one thread (the serve
// command), once each, in that order; synced() may be called from any thread at
// any time, also before start() and after stop(). A feed writes the state it was
// given only through ClusterState's own (thread-safe) methods.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/result.h"

namespace placer {

class MetricsRegistry;

// Sees every pod a live feed decodes (listed or delivered by the watch, also
// the last state of one that leaves it: deleted, or turned terminal), on
// the feed's threads, before the view applies it. Must be quick and must not
// block: it runs inside the watch's loop. Safe to call from several threads.
class PodObserver {
 public:
  virtual ~PodObserver() = default;
  virtual void observed(const Pod& pod) = 0;
};

class ClusterFeed {
 public:
  virtual ~ClusterFeed() = default;

  // Begins filling `state`, which outlives the feed. Returns quickly: a live
  // feed lists and watches on its own threads. An error means the feed cannot
  // run at all (bad credentials file, unreadable snapshot).
  virtual Outcome start(ClusterState& state) = 0;
  // Stops filling the state and joins the feed's threads. Idempotent.
  virtual void stop() = 0;
  // True once the view is complete (for a live feed: the initial lists of nodes
  // and pods are applied), false again while a watch is being re-established
  // from scratch if the feed cannot guarantee completeness then.
  virtual bool synced() const = 0;
  // One line for logs: "snapshot /path/file.json", "demo", "api https://...".
  virtual std::string describe() const = 0;

  // How far the lists have come, kind by kind, for a progress line while the
  // view syncs. A feed that loads at once reports nothing. Any thread.
  struct KindProgress {
    std::string name;     // "nodes", "pods", ...
    uint64_t listed = 0;  // objects received in lists since start
    bool complete = false;  // the first complete list is applied
  };
  virtual std::vector<KindProgress> syncProgress() const { return {}; }
};

// A snapshot file as DESIGN.md describes, streamed in at start() with the checks
// of scoring/snapshot.h; synced() once loaded. "pod" and "config" go unused.
std::unique_ptr<ClusterFeed> makeSnapshotFeed(std::string path);

// The built-in example cluster of `placer serve --demo` (webhook/demo_cluster.h).
std::unique_ptr<ClusterFeed> makeDemoFeed();

// ---------------------------------------------------------------------------
// The live API feed. Implemented by the API client (webhook/kube/); the
// definition lives in webhook/api_feed_factory.cpp, which until then answers
// with an error so that `placer serve` without --cluster-file/--demo exits 2.
struct ApiFeedOptions {
  std::string kubeconfigPath;     // empty: in-cluster credentials
  MetricsRegistry* metrics = nullptr;  // may be null; outlives the feed
  PodObserver* podObserver = nullptr;  // may be null; outlives the feed
};
Result<std::unique_ptr<ClusterFeed>> makeApiFeed(const ApiFeedOptions& options);

}  // namespace placer
