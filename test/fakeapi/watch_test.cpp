// Watch streams of the fake API server over real TLS: event order, initial
// state, bookmarks, selectors, server-side timeouts, 410 for compacted
// resource versions, and connections cut mid-chunk.

#include <gtest/gtest.h>

#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/test_client.h"

namespace placer::fakeapi {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json makePod(const std::string& name, const std::string& node = "", const std::string& phase = "Running") {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"containers", json::array({{{"name", "app"}, {"image", "nginx:1.25"}}})}}},
              {"status", {{"phase", phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

std::string rvOf(const json& object) { return object["metadata"]["resourceVersion"].get<std::string>(); }

// The type and object name of the next event ("BOOKMARK" has no name).
std::string nextEvent(WatchStream& w, json* event = nullptr) {
  auto e = w.next();
  if (!e.ok()) return "error: " + e.error().message;
  if (!e->has_value()) return "end";
  if (event) *event = **e;
  const json& ev = **e;
  std::string s = ev["type"].get<std::string>();
  if (s != "BOOKMARK" && s != "ERROR") s += " " + ev["object"]["metadata"]["name"].get<std::string>();
  return s;
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override { startServer({}); }
  void startServer(Options options) {
    server.reset();
    auto s = FakeApiServer::start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.error().message;
    server = std::move(*s);
    client = std::make_unique<TestClient>(*server);
  }
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<TestClient> client;
};

TEST_F(WatchTest, FromAListResourceVersionStreamsLaterChangesInOrder) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("before")).ok());
  auto list = client->getJson("/api/v1/pods");
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("a")).ok());
  auto w = client->watch("/api/v1/pods?watch=1&resourceVersion=" + rvOf(*list));
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->head().status, 200);
  EXPECT_NE(w->head().header("Transfer-Encoding").find("chunked"), std::string::npos);
  ASSERT_TRUE(server->mutate(Kind::Pod, "default", "a", [](json& p) { p["status"]["phase"] = "Running"; }).ok());
  ASSERT_TRUE(server->remove(Kind::Pod, "default", "before").ok());

  json event;
  EXPECT_EQ(nextEvent(*w, &event), "ADDED a");
  EXPECT_EQ(event["object"]["kind"], "Pod");
  EXPECT_EQ(event["object"]["apiVersion"], "v1");
  uint64_t last = std::stoull(rvOf(event["object"]));
  EXPECT_EQ(nextEvent(*w, &event), "MODIFIED a");
  EXPECT_GT(std::stoull(rvOf(event["object"])), last);
  last = std::stoull(rvOf(event["object"]));
  EXPECT_EQ(nextEvent(*w, &event), "DELETED before");
  EXPECT_GT(std::stoull(rvOf(event["object"])), last);
  EXPECT_EQ(rvOf(event["object"]), std::to_string(server->resourceVersion()));
}

TEST_F(WatchTest, WithoutResourceVersionStartsWithTheCurrentStateAsAdded) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("x")).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("y")).ok());
  for (const std::string target : {"/api/v1/pods?watch=true", "/api/v1/pods?watch=1&resourceVersion=0",
                                   "/api/v1/watch/namespaces/default/pods"}) {
    auto w = client->watch(target);
    ASSERT_TRUE(w.ok()) << target;
    EXPECT_EQ(nextEvent(*w), "ADDED x") << target;
    EXPECT_EQ(nextEvent(*w), "ADDED y") << target;
  }
}

TEST_F(WatchTest, InitialStateOfManyObjectsArrivesCompleteThenLiveEvents) {
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(server->load(Kind::Pod, makePod("p" + std::to_string(10000 + i))).ok());
  auto w = client->watch("/api/v1/pods?watch=1");
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(nextEvent(*w), "ADDED p" + std::to_string(10000 + i));
  ASSERT_TRUE(server->create(Kind::Pod, makePod("live")).ok());
  EXPECT_EQ(nextEvent(*w), "ADDED live");
}

TEST_F(WatchTest, BookmarksCarryOnlyTheResourceVersion) {
  auto w = client->watch("/api/v1/pods?watch=1&resourceVersion=" + std::to_string(server->resourceVersion()) +
                         "&allowWatchBookmarks=true");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(server->waitForOpenWatches(1, 5s));
  // Changes elsewhere (nodes) move the revision; the bookmark says so.
  ASSERT_TRUE(server->create(Kind::Node, {{"metadata", {{"name", "n"}}}}).ok());
  server->sendBookmarks();
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "BOOKMARK");
  EXPECT_EQ(event["object"]["kind"], "Pod");
  EXPECT_EQ(rvOf(event["object"]), std::to_string(server->resourceVersion()));
  EXPECT_FALSE(event["object"]["metadata"].contains("name"));
}

TEST_F(WatchTest, BookmarksArePeriodicWhenAllowed) {
  Options options;
  options.bookmarkInterval = 100ms;
  startServer(options);
  auto w = client->watch("/api/v1/nodes?watch=1&allowWatchBookmarks=1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(nextEvent(*w), "BOOKMARK");
  EXPECT_EQ(nextEvent(*w), "BOOKMARK");
}

TEST_F(WatchTest, NoBookmarksUnlessAllowed) {
  Options options;
  options.bookmarkInterval = 50ms;
  startServer(options);
  auto w = client->watch("/api/v1/nodes?watch=1&timeoutSeconds=1");
  ASSERT_TRUE(w.ok());
  server->sendBookmarks();
  ASSERT_TRUE(server->create(Kind::Node, {{"metadata", {{"name", "n"}}}}).ok());
  EXPECT_EQ(nextEvent(*w), "ADDED n");
  EXPECT_EQ(nextEvent(*w), "end");
}

TEST_F(WatchTest, TimeoutSecondsEndsTheStreamCleanly) {
  auto w = client->watch("/api/v1/pods?watch=1&timeoutSeconds=1");
  ASSERT_TRUE(w.ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(nextEvent(*w), "end");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST_F(WatchTest, ForcedServerTimeoutEndsEveryWatchCleanly) {
  auto w1 = client->watch("/api/v1/pods?watch=1");
  auto w2 = client->watch("/api/v1/nodes?watch=1");
  ASSERT_TRUE(w1.ok() && w2.ok());
  ASSERT_TRUE(server->waitForOpenWatches(2, 5s));
  server->timeoutWatches();
  EXPECT_EQ(nextEvent(*w1), "end");
  EXPECT_EQ(nextEvent(*w2), "end");
}

TEST_F(WatchTest, CompactedResourceVersionIsAnErrorEventWith410) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("a")).ok());
  const std::string old = std::to_string(server->resourceVersion());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("b")).ok());
  server->compact();
  auto w = client->watch("/api/v1/pods?watch=1&resourceVersion=" + old);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->head().status, 200);
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "ERROR");
  EXPECT_EQ(event["object"]["kind"], "Status");
  EXPECT_EQ(event["object"]["code"], 410);
  EXPECT_EQ(event["object"]["reason"], "Expired");
  EXPECT_EQ(event["object"]["message"].get<std::string>().rfind("too old resource version: " + old, 0), 0u);
  EXPECT_EQ(nextEvent(*w), "end");
  // The current revision is still fine.
  auto fresh = client->watch("/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion=" +
                             std::to_string(server->resourceVersion()));
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(nextEvent(*fresh), "end");
}

TEST_F(WatchTest, ObjectsLeavingTheFieldSelectorAreDeletedForThatWatcher) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("job", "node-a", "Running")).ok());
  auto w = client->watch(
      "/api/v1/pods?watch=1&fieldSelector=status.phase!%3DSucceeded,status.phase!%3DFailed&resourceVersion=" +
      std::to_string(server->resourceVersion()));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(server->waitForOpenWatches(1, 5s));
  ASSERT_TRUE(server->create(Kind::Pod, makePod("done", "node-a", "Succeeded")).ok());
  ASSERT_TRUE(server->mutate(Kind::Pod, "default", "job", [](json& p) { p["status"]["phase"] = "Succeeded"; }).ok());
  ASSERT_TRUE(server->mutate(Kind::Pod, "default", "job", [](json& p) { p["status"]["phase"] = "Running"; }).ok());
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "DELETED job");
  // The previous state, stamped with the event's revision (as the cacher does).
  EXPECT_EQ(event["object"]["status"]["phase"], "Running");
  EXPECT_EQ(nextEvent(*w), "ADDED job");
}

TEST_F(WatchTest, DroppedWatchesBreakMidChunk) {
  auto w = client->watch("/api/v1/pods?watch=1");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(server->waitForOpenWatches(1, 5s));
  server->dropWatches();
  auto e = w->next();
  EXPECT_FALSE(e.ok()) << "a cut stream must not look like a clean end";
  ASSERT_TRUE(server->create(Kind::Pod, makePod("after")).ok());
  auto again = client->watch("/api/v1/pods?watch=1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(nextEvent(*again), "ADDED after");
}

TEST_F(WatchTest, SlowStreamsStillDeliverEverythingInOrder) {
  server->setWatchEventDelay(20ms);
  auto w = client->watch("/api/v1/pods?watch=1&resourceVersion=" + std::to_string(server->resourceVersion()));
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(server->create(Kind::Pod, makePod("p" + std::to_string(i))).ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(nextEvent(*w), "ADDED p" + std::to_string(i));
}

TEST_F(WatchTest, WatchNeedsAValidToken) {
  TestClient anonymous(*server, "");
  auto w = anonymous.watch("/api/v1/pods?watch=1");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->head().status, 401);
}

}  // namespace
}  // namespace placer::fakeapi
