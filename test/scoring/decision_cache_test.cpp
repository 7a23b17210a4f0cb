// The engine's decision cache (scoring/decision_cache.h) must never change a
// decision, for the webhook (every node) or the extender (candidates in the
// scheduler's order): an engine with it and one without are run side by side over a
// generated cluster while the view changes under them the ways it changes in
// a cluster (reservations, pods bound and gone, kubelet status updates, label
// and taint changes, nodes added and removed), and every decision is compared.

#include "scoring/decision_cache.h"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scoring/cluster_state.h"
#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

std::string describe(const Decision& d) {
  std::string out = d.selected ? d.selected->name() : std::string("<none>");
  out += " total=" + std::to_string(d.selectedTotal) + " feasible=" + std::to_string(d.feasibleCount) + "/" +
         std::to_string(d.nodeCount);
  if (d.failure) out += " failure=" + d.failure->reasons().front();
  if (d.preFilterRejection) out += " prefilter=" + d.preFilterRejection->reasons().front();
  out += " | " + d.unschedulableMessage();
  return out;
}

// Everything the extender reads of a decision over candidates: per node, in
// the candidates' order, the verdict, its reasons and plugin, and the total.
std::string describeNodes(const Decision& d) {
  std::string out = describe(d);
  for (const NodeOutcome& o : d.nodes) {
    out += "\n" + o.node->name() + " " + std::string(toString(o.code)) + " " + std::string(o.failedPlugin) + " " +
           std::to_string(o.total);
    for (const std::string& r : o.reasons) out += " | " + r;
  }
  return out;
}

// A reservation counts like its pod: resources, and for the topology plugins
// its namespace, labels and affinity terms.
Reservation reservationFor(const Pod& pod, const std::string& node, int n) {
  return placer::reservationFor(pod, "review-" + std::to_string(n), node, std::chrono::steady_clock::time_point::max());
}

// The generator's pending pods (its shapes over twenty apps: replicas of
// Deployments under system default spreading, with required pod
// (anti-)affinity, with a DoNotSchedule spread), a pod with a
// host port, one that no node fits, and one selecting a label no node has yet.
std::vector<Pod> pendingPods(const GeneratorParams& params) {
  std::vector<Pod> out;
  for (int i = 0; i < 3 * kPendingShapes; ++i) out.push_back(generatePendingPodObject(params, i));
  Pod withPort = generatePendingPodObject(params, 0);
  withPort.containers.front().hostPorts.push_back({"0.0.0.0", "TCP", 9100});
  computePodRequests(withPort);
  out.push_back(withPort);
  Pod huge = generatePendingPodObject(params, 0);
  huge.containers.front().requests.milliCpu = 1'000'000;
  computePodRequests(huge);
  out.push_back(huge);
  Pod gold = generatePendingPodObject(params, 0);  // a label no node has until one is given it
  gold.nodeSelector = {{"example.com/tier", "gold"}};
  out.push_back(gold);
  return out;
}

TEST(DecisionCache, DecisionsAreThoseOfTheEngineWithoutItWhileTheViewChanges) {
  GeneratorParams params;
  params.nodes = 300;
  params.podsPerNode = 12;
  MutableClusterView view;
  fillClusterView(view, params);
  const std::vector<Pod> pods = pendingPods(params);

  // Fewer entries than pod shapes, so entries are also recycled.
  Engine cached(Profile::defaults(), 8);
  Engine plain(Profile::defaults(), 0);
  ASSERT_NE(cached.cache(), nullptr);
  ASSERT_EQ(plain.cache(), nullptr);

  std::mt19937 random(7);  // fixed: the same sequence every run
  auto pick = [&](size_t n) { return static_cast<size_t>(random() % n); };
  std::vector<std::string> reservations;
  std::vector<Pod> bound;
  int added = 0;
  int assigned = 0;
  for (int step = 0; step < 4000; ++step) {
    // Two ReplicaSets scaling up at once: runs of the same two pods, interleaved.
    const Pod& pod = pods[(step / 10 + (step % 2) * 7) % pods.size()];
    // The cached engine first: nothing of this decision may linger in a
    // thread's buffers for it to find.
    Decision got = cached.place(pod, view);
    Decision expected = plain.place(pod, view);
    ASSERT_EQ(describe(got), describe(expected)) << "step " << step << ", pod " << pod.generateName;
    if (got.selected) ++assigned;
    // With per-node detail each rejected node is counted as it is met;
    // without, by its verdict: the same counts, the same message.
    if (step % 4 == 0) {
      const Decision full = plain.place(pod, view, Detail::Full);
      ASSERT_EQ(describe(got), describe(full)) << "step " << step << ", pod " << pod.generateName;
      ASSERT_EQ(got.reasonCounts, full.reasonCounts) << "step " << step << ", pod " << pod.generateName;
    }

    // The extender's requests: some of the nodes, in the scheduler's order
    // (not the view's), filtered or prioritised.
    std::vector<const NodeInfo*> candidates;
    for (const NodeInfo& node : view.nodes())
      if (pick(3) != 0) candidates.push_back(&node);
    std::shuffle(candidates.begin(), candidates.end(), random);
    const Detail detail = step % 2 ? Detail::FilterOnly : Detail::Totals;
    Decision gotSome = cached.evaluate(pod, view, candidates, detail, Engine::CacheUse::Reuse);
    Decision expectedSome = plain.evaluate(pod, view, candidates, detail, Engine::CacheUse::Reuse);
    ASSERT_EQ(describeNodes(gotSome), describeNodes(expectedSome)) << "step " << step << ", pod " << pod.generateName;

    // Nodes join and leave rarely, so that results live through many other changes.
    const size_t dice = pick(200);
    switch (dice < 10 ? 0 : dice < 30 ? 1 : dice == 30 ? 2 : dice < 40 ? 3 : dice < 50 ? 4 : 5) {
      case 0: {  // a kubelet status update: allocatable changes, nothing static does
        Node node = view.nodes()[pick(view.nodes().size())].node;
        node.allocatable.milliCpu += pick(2) ? 500 : -500;
        node.resourceVersion += "x";
        view.upsertNode(std::move(node));
        break;
      }
      case 1: {  // labels, taints or images change: what the pods' affinities, tolerations and images read
        Node node = view.nodes()[pick(view.nodes().size())].node;
        auto setLabel = [&node](const std::string& key, std::string value) {
          for (auto& [k, v] : node.labels)
            if (k == key) {
              v = std::move(value);
              return;
            }
          node.labels.emplace_back(key, std::move(value));
        };
        switch (pick(7)) {
          case 0: setLabel("topology.kubernetes.io/zone", pick(2) ? "us-east-1a" : "us-east-1x"); break;
          case 1: setLabel("placer.io/pool", "highmem"); break;
          case 2: node.taints.push_back({"example.com/drain", "", TaintEffect::NoSchedule}); break;
          case 3: node.taints.clear(); break;
          case 4: node.unschedulable = !node.unschedulable; break;
          case 5: setLabel("example.com/tier", "gold"); break;
          default:  // a pending pod's image pulled there: every node's image spread changes
            node.images.add({pods[pick(pods.size())].containers.front().image}, 300'000'000);
            break;
        }
        view.upsertNode(std::move(node));
        break;
      }
      case 2: {  // a node joins, another leaves
        if (pick(2)) {
          Node node = generateNodeObject(params, static_cast<int>(pick(static_cast<size_t>(params.nodes))));
          node.name = "joined-" + std::to_string(++added);
          view.upsertNode(std::move(node));
        } else {
          view.removeNode(view.nodes()[pick(view.nodes().size())].name());
        }
        break;
      }
      case 3: {  // a bound pod goes away
        if (bound.empty()) break;
        const size_t i = pick(bound.size());
        view.removePod(podKey(bound[i]));
        bound.erase(bound.begin() + static_cast<ptrdiff_t>(i));
        break;
      }
      case 4: {  // a reservation expires
        if (reservations.empty()) break;
        view.release(reservations.back());
        reservations.pop_back();
        break;
      }
      default: {  // the decision is taken: reserved, and sometimes its pod arrives bound
        if (!got.selected) break;
        Reservation r = reservationFor(pod, got.selected->name(), step);
        if (pick(3) == 0) {
          Pod arrived = pod;
          arrived.name = pod.generateName + std::to_string(step);
          arrived.uid = "uid-" + std::to_string(step);
          arrived.nodeName = got.selected->name();
          view.upsertPod(arrived);
          bound.push_back(std::move(arrived));
        } else {
          reservations.push_back(r.id);
          ASSERT_TRUE(view.reserve(std::move(r)));
        }
        break;
      }
    }
  }
  const DecisionCache::Stats stats = cached.cache()->stats();
  // The run is worth something only if it filled nodes and reused results.
  EXPECT_GT(assigned, 1000);
  EXPECT_GT(stats.hits, 4000u);
  EXPECT_GT(stats.misses, 10u);
  EXPECT_LE(cached.cache()->size(), 8u);
}

TEST(DecisionCache, PodsThatScheduleAlikeShareAnEntryAndOthersDoNot) {
  GeneratorParams params;
  Pod replica = generatePendingPodObject(params, 0);
  Pod sibling = replica;
  sibling.name = "web-abcde";
  sibling.uid = "another";
  sibling.labels.emplace_back("extra", "label");
  sibling.annotations.emplace_back("note", "x");
  EXPECT_TRUE(sameSchedulingFields(replica, sibling));
  EXPECT_EQ(schedulingHash(replica), schedulingHash(sibling));

  Pod moreCpu = replica;
  moreCpu.containers.front().requests.milliCpu += 1;
  computePodRequests(moreCpu);
  EXPECT_FALSE(sameSchedulingFields(replica, moreCpu));
  Pod otherNamespace = replica;
  otherNamespace.namespace_ = "elsewhere";
  EXPECT_FALSE(sameSchedulingFields(replica, otherNamespace));
  Pod tolerating = replica;
  tolerating.tolerations.push_back({"dedicated", TolerationOperator::Exists, "", TaintEffect::All, std::nullopt});
  EXPECT_FALSE(sameSchedulingFields(replica, tolerating));

  DecisionCache cache(4);
  {
    auto first = cache.lease(replica, 1);
    ASSERT_TRUE(first);
    (*first)->prepared = true;
  }
  {
    auto again = cache.lease(sibling, 1);
    ASSERT_TRUE(again);
    EXPECT_TRUE((*again)->prepared) << "a sibling of the same template reuses the entry";
    // While it is held, the same shape gets an entry of its own.
    auto concurrent = cache.lease(replica, 1);
    ASSERT_TRUE(concurrent);
    EXPECT_FALSE((*concurrent)->prepared);
  }
  auto newView = cache.lease(replica, 2);
  ASSERT_TRUE(newView);
  EXPECT_FALSE((*newView)->prepared) << "results of another view generation are not reused";
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 3u);
}

Pod shape(int milliCpu) {
  Pod pod = generatePendingPodObject(GeneratorParams{}, 0);
  pod.containers.front().requests.milliCpu = milliCpu;
  computePodRequests(pod);
  return pod;
}

TEST(DecisionCache, AShapeWhoseResultsCannotBeKeptIsDecidedWithoutIt) {
  DecisionCache cache(2);
  {
    auto first = cache.lease(shape(100), 1);
    ASSERT_TRUE(first);
    (*first)->unusable = true;  // as the engine marks it when a plugin fails
  }
  EXPECT_FALSE(cache.lease(shape(100), 1));
  EXPECT_EQ(cache.stats().bypassed, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_TRUE(cache.lease(shape(100), 2)) << "a new generation tries again";
}

// The cache keeps a copy of each pod shape: a 2.8 MB shape is decided
// without it, so 64 such shapes cannot hold 64 copies.
TEST(DecisionCache, APodTooLargeToKeepIsDecidedWithoutIt) {
  DecisionCache cache(4);
  Pod huge = shape(100);
  for (int i = 0; i < 4000; ++i) huge.containers.front().requests.setScalar("example.com/r-" + std::to_string(100000 + i), 1);
  computePodRequests(huge);
  EXPECT_GT(schedulingBytes(huge), DecisionCache::kMaxPodBytes);
  EXPECT_LT(schedulingBytes(shape(100)), DecisionCache::kMaxPodBytes / 8) << "an ordinary pod is far below";
  EXPECT_FALSE(cache.lease(huge, 1));
  EXPECT_EQ(cache.stats().bypassed, 1u);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.lease(shape(100), 1)) << "ordinary pods still use it";
}

// What an entry keeps is the whole pod, not only what schedules it: a pod
// with small scheduling fields but 200 KB of annotations (the API server
// allows 256 KiB) is decided without the cache too.
TEST(DecisionCache, APodWithLargeAnnotationsOrLabelsIsDecidedWithoutIt) {
  struct Case {
    std::string name;
    std::function<void(Pod&)> grow;
  };
  const std::vector<Case> cases = {
      {"200 KB of annotations", [](Pod& p) { p.annotations.emplace_back("example.com/blob", std::string(200000, 'a')); }},
      {"2,000 labels", [](Pod& p) {
         for (int i = 0; i < 2000; ++i)
           p.labels.emplace_back("example.com/label-" + std::to_string(10000 + i), std::string(40, 'v'));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DecisionCache cache(4);
    Pod pod = shape(100);
    c.grow(pod);
    EXPECT_LT(schedulingBytes(pod), DecisionCache::kMaxPodBytes / 8) << "schedules as an ordinary pod";
    EXPECT_FALSE(cache.lease(pod, 1));
    EXPECT_EQ(cache.stats().bypassed, 1u);
    EXPECT_EQ(cache.size(), 0u);
  }
}

TEST(DecisionCache, EveryEntryInUseMeansNoEntry) {
  DecisionCache cache(2);
  Pod pod = generatePendingPodObject(GeneratorParams{}, 0);
  auto a = cache.lease(pod, 1);
  auto b = cache.lease(pod, 1);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(cache.lease(pod, 1));
  EXPECT_EQ(cache.stats().bypassed, 1u);
}

TEST(DecisionCache, WhenFullOfCurrentResultsOnlyEveryEighthNewShapeEvictsOne) {
  DecisionCache cache(2);
  ASSERT_TRUE(cache.lease(shape(100), 1));
  ASSERT_TRUE(cache.lease(shape(200), 1));
  // More shapes in turn than entries: most are computed without the cache, so
  // the two entries live on and keep being reused.
  int admitted = 0;
  for (int i = 0; i < 16; ++i) {
    if (cache.lease(shape(300 + i), 1)) ++admitted;
  }
  EXPECT_EQ(admitted, 2);
  EXPECT_EQ(cache.stats().bypassed, 14u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(DecisionCache, EntriesOfAnOlderGenerationAreRecycledFirstAndAtOnce) {
  DecisionCache cache(2);
  ASSERT_TRUE(cache.lease(shape(100), 1));
  ASSERT_TRUE(cache.lease(shape(200), 2));
  // Generation 2 now: the generation-1 entry is taken at once for a new shape...
  EXPECT_TRUE(cache.lease(shape(300), 2));
  // ...and the current one is still there.
  auto kept = cache.lease(shape(200), 2);
  ASSERT_TRUE(kept);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().bypassed, 0u);
}

// What a cache entry relies on to find the nodes changed since its last
// refresh without keeping every node's version: no node's version exceeds
// lastNodeVersion(), and a node that changes afterwards gets a larger one.
TEST(DecisionCache, ANodeChangedAfterLastNodeVersionHasALargerVersion) {
  GeneratorParams params;
  params.nodes = 10;
  params.podsPerNode = 2;
  MutableClusterView view;
  fillClusterView(view, params);
  auto noneAbove = [](const ClusterView& v, uint64_t bound) {
    return std::all_of(v.nodeVersions().begin(), v.nodeVersions().end(), [&](uint64_t x) { return x <= bound; });
  };
  const uint64_t seen = view.lastNodeVersion();
  EXPECT_TRUE(noneAbove(view, seen));
  Pod pod = generatePendingPodObject(params, 0);
  ASSERT_TRUE(view.reserve(reservationFor(pod, view.nodes()[3].name(), 1)));
  EXPECT_GT(view.nodeVersions()[3], seen) << "a reservation";
  EXPECT_TRUE(noneAbove(view, view.lastNodeVersion()));
  const uint64_t afterReserve = view.lastNodeVersion();
  Node node = view.nodes()[5].node;
  node.allocatable.memory -= 1;
  view.upsertNode(node);
  EXPECT_GT(view.nodeVersions()[5], afterReserve) << "a node's status";
  EXPECT_LE(view.nodeVersions()[3], afterReserve) << "the others keep theirs";
  view.release(reservationFor(pod, view.nodes()[3].name(), 1).id);
  EXPECT_GT(view.nodeVersions()[3], view.nodeVersions()[5]) << "a release";
}

TEST(DecisionCache, ViewGenerationChangesWithStaticFieldsNotWithAccounting) {
  GeneratorParams params;
  params.nodes = 10;
  params.podsPerNode = 2;
  MutableClusterView view;
  fillClusterView(view, params);
  const uint64_t generation = view.staticGeneration();
  const uint64_t version = view.nodeVersions()[3];

  Node node = view.nodes()[3].node;
  node.allocatable.memory -= 1;
  view.upsertNode(node);
  EXPECT_EQ(view.staticGeneration(), generation) << "a status update keeps the generation";
  EXPECT_NE(view.nodeVersions()[3], version) << "but changes the node's version";

  Pod pod = generatePendingPodObject(params, 0);
  const uint64_t beforeReserve = view.nodeVersions()[3];
  ASSERT_TRUE(view.reserve(reservationFor(pod, node.name, 1)));
  EXPECT_NE(view.nodeVersions()[3], beforeReserve) << "a reservation changes the node's version";
  EXPECT_EQ(view.staticGeneration(), generation);

  node.unschedulable = true;
  view.upsertNode(node);
  EXPECT_NE(view.staticGeneration(), generation) << "a cordon changes the generation";

  MutableClusterView other;
  fillClusterView(other, params);
  EXPECT_NE(other.staticGeneration(), view.staticGeneration()) << "no two views share a generation";
}

}  // namespace
}  // namespace placer
