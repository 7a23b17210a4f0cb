// The fake API server's own behaviour over real TLS sockets: lists and
// pagination, selectors, single objects, authentication, injected faults and
// the binding subresource.

#include "test/fakeapi/fake_apiserver.h"

#include <gtest/gtest.h>

#include <set>

#include "test/fakeapi/test_client.h"

namespace placer::fakeapi {
namespace {

using nlohmann::json;

json makeNode(const std::string& name, json labels = json::object()) {
  return {{"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", json::object()},
          {"status", {{"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}}}}};
}

json makePod(const std::string& ns, const std::string& name, const std::string& node = "",
             const std::string& phase = "Running", json labels = json::object()) {
  json pod = {{"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
              {"spec", {{"containers", json::array({{{"name", "app"}, {"image", "nginx:1.25"}}})}}},
              {"status", {{"phase", phase}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

std::vector<std::string> itemNames(const json& list) {
  std::vector<std::string> names;
  for (const auto& item : list["items"]) names.push_back(item["metadata"]["name"].get<std::string>());
  return names;
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FakeApiServer::start();
    ASSERT_TRUE(s.ok()) << s.error().message;
    server = std::move(*s);
    client = std::make_unique<TestClient>(*server);
  }
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<TestClient> client;
};

// Go's crypto/tls, serving a client that lists AES-GCM first (OpenSSL does,
// AES-256 before AES-128) on a machine with AES hardware, picks from its own
// order: TLS_AES_128_GCM_SHA256.
TEST_F(FakeApiServerTest, NegotiatesTheCipherSuiteTheApiServersGoTlsPicks) {
  auto conn = HttpsConnection::open("127.0.0.1", server->port(), server->caPem(), std::chrono::seconds(10));
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  EXPECT_EQ((*conn)->cipher(), "TLS_AES_128_GCM_SHA256");
}

TEST_F(FakeApiServerTest, ListCarriesResourceVersionAndItemsWithoutTypeMeta) {
  ASSERT_TRUE(server->create(Kind::Node, makeNode("node-a")).ok());
  ASSERT_TRUE(server->create(Kind::Node, makeNode("node-b")).ok());
  int status = 0;
  auto list = client->getJson("/api/v1/nodes", &status);
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(status, 200);
  EXPECT_EQ((*list)["kind"], "NodeList");
  EXPECT_EQ((*list)["apiVersion"], "v1");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], std::to_string(server->resourceVersion()));
  EXPECT_FALSE((*list)["metadata"].contains("continue"));
  EXPECT_EQ(itemNames(*list), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_FALSE((*list)["items"][0].contains("kind"));
  EXPECT_FALSE((*list)["items"][0]["metadata"]["uid"].get<std::string>().empty());
}

TEST_F(FakeApiServerTest, PaginatedListIsOneConsistentSnapshot) {
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(server->create(Kind::Node, makeNode("node-" + std::to_string(i))).ok());
  auto first = client->getJson("/api/v1/nodes?limit=3");
  ASSERT_TRUE(first.ok());
  const std::string listRv = (*first)["metadata"]["resourceVersion"];
  ASSERT_TRUE((*first)["metadata"].contains("continue"));
  EXPECT_EQ((*first)["metadata"]["remainingItemCount"], 4);
  EXPECT_EQ(itemNames(*first), (std::vector<std::string>{"node-0", "node-1", "node-2"}));

  // Changes after the first page are not seen by the rest of the list.
  ASSERT_TRUE(server->remove(Kind::Node, "", "node-5").ok());
  ASSERT_TRUE(server->create(Kind::Node, makeNode("node-9")).ok());
  ASSERT_TRUE(server->mutate(Kind::Node, "", "node-4", [](json& n) { n["metadata"]["labels"]["x"] = "y"; }).ok());

  std::vector<std::string> rest;
  std::string token = (*first)["metadata"]["continue"];
  while (!token.empty()) {
    auto page = client->getJson("/api/v1/nodes?limit=3&continue=" + token);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ((*page)["metadata"]["resourceVersion"], listRv);
    for (auto& n : itemNames(*page)) rest.push_back(n);
    for (const auto& item : (*page)["items"]) EXPECT_FALSE(item["metadata"]["labels"].contains("x"));
    token = (*page)["metadata"].value("continue", "");
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"node-3", "node-4", "node-5", "node-6"}));
}

TEST_F(FakeApiServerTest, ContinueTokenExpiresAfterCompaction) {
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(server->create(Kind::Node, makeNode("node-" + std::to_string(i))).ok());
  auto first = client->getJson("/api/v1/nodes?limit=2");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(server->create(Kind::Node, makeNode("node-late")).ok());
  server->compact();
  int status = 0;
  auto expiredList = client->getJson("/api/v1/nodes?limit=2&continue=" + (*first)["metadata"]["continue"].get<std::string>(),
                                     &status);
  ASSERT_TRUE(expiredList.ok());
  EXPECT_EQ(status, 410);
  EXPECT_EQ((*expiredList)["kind"], "Status");
  EXPECT_EQ((*expiredList)["reason"], "Expired");
  EXPECT_EQ((*expiredList)["code"], 410);
  EXPECT_NE((*expiredList)["message"].get<std::string>().find("The provided continue parameter is too old"),
            std::string::npos);
  // The inconsistent token goes on at the latest version.
  const std::string inconsistent = (*expiredList)["metadata"]["continue"];
  auto rest = client->getJson("/api/v1/nodes?limit=10&continue=" + inconsistent, &status);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(status, 200);
  EXPECT_EQ(itemNames(*rest), (std::vector<std::string>{"node-2", "node-3", "node-late"}));
}

TEST_F(FakeApiServerTest, BigListsAreStreamedInChunks) {
  const std::string padding(8000, 'x');
  for (int i = 0; i < 700; ++i) {
    json pod = makePod("bulk", "p" + std::to_string(10000 + i), "node-a");
    pod["metadata"]["annotations"] = {{"padding", padding}};
    ASSERT_TRUE(server->load(Kind::Pod, std::move(pod)).ok());
  }
  auto r = client->get("/api/v1/pods");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->header("Transfer-Encoding").find("chunked"), std::string::npos);
  json list = json::parse(r->body);
  ASSERT_EQ(list["items"].size(), 700u);
  EXPECT_EQ(list["items"][699]["metadata"]["name"], "p10699");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(server->resourceVersion()));
}

TEST_F(FakeApiServerTest, ResourceVersionZeroListIgnoresLimitLikeTheWatchCache) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(server->create(Kind::Node, makeNode("node-" + std::to_string(i))).ok());
  auto list = client->getJson("/api/v1/nodes?limit=2&resourceVersion=0");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["items"].size(), 5u);
  EXPECT_FALSE((*list)["metadata"].contains("continue"));
}

TEST_F(FakeApiServerTest, FieldAndLabelSelectorsFilterLists) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("default", "bound", "node-a", "Running", {{"app", "web"}})).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("default", "pending", "", "Pending", {{"app", "web"}})).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("default", "done", "node-a", "Succeeded")).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("other", "failed", "node-b", "Failed", {{"app", "db"}})).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("other", "running-b", "node-b", "Running", {{"app", "db"}})).ok());

  struct Case {
    std::string name;
    std::string target;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"non-terminal pods, as kube-scheduler lists them",
       "/api/v1/pods?fieldSelector=status.phase!%3DSucceeded,status.phase!%3DFailed",
       {"bound", "pending", "running-b"}},
      {"pods of one node (the kubelet's view)", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", {"bound", "done"}},
      {"unassigned pods", "/api/v1/pods?fieldSelector=spec.nodeName%3D", {"pending"}},
      {"by name", "/api/v1/pods?fieldSelector=metadata.name%3Dfailed", {"failed"}},
      {"one namespace", "/api/v1/namespaces/other/pods", {"failed", "running-b"}},
      {"label equality", "/api/v1/pods?labelSelector=app%3Dweb", {"bound", "pending"}},
      {"label set", "/api/v1/pods?labelSelector=app%20in%20(db,web),app!%3Ddb", {"bound", "pending"}},
      {"label absence", "/api/v1/pods?labelSelector=!app", {"done"}},
      {"selectors with pagination", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b&limit=1", {"failed"}},
  };
  for (const auto& c : cases) {
    int status = 0;
    auto list = client->getJson(c.target, &status);
    ASSERT_TRUE(list.ok()) << c.name;
    EXPECT_EQ(status, 200) << c.name;
    EXPECT_EQ(itemNames(*list), c.want) << c.name;
  }
}

TEST_F(FakeApiServerTest, UnsupportedFieldSelectorIsBadRequest) {
  int status = 0;
  auto r = client->getJson("/api/v1/pods?fieldSelector=spec.hostname%3Dx", &status);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(status, 400);
  EXPECT_EQ((*r)["reason"], "BadRequest");
  EXPECT_EQ((*r)["message"], "field label not supported: spec.hostname");
}

TEST_F(FakeApiServerTest, GetsSingleObjectsWithTypeMetaOr404) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("ns1", "web-0", "node-a")).ok());
  int status = 0;
  auto pod = client->getJson("/api/v1/namespaces/ns1/pods/web-0", &status);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(status, 200);
  EXPECT_EQ((*pod)["kind"], "Pod");
  EXPECT_EQ((*pod)["spec"]["nodeName"], "node-a");
  auto missing = client->getJson("/api/v1/namespaces/ns1/pods/nope", &status);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(status, 404);
  EXPECT_EQ((*missing)["reason"], "NotFound");
  EXPECT_EQ((*missing)["message"], "pods \"nope\" not found");
  EXPECT_EQ((*missing)["details"]["kind"], "pods");
}

TEST_F(FakeApiServerTest, BearerTokenIsRequiredAndCanBeRotated) {
  struct Case {
    std::string name;
    std::string token;
    int want;
  };
  server->setTokens({"new-token"});
  const std::vector<Case> cases = {
      {"no token", "", 401}, {"wrong token", "guess", 401}, {"rotated-out token", "test-token", 401},
      {"current token", "new-token", 200}};
  for (const auto& c : cases) {
    TestClient cl(*server, c.token);
    int status = 0;
    auto r = cl.getJson("/api/v1/nodes", &status);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(status, c.want) << c.name;
    if (c.want == 401) {
      EXPECT_EQ((*r)["kind"], "Status") << c.name;
      EXPECT_EQ((*r)["reason"], "Unauthorized") << c.name;
      EXPECT_EQ((*r)["code"], 401) << c.name;
    }
  }
  server->expireToken("new-token");
  TestClient expiredClient(*server, "new-token");
  int status = 0;
  ASSERT_TRUE(expiredClient.getJson("/api/v1/nodes", &status).ok());
  EXPECT_EQ(status, 401);
}

TEST_F(FakeApiServerTest, InjectedFaultsAnswerTheNextRequestsThenRecover) {
  server->failNextRequests(2, 429, 3);
  auto first = client->get("/api/v1/nodes");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->status, 429);
  EXPECT_EQ(first->header("Retry-After"), "3");
  EXPECT_EQ(json::parse(first->body)["reason"], "TooManyRequests");
  EXPECT_EQ(client->get("/api/v1/nodes")->status, 429);
  EXPECT_EQ(client->get("/api/v1/nodes")->status, 200);

  server->failNextRequests(1, 500);
  auto broken = client->get("/api/v1/pods");
  ASSERT_TRUE(broken.ok());
  EXPECT_EQ(broken->status, 500);
  EXPECT_EQ(json::parse(broken->body)["reason"], "InternalError");
  EXPECT_EQ(client->get("/api/v1/pods")->status, 200);
}

TEST_F(FakeApiServerTest, CreateOverHttpAssignsIdentityAndResourceVersion) {
  auto r = client->request("POST", "/api/v1/nodes", makeNode("node-x").dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 201);
  json created = json::parse(r->body);
  EXPECT_EQ(created["metadata"]["name"], "node-x");
  EXPECT_EQ(created["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_FALSE(created["metadata"]["creationTimestamp"].get<std::string>().empty());
  const uint64_t rv = std::stoull(created["metadata"]["resourceVersion"].get<std::string>());
  auto again = client->request("POST", "/api/v1/nodes", makeNode("node-x").dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409);
  EXPECT_EQ(json::parse(again->body)["reason"], "AlreadyExists");

  ASSERT_TRUE(server->mutate(Kind::Node, "", "node-x", [](json& n) { n["spec"]["unschedulable"] = true; }).ok());
  auto node = server->get(Kind::Node, "", "node-x");
  ASSERT_TRUE(node.has_value());
  EXPECT_GT(std::stoull((*node)["metadata"]["resourceVersion"].get<std::string>()), rv);
  EXPECT_EQ((*node)["metadata"]["uid"], created["metadata"]["uid"]);
}

TEST_F(FakeApiServerTest, GenerateNameGetsARandomSuffix) {
  json pod = makePod("default", "", "node-a");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "web-";
  std::set<std::string> names;
  for (int i = 0; i < 3; ++i) {
    auto created = server->create(Kind::Pod, pod);
    ASSERT_TRUE(created.ok()) << created.error().message;
    const std::string name = (*created)["metadata"]["name"];
    EXPECT_EQ(name.rfind("web-", 0), 0u);
    EXPECT_EQ(name.size(), 9u);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 3u);
}

TEST_F(FakeApiServerTest, BindingSubresourceAnswersLikeUpstream) {
  ASSERT_TRUE(server->create(Kind::Pod, makePod("default", "free", "", "Pending")).ok());
  ASSERT_TRUE(server->create(Kind::Pod, makePod("default", "taken", "node-a", "Running")).ok());
  const std::string freeUid = server->get(Kind::Pod, "default", "free").value()["metadata"]["uid"];
  auto binding = [](const std::string& pod, const std::string& node, const std::string& uid = "") {
    json b = {{"apiVersion", "v1"},
              {"kind", "Binding"},
              {"metadata", {{"name", pod}}},
              {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
    if (!uid.empty()) b["metadata"]["uid"] = uid;
    return b.dump();
  };
  struct Case {
    std::string name;
    std::string pod;
    std::string body;
    int wantCode;
    std::string wantReason;
    std::string wantMessage;
  };
  const std::vector<Case> cases = {
      {"stale uid precondition", "free", binding("free", "node-b", "00000000-0000-4000-8000-000000000000"), 409,
       "Conflict",
       "Operation cannot be fulfilled on pods \"free\": Precondition failed: UID in precondition: "
       "00000000-0000-4000-8000-000000000000, UID in object meta: " +
           freeUid},
      {"unassigned pod", "free", binding("free", "node-b", freeUid), 201, "", ""},
      {"already assigned", "taken", binding("taken", "node-b"), 409, "Conflict",
       "Operation cannot be fulfilled on pods/binding \"taken\": pod taken is already assigned to node \"node-a\""},
      {"bound by the case before", "free", binding("free", "node-c"), 409, "Conflict",
       "Operation cannot be fulfilled on pods/binding \"free\": pod free is already assigned to node \"node-b\""},
      {"missing pod", "ghost", binding("ghost", "node-a"), 404, "NotFound", "pods \"ghost\" not found"},
      {"name mismatch", "free", binding("other", "node-a"), 400, "BadRequest",
       "name in URL does not match name in Binding object"},
  };
  for (const auto& c : cases) {
    auto r = client->request("POST", "/api/v1/namespaces/default/pods/" + c.pod + "/binding", c.body);
    ASSERT_TRUE(r.ok()) << c.name;
    EXPECT_EQ(r->status, c.wantCode) << c.name;
    json body = json::parse(r->body);
    EXPECT_EQ(body["kind"], "Status") << c.name;
    if (c.wantCode == 201) {
      EXPECT_EQ(body["status"], "Success") << c.name;
    } else {
      EXPECT_EQ(body["reason"], c.wantReason) << c.name;
      EXPECT_EQ(body["message"], c.wantMessage) << c.name;
    }
  }
  auto bound = server->get(Kind::Pod, "default", "free");
  EXPECT_EQ((*bound)["spec"]["nodeName"], "node-b");
  bool scheduled = false;
  for (const auto& c : (*bound)["status"]["conditions"])
    scheduled |= c["type"] == "PodScheduled" && c["status"] == "True";
  EXPECT_TRUE(scheduled);
}

TEST_F(FakeApiServerTest, UpdateWithStaleResourceVersionConflicts) {
  auto created = server->create(Kind::Node, makeNode("n1"));
  ASSERT_TRUE(created.ok());
  json stale = *created;
  ASSERT_TRUE(server->mutate(Kind::Node, "", "n1", [](json& n) { n["metadata"]["labels"]["a"] = "b"; }).ok());
  auto r = client->request("PUT", "/api/v1/nodes/n1", stale.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(json::parse(r->body)["reason"], "Conflict");

  auto patch = client->request("PATCH", "/api/v1/nodes/n1", R"({"spec":{"unschedulable":true}})",
                               "application/merge-patch+json");
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(patch->status, 200);
  EXPECT_EQ(json::parse(patch->body)["spec"]["unschedulable"], true);
  EXPECT_EQ(json::parse(patch->body)["metadata"]["labels"]["a"], "b");

  auto del = client->request("DELETE", "/api/v1/nodes/n1");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 200);
  EXPECT_EQ(server->count(Kind::Node), 0u);
}

}  // namespace
}  // namespace placer::fakeapi
