#pragma once
// A scriptable plugin for engine and profile tests, configured through its
// pluginConfig args exactly as a real plugin is:
//   { "preFilter": "" | "skip" | "reject" | "unresolvable" | "error",
//     "preFilterReason": "why",
//     "reject":  { "<node>": "reason", ... },   Filter: Unschedulable on these nodes
//     "unresolvable": { "<node>": "reason" },  Filter: UnschedulableAndUnresolvable
//     "error": { "<node>": "message" },        Filter: Error
//     "preScore": "" | "skip" | "error",
//     "scores": { "<node>": n },               Score (nodes not listed: 0)
//     "normalize": "none" | "default" | "reverse" | "invalid" }
// fakeRegistry() registers it under several names, each implementing the
// extension points its name says (PreFilterFilter, Filter, Score, PreScoreScore, All...).
// Header-only.

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "scoring/framework.h"
#include "scoring/registry.h"

namespace placer::test {

struct FakeScript {
  std::string name;
  std::string preFilter;
  std::string preFilterReason = "prefilter says no";
  std::map<std::string, std::pair<Code, std::string>> filter;
  std::string preScore;
  std::map<std::string, int64_t> scores;
  std::string normalize = "none";
  bool reusable = false;  // Plugin::resultsReusable(): the decision cache may keep its results

  static Result<FakeScript> decode(std::string name, const nlohmann::json& args) {
    FakeScript s;
    s.name = std::move(name);
    if (args.is_null()) return s;
    if (!args.is_object()) return Error{"FakeArgs: must be an object"};
    try {
      for (const auto& [key, value] : args.items()) {
        if (key == "preFilter") s.preFilter = value.get<std::string>();
        else if (key == "preFilterReason") s.preFilterReason = value.get<std::string>();
        else if (key == "reject" || key == "unresolvable" || key == "error") {
          Code code = key == "reject" ? Code::Unschedulable
                      : key == "unresolvable" ? Code::UnschedulableAndUnresolvable : Code::Error;
          for (const auto& [node, reason] : value.items()) s.filter[node] = {code, reason.get<std::string>()};
        } else if (key == "preScore") s.preScore = value.get<std::string>();
        else if (key == "scores") {
          for (const auto& [node, score] : value.items()) s.scores[node] = score.get<int64_t>();
        } else if (key == "normalize") s.normalize = value.get<std::string>();
        else if (key == "reusable") s.reusable = value.get<bool>();
        else return Error{"FakeArgs." + key + ": unknown field"};
      }
    } catch (const std::exception& e) {
      return Error{std::string("FakeArgs: ") + e.what()};
    }
    return s;
  }
};

class FakeBase : public virtual Plugin {
 public:
  explicit FakeBase(FakeScript script) : script_(std::move(script)) {}
  std::string_view name() const override { return script_.name; }
  bool resultsReusable() const override { return script_.reusable; }

 protected:
  Status doPreFilter() const {
    const std::string& p = script_.preFilter;
    if (p == "skip") return Status::skip();
    if (p == "reject") return Status(Code::Unschedulable, script_.preFilterReason);
    if (p == "unresolvable") return Status(Code::UnschedulableAndUnresolvable, script_.preFilterReason);
    if (p == "error") return Status(Code::Error, script_.preFilterReason);
    return Status::success();
  }
  Status doFilter(const NodeInfo& node) const {
    auto it = script_.filter.find(node.name());
    if (it == script_.filter.end()) return Status::success();
    return Status(it->second.first, it->second.second);
  }
  Status doPreScore() const {
    if (script_.preScore == "skip") return Status::skip();
    if (script_.preScore == "error") return Status(Code::Error, "prescore failed");
    return Status::success();
  }
  int64_t doScore(const NodeInfo& node) const {
    auto it = script_.scores.find(node.name());
    return it == script_.scores.end() ? 0 : it->second;
  }
  void doNormalize(std::span<int64_t> scores) const {
    if (script_.normalize == "default") defaultNormalizeScore(kMaxNodeScore, false, scores);
    if (script_.normalize == "reverse") defaultNormalizeScore(kMaxNodeScore, true, scores);
    if (script_.normalize == "invalid")
      for (int64_t& s : scores) s = 101;
  }
  FakeScript script_;
};

class FakeFilter final : public FilterPlugin, public FakeBase {
 public:
  using FakeBase::FakeBase;
  std::string_view name() const override { return FakeBase::name(); }
  Status filter(const CycleState&, const Pod&, const NodeInfo& node) const override { return doFilter(node); }
};

class FakePreFilterFilter final : public PreFilterPlugin, public FilterPlugin, public FakeBase {
 public:
  using FakeBase::FakeBase;
  std::string_view name() const override { return FakeBase::name(); }
  Status preFilter(CycleState&, const Pod&, const ClusterView&) const override { return doPreFilter(); }
  Status filter(const CycleState&, const Pod&, const NodeInfo& node) const override { return doFilter(node); }
};

class FakeScore final : public ScorePlugin, public FakeBase {
 public:
  using FakeBase::FakeBase;
  std::string_view name() const override { return FakeBase::name(); }
  int64_t score(const CycleState&, const Pod&, const NodeInfo& node) const override { return doScore(node); }
  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    doNormalize(scores);
  }
};

class FakePreScoreScore final : public PreScorePlugin, public ScorePlugin, public FakeBase {
 public:
  using FakeBase::FakeBase;
  std::string_view name() const override { return FakeBase::name(); }
  Status preScore(CycleState&, const Pod&, std::span<const NodeInfo* const>, const ClusterView&) const override {
    return doPreScore();
  }
  int64_t score(const CycleState&, const Pod&, const NodeInfo& node) const override { return doScore(node); }
  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    doNormalize(scores);
  }
};

class FakeAll final : public PreFilterPlugin, public FilterPlugin, public PreScorePlugin, public ScorePlugin,
                      public FakeBase {
 public:
  using FakeBase::FakeBase;
  std::string_view name() const override { return FakeBase::name(); }
  Status preFilter(CycleState&, const Pod&, const ClusterView&) const override { return doPreFilter(); }
  Status filter(const CycleState&, const Pod&, const NodeInfo& node) const override { return doFilter(node); }
  Status preScore(CycleState&, const Pod&, std::span<const NodeInfo* const>, const ClusterView&) const override {
    return doPreScore();
  }
  int64_t score(const CycleState&, const Pod&, const NodeInfo& node) const override { return doScore(node); }
  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    doNormalize(scores);
  }
};

template <class T>
PluginFactory fakeFactory(std::string name) {
  return [name](const nlohmann::json& args) -> Result<std::unique_ptr<Plugin>> {
    auto script = FakeScript::decode(name, args);
    if (!script) return script.error();
    return std::unique_ptr<Plugin>(std::make_unique<T>(std::move(*script)));
  };
}

inline const PluginRegistry& fakeRegistry() {
  static const PluginRegistry registry = {
      {"FilterA", fakeFactory<FakeFilter>("FilterA")},
      {"FilterB", fakeFactory<FakeFilter>("FilterB")},
      {"PreFilterFilter", fakeFactory<FakePreFilterFilter>("PreFilterFilter")},
      {"ScoreA", fakeFactory<FakeScore>("ScoreA")},
      {"ScoreB", fakeFactory<FakeScore>("ScoreB")},
      {"PreScoreScore", fakeFactory<FakePreScoreScore>("PreScoreScore")},
      {"AllA", fakeFactory<FakeAll>("AllA")},
      {"AllB", fakeFactory<FakeAll>("AllB")},
  };
  return registry;
}

}  // namespace placer::test
