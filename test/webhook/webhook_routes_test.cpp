// The webhook's routes over real TLS: /mutate with API-server-shaped reviews
// and bad input, /healthz, /readyz, /metrics.
#include "webhook/webhook_routes.h"

#include <gtest/gtest.h>

#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

class WebhookRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loadView(h_.state, {nodeJson("node-a", "4", "8Gi"), nodeJson("node-b", "8", "16Gi")},
             {boundPodJson("running-1", "node-a", "1", "1Gi")});
    h_.settings.maxRequestBytes = 64 * 1024;
    h_.start();
  }
  WebhookHarness h_;
};

TEST_F(WebhookRoutesTest, MutateAssignsAPodAndTheResponseIsExact) {
  auto c = h_.client();
  ASSERT_TRUE(c);
  auto r = c->request("POST", "/mutate?timeout=10s", admissionReview("3b1c7d9e", podJson("", "team-a", "500m", "512Mi")).dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("content-type"), "application/json");
  json review = json::parse(r->body);
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  EXPECT_EQ(review["response"]["uid"], "3b1c7d9e");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(review["response"]["patchType"], "JSONPatch");
  json patch = patchOf(r->body);
  EXPECT_EQ(patch[0]["path"], "/spec/nodeName");
  std::string node = patch[0]["value"];
  EXPECT_TRUE(node == "node-a" || node == "node-b") << node;
}

TEST_F(WebhookRoutesTest, BadInputIsAnsweredAsSpecified) {
  struct Case {
    std::string name, method, target, body;
    int status;
  };
  std::vector<Case> cases = {
      {"not JSON", "POST", "/mutate", "<xml/>", 400},
      {"JSON but not an AdmissionReview", "POST", "/mutate", R"({"hello":"world"})", 400},
      {"empty body", "POST", "/mutate", "", 400},
      {"wrong method", "GET", "/mutate", "", 405},
      {"unknown path", "POST", "/validate", "{}", 404},
      {"huge body", "POST", "/mutate", std::string(100 * 1024, ' '), 413},
      {"review with an undecodable pod is still allowed", "POST", "/mutate",
       admissionReview("u-bad", podJson("", "team-a", "-5x", "1Gi")).dump(), 200},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    auto c = h_.client();
    ASSERT_TRUE(c);
    auto r = c->request(k.method, k.target, k.body);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->status, k.status) << r->body;
    if (k.status == 400) {
      EXPECT_NE(r->body.find("AdmissionReview"), std::string::npos) << r->body;
    }
    if (k.status == 405) {
      EXPECT_EQ(r->header("allow"), "POST");
    }
  }
  auto c = h_.client();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->request("GET", "/healthz")->status, 200);
}

TEST_F(WebhookRoutesTest, ReadyOnlyOnceTheViewIsCompleteAndCold)  {
  auto c = h_.client();
  ASSERT_TRUE(c);
  h_.feed.setSynced(false);
  EXPECT_EQ(c->request("GET", "/readyz")->status, 503);
  EXPECT_EQ(c->request("GET", "/healthz")->status, 200);
  auto cold = c->request("POST", "/mutate", admissionReview("u-cold", podJson("", "team-a", "1", "1Gi")).dump());
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ(cold->status, 200);
  EXPECT_TRUE(patchOf(cold->body).is_null());
  h_.feed.setSynced(true);
  EXPECT_EQ(c->request("GET", "/readyz?verbose")->status, 200);
}

TEST_F(WebhookRoutesTest, MetricsCountOutcomesAndShowTheView) {
  auto c = h_.client();
  ASSERT_TRUE(c);
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("u1", podJson("", "team-a", "1", "1Gi")).dump())->status, 200);
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("u2", podJson("", "team-a", "100", "1Gi")).dump())->status, 200);
  json skipped = podJson("", "kube-system", "1", "1Gi");
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("u3", skipped).dump())->status, 200);
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("u4", podJson("", "team-a", "x", "1Gi")).dump())->status, 200);
  ASSERT_EQ(c->request("POST", "/mutate", "nope")->status, 400);

  auto m = c->request("GET", "/metrics");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(m->header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line : {"placer_admissions_total{outcome=\"assigned\"} 1\n",
                           "placer_admissions_total{outcome=\"fallback\"} 1\n",
                           "placer_admissions_total{outcome=\"skipped\"} 1\n",
                           "placer_admissions_total{outcome=\"error\"} 1\n",
                           "placer_admission_bad_requests_total 1\n", "placer_admission_duration_seconds_count 4\n",
                           "placer_nodes_in_view 2\n", "placer_pods_in_view 1\n", "placer_reservations_active 1\n",
                           "placer_view_synced 1\n", "# TYPE placer_admission_duration_seconds histogram\n"})
    EXPECT_NE(m->body.find(line), std::string::npos) << line << "\n" << m->body;
}

TEST_F(WebhookRoutesTest, MetricsCountWhatTheDecisionCacheHeld) {
  auto c = h_.client();
  ASSERT_TRUE(c);
  // Two replicas of one template (the second reuses the first's results) and another pod.
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("r1", podJson("", "team-a", "1", "1Gi")).dump())->status, 200);
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("r2", podJson("", "team-a", "1", "1Gi")).dump())->status, 200);
  ASSERT_EQ(c->request("POST", "/mutate", admissionReview("r3", podJson("", "team-a", "2", "1Gi")).dump())->status, 200);
  auto m = c->request("GET", "/metrics");
  ASSERT_TRUE(m.ok());
  for (const char* line : {"placer_decision_cache_lookups_total{result=\"hit\"} 1\n",
                           "placer_decision_cache_lookups_total{result=\"miss\"} 2\n",
                           "placer_decision_cache_lookups_total{result=\"bypass\"} 0\n",
                           "# TYPE placer_decision_cache_lookups_total counter\n"})
    EXPECT_NE(m->body.find(line), std::string::npos) << line << "\n" << m->body;
}

}  // namespace
}  // namespace placer::testing
