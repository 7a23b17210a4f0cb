#pragma once
// Cases from kube-scheduler's plugin test tables (filtering_test.go,
// scoring_test.go), run the way `placer explain` runs a snapshot: the case
// becomes a snapshot document (nodes, pods, namespaces, workloads, the pod,
// and a KubeSchedulerConfiguration with the plugin alone at the extension
// points upstream's test drives), which is decoded, loaded into a view and
// placed with Detail::Full; the verdict of every node (code and reason) and
// the plugin's normalised score are read from explainJson's output.
//
// Upstream's objects are written with small JSON builders (upstream's
// st.MakePod() and friends in our own words): nodes carry exactly the labels
// the case gives them, pods the namespace it gives them ("" when upstream
// leaves it empty). Header-only.

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/explain.h"
#include "scoring/snapshot.h"

namespace placer::test::upstream {

using nlohmann::json;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

inline json stringMap(const KeyValues& entries) {
  json out = json::object();
  for (const auto& [k, v] : entries) out[k] = v;
  return out;
}

// ---- metav1.LabelSelector ----

// A selector built requirement by requirement; Selector() alone is the empty
// selector {} (everything). A nil selector is written `nullptr`.
class Selector {
 public:
  Selector& label(const std::string& key, const std::string& value) {
    selector_["matchLabels"][key] = value;
    return *this;
  }
  Selector& in(const std::string& key, std::vector<std::string> values) { return expr(key, "In", std::move(values)); }
  Selector& notIn(const std::string& key, std::vector<std::string> values) {
    return expr(key, "NotIn", std::move(values));
  }
  Selector& exists(const std::string& key) { return expr(key, "Exists", {}); }
  Selector& doesNotExist(const std::string& key) { return expr(key, "DoesNotExist", {}); }
  operator json() const { return selector_; }

 private:
  Selector& expr(const std::string& key, const std::string& op, std::vector<std::string> values) {
    json e = {{"key", key}, {"operator", op}};
    if (!values.empty()) e["values"] = std::move(values);
    selector_["matchExpressions"].push_back(std::move(e));
    return *this;
  }
  json selector_ = json::object();
};

// ---- v1.PodAffinityTerm ----

class Term {
 public:
  // An empty topologyKey is left out, as upstream's cases that do not set it.
  Term(json labelSelector, std::string topologyKey) {
    if (!labelSelector.is_null()) term_["labelSelector"] = std::move(labelSelector);
    if (!topologyKey.empty()) term_["topologyKey"] = std::move(topologyKey);
  }
  Term& namespaces(std::vector<std::string> names) {
    term_["namespaces"] = std::move(names);
    return *this;
  }
  Term& namespaceSelector(json selector) {
    term_["namespaceSelector"] = std::move(selector);
    return *this;
  }
  operator json() const { return term_; }

 private:
  json term_ = json::object();
};

// st's PodAffinityIn / NotIn / Exists: one matchExpression and a topology key.
inline Term inTerm(const std::string& key, const std::string& topologyKey, std::vector<std::string> values) {
  return Term(Selector().in(key, std::move(values)), topologyKey);
}
inline Term notInTerm(const std::string& key, const std::string& topologyKey, std::vector<std::string> values) {
  return Term(Selector().notIn(key, std::move(values)), topologyKey);
}
inline Term existsTerm(const std::string& key, const std::string& topologyKey) {
  return Term(Selector().exists(key), topologyKey);
}
inline json weighted(int32_t weight, json term) { return {{"weight", weight}, {"podAffinityTerm", std::move(term)}}; }

// A whole v1.Affinity for pod (anti-)affinity, as upstream's shared fixtures
// (stayWithS1InRegion and the like) declare them.
class Affinity {
 public:
  Affinity& required(json term) { return add("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution", term); }
  Affinity& requiredAnti(json term) {
    return add("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", term);
  }
  Affinity& preferred(int32_t weight, json term) {
    return add("podAffinity", "preferredDuringSchedulingIgnoredDuringExecution", weighted(weight, std::move(term)));
  }
  Affinity& preferredAnti(int32_t weight, json term) {
    return add("podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution", weighted(weight, std::move(term)));
  }
  operator json() const { return affinity_; }

 private:
  Affinity& add(const char* kind, const char* list, json entry) {
    affinity_[kind][list].push_back(std::move(entry));
    return *this;
  }
  json affinity_ = json::object();
};

// ---- v1.Pod ----

class PodJson {
 public:
  explicit PodJson(std::string name = "", std::string ns = "") {
    pod_["metadata"]["name"] = std::move(name);
    pod_["metadata"]["namespace"] = std::move(ns);
    pod_["spec"]["containers"] = json::array({{{"name", "c"}}});
  }
  PodJson& name(const std::string& n) { return set(pod_["metadata"]["name"], n); }
  PodJson& ns(const std::string& n) { return set(pod_["metadata"]["namespace"], n); }
  PodJson& label(const std::string& k, const std::string& v) { return set(pod_["metadata"]["labels"][k], v); }
  PodJson& labels(const KeyValues& entries) {
    for (const auto& [k, v] : entries) label(k, v);
    return *this;
  }
  // Bound to a node (running there).
  PodJson& node(const std::string& n) {
    pod_["spec"]["nodeName"] = n;
    pod_["status"]["phase"] = "Running";
    return *this;
  }
  // Pending, with room made for it on a node by preemption (status.nominatedNodeName).
  PodJson& nominated(const std::string& n, int32_t priority = 0) {
    pod_["status"]["nominatedNodeName"] = n;
    pod_["status"]["phase"] = "Pending";
    return set(pod_["spec"]["priority"], priority);
  }
  PodJson& priority(int32_t p) { return set(pod_["spec"]["priority"], p); }
  PodJson& terminating() { return set(pod_["metadata"]["deletionTimestamp"], "2025-01-01T00:00:00Z"); }
  PodJson& owner(const std::string& kind, const std::string& name, const std::string& apiVersion = "apps/v1") {
    pod_["metadata"]["ownerReferences"] =
        json::array({{{"apiVersion", apiVersion}, {"kind", kind}, {"name", name}, {"uid", name + "-uid"}, {"controller", true}}});
    return *this;
  }
  PodJson& affinity(json a) {
    for (auto& [kind, rules] : a.items()) pod_["spec"]["affinity"][kind] = rules;
    return *this;
  }
  PodJson& requiredAffinity(json term) { return affinity(Affinity().required(std::move(term))); }
  PodJson& requiredAntiAffinity(json term) { return affinity(Affinity().requiredAnti(std::move(term))); }
  PodJson& addRequiredAffinity(json term) {
    return append("podAffinity", "requiredDuringSchedulingIgnoredDuringExecution", std::move(term));
  }
  PodJson& addRequiredAntiAffinity(json term) {
    return append("podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution", std::move(term));
  }
  PodJson& nodeSelector(const KeyValues& entries) { return set(pod_["spec"]["nodeSelector"], stringMap(entries)); }
  // st's NodeAffinityIn / NotIn: one required node selector term with one expression.
  PodJson& nodeAffinityIn(const std::string& key, std::vector<std::string> values) {
    return nodeAffinity(key, "In", std::move(values));
  }
  PodJson& nodeAffinityNotIn(const std::string& key, std::vector<std::string> values) {
    return nodeAffinity(key, "NotIn", std::move(values));
  }
  // st's Toleration(key): Exists, NoSchedule.
  PodJson& toleration(const std::string& key) {
    pod_["spec"]["tolerations"].push_back({{"key", key}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
    return *this;
  }
  // A v1.TopologySpreadConstraint in st's SpreadConstraint argument order;
  // "" leaves a policy unset.
  struct Spread {
    Spread(int32_t maxSkew, std::string topologyKey, std::string whenUnsatisfiable, json labelSelector,
           std::optional<int32_t> minDomains = std::nullopt, std::string nodeAffinityPolicy = "",
           std::string nodeTaintsPolicy = "", std::vector<std::string> matchLabelKeys = {})
        : maxSkew(maxSkew),
          topologyKey(std::move(topologyKey)),
          whenUnsatisfiable(std::move(whenUnsatisfiable)),
          labelSelector(std::move(labelSelector)),
          minDomains(minDomains),
          nodeAffinityPolicy(std::move(nodeAffinityPolicy)),
          nodeTaintsPolicy(std::move(nodeTaintsPolicy)),
          matchLabelKeys(std::move(matchLabelKeys)) {}
    int32_t maxSkew;
    std::string topologyKey;
    std::string whenUnsatisfiable;
    json labelSelector;
    std::optional<int32_t> minDomains;
    std::string nodeAffinityPolicy;
    std::string nodeTaintsPolicy;
    std::vector<std::string> matchLabelKeys;
  };
  PodJson& spread(const Spread& s) {
    json c = {{"maxSkew", s.maxSkew}, {"topologyKey", s.topologyKey}, {"whenUnsatisfiable", s.whenUnsatisfiable}};
    if (!s.labelSelector.is_null()) c["labelSelector"] = s.labelSelector;
    if (s.minDomains) c["minDomains"] = *s.minDomains;
    if (!s.nodeAffinityPolicy.empty()) c["nodeAffinityPolicy"] = s.nodeAffinityPolicy;
    if (!s.nodeTaintsPolicy.empty()) c["nodeTaintsPolicy"] = s.nodeTaintsPolicy;
    if (!s.matchLabelKeys.empty()) c["matchLabelKeys"] = s.matchLabelKeys;
    pod_["spec"]["topologySpreadConstraints"].push_back(std::move(c));
    return *this;
  }
  // st's SpreadConstraint(maxSkew, key, mode, selector, nil, nil, nil, nil).
  PodJson& spread(int32_t maxSkew, const std::string& key, const std::string& mode, json selector) {
    return spread(Spread{maxSkew, key, mode, std::move(selector)});
  }

  // The pod as JSON; an unnamed pod is named after `fallbackName` (upstream's
  // cases leave names out, a snapshot needs them).
  json obj(const std::string& fallbackName) const {
    json out = pod_;
    if (out["metadata"]["name"].get<std::string>().empty()) out["metadata"]["name"] = fallbackName;
    return out;
  }

 private:
  PodJson& set(json& field, json value) {
    field = std::move(value);
    return *this;
  }
  PodJson& append(const char* kind, const char* list, json entry) {
    pod_["spec"]["affinity"][kind][list].push_back(std::move(entry));
    return *this;
  }
  PodJson& nodeAffinity(const std::string& key, const char* op, std::vector<std::string> values) {
    json term = {{"matchExpressions", json::array({{{"key", key}, {"operator", op}, {"values", std::move(values)}}})}};
    pod_["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .push_back(std::move(term));
    return *this;
  }
  json pod_ = json::object();
};

// ---- v1.Node ----

class NodeJson {
 public:
  explicit NodeJson(std::string name) {
    node_["metadata"]["name"] = std::move(name);
    node_["metadata"]["labels"] = json::object();
    node_["status"]["allocatable"] = {{"cpu", "32"}, {"memory", "128Gi"}, {"pods", "110"}};
  }
  NodeJson& label(const std::string& k, const std::string& v) {
    node_["metadata"]["labels"][k] = v;
    return *this;
  }
  NodeJson& labels(const KeyValues& entries) {
    for (const auto& [k, v] : entries) label(k, v);
    return *this;
  }
  // upstream's `taints` fixture: node.kubernetes.io/unschedulable:NoSchedule.
  NodeJson& unschedulableTaint() {
    node_["spec"]["taints"].push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
    return *this;
  }
  std::string name() const { return node_["metadata"]["name"]; }
  operator json() const { return node_; }

 private:
  json node_ = json::object();
};

// ---- expectations ----

// What upstream expects of one node: its Filter status (Success, or a code
// and the reason upstream's plugin gives with it) and, for score tables, its
// normalised score.
struct Verdict {
  std::string node;
  Code code = Code::Success;
  std::string reason;
  std::optional<int64_t> score;
};
inline Verdict fits(std::string node) {
  Verdict v;
  v.node = std::move(node);
  return v;
}
inline Verdict scored(std::string node, int64_t score) {
  Verdict v = fits(std::move(node));
  v.score = score;
  return v;
}
inline Verdict rejected(std::string node, Code code, std::string reason) {
  Verdict v = fits(std::move(node));
  v.code = code;
  v.reason = std::move(reason);
  return v;
}

// Which of the plugin's extension points the case drives, as upstream's test does.
enum class Stage { Filter, Score };

struct Case {
  Case(std::string test, std::string name, PodJson pod, std::vector<PodJson> pods, std::vector<NodeJson> nodes,
       std::vector<Verdict> want = {}, json args = nullptr)
      : test(std::move(test)),
        name(std::move(name)),
        pod(std::move(pod)),
        pods(std::move(pods)),
        nodes(std::move(nodes)),
        want(std::move(want)),
        args(std::move(args)) {}
  std::string test;  // upstream's test function, e.g. "TestRequiredAffinitySingleNode"
  std::string name;  // upstream's case name, verbatim
  PodJson pod;
  std::vector<PodJson> pods;
  std::vector<NodeJson> nodes;
  std::vector<Verdict> want;  // one per node of `nodes`
  json args = nullptr;        // the plugin's args
  json objects = json::object();  // namespaces, services, replicationcontrollers, replicasets, statefulsets
  // Score tables: nodes whose pods count but which are not candidates
  // (upstream's failedNodes). Another filter (NodeUnschedulable) rejects them.
  std::vector<NodeJson> failedNodes;
  // The cycle fails with an error containing this text (upstream: PreScore returns an Error).
  std::string wantError;
  // Upstream checks the plugin's state (counts per domain, ignored nodes),
  // not verdicts; `want` holds what upstream's Filter / Score make of that
  // state, by upstream's formulas.
  bool derived = false;
};

inline void PrintTo(const Case& c, std::ostream* os) { *os << c.test << ": " << c.name; }

// A gtest name from upstream's case name: its words in CamelCase, with the
// table's index in front so that upstream's repeated names stay apart.
inline std::string testName(const testing::TestParamInfo<Case>& info) {
  std::string out = std::to_string(info.index) + "_";
  bool upper = true;
  for (char ch : info.param.name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
      upper = false;
    } else {
      upper = true;
    }
  }
  return out;
}

// The snapshot document `placer explain` would read for the case.
inline json snapshotOf(const Case& c, std::string_view plugin, Stage stage) {
  json plugins = {{"multiPoint", {{"disabled", json::array({{{"name", "*"}}})}}}};
  const json self = json::array({{{"name", std::string(plugin)}}});
  if (stage == Stage::Filter) {
    plugins["preFilter"]["enabled"] = self;
    plugins["filter"]["enabled"] = self;
  } else {
    plugins["preScore"]["enabled"] = self;
    plugins["score"]["enabled"] = self;
    if (!c.failedNodes.empty()) plugins["filter"]["enabled"] = json::array({{{"name", "NodeUnschedulable"}}});
  }
  json profile = {{"schedulerName", "default-scheduler"}, {"plugins", plugins}};
  if (!c.args.is_null()) profile["pluginConfig"] = json::array({{{"name", std::string(plugin)}, {"args", c.args}}});

  json doc = c.objects;
  doc["config"] = {{"apiVersion", "kubescheduler.config.k8s.io/v1"},
                   {"kind", "KubeSchedulerConfiguration"},
                   {"profiles", json::array({profile})}};
  doc["nodes"] = json::array();
  for (const NodeJson& n : c.nodes) doc["nodes"].push_back(json(n));
  for (const NodeJson& n : c.failedNodes) {
    json failed = n;
    failed["spec"]["unschedulable"] = true;
    doc["nodes"].push_back(std::move(failed));
  }
  doc["pods"] = json::array();
  for (size_t i = 0; i < c.pods.size(); ++i) doc["pods"].push_back(c.pods[i].obj("pod-" + std::to_string(i)));
  doc["pod"] = c.pod.obj("incoming");
  return doc;
}

struct Explained {
  nlohmann::ordered_json out;         // explainJson
  std::map<std::string, Code> codes;  // each node's verdict
  bool ok = false;
};

// `placer explain`'s steps (webhook/explain_command.cpp) on the document.
inline Explained explain(const json& document) {
  Explained e;
  auto snapshot = decodeSnapshot(document);
  EXPECT_TRUE(snapshot.ok()) << snapshot.error().message;
  if (!snapshot.ok()) return e;
  auto config = configurationFromJson(snapshot->config);
  EXPECT_TRUE(config.ok()) << config.error().message;
  if (!config.ok()) return e;
  MutableClusterView view;
  fillView(view, *snapshot);
  Engine engine(config->profile);
  Decision decision = engine.place(*snapshot->pod, view, Detail::Full);
  e.out = explainJson(*snapshot->pod, decision);
  for (const NodeOutcome& o : decision.nodes) e.codes[o.node->name()] = o.code;
  e.ok = true;
  return e;
}

// Runs the case and compares every node with upstream's expectation. With
// PLACER_UPSTREAM_SNAPSHOTS=DIR set, the snapshot is also written there, for
// `placer explain --snapshot DIR/<test>.json`.
inline void check(const Case& c, std::string_view plugin, Stage stage, const std::string& fileName) {
  const json document = snapshotOf(c, plugin, stage);
  if (const char* dir = std::getenv("PLACER_UPSTREAM_SNAPSHOTS"))
    std::ofstream(std::string(dir) + "/" + fileName + ".json") << document.dump(1) << "\n";
  Explained e = explain(document);
  ASSERT_TRUE(e.ok);
  SCOPED_TRACE(e.out.dump(2));

  if (!c.wantError.empty()) {
    ASSERT_TRUE(e.out.contains("error")) << "upstream fails the cycle: " << c.wantError;
    EXPECT_NE(e.out["error"].get<std::string>().find(c.wantError), std::string::npos);
    return;
  }
  EXPECT_FALSE(e.out.contains("error"));
  EXPECT_EQ(c.want.size(), c.nodes.size()) << "the table names every node";
  for (const Verdict& v : c.want) {
    SCOPED_TRACE(v.node);
    ASSERT_TRUE(e.codes.contains(v.node)) << "no such node in the decision";
    EXPECT_EQ(e.codes[v.node], v.code);
    if (v.code == Code::Success) {
      ASSERT_TRUE(e.out["scores"].contains(v.node));
      if (v.score) {
        EXPECT_EQ(e.out["scores"][v.node][std::string(plugin)], *v.score);
      }
    } else {
      EXPECT_EQ(e.out["unfeasible"][v.node], nlohmann::ordered_json::array({v.reason}));
    }
  }
  for (const NodeJson& n : c.failedNodes) EXPECT_TRUE(e.out["unfeasible"].contains(n.name())) << n.name();
}

// upstream's check that AddPod leaves the PreFilter state it would compute
// with the added pod bound on that node (TestPreFilterStateAddRemovePod),
// seen through the two filter passes of RunFilterPluginsWithNominatedPods:
// on a node holding a nominated pod of the case, the verdict is that of the
// snapshot with the nominee bound there when that one rejects, else that of
// the snapshot without the nominee; other nodes see only the latter. Holds
// when the plugin's PreFilter does not skip in either snapshot.
inline void checkNominatedAsBound(const Case& c, std::string_view plugin) {
  const json document = snapshotOf(c, plugin, Stage::Filter);
  json bound = document;
  json without = document;
  without["pods"] = json::array();
  bound["pods"] = json::array();
  std::map<std::string, int> nominees;  // node -> nominated pods there
  for (const json& pod : document["pods"]) {
    const json* status = pod.contains("status") ? &pod["status"] : nullptr;
    if (status == nullptr || !status->contains("nominatedNodeName")) {
      without["pods"].push_back(pod);
      bound["pods"].push_back(pod);
      continue;
    }
    const std::string node = (*status)["nominatedNodeName"];
    ++nominees[node];
    json running = pod;
    running["status"] = {{"phase", "Running"}};
    running["spec"]["nodeName"] = node;
    bound["pods"].push_back(std::move(running));
  }
  ASSERT_FALSE(nominees.empty()) << "the case nominates no pod";
  Explained withNominees = explain(document);
  Explained asBound = explain(bound);
  Explained alone = explain(without);
  ASSERT_TRUE(withNominees.ok && asBound.ok && alone.ok);
  auto reasons = [](const Explained& e, const std::string& node) {
    return e.out["unfeasible"].contains(node) ? e.out["unfeasible"][node] : nlohmann::ordered_json();
  };
  for (const NodeJson& n : c.nodes) {
    const std::string node = n.name();
    SCOPED_TRACE(node);
    ASSERT_TRUE(withNominees.codes.contains(node) && asBound.codes.contains(node) && alone.codes.contains(node));
    const Explained& expected = nominees.contains(node) && asBound.codes.at(node) != Code::Success ? asBound : alone;
    EXPECT_EQ(withNominees.codes.at(node), expected.codes.at(node));
    EXPECT_EQ(reasons(withNominees, node), reasons(expected, node));
  }
}

}  // namespace placer::test::upstream
