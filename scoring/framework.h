#pragma once
// The plugin framework, shaped like kube-scheduler's
// (pkg/scheduler/framework/interface.go): one base interface, one small
// interface per extension point; a plugin implements only what it needs.
//
// Plugins are immutable after construction and shared by every thread;
// per-decision data lives in CycleState. Plugin methods do no I/O and take no locks.

#include <cstdint>
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

class Status {
 public:
  Status() = default;
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}
  static Status success() { return {}; }
  static Status skip() { return Status(Code::Skip, std::vector<std::string>{}); }

  Code code() const { return code_; }
  bool isSuccess() const { return code_ == Code::Success; }
  bool isSkip() const { return code_ == Code::Skip; }
  bool isRejected() const { return code_ == Code::Unschedulable || code_ == Code::UnschedulableAndUnresolvable; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  // The plugin that produced a failure (set by the engine).
  std::string_view plugin() const { return plugin_; }
  void setPlugin(std::string_view plugin) { plugin_ = plugin; }

 private:
  Code code_ = Code::Success;
  std::vector<std::string> reasons_;
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
  std::vector<Entry> entries_;
};

struct NodeScore {
  uint32_t node;  // index into the candidate list the engine scores
  int64_t score;
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Returns Skip when Filter has nothing to check for this pod; a rejection
  // here makes every node unfeasible with that reason.
  virtual Status preFilter(CycleState& state, const Pod& pod, const ClusterView& view) const = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status filter(const CycleState& state, const Pod& pod, const NodeInfo& node) const = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Returns Skip when Score has nothing to score for this pod (every node gets 0).
  virtual Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const> feasible,
                          const ClusterView& view) const = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  virtual int64_t score(const CycleState& state, const Pod& pod, const NodeInfo& node) const = 0;
  // Optional ScoreExtensions.NormalizeScore; scores must end in [0, 100].
  virtual void normalizeScores(const CycleState& state, const Pod& pod, std::span<NodeScore> scores) const {}
};

// Upstream helper (framework/plugins/helper/normalize_score.go): scales so the
// maximum becomes maxPriority; reverse flips it. All zero stays zero (or max when reversed).
void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::span<NodeScore> scores);

}  // namespace placer
