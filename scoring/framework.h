#pragma once
// The plugin framework, shaped like kube-scheduler's
// (pkg/scheduler/framework/interface.go): one base interface, one small
// interface per extension point; a plugin implements only what it needs.
//
// Plugins are immutable after construction and shared by every thread;
// per-decision data lives in CycleState. Plugin methods do no I/O and take no locks.

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/model.h"

namespace placer {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

enum class Code : uint8_t {
  Success,
  Unschedulable,                 // preemption might help
  UnschedulableAndUnresolvable,  // preemption would not help
  Error,
  Skip,                          // PreFilter/PreScore: the plugin has nothing to do for this pod
};
std::string_view toString(Code code);

// The reasons of a Status: immutable and shared, so that copying a Status (or
// keeping the same rejection for thousands of nodes) never allocates.
class Reasons {
 public:
  Reasons() = default;
  explicit Reasons(std::vector<std::string> reasons)
      : list_(reasons.empty() ? nullptr : std::make_shared<const std::vector<std::string>>(std::move(reasons))) {}

  const std::vector<std::string>& list() const { return list_ ? *list_ : none(); }
  operator const std::vector<std::string>&() const { return list(); }  // NOLINT: reads like the list it is
  auto begin() const { return list().begin(); }
  auto end() const { return list().end(); }
  size_t size() const { return list().size(); }
  bool empty() const { return list().empty(); }
  const std::string& operator[](size_t i) const { return list()[i]; }
  // Equal for copies of the same Reasons: the engine counts repeated rejections by it.
  const void* identity() const { return list_.get(); }

  friend bool operator==(const Reasons& a, const Reasons& b) { return a.list() == b.list(); }
  friend bool operator==(const Reasons& a, const std::vector<std::string>& b) { return a.list() == b; }

 private:
  static const std::vector<std::string>& none() {
    static const std::vector<std::string> none;
    return none;
  }
  std::shared_ptr<const std::vector<std::string>> list_;
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string reason) : code_(code), reasons_(std::vector<std::string>{std::move(reason)}) {}
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}
  Status(Code code, Reasons reasons) : code_(code), reasons_(std::move(reasons)) {}
  static Status success() { return {}; }
  static Status skip() { return Status(Code::Skip, Reasons()); }

  Code code() const { return code_; }
  bool isSuccess() const { return code_ == Code::Success; }
  bool isSkip() const { return code_ == Code::Skip; }
  bool isRejected() const { return code_ == Code::Unschedulable || code_ == Code::UnschedulableAndUnresolvable; }
  const std::vector<std::string>& reasons() const { return reasons_.list(); }
  const Reasons& sharedReasons() const { return reasons_; }
  // The plugin that produced a failure (set by the engine).
  std::string_view plugin() const { return plugin_; }
  void setPlugin(std::string_view plugin) { plugin_ = plugin; }

 private:
  Code code_ = Code::Success;
  Reasons reasons_;
  std::string_view plugin_;  // points at a plugin's static name
};

// Per-decision scratch space, keyed by plugin name. Written in PreFilter /
// PreScore, read in Filter / Score. Not shared between threads.
struct StateData {
  virtual ~StateData() = default;
};

//
// read() runs once per node per plugin, so it is a short scan rather than a
// hash lookup: keys are the plugins' static constants, so the same key is
// nearly always the same pointer, and addresses are compared before contents.
// Keys must outlive the CycleState (string literals / static constants).
class CycleState {
 public:
  void write(std::string_view key, std::unique_ptr<StateData> data) {
    for (Entry& e : entries_) {
      if (e.key == key) {
        e.data = std::move(data);
        return;
      }
    }
    entries_.push_back(Entry{key, std::move(data)});
  }
  // Per-decision memo a plugin fills as it goes (say, one Status per distinct
  // rejection), kept across the engine's calls within one decision. A decision
  // runs on one thread, so this is safe although the state is otherwise read-only.
  template <class T>
  T& memo(std::string_view key) const {
    if (const T* found = read<T>(key)) return const_cast<T&>(*found);
    auto data = std::make_unique<T>();
    T& out = *data;
    entries_.push_back(Entry{key, std::move(data)});
    return out;
  }
  template <class T>
  const T* read(std::string_view key) const {
    for (const Entry& e : entries_)
      if (e.key.data() == key.data() && e.key.size() == key.size()) return static_cast<const T*>(e.data.get());
    for (const Entry& e : entries_)
      if (e.key == key) return static_cast<const T*>(e.data.get());
    return nullptr;
  }

 private:
  struct Entry {
    std::string_view key;
    std::unique_ptr<StateData> data;
  };
  mutable std::vector<Entry> entries_;
};

// A node's accounting (NodeInfo::requested, nonZeroRequested, podCount,
// usedPorts) changes under concurrent reservations (see AccountingStripes):
// plugins read it only in Filter and Score, where the engine holds it still
// for the nodes it passes them. PreFilter and PreScore read the rest of the
// view (labels, taints, images, pods), which holds still for the whole decision.
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // Whether the engine may keep this plugin's results for a pod and reuse them
  // for a pod that schedules the same way (scoring/decision_cache.h), running
  // it again only on nodes that changed. True only when PreFilter and PreScore
  // read nothing but the pod and the view's node set, labels, taints, images
  // and cordons, and Filter and Score for a node read nothing but the pod, the
  // cycle state and that node (its fields and accounting): not other pods of
  // the view (pod affinity, topology spread), not other nodes' accounting.
  // Reads of the pod stay within its Shape fields (scoring/pod_fields.h: no
  // labels, no name).
  virtual bool resultsReusable() const { return false; }
  // Whether Filter or Score reads a node's accounting (NodeInfo::requested,
  // nonZeroRequested, podCount, usedPorts). The engine holds the accounting
  // of the nodes it passes still only around the plugins that do (all but
  // those that say otherwise): a decision from the decision cache, whose
  // plugins that remain read only their cycle state and the nodes' labels,
  // takes no accounting lock.
  virtual bool readsAccounting() const { return true; }
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Returns Skip when Filter has nothing to check for this pod; a rejection
  // here makes every node unfeasible with that reason.
  virtual Status preFilter(CycleState& state, const Pod& pod, const ClusterView& view) const = 0;
};

// Where FilterPlugin::filterAll reports the nodes it rejects.
class FilterSink {
 public:
  // nodes[index] fails with status (not success). Indices must increase.
  void reject(uint32_t index, Status status) {
    owned_.push_back(std::move(status));
    rejected_.emplace_back(index, &owned_.back());
  }
  // The same with a Status that stays put until the decision ends (a static,
  // or one memoised in the CycleState at a stable address): nothing is copied,
  // not even a reference count that other threads' decisions share.
  void rejectWith(uint32_t index, const Status& status) { rejected_.emplace_back(index, &status); }

  const std::vector<std::pair<uint32_t, const Status*>>& rejected() const { return rejected_; }
  void clear() {
    rejected_.clear();
    owned_.clear();
  }

 private:
  std::vector<std::pair<uint32_t, const Status*>> rejected_;
  std::deque<Status> owned_;  // a deque: the pointers above stay valid as it grows
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status filter(const CycleState& state, const Pod& pod, const NodeInfo& node) const = 0;
  // Filter over many nodes at once, reporting each rejection to the sink in
  // node order; what the engine calls. The default calls filter() per node;
  // plugins override it to read their cycle state once and loop tightly, and
  // must answer exactly as filter() would.
  virtual void filterAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                         FilterSink& sink) const {
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status status = filter(state, pod, *nodes[i]);
      if (!status.isSuccess()) sink.reject(static_cast<uint32_t>(i), std::move(status));
    }
  }
};

// PreFilterExtensions.AddPod (kube-scheduler's), for the first filter pass on
// a node that holds nominated pods of priority >= the incoming pod's
// (RunFilterPluginsWithNominatedPods / addGENominatedPods): a plugin whose
// PreFilter state counts other pods says how that state reads with those pods
// counted on the node as if they were bound there. A plugin whose PreFilter
// skipped has no state and is not asked (upstream skips it too).
class PreFilterExtensions : public virtual Plugin {
 public:
  // Writes to `out`, under the key this plugin's Filter reads, a copy of the
  // state its PreFilter wrote to `state`, with each of `added` counted on
  // `node` as AddPod counts a pod; false, writing nothing, when PreFilter
  // wrote no state. `state` is not changed.
  virtual bool addNominatedPods(const CycleState& state, const Pod& pod, std::span<const NominatedPod* const> added,
                                const NodeInfo& node, const ClusterView& view, CycleState& out) const = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Returns Skip when Score has nothing to score for this pod (every node gets 0).
  virtual Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const> feasible,
                          const ClusterView& view) const = 0;
  // Whether preScore() reads `feasible`. When no plugin of a profile does, the
  // engine may run PreScore before filtering ends (passing an empty list) and
  // score each batch of nodes as soon as it is filtered.
  virtual bool preScoreReadsFeasibleNodes() const { return true; }
};

class ScorePlugin : public virtual Plugin {
 public:
  virtual int64_t score(const CycleState& state, const Pod& pod, const NodeInfo& node) const = 0;
  // score() for many nodes: out[i] = score of nodes[i]. What the engine calls;
  // the default calls score() per node, overrides must answer the same.
  virtual void scoreAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                        std::span<int64_t> out) const {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = score(state, pod, *nodes[i]);
  }
  // Optional ScoreExtensions.NormalizeScore; scores must end in [0, 100].
  // scores[i] belongs to the i-th node scored.
  virtual void normalizeScores(const CycleState& state, const Pod& pod, std::span<int64_t> scores) const {}
  // For a plugin whose PreScore scores the feasible list it is given: when
  // `nodes` is that list (the same span, its nodes unchanged since), writes
  // to `out` what scoreAll() over it followed by normalizeScores() would, and
  // returns true; reads no node's accounting. Otherwise false, writing
  // nothing. The engine asks this first and calls the other two only on false.
  virtual bool normalizedScoresOfFeasible(const CycleState& state, const Pod& pod,
                                          std::span<const NodeInfo* const> nodes, std::span<int64_t> out) const {
    return false;
  }
};

// Upstream helper (framework/plugins/helper/normalize_score.go): scales so the
// maximum becomes maxPriority; reverse flips it. All zero stays zero (or max when reversed).
void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::span<int64_t> scores);

}  // namespace placer
