// `placer explain --kubeconfig` (the real binary) on a cluster served by the
// fake API server decides as `placer serve`, watching the same cluster,
// decides for the same pod; bad input exits 2 with a message.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/integration/deploy_support.h"
#include "test/integration/live_placer.h"

namespace placer::integration {
namespace {

using nlohmann::json;

json pendingPod(const std::string& name, const std::string& cpu, const std::string& memory, json extra = json::object()) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "team-a"}, {"labels", {{"app", name}}}}},
              {"spec",
               {{"containers",
                 {{{"name", "app"}, {"image", "nginx:1.27"},
                   {"resources", {{"requests", {{"cpu", cpu}, {"memory", memory}}}}}}}}}}};
  pod["spec"].update(extra);
  return pod;
}

class LiveExplainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new LiveCluster();
    GeneratorParams params;
    params.nodes = 80;
    params.podsPerNode = 10;
    ASSERT_TRUE(cluster_->start(params));
  }
  static void TearDownTestSuite() {
    if (cluster_->serve) {
      EXPECT_EQ(cluster_->serve->stop(), 0);
    }
    delete cluster_;
  }
  static PlacerRun explain(std::vector<std::string> args) {
    args.insert(args.begin(), {"explain", "--kubeconfig", cluster_->kubeconfig});
    return runPlacer(cluster_->dir.path(), std::move(args));
  }
  static std::string file(const std::string& name, const std::string& text) { return cluster_->dir.write(name, text); }
  static std::string asYaml(const json& object) {
    const std::string in = file("object.json", object.dump());
    auto c = deploytest::run("python3 -c 'import json,sys,yaml; yaml.safe_dump(json.load(sys.stdin), sys.stdout)' < " + in);
    EXPECT_EQ(c.status, 0) << c.out;
    return c.out;
  }
  static LiveCluster* cluster_;
};
LiveCluster* LiveExplainTest::cluster_ = nullptr;

std::pair<std::string, int64_t> explained(const PlacerRun& run) {
  json out = json::parse(run.out, nullptr, false);
  if (!out.is_object() || out["selected"].is_null()) return {};
  const std::string node = out["selected"];
  return {node, out["scores"][node]["total"].get<int64_t>()};
}

TEST_F(LiveExplainTest, PodFileInYamlOrJsonGetsServesDecision) {
  const std::vector<json> pods = {
      pendingPod("web", "250m", "256Mi"),
      pendingPod("batch", "6", "24Gi"),
      pendingPod("tolerant", "1", "2Gi",
                 {{"tolerations", {{{"key", "dedicated"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}}}),
  };
  for (const json& pod : pods) {
    SCOPED_TRACE(pod["metadata"]["name"].get<std::string>());
    const auto expected = cluster_->serveDecision(pod);
    ASSERT_FALSE(expected.first.empty());
    PlacerRun fromJson = explain({"--pod-file", file("pod.json", pod.dump())});
    ASSERT_EQ(fromJson.exitCode, 0) << fromJson.err;
    EXPECT_EQ(explained(fromJson), expected);
    // As `kubectl get pod -o yaml` prints it (the JSON's keys as YAML).
    PlacerRun fromYaml = explain({"--pod-file", file("pod.yaml", asYaml(pod))});
    ASSERT_EQ(fromYaml.exitCode, 0) << fromYaml.err;
    EXPECT_EQ(explained(fromYaml), expected);
    // The progress line went to stderr while the cluster was listed.
    EXPECT_NE(fromJson.err.find("initial sync complete"), std::string::npos) << fromJson.err;
  }
}

TEST_F(LiveExplainTest, PendingPodByNameGetsServesDecisionInBothFormats) {
  json pod = pendingPod("pending-by-name", "500m", "1Gi");
  auto created = cluster_->server->createPod(pod, "team-a");
  ASSERT_TRUE(created.ok());
  const auto expected = cluster_->serveDecision(pod);
  ASSERT_FALSE(expected.first.empty());
  PlacerRun run = explain({"--pod", "team-a/pending-by-name"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(explained(run), expected);
  json out = json::parse(run.out);
  EXPECT_EQ(out["pod"], "team-a/pending-by-name");
  EXPECT_EQ(out["feasible"].size() + out["unfeasible"].size(), 80u) << "every node of the cluster";

  PlacerRun table = explain({"--pod", "team-a/pending-by-name", "--format", "table"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find(expected.first), std::string::npos) << table.out;
}

TEST_F(LiveExplainTest, PodServeWouldLeaveAloneIsExplainedWithANote) {
  json pod = pendingPod("skipped", "100m", "64Mi");
  pod["metadata"]["labels"]["placer.io/skip"] = "true";
  PlacerRun run = explain({"--pod-file", file("skipped.json", pod.dump())});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("placer serve leaves this pod alone (pod labelled placer.io/skip=true)"), std::string::npos)
      << run.err;
  EXPECT_FALSE(explained(run).first.empty());
}

TEST_F(LiveExplainTest, BadInputExitsTwoWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--pod", "team-a/no-such-pod"}, "pod team-a/no-such-pod not found"},
      {{"--pod", "no-namespace"}, "--pod must be NAMESPACE/NAME"},
      {{"--pod-file", "/nonexistent/pod.yaml"}, "/nonexistent/pod.yaml"},
      {{"--pod-file", file("node.json", R"({"kind": "Node", "metadata": {"name": "n"}})")}, "expected a Pod"},
      {{"--pod-file", file("broken.json", "{\"kind\": ")}, "neither YAML nor JSON"},
      {{"--pod", "a/b", "--pod-file", "x"}, "--pod-file FILE or --pod NAMESPACE/NAME"},
      {{"--pod", "a/b", "--timeout", "soon"}, "--timeout must be a positive duration"},
      {{"--pod", "a/b", "--config", "/nonexistent/config.yaml"}, "/nonexistent/config.yaml"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    PlacerRun run = explain(c.args);
    EXPECT_EQ(run.exitCode, 2);
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
  }
}

TEST_F(LiveExplainTest, AnUnreachableApiServerEndsAtTheTimeout) {
  // The same kubeconfig, pointing at a port nobody listens on.
  std::ifstream in(cluster_->kubeconfig);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = std::regex_replace(text, std::regex(R"(https://127\.0\.0\.1:\d+)"), "https://127.0.0.1:1");
  const std::string kubeconfig = file("unreachable-kubeconfig", text);
  PlacerRun run = runPlacer(cluster_->dir.path(), {"explain", "--kubeconfig", kubeconfig, "--pod-file",
                                                   file("p.json", pendingPod("p", "1", "1Gi").dump()), "--timeout",
                                                   "1s"});
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_NE(run.err.find("did not sync within the timeout"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace placer::integration
