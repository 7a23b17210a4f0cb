// Every kind of the fake API server's table over real TLS: paths, list and
// watch for core, apps and cluster-scoped kinds, optimistic concurrency on
// Leases, events.k8s.io Events, a MutatingWebhookConfiguration patched as
// `placer certs` patches it, status subresources, and upstream's Status
// bodies for 404, 409 and 422.

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/test_client.h"

namespace placer::fakeapi {
namespace {

using nlohmann::json;

std::string rvOf(const json& object) { return object["metadata"]["resourceVersion"].get<std::string>(); }

std::vector<std::string> itemNames(const json& list) {
  std::vector<std::string> names;
  for (const auto& item : list["items"]) names.push_back(item["metadata"]["name"].get<std::string>());
  return names;
}

// "ADDED web", "DELETED web", "ERROR", "BOOKMARK", "end" or "error: ...".
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

json object(const std::string& name, const std::string& ns = "", json labels = json::object()) {
  json meta = {{"name", name}, {"labels", std::move(labels)}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"metadata", meta}};
}

json replicaSet(const std::string& name, const std::string& ns, const std::string& app) {
  json rs = object(name, ns, {{"app", app}});
  rs["spec"] = {{"replicas", 3},
                {"selector", {{"matchLabels", {{"app", app}}}}},
                {"template",
                 {{"metadata", {{"labels", {{"app", app}}}}},
                  {"spec", {{"containers", json::array({{{"name", "app"}, {"image", "nginx:1.25"}}})}}}}}};
  return rs;
}

json service(const std::string& name, const std::string& ns, const std::string& app) {
  json svc = object(name, ns, {{"app", app}});
  svc["spec"] = {{"selector", {{"app", app}}}, {"ports", json::array({{{"port", 80}}})}};
  return svc;
}

json lease(const std::string& holder) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", "placer"}, {"namespace", "placer-system"}}},
          {"spec", {{"holderIdentity", holder}, {"leaseDurationSeconds", 15}, {"leaseTransitions", 0}}}};
}

json scheduledEvent(const std::string& name) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"eventTime", "2024-05-01T10:00:00.000000Z"},
          {"reportingController", "placer.io/placer"},
          {"reportingInstance", "placer-0"},
          {"action", "Binding"},
          {"reason", "Scheduled"},
          {"type", "Normal"},
          {"note", "Successfully assigned team-a/web-1 to node-a"},
          {"regarding", {{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", "team-a"}, {"name", "web-1"}}}};
}

class KindsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FakeApiServer::start();
    ASSERT_TRUE(s.ok()) << s.error().message;
    server = std::move(*s);
    client = std::make_unique<TestClient>(*server);
  }
  // Method, path and body over TLS; the status code and the parsed body.
  ApiResponse call(const std::string& method, const std::string& target, const json& body = nullptr,
                   const std::string& contentType = "application/json") const {
    auto r = client->request(method, target, body.is_null() ? "" : body.dump(), contentType);
    if (!r.ok()) return {0, json{{"message", r.error().message}}};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<TestClient> client;
};

// --- The table ----------------------------------------------------------------

TEST(KindTable, NamesEveryKindAsUpstreamDoes) {
  EXPECT_EQ(allKinds().size(), kKindCount);
  EXPECT_EQ(qualifiedResource(Kind::Pod), "pods");
  EXPECT_EQ(qualifiedResource(Kind::Lease), "leases.coordination.k8s.io");
  EXPECT_EQ(qualifiedResource(Kind::MutatingWebhookConfiguration),
            "mutatingwebhookconfigurations.admissionregistration.k8s.io");
  EXPECT_EQ(kindForResource("apps", "v1", "replicasets"), Kind::ReplicaSet);
  EXPECT_EQ(kindForResource("", "v1", "endpoints"), Kind::Endpoints);
  EXPECT_EQ(kindForResource("apps", "v1", "pods"), std::nullopt);
  EXPECT_EQ(kindForType("events.k8s.io/v1", "Event"), Kind::Event);
  EXPECT_EQ(kindForType("v1", "Event"), std::nullopt) << "core/v1 events are not served";
  EXPECT_EQ(kindInfo(Kind::EndpointSlice).listKind, "EndpointSliceList");
  EXPECT_FALSE(kindInfo(Kind::Namespace).namespaced);
  EXPECT_FALSE(kindInfo(Kind::MutatingWebhookConfiguration).namespaced);
  EXPECT_TRUE(kindInfo(Kind::StatefulSet).namespaced);
}

// --- List, watch and 410 for a core, a cluster-scoped and an apps kind ----------

struct ListWatchCase {
  std::string name;
  Kind kind;
  std::string collection;  // cluster-wide path
  std::string inTeamA;     // per-namespace path ("" for cluster-scoped)
  std::function<json(const std::string& name, const std::string& ns)> make;
  std::string listKind;
  std::string apiVersion;
};

class ListWatchTest : public KindsTest, public ::testing::WithParamInterface<ListWatchCase> {};

TEST_P(ListWatchTest, ListsPerNamespaceAndClusterWideThenWatchesFromTheListThen410AfterCompaction) {
  const ListWatchCase& c = GetParam();
  const bool clusterScoped = c.inTeamA.empty();
  ASSERT_TRUE(server->create(c.kind, c.make("alpha", "team-a")).ok());
  ASSERT_TRUE(server->create(c.kind, c.make("beta", "team-b")).ok());

  auto all = client->getJson(c.collection);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ((*all)["kind"], c.listKind);
  EXPECT_EQ((*all)["apiVersion"], c.apiVersion);
  EXPECT_EQ((*all)["metadata"]["resourceVersion"], std::to_string(server->resourceVersion()));
  EXPECT_EQ(itemNames(*all), (std::vector<std::string>{"alpha", "beta"}));
  if (!clusterScoped) {
    EXPECT_EQ((*all)["items"][0]["metadata"]["namespace"], "team-a");
  }
  if (!clusterScoped) {
    auto teamA = client->getJson(c.inTeamA);
    ASSERT_TRUE(teamA.ok());
    EXPECT_EQ(itemNames(*teamA), (std::vector<std::string>{"alpha"}));
  }
  auto byName = client->getJson(c.collection + "?fieldSelector=metadata.name%3Dbeta");
  ASSERT_TRUE(byName.ok());
  EXPECT_EQ(itemNames(*byName), (std::vector<std::string>{"beta"}));

  // Watch from the list's resourceVersion: later changes, typed, in order.
  auto w = client->watch(c.collection + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                         (*all)["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->head().status, 200);
  ASSERT_TRUE(server->create(c.kind, c.make("gamma", "team-a")).ok());
  ASSERT_TRUE(server->mutate(c.kind, "team-a", "alpha", [](json& o) { o["metadata"]["labels"]["tier"] = "web"; }).ok());
  ASSERT_TRUE(server->remove(c.kind, clusterScoped ? "" : "team-b", "beta").ok());
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "ADDED gamma");
  EXPECT_EQ(event["object"]["kind"], kindName(c.kind));
  EXPECT_EQ(event["object"]["apiVersion"], c.apiVersion);
  ASSERT_EQ(nextEvent(*w, &event), "MODIFIED alpha");
  EXPECT_EQ(event["object"]["metadata"]["labels"]["tier"], "web");
  ASSERT_EQ(nextEvent(*w, &event), "DELETED beta");
  server->sendBookmarks();
  ASSERT_EQ(nextEvent(*w, &event), "BOOKMARK");
  EXPECT_EQ(event["object"]["kind"], kindName(c.kind));
  EXPECT_EQ(event["object"]["metadata"]["resourceVersion"], std::to_string(server->resourceVersion()));

  // After compaction an old resourceVersion is an ERROR event with 410.
  const std::string old = std::to_string(server->resourceVersion());
  ASSERT_TRUE(server->create(c.kind, c.make("delta", "team-a")).ok());
  server->compact();
  auto stale = client->watch(c.collection + "?watch=1&resourceVersion=" + old);
  ASSERT_TRUE(stale.ok());
  ASSERT_EQ(nextEvent(*stale, &event), "ERROR");
  EXPECT_EQ(event["object"]["code"], 410);
  EXPECT_EQ(event["object"]["reason"], "Expired");
  EXPECT_EQ(nextEvent(*stale), "end");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ListWatchTest,
    ::testing::Values(
        ListWatchCase{"Namespaces", Kind::Namespace, "/api/v1/namespaces", "",
                      [](const std::string& n, const std::string&) { return object(n); }, "NamespaceList", "v1"},
        ListWatchCase{"Services", Kind::Service, "/api/v1/services", "/api/v1/namespaces/team-a/services",
                      [](const std::string& n, const std::string& ns) { return service(n, ns, n); }, "ServiceList",
                      "v1"},
        ListWatchCase{"ReplicaSets", Kind::ReplicaSet, "/apis/apps/v1/replicasets",
                      "/apis/apps/v1/namespaces/team-a/replicasets",
                      [](const std::string& n, const std::string& ns) { return replicaSet(n, ns, n); },
                      "ReplicaSetList", "apps/v1"}),
    [](const ::testing::TestParamInfo<ListWatchCase>& info) { return info.param.name; });

TEST_F(KindsTest, WatchPathsAndSelectorsWorkForNonCoreKinds) {
  ASSERT_TRUE(server->create(Kind::Deployment, replicaSet("web", "team-a", "web")).ok());
  auto w = client->watch("/apis/apps/v1/watch/namespaces/team-a/deployments?labelSelector=app%3Dapi");
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(server->create(Kind::Deployment, replicaSet("api", "team-a", "api")).ok());
  ASSERT_TRUE(server->create(Kind::Deployment, replicaSet("api", "team-b", "api")).ok());
  EXPECT_EQ(nextEvent(*w), "ADDED api");
  ASSERT_TRUE(server->mutate(Kind::Deployment, "team-a", "api", [](json& d) { d["metadata"]["labels"]["app"] = "x"; }).ok());
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "DELETED api") << "leaving the label selector";
  EXPECT_EQ(event["object"]["metadata"]["namespace"], "team-a");
}

// --- Pagination over a non-core kind ---------------------------------------------

TEST_F(KindsTest, PaginatesAClusterWideListOfANonCoreKindAsOneSnapshot) {
  for (const std::string ns : {"team-a", "team-b", "team-c"})
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(server->create(Kind::EndpointSlice, object("web-" + std::to_string(i), ns)).ok());
  auto first = client->getJson("/apis/discovery.k8s.io/v1/endpointslices?limit=4");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ((*first)["kind"], "EndpointSliceList");
  EXPECT_EQ((*first)["apiVersion"], "discovery.k8s.io/v1");
  EXPECT_EQ((*first)["metadata"]["remainingItemCount"], 5);
  ASSERT_EQ((*first)["items"].size(), 4u);
  EXPECT_EQ((*first)["items"][3]["metadata"]["namespace"], "team-b");

  // A change after the first page is not in the rest of this list.
  ASSERT_TRUE(server->remove(Kind::EndpointSlice, "team-c", "web-2").ok());
  std::vector<std::string> rest;
  std::string token = (*first)["metadata"]["continue"];
  while (!token.empty()) {
    auto page = client->getJson("/apis/discovery.k8s.io/v1/endpointslices?limit=4&continue=" + token);
    ASSERT_TRUE(page.ok());
    EXPECT_EQ((*page)["metadata"]["resourceVersion"], (*first)["metadata"]["resourceVersion"]);
    for (const auto& item : (*page)["items"])
      rest.push_back(item["metadata"]["namespace"].get<std::string>() + "/" +
                     item["metadata"]["name"].get<std::string>());
    token = (*page)["metadata"].value("continue", "");
  }
  EXPECT_EQ(rest, (std::vector<std::string>{"team-b/web-1", "team-b/web-2", "team-c/web-0", "team-c/web-1",
                                            "team-c/web-2"}));

  // A token from another namespace's list is refused, as upstream's key range check does.
  auto inTeamA = client->getJson("/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices?limit=2");
  ASSERT_TRUE(inTeamA.ok());
  int status = 0;
  auto outside = client->getJson("/apis/discovery.k8s.io/v1/namespaces/team-b/endpointslices?limit=2&continue=" +
                                     (*inTeamA)["metadata"]["continue"].get<std::string>(),
                                 &status);
  ASSERT_TRUE(outside.ok());
  EXPECT_EQ(status, 400);
}

// --- Leases: optimistic concurrency --------------------------------------------

TEST_F(KindsTest, LeasePutWithTheCurrentResourceVersionSucceedsAndAStaleOneConflicts) {
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/placer-system/leases/placer";
  auto created = call("POST", "/apis/coordination.k8s.io/v1/namespaces/placer-system/leases", lease("replica-a"));
  ASSERT_EQ(created.code, 201) << created.body.dump();
  EXPECT_EQ(created.body["kind"], "Lease");
  EXPECT_EQ(created.body["apiVersion"], "coordination.k8s.io/v1");
  const std::string rv1 = rvOf(created.body);

  // Replica b renews on what it read: accepted, with a new resourceVersion.
  json renewed = created.body;
  renewed["spec"]["holderIdentity"] = "replica-b";
  renewed["spec"]["leaseTransitions"] = 1;
  auto put = call("PUT", path, renewed);
  ASSERT_EQ(put.code, 200) << put.body.dump();
  EXPECT_EQ(put.body["spec"]["holderIdentity"], "replica-b");
  EXPECT_NE(rvOf(put.body), rv1);
  EXPECT_EQ(put.body["metadata"]["uid"], created.body["metadata"]["uid"]);

  // Replica a writes on its stale read: 409 with upstream's Status.
  json stale = created.body;
  stale["spec"]["holderIdentity"] = "replica-a";
  auto conflict = call("PUT", path, stale);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(conflict.body["kind"], "Status");
  EXPECT_EQ(conflict.body["status"], "Failure");
  EXPECT_EQ(conflict.body["reason"], "Conflict");
  EXPECT_EQ(conflict.body["code"], 409);
  EXPECT_EQ(conflict.body["message"],
            "Operation cannot be fulfilled on leases.coordination.k8s.io \"placer\": the object has been modified; "
            "please apply your changes to the latest version and try again");
  EXPECT_EQ(conflict.body["details"], (json{{"name", "placer"}, {"group", "coordination.k8s.io"}, {"kind", "leases"}}));
  EXPECT_EQ(server->get(Kind::Lease, "placer-system", "placer")->at("spec")["holderIdentity"], "replica-b");

  // A Lease update must name the version it read (AllowUnconditionalUpdate false).
  json blind = put.body;
  blind["metadata"].erase("resourceVersion");
  auto invalid = call("PUT", path, blind);
  EXPECT_EQ(invalid.code, 422);
  EXPECT_EQ(invalid.body["reason"], "Invalid");
  EXPECT_EQ(invalid.body["message"],
            "leases.coordination.k8s.io \"placer\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be "
            "specified for an update");
  EXPECT_EQ(invalid.body["details"]["causes"][0]["field"], "metadata.resourceVersion");

  // The C++ update answers the same conflict.
  auto cxx = server->update(Kind::Lease, stale);
  ASSERT_FALSE(cxx.ok());
  EXPECT_NE(cxx.error().message.find("the object has been modified"), std::string::npos);
}

TEST_F(KindsTest, PutCreatesOnlyWhereTheStrategyAllowsCreateOnUpdate) {
  auto leaseCreated = call("PUT", "/apis/coordination.k8s.io/v1/namespaces/placer-system/leases/placer",
                           lease("replica-a"));
  EXPECT_EQ(leaseCreated.code, 201) << leaseCreated.body.dump();
  EXPECT_TRUE(server->contains(Kind::Lease, "placer-system", "placer"));

  auto configMap = call("PUT", "/api/v1/namespaces/team-a/configmaps/settings", object("settings", "team-a"));
  EXPECT_EQ(configMap.code, 404);
  EXPECT_EQ(configMap.body["message"], "configmaps \"settings\" not found");
  EXPECT_FALSE(server->contains(Kind::ConfigMap, "team-a", "settings"));
}

// --- 404 and 409 bodies -----------------------------------------------------------

TEST_F(KindsTest, MissingAndDuplicateObjectsAnswerUpstreamStatusBodies) {
  struct Case {
    std::string name;
    std::string method;
    std::string path;
    json body;
    int code;
    std::string reason;
    std::string message;
    json details;
  };
  ASSERT_TRUE(server->create(Kind::Secret, object("token", "team-a")).ok());
  const std::vector<Case> cases = {
      {"get a missing lease", "GET", "/apis/coordination.k8s.io/v1/namespaces/placer-system/leases/placer", nullptr,
       404, "NotFound", "leases.coordination.k8s.io \"placer\" not found",
       {{"name", "placer"}, {"group", "coordination.k8s.io"}, {"kind", "leases"}}},
      {"delete a missing deployment", "DELETE", "/apis/apps/v1/namespaces/team-a/deployments/web", nullptr, 404,
       "NotFound", "deployments.apps \"web\" not found", {{"name", "web"}, {"group", "apps"}, {"kind", "deployments"}}},
      {"put a missing namespace", "PUT", "/api/v1/namespaces/team-z", object("team-z"), 404, "NotFound",
       "namespaces \"team-z\" not found", {{"name", "team-z"}, {"kind", "namespaces"}}},
      {"patch a missing webhook configuration", "PATCH",
       "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/placer", json::object(), 404, "NotFound",
       "mutatingwebhookconfigurations.admissionregistration.k8s.io \"placer\" not found",
       {{"name", "placer"}, {"group", "admissionregistration.k8s.io"}, {"kind", "mutatingwebhookconfigurations"}}},
      {"create an existing secret", "POST", "/api/v1/namespaces/team-a/secrets", object("token"), 409,
       "AlreadyExists", "secrets \"token\" already exists", {{"name", "token"}, {"kind", "secrets"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = call(c.method, c.path, c.body,
                  c.method == "PATCH" ? "application/merge-patch+json" : "application/json");
    EXPECT_EQ(r.code, c.code);
    EXPECT_EQ(r.body["kind"], "Status");
    EXPECT_EQ(r.body["apiVersion"], "v1");
    EXPECT_EQ(r.body["status"], "Failure");
    EXPECT_EQ(r.body["code"], c.code);
    EXPECT_EQ(r.body["reason"], c.reason);
    EXPECT_EQ(r.body["message"], c.message);
    EXPECT_EQ(r.body["details"], c.details);
  }
}

TEST_F(KindsTest, UnknownPathsAndWrongScopesAre404) {
  for (const std::string path :
       {"/apis/apps/v1/namespaces/team-a/pods", "/api/v1/namespaces/team-a/replicasets", "/apis/apps/v2/deployments",
        "/api/v1/configmaps/settings", "/api/v1/namespaces/team-a/configmaps/settings/status",
        "/apis/coordination.k8s.io/v1/namespaces/a/leases/b/c/d"}) {
    SCOPED_TRACE(path);
    auto r = call("GET", path);
    EXPECT_EQ(r.code, 404);
    EXPECT_EQ(r.body["message"], "the server could not find the requested resource");
  }
}

TEST_F(KindsTest, DeleteAnswersTheObjectOrASuccessStatusAsUpstreamRegistriesDo) {
  ASSERT_TRUE(server->create(Kind::ConfigMap, object("settings", "team-a")).ok());
  ASSERT_TRUE(server->create(Kind::Service, service("web", "team-a", "web")).ok());
  const std::string uid = server->get(Kind::ConfigMap, "team-a", "settings")->at("metadata")["uid"];
  auto cm = call("DELETE", "/api/v1/namespaces/team-a/configmaps/settings");
  EXPECT_EQ(cm.code, 200);
  EXPECT_EQ(cm.body["kind"], "Status");
  EXPECT_EQ(cm.body["status"], "Success");
  EXPECT_EQ(cm.body["details"], (json{{"name", "settings"}, {"kind", "configmaps"}, {"uid", uid}}));
  auto svc = call("DELETE", "/api/v1/namespaces/team-a/services/web");
  EXPECT_EQ(svc.code, 200);
  EXPECT_EQ(svc.body["kind"], "Service");
  EXPECT_EQ(server->count(Kind::ConfigMap) + server->count(Kind::Service), 0u);
}

// --- events.k8s.io Events ---------------------------------------------------------

TEST_F(KindsTest, EventsAreCreatedAndListedThroughEventsK8sIo) {
  auto created = call("POST", "/apis/events.k8s.io/v1/namespaces/team-a/events", scheduledEvent("web-1.17c3"));
  ASSERT_EQ(created.code, 201) << created.body.dump();
  EXPECT_EQ(created.body["kind"], "Event");
  EXPECT_EQ(created.body["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(created.body["reason"], "Scheduled");
  json other = scheduledEvent("");
  other["metadata"].erase("name");
  other["metadata"]["generateName"] = "web-2.";
  ASSERT_EQ(call("POST", "/apis/events.k8s.io/v1/namespaces/team-a/events", other).code, 201);

  auto list = client->getJson("/apis/events.k8s.io/v1/namespaces/team-a/events");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["kind"], "EventList");
  EXPECT_EQ((*list)["apiVersion"], "events.k8s.io/v1");
  ASSERT_EQ((*list)["items"].size(), 2u);
  EXPECT_EQ((*list)["items"][0]["note"], "Successfully assigned team-a/web-1 to node-a");
  EXPECT_EQ((*list)["items"][0]["reportingController"], "placer.io/placer");
  EXPECT_EQ(server->list(Kind::Event, "team-a").size(), 2u);
  EXPECT_EQ(server->list(Kind::Event, "team-b").size(), 0u);
}

TEST_F(KindsTest, AnEventMissingRequiredFieldsIsRefusedAsUpstreamValidates) {
  struct Case {
    std::string name;
    std::function<void(json&)> change;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"no eventTime", [](json& e) { e.erase("eventTime"); },
       "Event.events.k8s.io \"bad\" is invalid: eventTime: Required value"},
      {"no action and no reason",
       [](json& e) {
         e.erase("action");
         e.erase("reason");
       },
       "Event.events.k8s.io \"bad\" is invalid: [action: Required value, reason: Required value]"},
      {"an unknown type", [](json& e) { e["type"] = "Info"; },
       "Event.events.k8s.io \"bad\" is invalid: type: Invalid value: \"\": has invalid value: Info"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json event = scheduledEvent("bad");
    c.change(event);
    auto r = call("POST", "/apis/events.k8s.io/v1/namespaces/team-a/events", event);
    EXPECT_EQ(r.code, 422);
    EXPECT_EQ(r.body["reason"], "Invalid");
    EXPECT_EQ(r.body["message"], c.message);
    EXPECT_EQ(r.body["details"]["group"], "events.k8s.io");
  }
  EXPECT_EQ(server->count(Kind::Event), 0u);
}

// --- A cluster-scoped MutatingWebhookConfiguration ----------------------------------

TEST_F(KindsTest, MutatingWebhookConfigurationIsClusterScopedAndPatchedLikePlacerCertsDoes) {
  json config = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                 {"kind", "MutatingWebhookConfiguration"},
                 {"metadata", {{"name", "placer"}}},
                 {"webhooks", json::array({{{"name", "placer.placer.io"},
                                            {"clientConfig", {{"service", {{"name", "placer"}, {"namespace", "placer-system"}}}}},
                                            {"admissionReviewVersions", {"v1"}},
                                            {"sideEffects", "None"}}})}};
  const std::string collection = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
  ASSERT_EQ(call("POST", collection, config).code, 201);
  auto got = call("GET", collection + "/placer");
  ASSERT_EQ(got.code, 200);
  EXPECT_EQ(got.body["kind"], "MutatingWebhookConfiguration");
  EXPECT_FALSE(got.body["metadata"].contains("namespace"));
  EXPECT_EQ(call("GET", "/apis/admissionregistration.k8s.io/v1/namespaces/default/mutatingwebhookconfigurations/placer")
                .code,
            404);

  // A JSON patch guarded by a test of the old caBundle, as `placer certs` sends.
  json jsonPatch = json::array({{{"op", "add"}, {"path", "/webhooks/0/clientConfig/caBundle"}, {"value", "Q0Ex"}}});
  auto patched = call("PATCH", collection + "/placer", jsonPatch, "application/json-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body.dump();
  EXPECT_EQ(patched.body["webhooks"][0]["clientConfig"]["caBundle"], "Q0Ex");
  json failingTest = json::array({{{"op", "test"}, {"path", "/webhooks/0/clientConfig/caBundle"}, {"value", "old"}},
                                  {{"op", "replace"}, {"path", "/webhooks/0/clientConfig/caBundle"}, {"value", "Q0Ey"}}});
  EXPECT_EQ(call("PATCH", collection + "/placer", failingTest, "application/json-patch+json").code, 422);

  // A merge patch; a resourceVersion in it is a precondition.
  auto merged = call("PATCH", collection + "/placer", {{"metadata", {{"labels", {{"app", "placer"}}}}}},
                     "application/merge-patch+json");
  ASSERT_EQ(merged.code, 200);
  EXPECT_EQ(merged.body["metadata"]["labels"]["app"], "placer");
  EXPECT_EQ(merged.body["webhooks"][0]["clientConfig"]["caBundle"], "Q0Ex");
  auto stale = call("PATCH", collection + "/placer", {{"metadata", {{"resourceVersion", rvOf(got.body)}}}},
                    "application/merge-patch+json");
  EXPECT_EQ(stale.code, 409) << stale.body.dump();
  EXPECT_EQ(stale.body["reason"], "Conflict");
  EXPECT_EQ(call("PATCH", collection + "/placer", json::object(), "application/strategic-merge-patch+json").code, 415);
  EXPECT_EQ(server->get(Kind::MutatingWebhookConfiguration, "", "placer")->at("metadata")["labels"]["app"], "placer");
}

// --- Status subresources and generation ----------------------------------------------

TEST_F(KindsTest, StatusSubresourceSeparatesSpecWritesFromStatusWrites) {
  ASSERT_EQ(call("POST", "/apis/apps/v1/namespaces/team-a/deployments", replicaSet("web", "team-a", "web")).code, 201);
  const std::string path = "/apis/apps/v1/namespaces/team-a/deployments/web";
  auto d = call("GET", path).body;
  EXPECT_EQ(d["metadata"]["generation"], 1);

  // The controller writes status through /status; spec there is ignored.
  json status = d;
  status["status"] = {{"replicas", 3}, {"readyReplicas", 3}};
  status["spec"]["replicas"] = 9;
  auto s = call("PUT", path + "/status", status);
  ASSERT_EQ(s.code, 200) << s.body.dump();
  EXPECT_EQ(s.body["status"]["readyReplicas"], 3);
  EXPECT_EQ(s.body["spec"]["replicas"], 3);
  EXPECT_EQ(s.body["metadata"]["generation"], 1);

  // A user scales through the main resource; status there is ignored.
  json scaled = s.body;
  scaled["spec"]["replicas"] = 5;
  scaled["status"] = json::object();
  auto u = call("PUT", path, scaled);
  ASSERT_EQ(u.code, 200);
  EXPECT_EQ(u.body["spec"]["replicas"], 5);
  EXPECT_EQ(u.body["status"]["readyReplicas"], 3);
  EXPECT_EQ(u.body["metadata"]["generation"], 2);

  // Kinds without a status subresource have no /status path.
  ASSERT_TRUE(server->create(Kind::ConfigMap, object("settings", "team-a")).ok());
  EXPECT_EQ(call("PUT", "/api/v1/namespaces/team-a/configmaps/settings/status", object("settings")).code, 404);
}

// --- Namespaces are objects -----------------------------------------------------------

TEST_F(KindsTest, SetNamespaceLabelsCreatesThenUpdatesTheNamespaceObject) {
  auto w = client->watch("/api/v1/namespaces?watch=1");
  ASSERT_TRUE(w.ok());
  server->setNamespaceLabels("team-a", {{"placer.io/enabled", "true"}});
  json event;
  ASSERT_EQ(nextEvent(*w, &event), "ADDED team-a");
  EXPECT_EQ(event["object"]["metadata"]["labels"],
            (json{{"placer.io/enabled", "true"}, {"kubernetes.io/metadata.name", "team-a"}}));
  EXPECT_EQ(event["object"]["status"]["phase"], "Active");
  EXPECT_EQ(event["object"]["spec"]["finalizers"], json::array({"kubernetes"}));
  server->setNamespaceLabels("team-a", {});
  ASSERT_EQ(nextEvent(*w, &event), "MODIFIED team-a");
  EXPECT_EQ(event["object"]["metadata"]["labels"], (json{{"kubernetes.io/metadata.name", "team-a"}}));
  EXPECT_EQ(server->count(Kind::Namespace), 1u);

  auto active = client->getJson("/api/v1/namespaces?fieldSelector=status.phase%3DActive");
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(itemNames(*active), (std::vector<std::string>{"team-a"}));
}

// --- Discovery and loading -------------------------------------------------------------

TEST_F(KindsTest, DiscoveryListsEveryGroupAndResource) {
  auto groups = call("GET", "/apis");
  ASSERT_EQ(groups.code, 200);
  std::vector<std::string> names;
  for (const auto& g : groups.body["groups"]) names.push_back(g["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"apps", "coordination.k8s.io", "events.k8s.io", "discovery.k8s.io",
                                             "admissionregistration.k8s.io"}));
  auto core = call("GET", "/api/v1");
  ASSERT_EQ(core.code, 200);
  std::set<std::string> resources;
  for (const auto& r : core.body["resources"]) resources.insert(r["name"]);
  for (const std::string r : {"pods", "pods/status", "pods/binding", "nodes", "namespaces", "services", "endpoints",
                              "replicationcontrollers", "secrets", "configmaps"})
    EXPECT_TRUE(resources.count(r)) << r;
  auto leases = call("GET", "/apis/coordination.k8s.io/v1");
  ASSERT_EQ(leases.code, 200);
  EXPECT_EQ(leases.body["resources"][0]["name"], "leases");
  EXPECT_EQ(leases.body["resources"][0]["namespaced"], true);
  EXPECT_EQ(call("GET", "/apis/coordination.k8s.io/v2").code, 404);
}

TEST_F(KindsTest, LoadAnyTakesObjectsAndListsOfAnyKind) {
  json list = {{"apiVersion", "v1"},
               {"kind", "List"},
               {"items", json::array({service("web", "team-a", "web"), lease("replica-a")})}};
  list["items"][0]["apiVersion"] = "v1";
  list["items"][0]["kind"] = "Service";
  auto loaded = server->loadAny(list);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(*loaded, 2u);
  json typed = {{"apiVersion", "apps/v1"},
                {"kind", "StatefulSetList"},
                {"items", json::array({replicaSet("db", "team-a", "db"), replicaSet("cache", "team-b", "cache")})}};
  ASSERT_TRUE(server->loadAny(typed).ok());
  EXPECT_EQ(server->count(Kind::StatefulSet), 2u);
  EXPECT_TRUE(server->contains(Kind::Lease, "placer-system", "placer"));

  json unknown = {{"apiVersion", "v1"},
                  {"kind", "List"},
                  {"items", json::array({object("x", "team-a"), {{"apiVersion", "batch/v1"}, {"kind", "Job"}}})}};
  unknown["items"][0]["apiVersion"] = "v1";
  unknown["items"][0]["kind"] = "ConfigMap";
  auto refused = server->loadAny(unknown);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "load: the server does not serve kind \"Job\" of apiVersion \"batch/v1\"");
  EXPECT_EQ(server->count(Kind::ConfigMap), 0u) << "nothing of a refused list is stored";
}

}  // namespace
}  // namespace placer::fakeapi
