// The engine calls FilterPlugin::filterAll and ScorePlugin::scoreAll, which
// plugins override with fast paths (interned taint lists, the view's label
// index, memoised rejections). Each must answer exactly as the per-node
// filter()/score() that upstream's test tables check; this compares the two
// for every built-in plugin over a generated cluster, before and after the
// view changes under it.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scoring/cluster_state.h"
#include "scoring/framework.h"
#include "scoring/registry.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

struct Configured {
  std::string name;
  nlohmann::json args;
};

std::vector<Configured> configurations() {
  std::vector<Configured> out;
  for (const auto& [name, factory] : builtinPlugins()) out.push_back({name, nullptr});
  out.push_back({"LabelPriority", {{"label", "example.com/node-priority"}}});
  out.push_back({"LabelPriority", {{"label", "topology.kubernetes.io/zone"}, {"filterNodesWithoutLabel", true}}});
  out.push_back({"NodeAffinity", nlohmann::json::parse(R"({"addedAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "nope"]}]},
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "Exists"},
                              {"key": "no-such-key", "operator": "DoesNotExist"}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["zone-a-1"]}]}},
        {"weight": 3, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-00003"]}]}}]}})")});
  return out;
}

std::string describe(const Status& s) {
  std::string out(toString(s.code()));
  for (const std::string& r : s.reasons()) out += " | " + r;
  return out;
}

// Pods: the generator's mix, plus selectors and Gt/Lt terms on real label values.
std::vector<Pod> pods(const GeneratorParams& params, const ClusterView& view) {
  std::vector<Pod> out;
  for (int i = 0; i < 40; ++i) out.push_back(generatePendingPodObject(params, i));
  const Node& some = view.nodes()[3].node;
  Pod selector = generatePendingPodObject(params, 0);
  selector.nodeSelector = {some.labels.begin(), some.labels.begin() + std::min<size_t>(2, some.labels.size())};
  out.push_back(selector);
  Pod impossible = generatePendingPodObject(params, 0);
  impossible.nodeSelector = {{"kubernetes.io/arch", "sparc"}};
  out.push_back(impossible);
  Pod numeric = generatePendingPodObject(params, 1);
  NodeAffinity affinity;
  NodeSelectorTerm term;
  term.matchExpressions.push_back({"kubernetes.io/hostname", SelectorOperator::Exists, {}});
  term.matchExpressions.push_back({"example.com/node-priority", SelectorOperator::Gt, {"3"}});
  affinity.required = NodeSelector{{term}};
  affinity.preferred.push_back({7, NodeSelectorTerm{{{"example.com/node-priority", SelectorOperator::Lt, {"8"}}}, {}}});
  affinity.preferred.push_back({2, NodeSelectorTerm{{{"topology.kubernetes.io/zone", SelectorOperator::In, {some.labels.front().second}}}, {}}});
  numeric.nodeAffinity = affinity;
  out.push_back(numeric);
  return out;
}

void expectEquivalent(const ClusterView& view, const GeneratorParams& params) {
  std::vector<const NodeInfo*> nodes;
  for (const NodeInfo& n : view.nodes()) nodes.push_back(&n);
  size_t compared = 0;
  for (const Configured& c : configurations()) {
    auto made = builtinPlugins().find(c.name)->second(c.args);
    if (!made && c.args.is_null()) continue;  // needs args (LabelPriority): configured below
    ASSERT_TRUE(made) << c.name << ": " << made.error().message;
    const Plugin& plugin = **made;
    for (const Pod& pod : pods(params, view)) {
      SCOPED_TRACE(c.name + " " + c.args.dump() + " pod " + pod.key());
      CycleState state;
      bool filterSkipped = false;
      if (const auto* pre = dynamic_cast<const PreFilterPlugin*>(&plugin)) {
        Status s = pre->preFilter(state, pod, view);
        filterSkipped = s.isSkip();
        if (!s.isSuccess() && !s.isSkip()) continue;
      }
      if (const auto* filter = dynamic_cast<const FilterPlugin*>(&plugin); filter && !filterSkipped) {
        FilterSink sink;
        // Uneven batches, as the engine's tiles end where the candidates do.
        for (size_t from = 0; from < nodes.size(); from += 37) {
          std::span<const NodeInfo* const> batch(nodes.data() + from, std::min<size_t>(37, nodes.size() - from));
          sink.clear();
          filter->filterAll(state, pod, batch, sink);
          size_t next = 0;
          for (size_t i = 0; i < batch.size(); ++i) {
            Status one = filter->filter(state, pod, *batch[i]);
            bool rejected = next < sink.rejected().size() && sink.rejected()[next].first == i;
            std::string batched = rejected ? describe(*sink.rejected()[next++].second) : describe(Status::success());
            EXPECT_EQ(batched, describe(one)) << batch[i]->name();
            ++compared;
          }
          EXPECT_EQ(next, sink.rejected().size());
        }
      }
      if (const auto* scorer = dynamic_cast<const ScorePlugin*>(&plugin)) {
        if (const auto* pre = dynamic_cast<const PreScorePlugin*>(&plugin)) {
          Status s = pre->preScore(state, pod, nodes, view);
          if (!s.isSuccess()) continue;
        }
        std::vector<int64_t> batched(nodes.size());
        for (size_t from = 0; from < nodes.size(); from += 29) {
          size_t n = std::min<size_t>(29, nodes.size() - from);
          scorer->scoreAll(state, pod, std::span<const NodeInfo* const>(nodes.data() + from, n),
                           std::span<int64_t>(batched.data() + from, n));
        }
        for (size_t i = 0; i < nodes.size(); ++i) {
          EXPECT_EQ(batched[i], scorer->score(state, pod, *nodes[i])) << nodes[i]->name();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 10000u);
}

GeneratorParams smallCluster() {
  GeneratorParams params;
  params.nodes = 240;
  params.podsPerNode = 3;
  return params;
}

TEST(BatchEquivalence, FilterAllAndScoreAllAnswerLikeFilterAndScore) {
  const GeneratorParams params = smallCluster();
  MutableClusterView view;
  fillClusterView(view, params);
  expectEquivalent(view, params);
}

TEST(BatchEquivalence, StaysEquivalentAsNodesChangeLabelsAndTaintsAndLeave) {
  const GeneratorParams params = smallCluster();
  MutableClusterView view;
  fillClusterView(view, params);
  // Node i takes the labels and taints of node i+100 (other pools, zones,
  // taints); some nodes leave, some come back; one loses every label.
  for (int i = 0; i < 60; ++i) {
    Node changed = generateNodeObject(params, i + 100);
    changed.name = generatedNodeName(params, i);
    for (auto& [key, value] : changed.labels)
      if (key == "kubernetes.io/hostname") value = changed.name;
    view.upsertNode(std::move(changed));
  }
  for (int i = 60; i < 90; ++i) view.removeNode(generatedNodeName(params, i));
  for (int i = 60; i < 70; ++i) view.upsertNode(generateNodeObject(params, i));
  Node bare = generateNodeObject(params, 200);
  bare.labels.clear();
  bare.taints.clear();
  view.upsertNode(std::move(bare));
  expectEquivalent(view, params);
}

TEST(BatchEquivalence, NodeInfoCopiedOutOfTheViewIsNotReadThroughTheIndex) {
  GeneratorParams params;
  params.nodes = 50;
  params.podsPerNode = 1;
  MutableClusterView view;
  fillClusterView(view, params);
  NodeInfo copy = view.nodes()[0];
  EXPECT_TRUE(ClusterView::labelsIndexed(view.nodes()[0]));
  EXPECT_FALSE(ClusterView::labelsIndexed(copy));  // its labels live elsewhere now
  NodeInfo handMade;
  handMade.node.name = "hand-made";
  EXPECT_FALSE(ClusterView::labelsIndexed(handMade));
}

}  // namespace
}  // namespace placer
