// A list's items decoded on several threads build exactly the view that the
// one-item-at-a-time path builds: same nodes in the same order with the same
// accounting, the same pods in the same slots, the same interned labels.
// Every case lists the same generated cluster from the fake API server over
// TLS, once through the per-item path (ResourceHandler::listed, one decode
// thread: the path before list items were decoded in parallel) and once as
// the case says, and compares the two views field by field.
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "webhook/kube/kube_feed.h"
#include "webhook/log.h"

namespace placer {
namespace {

using fakeapi::FakeApiServer;
using watchtest::waitFor;

// Everything the view keeps of nodes and pods, in the view's own order.
std::string viewText(const ClusterState& state) {
  return state.read([](const ClusterView& view) {
    std::ostringstream out;
    auto resources = [&](const Resources& r) {
      out << " cpu=" << r.milliCpu << " mem=" << r.memory << " eph=" << r.ephemeralStorage << " pods=" << r.pods;
      for (const auto& [name, value] : r.scalars) out << " " << name << "=" << value;
    };
    auto ports = [&](const std::vector<HostPort>& list) {
      for (const HostPort& p : list) out << " " << p.ip << "/" << p.protocol << "/" << p.port;
    };
    out << "pods " << view.podCount() << " slots " << view.podSlotBound() << "\n";
    for (const NodeInfo& node : view.nodes()) {
      out << "node " << node.name() << " id=" << node.id << " pods=" << node.podCount << " taintSet=" << node.taintSet
          << " nonZero=" << node.nonZeroRequested.milliCpu << "/" << node.nonZeroRequested.memory << " requested";
      resources(node.requested);
      out << " allocatable";
      resources(node.allocatable());
      out << " ports";
      ports(node.usedPorts);
      out << " slots";
      for (uint32_t slot : node.podSlots) out << " " << slot;
      out << " images";
      for (const auto& [id, size] : node.imageSizes) out << " " << id << ":" << size;
      out << " labels";
      for (const auto& [k, v] : node.node.labels) out << " " << k << "=" << v;
      out << "\n";
    }
    for (uint32_t slot = 0; slot < view.podSlotBound(); ++slot) {
      const PodRecord* pod = view.pod(slot);
      if (pod == nullptr) {
        out << "slot " << slot << " free\n";
        continue;
      }
      out << "slot " << slot << " " << view.text(pod->namespaceId) << "/" << pod->name << " on "
          << view.text(pod->nodeNameId) << " node=" << pod->nodeId << " attached=" << pod->attached
          << " terminating=" << pod->terminating << " affinity=" << (pod->affinity != nullptr) << " labels";
      for (const PodLabel& l : pod->labels) out << " " << l.key << ":" << view.text(l.key) << "=" << view.text(l.value);
      out << " requests";
      resources(pod->requests);
      out << " nonZero=" << pod->nonZeroMilliCpu << "/" << pod->nonZeroMemory << " ports";
      ports(pod->hostPorts);
      out << "\n";
    }
    return out.str();
  });
}

// "" when equal, else the first line that differs in each.
std::string firstDifference(const std::string& a, const std::string& b) {
  std::istringstream inA(a), inB(b);
  std::string lineA, lineB;
  for (int line = 1;; ++line) {
    const bool moreA = static_cast<bool>(std::getline(inA, lineA));
    const bool moreB = static_cast<bool>(std::getline(inB, lineB));
    if (!moreA && !moreB) return "";
    if (!moreA || !moreB || lineA != lineB)
      return "line " + std::to_string(line) + ":\n  " + (moreA ? lineA : "(end)") + "\n  " + (moreB ? lineB : "(end)");
  }
}

// Forwards everything but newListBatch: its lists take the per-item path.
class OneByOne final : public kube::ResourceHandler {
 public:
  explicit OneByOne(kube::ResourceHandler& inner) : inner_(inner) {}
  void listStarted() override { inner_.listStarted(); }
  void listed(const JsonValue& object) override { inner_.listed(object); }
  void listFinished() override { inner_.listFinished(); }
  void upserted(const JsonValue& object) override { inner_.upserted(object); }
  void deleted(const JsonValue& object) override { inner_.deleted(object); }

 private:
  kube::ResourceHandler& inner_;
};

struct Case {
  std::string name;
  int decodeThreads;
  int pageSize;
  bool onePage;  // the server answers resourceVersion=0 lists in one page (as the watch cache does)
};

class ListDecodeTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (!std::getenv("PLACER_TEST_LOGS")) setLogOutput(nullptr);
  }
  void TearDown() override { setLogOutput(stderr); }
};

// Lists nodes and pods once into a fresh view; `oneByOne` forces the per-item path.
std::string listedView(const FakeApiServer& server, const kube::KubeConfig& config, int decodeThreads, int pageSize,
                       bool oneByOne) {
  auto client = kube::ApiClient::create(config);
  EXPECT_TRUE(client) << client.error().message;
  if (!client) return "";
  ClusterState state;
  kube::ListWatchOptions options;
  options.decodeThreads = decodeThreads;
  options.pageSize = pageSize;
  auto nodes = kube::makeNodeHandler(state);
  auto pods = kube::makePodHandler(state);
  OneByOne nodesOneByOne(*nodes), podsOneByOne(*pods);
  // Nodes first, then pods: both orders of arrival are the same in each run.
  for (auto [kind, handler] : {std::pair{kube::nodesKind(), static_cast<kube::ResourceHandler*>(nodes.get())},
                               std::pair{kube::podsKind(), static_cast<kube::ResourceHandler*>(pods.get())}}) {
    if (oneByOne) handler = handler == nodes.get() ? static_cast<kube::ResourceHandler*>(&nodesOneByOne) : &podsOneByOne;
    kube::ListWatcher watcher(**client, kind, *handler, options);
    watcher.start();
    EXPECT_TRUE(waitFor([&] { return watcher.listed(); }, std::chrono::seconds(30))) << kind.name << " not listed";
    watcher.stop();
  }
  EXPECT_EQ(watchtest::compareWithServer(state, server), "");
  return viewText(state);
}

TEST_P(ListDecodeTest, ParallelDecodeBuildsTheSameViewAsOneItemAtATime) {
  const Case& c = GetParam();
  fakeapi::Options options;
  options.ignoreLimitForResourceVersionZero = c.onePage;
  auto server = FakeApiServer::start(options);
  ASSERT_TRUE(server) << server.error().message;
  GeneratorParams params;
  params.nodes = 40;
  params.podsPerNode = 30;  // 1,200 pods of ~6.7 KB: ~30 decode batches of 256 KB
  ASSERT_TRUE(watchtest::loadGeneratedCluster(**server, params));
  watchtest::TempDir dir;
  auto config = kube::loadKubeconfigFile(dir.write("kubeconfig", (*server)->kubeconfig()));
  ASSERT_TRUE(config) << config.error().message;

  const std::string reference = listedView(**server, *config, 1, c.pageSize, /*oneByOne=*/true);
  const std::string parallel = listedView(**server, *config, c.decodeThreads, c.pageSize, /*oneByOne=*/false);
  ASSERT_NE(reference.find("slot 1199 "), std::string::npos) << "the reference view lacks pods";
  EXPECT_EQ(firstDifference(parallel, reference), "") << "the parallel view (first) differs from the reference";
}

INSTANTIATE_TEST_SUITE_P(Cases, ListDecodeTest,
                         ::testing::Values(Case{"OneThreadOnePage", 1, 500, true},
                                           Case{"TwoThreadsOnePage", 2, 500, true},
                                           Case{"FourThreadsOnePage", 4, 500, true},
                                           Case{"TwoThreadsPagesOf500", 2, 500, false},
                                           Case{"FourThreadsPagesOf7", 4, 7, false}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace placer
