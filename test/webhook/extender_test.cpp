// The extender endpoints, with requests shaped exactly like kube-scheduler's
// (Go field names, "Nodes":null, full v1.Node objects in a NodeList), the
// lowercase keys of old schedulers, malformed bodies, bind against the fake API
// server, and preempt in both shapes.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/support/http_test_client.h"
#include "webhook/extender.h"
#include "webhook/http_server.h"

namespace placer {
namespace {

using nlohmann::json;

json nodeJson(const std::string& name, const std::string& cpu, json taints = json::array()) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"labels", {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", "z1"}}},
            {"managedFields", json::array({{{"manager", "kubelet"}, {"operation", "Update"}}})}}},
          {"spec", {{"taints", taints}}},
          {"status",
           {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}, {"ephemeral-storage", "100Gi"}}},
            {"capacity", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

json podJson(const std::string& name, const std::string& cpu, const std::string& node = "",
             const std::string& uid = "") {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec",
               {{"containers",
                 json::array({{{"name", "app"},
                               {"image", "nginx:1.27"},
                               {"resources", {{"requests", {{"cpu", cpu}, {"memory", "1Gi"}}}}}}})}}},
              {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (!uid.empty()) pod["metadata"]["uid"] = uid;
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

// small: 4 cpu with 3 used (victim "v-small"); big: 8 cpu; tainted: untolerated NoSchedule;
// tiny: 1 cpu with a 1-cpu pod (no room even after preemption).
class ExtenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nodes_ = {nodeJson("small", "4"), nodeJson("big", "8"),
              nodeJson("tainted", "8", json::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}})),
              nodeJson("tiny", "1")};
    for (const json& n : nodes_) state_.upsertNode(*decodeNode(n));
    state_.upsertPod(*decodePod(podJson("filler", "3", "small", "v-small")));
    state_.upsertPod(*decodePod(podJson("tiny-filler", "1", "tiny", "v-tiny")));
    context_.engine = std::make_shared<const Engine>(Profile::defaults());
    context_.state = &state_;
    context_.metrics = &metrics_;
  }

  static json parse(const HttpResponse& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  std::vector<json> nodes_;
  ClusterState state_;
  MetricsRegistry metrics_;
  ExtenderContext context_;
};

TEST_F(ExtenderTest, FilterWithNodeNamesSplitsFailuresLikeUpstream) {
  json args = {{"Pod", podJson("web", "2")},
               {"Nodes", nullptr},
               {"NodeNames", {"small", "big", "tainted", "ghost"}}};
  json result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_TRUE(result["Nodes"].is_null());
  EXPECT_EQ(result["NodeNames"], json({"big"}));
  EXPECT_EQ(result["FailedNodes"], json({{"small", "Insufficient cpu"}}));
  EXPECT_EQ(result["FailedAndUnresolvableNodes"]["tainted"], "node(s) had untolerated taint {dedicated: gpu}");
  EXPECT_TRUE(result["FailedAndUnresolvableNodes"].contains("ghost"));
  EXPECT_EQ(result["Error"], "");
  // Exactly the Go field names, nothing else.
  std::vector<std::string> keys;
  for (auto it = result.begin(); it != result.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"Error", "FailedAndUnresolvableNodes", "FailedNodes", "NodeNames", "Nodes"}));
}

TEST_F(ExtenderTest, NodeNamesReadAlikeWhateverTheSpacingAndEscapes) {
  const std::string pod = podJson("web", "2").dump();
  const std::string expected = extenderFilter(context_, R"({"Pod":)" + pod + R"(,"NodeNames":["small","big","ghost"]})", false).body;
  for (std::string names : {std::string(R"( [ "small" ,
	"big","ghost"  ] )"),
                            std::string(R"(["sm\u0061ll","big","gh\u006fst"])"), std::string(R"(["small", "big" ,"ghost"])")}) {
    HttpResponse r = extenderFilter(context_, R"({"Pod":)" + pod + R"(,"NodeNames":)" + names + "}", false);
    EXPECT_EQ(r.body, expected) << names;
  }
  EXPECT_EQ(parse(extenderFilter(context_, R"({"Pod":)" + pod + R"(,"NodeNames":[ ]})", false))["NodeNames"], json::array());
  HttpResponse unterminated = extenderFilter(context_, R"({"Pod":)" + pod + R"(,"NodeNames":["big",]})", false);
  EXPECT_EQ(unterminated.status, 400) << unterminated.body;
}

TEST_F(ExtenderTest, LowercaseKeysOfOldSchedulersDecode) {
  json args = {{"pod", podJson("web", "2")}, {"nodes", nullptr}, {"nodenames", {"small", "big"}}};
  json result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_EQ(result["NodeNames"], json({"big"}));
  EXPECT_EQ(result["FailedNodes"], json({{"small", "Insufficient cpu"}}));
}

TEST_F(ExtenderTest, FilterWithFullNodeListEchoesPassingNodesInKind) {
  json list = {{"metadata", json::object()}, {"items", nodes_}};
  json args = {{"Pod", podJson("web", "2")}, {"Nodes", list}, {"NodeNames", nullptr}};
  json result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_TRUE(result["NodeNames"].is_null());
  ASSERT_EQ(result["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(result["Nodes"]["items"][0], nodes_[1]);  // "big", byte for byte the object sent
  EXPECT_EQ(result["FailedNodes"], json({{"small", "Insufficient cpu"}}));
  // A request larger than the node's whole allocatable cannot be helped by
  // preemption: upstream classifies it unresolvable, like an untolerated taint.
  EXPECT_EQ(result["FailedAndUnresolvableNodes"],
            json({{"tainted", "node(s) had untolerated taint {dedicated: gpu}"}, {"tiny", "Insufficient cpu"}}));
}

TEST_F(ExtenderTest, FullNodeObjectsAreAuthoritativeForTheNodeButNotForUsage) {
  // The scheduler's copy of "small" says 16 cpu: placer still counts its 3-cpu pod.
  json bigger = nodeJson("small", "16");
  json args = {{"Pod", podJson("web", "14")}, {"Nodes", {{"items", {bigger}}}}};
  json result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_EQ(result["Nodes"]["items"].size(), 0u);
  EXPECT_EQ(result["FailedNodes"]["small"], "Insufficient cpu");
  args["Pod"] = podJson("web", "13");
  result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_EQ(result["Nodes"]["items"].size(), 1u);
}

TEST_F(ExtenderTest, FilterOnlyOneAnswersPlacersChoice) {
  json args = {{"Pod", podJson("web", "500m")}, {"NodeNames", {"small", "big", "tiny"}}};
  json result = parse(extenderFilter(context_, args.dump(), true));
  ASSERT_EQ(result["NodeNames"].size(), 1u);
  EXPECT_EQ(result["NodeNames"][0], "big");  // least allocated
  EXPECT_TRUE(result["FailedNodes"].contains("small"));
}

TEST_F(ExtenderTest, PrioritizeMapsTotalsOntoZeroToTen) {
  json args = {{"Pod", podJson("web", "500m")}, {"NodeNames", {"small", "big", "tainted", "ghost"}}};
  json result = parse(extenderPrioritize(context_, args.dump()));
  ASSERT_TRUE(result.is_array());
  ASSERT_EQ(result.size(), 4u);
  std::map<std::string, int64_t> scores;
  for (const json& h : result) {
    ASSERT_TRUE(h["Score"].is_number_integer());
    scores[h["Host"]] = h["Score"];
  }
  EXPECT_EQ(scores["big"], 10);
  EXPECT_GE(scores["small"], 0);
  EXPECT_LT(scores["small"], 10);
  EXPECT_EQ(scores["tainted"], 0);  // placer rejects it
  EXPECT_EQ(scores["ghost"], 0);
}

TEST_F(ExtenderTest, PrioritizeWithFullNodesAnswersTheirNames) {
  json list = {{"metadata", json::object()}, {"items", nodes_}};
  json args = {{"Pod", podJson("web", "500m")}, {"Nodes", list}, {"NodeNames", nullptr}};
  json result = parse(extenderPrioritize(context_, args.dump()));
  ASSERT_EQ(result.size(), nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) EXPECT_EQ(result[i]["Host"], nodes_[i]["metadata"]["name"]);
  EXPECT_EQ(result[1]["Score"], 10);  // big
}

TEST_F(ExtenderTest, AnswersAreValidJsonWhateverTheNamesAndInGoMapOrder) {
  // A name with escapes and one that is not UTF-8 are unknown nodes, written
  // back as valid JSON; a node named twice is one map key, as in a Go map;
  // map keys are sorted as encoding/json writes them.
  std::string body = R"({"Pod":)" + podJson("web", "2").dump() +
                     R"(,"NodeNames":["tiny","gh\"ost","small","big","small","caf\u00e9","bad-)" + std::string("\xff") +
                     R"("]})";
  HttpResponse r = extenderFilter(context_, body, false);
  ASSERT_EQ(r.status, 200) << r.body;
  json result = json::parse(r.body);
  EXPECT_EQ(result["NodeNames"], json({"big"}));
  EXPECT_EQ(result["FailedNodes"], json({{"small", "Insufficient cpu"}}));
  std::vector<std::string> keys;
  for (auto it = result["FailedAndUnresolvableNodes"].begin(); it != result["FailedAndUnresolvableNodes"].end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"bad-\xef\xbf\xbd", "caf\xc3\xa9", "gh\"ost", "tiny"}));
  EXPECT_LT(r.body.find("\"bad-"), r.body.find("\"caf"));  // written sorted, not only parsed so

  json prioritized = parse(extenderPrioritize(context_, body));
  ASSERT_EQ(prioritized.size(), 7u);
  EXPECT_EQ(prioritized[1]["Host"], "gh\"ost");
  EXPECT_EQ(prioritized[5]["Host"], "caf\xc3\xa9");
}

// Many names of the shapes clusters use (a shared pool prefix, long cloud
// names that differ only near the end, names that are prefixes of others,
// the empty name, a NUL, non-ASCII), known and unknown, in any order and sent
// twice: each failure map is every failing name once, sorted byte-wise as
// encoding/json sorts map keys. Sent already sorted, the same answer.
TEST_F(ExtenderTest, FailureMapsAreInGoMapOrderForManyNamesInAnyOrder) {
  ClusterState state;
  std::vector<std::string> known;
  std::vector<std::string> unknown = {"", "n", "n1", "n10", std::string("n1\0", 3), "caf\xc3\xa9", "zz", "Z"};
  for (int i = 0; i < 60; ++i) {
    char name[96];
    std::snprintf(name, sizeof name, "pool-%c-%05d", "ab"[i % 2], i * 7);
    known.push_back(name);
    std::snprintf(name, sizeof name, "ip-10-0-%d-%d.eu-west-1.compute.internal", i % 3, i);
    known.push_back(name);
    unknown.push_back(std::string(name) + "x");
    std::snprintf(name, sizeof name, "pool-%c-%05d", "ab"[i % 2], i * 7 + 1);
    unknown.push_back(name);
  }
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> unresolvable;
  for (size_t i = 0; i < known.size(); ++i) {
    // Every third node has room (passes), the others are full (FailedNodes)
    // or too small for the pod at all (unresolvable).
    const char* cpu = i % 3 == 0 ? "8" : i % 3 == 1 ? "4" : "1";
    state.upsertNode(*decodeNode(nodeJson(known[i], cpu)));
    if (i % 3 == 1) {
      state.upsertPod(*decodePod(podJson("filler-" + std::to_string(i), "3", known[i], "u-" + std::to_string(i))));
      failed[known[i]] = "Insufficient cpu";
    } else if (i % 3 == 2) {
      unresolvable[known[i]] = "Insufficient cpu";
    }
  }
  for (const std::string& name : unknown) unresolvable[name] = "node(s) were not found in placer's cluster view";
  ExtenderContext context = context_;
  context.state = &state;

  std::vector<std::string> shuffled = known;
  shuffled.insert(shuffled.end(), unknown.begin(), unknown.end());
  shuffled.insert(shuffled.end(), known.begin(), known.begin() + 10);     // sent twice
  shuffled.insert(shuffled.end(), unknown.begin(), unknown.begin() + 5);  // sent twice
  std::mt19937 sequence(11);  // fixed: the same order every run
  for (size_t i = shuffled.size() - 1; i > 0; --i) std::swap(shuffled[i], shuffled[sequence() % (i + 1)]);
  std::vector<std::string> sorted = known;
  sorted.insert(sorted.end(), unknown.begin(), unknown.end());
  std::sort(sorted.begin(), sorted.end());

  using Ordered = nlohmann::ordered_json;
  auto entries = [](const std::map<std::string, std::string>& m) {
    return std::vector<std::pair<std::string, std::string>>(m.begin(), m.end());
  };
  for (const auto* names : {&shuffled, &sorted}) {
    json args = {{"Pod", podJson("web", "2")}, {"NodeNames", *names}};
    HttpResponse r = extenderFilter(context, args.dump(), false);
    ASSERT_EQ(r.status, 200) << r.body;
    Ordered result = Ordered::parse(r.body);
    std::vector<std::pair<std::string, std::string>> gotFailed;
    for (auto it = result["FailedNodes"].begin(); it != result["FailedNodes"].end(); ++it)
      gotFailed.emplace_back(it.key(), it.value().get<std::string>());
    std::vector<std::pair<std::string, std::string>> gotUnresolvable;
    for (auto it = result["FailedAndUnresolvableNodes"].begin(); it != result["FailedAndUnresolvableNodes"].end(); ++it)
      gotUnresolvable.emplace_back(it.key(), it.value().get<std::string>());
    EXPECT_EQ(gotFailed, entries(failed)) << (names == &sorted ? "sorted" : "shuffled");
    EXPECT_EQ(gotUnresolvable, entries(unresolvable)) << (names == &sorted ? "sorted" : "shuffled");
    EXPECT_EQ(result["NodeNames"].size(), (names == &sorted ? 40u : 44u));  // passing, in the request's order
  }
}

TEST_F(ExtenderTest, FullNodesWithImagesScoreAsTheViewsNodes) {
  // Images decoded from the request (plain, escaped, untagged, null names) give
  // the scores the view's own decode gives.
  ClusterState state;
  std::vector<json> nodes;
  for (int i = 0; i < 3; ++i) {
    json n = nodeJson("img-" + std::to_string(i), "8");
    n["status"]["images"] = json::array();
    if (i > 0)
      n["status"]["images"].push_back({{"names", {"registry.example.com/app@sha256:abc", "registry.example.com/app:v1"}},
                                       {"sizeBytes", 900 * 1024 * 1024}});
    if (i == 2) {
      n["status"]["images"].push_back({{"names", {"docker.io/library/sidecar\u002fx"}}, {"sizeBytes", 300000000}});
      n["status"]["images"].push_back({{"names", nullptr}, {"sizeBytes", 1}});
    }
    state.upsertNode(*decodeNode(n));
    nodes.push_back(n);
  }
  ExtenderContext context = context_;
  context.state = &state;
  json pod = podJson("web", "100m");
  pod["spec"]["containers"][0]["image"] = "registry.example.com/app:v1";
  json byName = {{"Pod", pod}, {"NodeNames", {"img-0", "img-1", "img-2"}}};
  json byNode = {{"Pod", pod}, {"Nodes", {{"items", nodes}}}};
  json expected = parse(extenderPrioritize(context, byName.dump()));
  EXPECT_EQ(parse(extenderPrioritize(context, byNode.dump())), expected);
  EXPECT_GT(expected[1]["Score"], expected[0]["Score"]);
}

TEST_F(ExtenderTest, MalformedBodiesAre400WithAMessage) {
  struct Case {
    std::string name, body, mentions;
  };
  std::vector<Case> cases = {
      {"not json", "{{{", "ExtenderArgs"},
      {"empty", "", "ExtenderArgs"},
      {"array", "[1,2]", "expected a JSON object"},
      {"no pod", R"({"NodeNames":["big"]})", "Pod"},
      {"pod is a number", R"({"Pod":5,"NodeNames":["big"]})", "Pod"},
      {"node names not an array", R"({"Pod":{"metadata":{"name":"x"}},"NodeNames":"big"})", "NodeNames"},
      {"node name not a string", R"({"Pod":{"metadata":{"name":"x"}},"NodeNames":[1]})", "NodeNames[0]"},
      {"neither", R"({"Pod":{"metadata":{"name":"x"}}})", "neither"},
      {"bad node", R"({"Pod":{"metadata":{"name":"x"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}]}})",
       "items[0]"},
      {"truncated", R"({"Pod":{"metadata":{"name":"x"}},"NodeNames":["big")", "ExtenderArgs"},
      {"bad image size",
       R"({"Pod":{"metadata":{"name":"x"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"images":[{"names":["a"],"sizeBytes":"x"}]}}]}})",
       "items[0]: status.images[0].sizeBytes"},
      {"bad image names",
       R"({"Pod":{"metadata":{"name":"x"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"images":[{"names":[7]}]}}]}})",
       "items[0]: status.images[0].names[0]"},
      {"bad quantity", R"({"Pod":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"x"}}}]}},"NodeNames":[]})",
       "cpu"},
      // Nodes are echoed as sent: one that is not a valid JSON text is refused, not echoed.
      {"node not UTF-8",
       R"({"Pod":{"metadata":{"name":"x"}},"Nodes":{"items":[{"metadata":{"name":"big"}},{"metadata":{"name":"caf)" +
           std::string("\xff") + R"("}}]}})",
       "items[1]"},
      {"node with a broken number",
       R"({"Pod":{"metadata":{"name":"x"}},"Nodes":{"items":[{"metadata":{"name":"big","generation":1-2}}]}})", "items[0]"},
      {"pod not UTF-8", R"({"Pod":{"metadata":{"name":"caf)" + std::string("\xff") + R"("}},"NodeNames":[]})", "Pod"},
  };
  for (const Case& c : cases) {
    for (auto* handler : {+[](const ExtenderContext& x, std::string_view b) { return extenderFilter(x, b, false); },
                          +[](const ExtenderContext& x, std::string_view b) { return extenderPrioritize(x, b); }}) {
      HttpResponse r = handler(context_, c.body);
      EXPECT_EQ(r.status, 400) << c.name << ": " << r.body;
      EXPECT_NE(r.body.find(c.mentions), std::string::npos) << c.name << ": " << r.body;
    }
  }
  for (std::string body : {"nope", "[]", R"({"PodName":7,"Node":"n"})", R"({"PodName":"p"})"}) {
    EXPECT_EQ(extenderBind(context_, body).status, 400) << body;
  }
  for (std::string body : {"nope", R"({"NodeNameToMetaVictims":{}})",
                           R"({"Pod":{"metadata":{"name":"x"}},"NodeNameToMetaVictims":{"small":{"Pods":[{"UID":5}]}}})"}) {
    EXPECT_EQ(extenderPreempt(context_, body).status, 400) << body;
  }
}

TEST_F(ExtenderTest, NotSyncedViewAnswersWithAnErrorInsteadOfAGuess) {
  struct ColdFeed : ClusterFeed {
    Outcome start(ClusterState&) override { return {}; }
    void stop() override {}
    bool synced() const override { return false; }
    std::string describe() const override { return "cold"; }
  } cold;
  context_.feed = &cold;
  json args = {{"Pod", podJson("web", "1")}, {"NodeNames", {"big"}}};
  json result = parse(extenderFilter(context_, args.dump(), false));
  EXPECT_NE(result["Error"].get<std::string>().find("not synced"), std::string::npos);
  EXPECT_EQ(extenderPrioritize(context_, args.dump()).status, 503);
}

TEST_F(ExtenderTest, PreemptKeepsOnlyNodesWhereTheProposedVictimsMakeRoom) {
  // Meta shape (nodeCacheCapable): uids resolved against the view.
  json args = {{"Pod", podJson("urgent", "3")},
               {"NodeNameToVictims", nullptr},
               {"NodeNameToMetaVictims",
                {{"small", {{"Pods", {{{"UID", "v-small"}}}}, {"NumPDBViolations", 1}}},
                 {"tiny", {{"Pods", {{{"UID", "v-tiny"}}}}, {"NumPDBViolations", 0}}},
                 {"ghost", {{"Pods", {{{"UID", "x"}}}}, {"NumPDBViolations", 0}}}}}};
  json result = parse(extenderPreempt(context_, args.dump()));
  json expected = {{"NodeNameToMetaVictims", {{"small", {{"Pods", {{{"UID", "v-small"}}}}, {"NumPDBViolations", 1}}}}}};
  EXPECT_EQ(result, expected);

  // Full shape: the same decision from whole pods.
  json full = {{"Pod", podJson("urgent", "3")},
               {"NodeNameToVictims",
                {{"small", {{"Pods", {podJson("filler", "3", "small", "v-small")}}, {"NumPDBViolations", 1}}},
                 {"tiny", {{"Pods", {podJson("tiny-filler", "1", "tiny", "v-tiny")}}, {"NumPDBViolations", 0}}}}}};
  EXPECT_EQ(parse(extenderPreempt(context_, full.dump())), expected);

  // Victims that do not make room: no node is kept.
  json useless = {{"Pod", podJson("urgent", "3")},
                  {"NodeNameToMetaVictims", {{"small", {{"Pods", json::array()}, {"NumPDBViolations", 0}}}}}};
  EXPECT_EQ(parse(extenderPreempt(context_, useless.dump()))["NodeNameToMetaVictims"], json::object());
}

TEST_F(ExtenderTest, ServedOnItsOwnListenerRoutingOnThePathAlone) {
  ListenerOptions options;
  options.name = "extender";
  options.address = "127.0.0.1:0";
  options.routes = extenderRoutes(context_);
  auto server = HttpServer::start(std::move(options));
  ASSERT_TRUE(server) << server.error().message;
  testing::ClientOptions client;
  client.port = (*server)->port();
  auto c = testing::HttpTestClient::connect(client);
  ASSERT_TRUE(c) << c.error().message;
  json args = {{"Pod", podJson("web", "2")}, {"Nodes", nullptr}, {"NodeNames", {"small", "big"}}};
  auto reply = (*c)->request("POST", "/filter?timeout=5s", args.dump(), {{"Content-Type", "application/json"}});
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(json::parse(reply->body)["NodeNames"], json({"big"}));
  auto wrongMethod = (*c)->request("GET", "/prioritize");
  ASSERT_TRUE(wrongMethod);
  EXPECT_EQ(wrongMethod->status, 405);
  auto bad = (*c)->request("POST", "/preempt", "garbage");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  (*server)->stop(std::chrono::seconds(5));
}

TEST_F(ExtenderTest, BindPostsABindingToTheApiServer) {
  auto api = fakeapi::FakeApiServer::start();
  ASSERT_TRUE(api) << api.error().message;
  auto created = (*api)->create(fakeapi::Kind::Pod, podJson("web", "1"));
  ASSERT_TRUE(created) << created.error().message;
  const std::string uid = (*created)["metadata"]["uid"];

  std::string kubeconfig = (std::filesystem::temp_directory_path() / ("extender-kubeconfig-" + uid)).string();
  ASSERT_TRUE((*api)->writeKubeconfig(kubeconfig));
  auto binder = makeApiBinder(kubeconfig);
  ASSERT_TRUE(binder) << binder.error().message;
  context_.binder = binder->get();

  auto bind = [&](const std::string& name, const std::string& podUid, const std::string& node) {
    json args = {{"PodName", name}, {"PodNamespace", "default"}, {"PodUID", podUid}, {"Node", node}};
    return parse(extenderBind(context_, args.dump()))["Error"].get<std::string>();
  };
  EXPECT_EQ(bind("web", uid, "big"), "");
  auto stored = (*api)->get(fakeapi::Kind::Pod, "default", "web");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"]["nodeName"], "big");
  EXPECT_NE(bind("web", uid, "small").find("already assigned"), std::string::npos);  // 409
  EXPECT_NE(bind("gone", "", "big").find("not found"), std::string::npos);           // 404
  std::filesystem::remove(kubeconfig);
}

TEST(ExtenderAddress, OnlyLoopbackCountsAsPrivate) {
  EXPECT_TRUE(isLoopbackAddress("127.0.0.1:8888"));
  EXPECT_TRUE(isLoopbackAddress("localhost:8888"));
  EXPECT_TRUE(isLoopbackAddress("[::1]:8888"));
  EXPECT_FALSE(isLoopbackAddress("0.0.0.0:8888"));
  EXPECT_FALSE(isLoopbackAddress(":8888"));
  EXPECT_FALSE(isLoopbackAddress("10.0.0.5:8888"));
}

}  // namespace
}  // namespace placer
