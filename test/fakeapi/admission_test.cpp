// The fake API server's admission chain: it calls a mutating webhook over TLS
// exactly as kube-apiserver does and applies the JSONPatch it answers.

#include "test/fakeapi/admission.h"

#include <gtest/gtest.h>

#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/test_client.h"
#include "test/fakeapi/test_webhook.h"

namespace placer::fakeapi {
namespace {

using nlohmann::json;

json generateNamePod(json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"generateName", "web-7d9f-"}, {"labels", labels}}},
          {"spec",
           {{"containers", json::array({{{"name", "app"},
                                         {"image", "nginx:1.25"},
                                         {"resources", {{"limits", {{"cpu", "500m"}, {"memory", "256Mi"}}}}}}})}}}};
}

const json kAssignPatch = json::array(
    {{{"op", "add"}, {"path", "/spec/nodeName"}, {"value", "node-7"}},
     {{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"placer.io/assigned-node", "node-7"}}}}});

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = FakeApiServer::start();
    ASSERT_TRUE(s.ok()) << s.error().message;
    server = std::move(*s);
    client = std::make_unique<TestClient>(*server);
  }
  void startWebhook(TestWebhook::Answer answer) {
    auto w = TestWebhook::start(std::move(answer));
    ASSERT_TRUE(w.ok()) << w.error().message;
    webhook = std::move(*w);
  }
  MutatingWebhook config(MutatingWebhook::FailurePolicy policy = MutatingWebhook::FailurePolicy::Fail) const {
    MutatingWebhook h;
    h.name = "placer.placer.io";
    h.url = webhook->url();
    h.caBundlePem = webhook->caPem();
    h.failurePolicy = policy;
    return h;
  }
  ApiResponse postPod(const json& pod, const std::string& query = "") {
    auto r = client->request("POST", "/api/v1/namespaces/team-a/pods" + query, pod.dump());
    if (!r.ok()) return {0, json{{"message", r.error().message}}};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<TestClient> client;
  std::unique_ptr<TestWebhook> webhook;
};

TEST_F(AdmissionTest, WebhookSeesTheSubmittedPodAndItsPatchIsStored) {
  startWebhook([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
  server->setMutatingWebhooks({config()});
  auto created = postPod(generateNamePod());
  ASSERT_EQ(created.code, 201) << created.body.dump();

  auto calls = webhook->received();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].target, "/mutate?timeout=10s");
  const json& review = calls[0].review;
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  const json& req = review["request"];
  EXPECT_EQ(req["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(req["kind"], json({{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}));
  EXPECT_EQ(req["resource"], json({{"group", ""}, {"version", "v1"}, {"resource", "pods"}}));
  EXPECT_EQ(req["requestKind"], req["kind"]);
  EXPECT_EQ(req["operation"], "CREATE");
  EXPECT_EQ(req["namespace"], "team-a");
  EXPECT_FALSE(req.contains("name")) << "a generateName pod has no name yet";
  EXPECT_EQ(req["dryRun"], false);
  EXPECT_EQ(req["options"]["kind"], "CreateOptions");
  EXPECT_TRUE(req["oldObject"].is_null());
  const json& object = req["object"];
  EXPECT_FALSE(object["metadata"].contains("name"));
  EXPECT_FALSE(object["metadata"].contains("uid"));
  EXPECT_EQ(object["metadata"]["generateName"], "web-7d9f-");
  EXPECT_EQ(object["metadata"]["namespace"], "team-a");
  EXPECT_FALSE(object["spec"].contains("nodeName"));
  // Defaulting ran before admission, as in the API server.
  EXPECT_EQ(object["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(object["spec"]["containers"][0]["resources"]["requests"]["cpu"], "500m");
  EXPECT_EQ(object["spec"]["priority"], 0);
  EXPECT_EQ(object["spec"]["tolerations"].size(), 2u);

  const json& pod = created.body;
  EXPECT_EQ(pod["spec"]["nodeName"], "node-7");
  EXPECT_EQ(pod["metadata"]["annotations"]["placer.io/assigned-node"], "node-7");
  EXPECT_EQ(pod["metadata"]["name"].get<std::string>().rfind("web-7d9f-", 0), 0u);
  EXPECT_EQ(pod["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["status"]["qosClass"], "Guaranteed");
  EXPECT_EQ(server->count(Kind::Pod), 1u);
  EXPECT_EQ(server->admissionCalls(), 1u);
}

TEST_F(AdmissionTest, DryRunIsAnnouncedAndNotStored) {
  startWebhook([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
  server->setMutatingWebhooks({config()});
  auto created = postPod(generateNamePod(), "?dryRun=All");
  EXPECT_EQ(created.code, 201);
  ASSERT_EQ(webhook->received().size(), 1u);
  EXPECT_EQ(webhook->received()[0].review["request"]["dryRun"], true);
  EXPECT_EQ(server->count(Kind::Pod), 0u);
}

TEST_F(AdmissionTest, OutcomesFollowTheUpstreamDispatcher) {
  using Policy = MutatingWebhook::FailurePolicy;
  struct Case {
    std::string name;
    Policy policy;
    std::function<WebhookAnswer(const json&)> answer;
    int wantCode;
    std::string wantMessagePart;  // "" = created without nodeName
  };
  auto review = [](const json& response) {
    return WebhookAnswer{200, json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
                                   {"response", response}}
                                  .dump()};
  };
  const std::vector<Case> cases = {
      {"a replace of the absent nodeName fails the create even under Ignore", Policy::Ignore,
       [](const json& r) {
         return TestWebhook::allow(r, json::array({{{"op", "replace"}, {"path", "/spec/nodeName"}, {"value", "n"}}}));
       },
       500, "Internal error occurred: replace operation does not apply"},
      {"an annotation added under missing annotations fails the create", Policy::Ignore,
       [](const json& r) {
         return TestWebhook::allow(
             r, json::array({{{"op", "add"}, {"path", "/metadata/annotations/placer.io~1score"}, {"value", "9"}}}));
       },
       500, "add operation does not apply"},
      {"a foreign response uid is a call failure: Fail refuses", Policy::Fail,
       [&](const json&) { return review({{"uid", "someone-else"}, {"allowed", true}}); }, 500,
       "expected response.uid="},
      {"a foreign response uid is a call failure: Ignore creates", Policy::Ignore,
       [&](const json&) { return review({{"uid", "someone-else"}, {"allowed", true}}); }, 201, ""},
      {"keys are case-sensitive: \"Response\" is no response", Policy::Fail,
       [](const json& r) {
         return WebhookAnswer{200, json{{"apiVersion", "admission.k8s.io/v1"},
                                        {"kind", "AdmissionReview"},
                                        {"Response", {{"uid", r["request"]["uid"]}, {"allowed", true}}}}
                                       .dump()};
       },
       500, "webhook response was absent"},
      {"an HTTP 500 from the webhook under Ignore creates", Policy::Ignore,
       [](const json&) { return WebhookAnswer{500, "oops"}; }, 201, ""},
      {"a denial answers the webhook's code and message", Policy::Ignore,
       [](const json& r) { return TestWebhook::deny(r, "no capacity", 403); }, 403,
       "admission webhook \"placer.placer.io\" denied the request: no capacity"},
      {"a patch without patchType is invalid", Policy::Fail,
       [&](const json& r) {
         return review({{"uid", r["request"]["uid"]}, {"allowed", true}, {"patch", base64Encode("[]")}});
       },
       500, "webhook returned response.patch but not response.patchType"},
  };
  for (const auto& c : cases) {
    startWebhook(c.answer);
    server->setMutatingWebhooks({config(c.policy)});
    const std::size_t before = server->count(Kind::Pod);
    auto r = postPod(generateNamePod());
    EXPECT_EQ(r.code, c.wantCode) << c.name << ": " << r.body.dump();
    if (c.wantMessagePart.empty()) {
      EXPECT_EQ(server->count(Kind::Pod), before + 1) << c.name;
      EXPECT_FALSE(r.body["spec"].contains("nodeName")) << c.name;
    } else {
      EXPECT_EQ(server->count(Kind::Pod), before) << c.name;
      EXPECT_EQ(r.body["kind"], "Status") << c.name;
      EXPECT_NE(r.body.value("message", "").find(c.wantMessagePart), std::string::npos)
          << c.name << ": " << r.body.value("message", "");
    }
  }
}

TEST_F(AdmissionTest, UnreachableOrUntrustedWebhookFollowsFailurePolicy) {
  startWebhook([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
  struct Case {
    std::string name;
    MutatingWebhook hook;
    int wantCode;
    std::string wantMessagePart;
  };
  MutatingWebhook untrusted = config();
  untrusted.caBundlePem = server->caPem();  // some other CA
  MutatingWebhook closed = config();
  closed.url = "https://127.0.0.1:1/mutate";
  MutatingWebhook closedIgnore = closed;
  closedIgnore.failurePolicy = MutatingWebhook::FailurePolicy::Ignore;
  const std::vector<Case> cases = {
      {"certificate not signed by the caBundle", untrusted, 500, "failed calling webhook \"placer.placer.io\""},
      {"nothing listening, Fail", closed, 500, "Post \"https://127.0.0.1:1/mutate?timeout=10s\""},
      {"nothing listening, Ignore", closedIgnore, 201, ""},
  };
  for (const auto& c : cases) {
    server->setMutatingWebhooks({c.hook});
    auto r = postPod(generateNamePod());
    EXPECT_EQ(r.code, c.wantCode) << c.name << ": " << r.body.dump();
    if (!c.wantMessagePart.empty()) {
      EXPECT_NE(r.body.value("message", "").find(c.wantMessagePart), std::string::npos)
          << c.name << ": " << r.body.value("message", "");
    }
  }
  EXPECT_TRUE(webhook->received().empty());
}

TEST_F(AdmissionTest, SelectorsDecideWhichPodsTheWebhookSees) {
  startWebhook([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
  MutatingWebhook hook = config();
  hook.namespaceSelector = {{"matchLabels", {{"placer.io/enabled", "true"}}}};
  hook.objectSelector = {
      {"matchExpressions", json::array({{{"key", "placer.io/skip"}, {"operator", "NotIn"}, {"values", {"true"}}}})}};
  server->setMutatingWebhooks({hook});

  EXPECT_EQ(postPod(generateNamePod()).code, 201);
  EXPECT_EQ(webhook->received().size(), 0u) << "namespace not opted in";

  server->setNamespaceLabels("team-a", {{"placer.io/enabled", "true"}});
  auto assigned = postPod(generateNamePod());
  EXPECT_EQ(assigned.body["spec"]["nodeName"], "node-7");
  EXPECT_EQ(webhook->received().size(), 1u);

  auto skipped = postPod(generateNamePod({{"placer.io/skip", "true"}}));
  EXPECT_EQ(skipped.code, 201);
  EXPECT_FALSE(skipped.body["spec"].contains("nodeName"));
  EXPECT_EQ(webhook->received().size(), 1u) << "pod opted out";
}

TEST_F(AdmissionTest, NamespaceSelectorReadsTheNamespaceObjectAsClientsWriteIt) {
  startWebhook([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
  MutatingWebhook hook = config();
  hook.namespaceSelector = {{"matchLabels", {{"placer.io/enabled", "true"}}}};
  server->setMutatingWebhooks({hook});

  auto ns = client->request("POST", "/api/v1/namespaces",
                            json{{"metadata", {{"name", "team-a"}, {"labels", {{"placer.io/enabled", "true"}}}}}}.dump());
  ASSERT_TRUE(ns.ok());
  ASSERT_EQ(ns->status, 201) << ns->body;
  EXPECT_EQ(postPod(generateNamePod()).body["spec"]["nodeName"], "node-7");
  EXPECT_EQ(webhook->received().size(), 1u);

  // Opting out by patching the Namespace takes effect on the next create.
  auto patched = client->request("PATCH", "/api/v1/namespaces/team-a",
                                 R"({"metadata":{"labels":{"placer.io/enabled":null}}})", "application/merge-patch+json");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << patched->body;
  EXPECT_EQ(postPod(generateNamePod()).code, 201);
  EXPECT_EQ(webhook->received().size(), 1u) << "namespace opted out";

  // The name label is always there, so kubernetes.io/metadata.name selectors
  // match namespaces that exist and ones that were never created alike.
  hook.namespaceSelector = {{"matchLabels", {{"kubernetes.io/metadata.name", "team-a"}}}};
  server->setMutatingWebhooks({hook});
  EXPECT_EQ(postPod(generateNamePod()).body["spec"]["nodeName"], "node-7");
  EXPECT_EQ(webhook->received().size(), 2u);
}

TEST(JsonPatch, AppliesRfc6902Operations) {
  const json doc = {{"metadata", {{"name", "p"}, {"labels", {{"a/b", "1"}, {"m~n", "2"}}}}},
                    {"spec", {{"containers", json::array({{{"name", "c0"}}, {{"name", "c1"}}})}}}};
  struct Case {
    std::string name;
    json patch;
    std::optional<json> want;  // nullopt = the patch must fail
    std::function<bool(const json&)> check;
  };
  const std::vector<Case> cases = {
      {"add a missing key", json::array({{{"op", "add"}, {"path", "/spec/nodeName"}, {"value", "n1"}}}), json(),
       [](const json& d) { return d["spec"]["nodeName"] == "n1"; }},
      {"add appends with -", json::array({{{"op", "add"}, {"path", "/spec/containers/-"}, {"value", {{"name", "c2"}}}}}),
       json(), [](const json& d) { return d["spec"]["containers"].size() == 3 && d["spec"]["containers"][2]["name"] == "c2"; }},
      {"add inserts at an index", json::array({{{"op", "add"}, {"path", "/spec/containers/0"}, {"value", {{"name", "x"}}}}}),
       json(), [](const json& d) { return d["spec"]["containers"][0]["name"] == "x"; }},
      {"~1 and ~0 escapes", json::array({{{"op", "remove"}, {"path", "/metadata/labels/a~1b"}},
                                         {{"op", "replace"}, {"path", "/metadata/labels/m~0n"}, {"value", "3"}}}),
       json(), [](const json& d) { return !d["metadata"]["labels"].contains("a/b") && d["metadata"]["labels"]["m~n"] == "3"; }},
      {"move and copy", json::array({{{"op", "copy"}, {"from", "/metadata/name"}, {"path", "/spec/hostname"}},
                                     {{"op", "move"}, {"from", "/spec/containers/1"}, {"path", "/spec/sidecar"}}}),
       json(), [](const json& d) { return d["spec"]["hostname"] == "p" && d["spec"]["sidecar"]["name"] == "c1" && d["spec"]["containers"].size() == 1; }},
      {"passing test", json::array({{{"op", "test"}, {"path", "/metadata/name"}, {"value", "p"}}}), json(),
       [](const json& d) { return d["metadata"]["name"] == "p"; }},
      {"failing test", json::array({{{"op", "test"}, {"path", "/metadata/name"}, {"value", "q"}}}), std::nullopt, nullptr},
      {"replace of a missing key", json::array({{{"op", "replace"}, {"path", "/spec/nodeName"}, {"value", "n"}}}),
       std::nullopt, nullptr},
      {"add under a missing parent", json::array({{{"op", "add"}, {"path", "/metadata/annotations/x"}, {"value", "y"}}}),
       std::nullopt, nullptr},
      {"remove a missing key", json::array({{{"op", "remove"}, {"path", "/spec/nodeName"}}}), std::nullopt, nullptr},
      {"index past the end", json::array({{{"op", "add"}, {"path", "/spec/containers/5"}, {"value", 1}}}), std::nullopt,
       nullptr},
      {"unknown op", json::array({{{"op", "merge"}, {"path", "/spec"}, {"value", 1}}}), std::nullopt, nullptr},
      {"not an array", json::object(), std::nullopt, nullptr},
  };
  for (const auto& c : cases) {
    auto r = applyJsonPatch(doc, c.patch);
    if (!c.want) {
      EXPECT_FALSE(r.ok()) << c.name;
      continue;
    }
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message;
    EXPECT_TRUE(c.check(*r)) << c.name << ": " << r->dump();
  }
}

// reinvocationPolicy: IfNeeded, as upstream's dispatcher: a webhook called
// before a later one changed the pod is called once more, with a request uid
// of its own and the pod as it is then; a webhook that changed nothing, or
// one with policy Never, is not.
TEST_F(AdmissionTest, IfNeededWebhooksAreCalledAgainAfterALaterChange) {
  struct Case {
    std::string name;
    MutatingWebhook::Reinvocation firstPolicy;
    bool secondChanges;
    size_t firstCalls;
  };
  const std::vector<Case> cases = {
      {"IfNeededAndChangedLater", MutatingWebhook::Reinvocation::IfNeeded, true, 2},
      {"IfNeededNothingChangedLater", MutatingWebhook::Reinvocation::IfNeeded, false, 1},
      {"NeverIsNotCalledAgain", MutatingWebhook::Reinvocation::Never, true, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto first = TestWebhook::start([](const json& review) { return TestWebhook::allow(review, kAssignPatch); });
    ASSERT_TRUE(first.ok());
    const bool changes = c.secondChanges;
    auto second = TestWebhook::start([changes](const json& review) {
      if (!changes) return TestWebhook::allow(review);
      return TestWebhook::allow(
          review, json::array({{{"op", "add"}, {"path", "/metadata/labels/injected"}, {"value", "yes"}}}));
    });
    ASSERT_TRUE(second.ok());
    MutatingWebhook a;
    a.name = "first.example.com";
    a.url = (*first)->url();
    a.caBundlePem = (*first)->caPem();
    a.reinvocationPolicy = c.firstPolicy;
    MutatingWebhook b;
    b.name = "second.example.com";
    b.url = (*second)->url();
    b.caBundlePem = (*second)->caPem();
    server->setMutatingWebhooks({a, b});
    auto created = postPod(generateNamePod(json{{"app", "web"}}));
    ASSERT_EQ(created.code, 201) << created.body.dump();
    auto calls = (*first)->received();
    ASSERT_EQ(calls.size(), c.firstCalls);
    EXPECT_EQ((*second)->received().size(), 1u);
    if (calls.size() == 2) {
      EXPECT_NE(calls[0].review["request"]["uid"], calls[1].review["request"]["uid"]);
      // The second call sees the pod as the later webhook left it, its own patch applied.
      EXPECT_EQ(calls[1].review["request"]["object"]["metadata"]["labels"]["injected"], "yes");
      EXPECT_EQ(calls[1].review["request"]["object"]["spec"]["nodeName"], "node-7");
    }
  }
}

// Validation after the webhooks: a pod cannot name its node while it has scheduling gates.
TEST_F(AdmissionTest, ANodeNameWithSchedulingGatesIsRefused) {
  json pod = generateNamePod();
  pod["spec"]["nodeName"] = "node-7";
  pod["spec"]["schedulingGates"] = json::array({{{"name", "example.com/quota"}}});
  auto created = postPod(pod);
  EXPECT_EQ(created.code, 422);
  EXPECT_NE(created.body.value("message", "").find("spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"),
            std::string::npos)
      << created.body.dump();
}

}  // namespace
}  // namespace placer::fakeapi
