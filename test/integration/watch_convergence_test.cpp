// The live view against the fake kube-apiserver over real TLS with bearer
// tokens: after every fault sequence (cut streams, 410 Gone, expired continue
// tokens, token rotation, 429/500 answers, slow streams, server-side watch
// timeouts) the view converges to the server's truth within 5 s, node by node.
#include <cstdlib>
#include <functional>
#include <ostream>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/integration/watch_support.h"
#include "test/support/cluster_generator.h"
#include "webhook/kube/kube_feed.h"
#include "webhook/log.h"

namespace placer {
namespace {

using fakeapi::FakeApiServer;
using fakeapi::Kind;
using nlohmann::json;
using watchtest::compareWithServer;
using watchtest::waitConverged;
using watchtest::waitFor;

constexpr auto kSyncBound = std::chrono::seconds(10);

kube::ListWatchOptions fastRetries() {
  kube::ListWatchOptions options;
  options.initialBackoff = std::chrono::milliseconds(20);
  options.maxBackoff = std::chrono::milliseconds(250);
  options.seed = 42;
  return options;
}

// Key generation is the slowest part of starting a server: do it once per run.
std::string sharedCertDir() {
  static const watchtest::TempDir dir;
  return dir.path();
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("PLACER_TEST_LOGS")) setLogOutput(nullptr);
    fakeapi::Options options;
    options.tokens = {"token-1"};
    options.ignoreLimitForResourceVersionZero = false;  // paginate every list
    options.certDir = sharedCertDir();  // one CA and serving key for the whole run
    auto server = FakeApiServer::start(options);
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    params_.nodes = 12;
    params_.podsPerNode = 8;
    ASSERT_TRUE(watchtest::loadGeneratedCluster(*server_, params_));
    tokenFile_ = dir_.write("token", "token-1\n");
    kubeconfig_ = dir_.write("kubeconfig", watchtest::kubeconfigWithTokenFile(*server_, tokenFile_));
  }
  void TearDown() override {
    if (feed_) feed_->stop();
    setLogOutput(stderr);
  }

  void startFeed(kube::ListWatchOptions listWatch = fastRetries()) {
    auto config = kube::loadKubeconfigFile(kubeconfig_);
    ASSERT_TRUE(config) << config.error().message;
    kube::KubeFeedOptions options;
    options.listWatch = listWatch;
    auto feed = kube::KubeClusterFeed::create(*config, options);
    ASSERT_TRUE(feed) << feed.error().message;
    feed_ = std::move(*feed);
    ASSERT_TRUE(feed_->start(state_));
    ASSERT_TRUE(waitFor([&] { return feed_->synced(); }, kSyncBound)) << "not synced";
    ASSERT_EQ(compareWithServer(state_, *server_), "");
  }

  // Every kind of change: pods created, relabelled, completed and deleted; a
  // node added and one removed with its pods still naming it.
  void churn(int round) {
    auto pods = server_->list(Kind::Pod);
    ASSERT_GT(pods.size(), 10u);
    for (int k = 0; k < 3; ++k) {
      json pod = generatePod(params_, (round * 7 + k) % generatedPodCount(params_));
      pod["metadata"].erase("uid");
      pod["metadata"].erase("resourceVersion");
      pod["metadata"]["name"] = "churn-" + std::to_string(round) + "-" + std::to_string(k);
      pod["spec"]["nodeName"] = generatedNodeName(params_, (round * 5 + k) % params_.nodes);
      ASSERT_TRUE(server_->create(Kind::Pod, pod));
    }
    auto meta = [&](size_t i) { return pods[(round * 11 + i) % pods.size()]["metadata"]; };
    ASSERT_TRUE(server_->mutate(Kind::Pod, meta(0)["namespace"], meta(0)["name"],
                                [&](json& p) { p["metadata"]["labels"]["round"] = std::to_string(round); }));
    ASSERT_TRUE(server_->mutate(Kind::Pod, meta(1)["namespace"], meta(1)["name"],
                                [](json& p) { p["status"]["phase"] = "Succeeded"; }));
    ASSERT_TRUE(server_->remove(Kind::Pod, meta(2)["namespace"], meta(2)["name"]));
    json node = generateNode(params_, round % params_.nodes);
    node["metadata"].erase("uid");
    node["metadata"].erase("resourceVersion");
    node["metadata"]["name"] = "extra-node-" + std::to_string(round);
    ASSERT_TRUE(server_->create(Kind::Node, node));
    if (round % 2 == 0) {
      ASSERT_TRUE(server_->remove(Kind::Node, "", "extra-node-" + std::to_string(round - 1)).ok() ||
                  round == 0);
    }
  }

  void expectConverged() { EXPECT_EQ(waitConverged(state_, *server_), "") << "the view did not converge within 15 s"; }

  GeneratorParams params_;
  watchtest::TempDir dir_;
  std::string tokenFile_;
  std::string kubeconfig_;
  std::unique_ptr<FakeApiServer> server_;
  ClusterState state_;
  std::unique_ptr<kube::KubeClusterFeed> feed_;
};

TEST_F(WatchTest, InitialListMatchesTheServerAndWatchAppliesChanges) {
  startFeed();
  EXPECT_EQ(state_.read([](const ClusterView& v) { return v.nodes().size(); }), 12u);
  churn(1);
  expectConverged();
  churn(2);
  expectConverged();
  EXPECT_EQ(feed_->podWatcher()->stats().lists.load(), 1u) << "no relist needed";
  EXPECT_EQ(feed_->podDecodeErrors(), 0u);
}

struct FaultCase {
  const char* name;
  std::function<void(WatchTest&, FakeApiServer&)> inject;
};

void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.name; }

class WatchFaultTest : public WatchTest, public ::testing::WithParamInterface<FaultCase> {
 public:
  void churnPublic(int round) { churn(round); }
  void convergedPublic() { expectConverged(); }
  void rotateToken(const std::string& token) { dir_.write("token", token + "\n"); }
};

TEST_P(WatchFaultTest, ViewConvergesToTheServer) {
  startFeed();
  GetParam().inject(*this, *server_);
  expectConverged();
  // And it keeps following the server afterwards.
  churn(99);
  expectConverged();
}

INSTANTIATE_TEST_SUITE_P(
    Faults, WatchFaultTest,
    ::testing::Values(
        FaultCase{"WatchCutMidStream",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    f.churnPublic(1);
                    s.dropWatches();
                    f.churnPublic(2);
                    s.dropWatches();
                    s.dropWatches();
                    f.churnPublic(3);
                  }},
        FaultCase{"ServerSideWatchTimeout",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    f.churnPublic(1);
                    s.timeoutWatches();
                    f.churnPublic(2);
                  }},
        FaultCase{"ExpiredResourceVersionRelists",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    // Hold the watchers off while objects change and history is compacted:
                    // their next watch is from a version that is gone (410), so they relist.
                    s.failNextRequests(4, 500);
                    s.dropWatches();
                    f.churnPublic(1);
                    f.churnPublic(2);
                    s.compact();
                  }},
        FaultCase{"TokenRotated",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    f.rotateToken("token-2");
                    s.setTokens({"token-2"});  // token-1 now answers 401
                    s.dropWatches();
                    f.churnPublic(1);
                  }},
        FaultCase{"ThrottledThenServerErrors",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    s.failNextRequests(1, 429, 1);
                    s.dropWatches();
                    f.churnPublic(1);
                    f.convergedPublic();
                    s.failNextRequests(3, 500);
                    s.dropWatches();
                    f.churnPublic(2);
                  }},
        FaultCase{"SlowStream",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    s.setWatchEventDelay(std::chrono::milliseconds(20));
                    f.churnPublic(1);
                    f.churnPublic(2);
                    f.convergedPublic();
                    s.setWatchEventDelay(std::chrono::milliseconds(0));
                  }},
        FaultCase{"EverythingAtOnce",
                  [](WatchTest& t, FakeApiServer& s) {
                    auto& f = static_cast<WatchFaultTest&>(t);
                    f.churnPublic(1);
                    s.dropWatches();
                    s.failNextRequests(2, 503, 1);
                    f.churnPublic(2);
                    s.timeoutWatches();
                    f.churnPublic(3);
                    s.compact();
                    s.dropWatches();
                    f.rotateToken("token-3");
                    s.setTokens({"token-3"});
                    f.churnPublic(4);
                  }}),
    [](const auto& info) { return info.param.name; });

TEST_F(WatchTest, ServerSideTimeoutRewatchesFromTheLastVersionWithoutRelisting) {
  startFeed();
  churn(1);
  ASSERT_EQ(waitConverged(state_, *server_), "");
  server_->clearRequests();
  server_->timeoutWatches();
  churn(2);
  expectConverged();
  EXPECT_EQ(feed_->podWatcher()->stats().lists.load(), 1u);
  EXPECT_EQ(feed_->nodeWatcher()->stats().lists.load(), 1u);
  bool rewatchedFromVersion = false;
  for (const auto& r : server_->requests()) {
    EXPECT_EQ(r.target.find("continue="), std::string::npos) << "no list expected: " << r.target;
    if (r.watch && r.target.find("resourceVersion=") != std::string::npos &&
        r.target.find("allowWatchBookmarks=true") != std::string::npos)
      rewatchedFromVersion = true;
  }
  EXPECT_TRUE(rewatchedFromVersion);
}

TEST_F(WatchTest, ExpiredResourceVersionRelistReplacesTheView) {
  startFeed();
  auto pods = server_->list(Kind::Pod);  // before the gap: parsing every pod takes a while
  // The next requests fail, so no watch is open while objects are deleted and
  // history is compacted (the watchers back off for at least 20+40+80 ms each).
  server_->failNextRequests(6, 500);
  server_->dropWatches();
  // Deleted while no watch is open: only the relist can tell.
  for (size_t i = 0; i < 5; ++i)
    ASSERT_TRUE(server_->remove(Kind::Pod, pods[i]["metadata"]["namespace"], pods[i]["metadata"]["name"]));
  ASSERT_TRUE(server_->remove(Kind::Node, "", generatedNodeName(params_, 3)));
  server_->compact();
  expectConverged();
  EXPECT_GE(feed_->podWatcher()->stats().expired.load(), 1u);
  EXPECT_GE(feed_->podWatcher()->stats().lists.load(), 2u);
}

TEST_F(WatchTest, BookmarksAdvanceTheResourceVersion) {
  startFeed();
  ASSERT_TRUE(server_->waitForOpenWatches(2, std::chrono::seconds(5)));
  // Unrelated progress (another kind) moves the server's revision; a bookmark
  // carries it to the pod watcher without any pod event.
  ASSERT_TRUE(server_->mutate(Kind::Node, "", generatedNodeName(params_, 0),
                              [](json& n) { n["metadata"]["labels"]["bookmark"] = "yes"; }));
  const std::string latest = std::to_string(server_->resourceVersion());
  server_->sendBookmarks();
  EXPECT_TRUE(waitFor([&] { return feed_->podWatcher()->resourceVersion() == latest; }, std::chrono::seconds(5)))
      << "pod watcher at " << feed_->podWatcher()->resourceVersion() << ", server at " << latest;
  EXPECT_GE(feed_->podWatcher()->stats().bookmarks.load(), 1u);
}

TEST_F(WatchTest, TokenIsReReadAfter401) {
  startFeed();
  dir_.write("token", "token-2\n");
  server_->setTokens({"token-2"});
  server_->dropWatches();
  churn(1);
  expectConverged();
  EXPECT_GE(feed_->podWatcher()->stats().unauthorized.load() + feed_->nodeWatcher()->stats().unauthorized.load(), 1u);
}

TEST_F(WatchTest, UndecodablePodIsCountedAndLeavesTheViewIntact) {
  startFeed();
  json bad = generatePod(params_, 0);
  bad["metadata"].erase("uid");
  bad["metadata"]["name"] = "bad-quantity";
  bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "a lot";
  ASSERT_TRUE(server_->create(Kind::Pod, bad));
  churn(1);
  expectConverged();  // the truth skips it too: it cannot be accounted
  EXPECT_TRUE(waitFor([&] { return feed_->podDecodeErrors() >= 1; }, std::chrono::seconds(5)));
}

TEST_F(WatchTest, ExpiredContinueTokenRestartsTheList) {
  // Drive a pod ListWatcher directly with pages of 10, and compact the
  // server's history while the list is between pages.
  auto config = kube::loadKubeconfigFile(kubeconfig_);
  ASSERT_TRUE(config);
  auto client = kube::ApiClient::create(*config);
  ASSERT_TRUE(client) << client.error().message;
  auto nodes = kube::makeNodeHandler(state_);
  auto pods = kube::makePodHandler(state_);

  struct CompactingHandler : kube::ResourceHandler {
    kube::ResourceHandler& inner;
    FakeApiServer& server;
    int seen = 0;
    bool compacted = false;
    CompactingHandler(kube::ResourceHandler& i, FakeApiServer& s) : inner(i), server(s) {}
    void listStarted() override { inner.listStarted(); }
    void listed(const JsonValue& o) override {
      inner.listed(o);
      if (++seen == 15 && !compacted) {
        compacted = true;
        auto all = server.list(Kind::Pod);
        (void)server.remove(Kind::Pod, all.back()["metadata"]["namespace"], all.back()["metadata"]["name"]);
        server.compact();
      }
    }
    void listFinished() override { inner.listFinished(); }
    void upserted(const JsonValue& o) override { inner.upserted(o); }
    void deleted(const JsonValue& o) override { inner.deleted(o); }
  } compacting(*pods, *server_);

  auto options = fastRetries();
  options.pageSize = 10;
  kube::ListWatcher nodeWatcher(**client, kube::nodesKind(), *nodes, options);
  kube::ListWatcher podWatcher(**client, kube::podsKind(), compacting, options);
  nodeWatcher.start();
  podWatcher.start();
  EXPECT_TRUE(waitFor([&] { return nodeWatcher.listed() && podWatcher.listed(); }, kSyncBound));
  EXPECT_EQ(waitConverged(state_, *server_), "");
  EXPECT_TRUE(compacting.compacted);
  EXPECT_EQ(podWatcher.stats().listRestarts.load(), 1u);
  podWatcher.stop();
  nodeWatcher.stop();
}

TEST_F(WatchTest, ReservationIsReplacedByItsWatchedPod) {
  startFeed();
  const std::string node = generatedNodeName(params_, 2);
  json pod = generatePod(params_, 2 * params_.podsPerNode + 1);
  pod["metadata"].erase("uid");
  pod["metadata"].erase("resourceVersion");
  pod["metadata"]["name"] = "reserved-pod";
  pod["metadata"]["annotations"][std::string(kReservationAnnotation)] = "admission-uid-1";
  pod["spec"]["nodeName"] = node;
  auto decoded = decodePod(pod);
  ASSERT_TRUE(decoded) << decoded.error().message;

  const Resources before = state_.read([&](const ClusterView& v) { return v.findNode(node)->requested; });
  Reservation reservation;
  reservation.id = "admission-uid-1";
  reservation.nodeName = node;
  reservation.podKey = "default/reserved-pod";
  reservation.requests = decoded->requests;
  reservation.nonZeroRequests = decoded->nonZeroRequests;
  reservation.hostPorts = decoded->hostPorts;
  reservation.expires = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  ASSERT_TRUE(state_.update([&](MutableClusterView& v) { return v.reserve(reservation); }));

  ASSERT_TRUE(server_->create(Kind::Pod, pod));
  ASSERT_TRUE(waitFor([&] { return state_.read([](const ClusterView& v) {
                          return static_cast<const MutableClusterView&>(v).reservationCount() == 0;
                        }); },
                      std::chrono::seconds(5)))
      << "the watched pod did not release its reservation";
  Resources expected = before;
  expected.add(decoded->requests);
  EXPECT_EQ(watchtest::normalized(state_.read([&](const ClusterView& v) { return v.findNode(node)->requested; })),
            watchtest::normalized(expected))
      << "counted once, not twice";
  expectConverged();
}

}  // namespace
}  // namespace placer
