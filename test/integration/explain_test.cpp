// `placer explain` run as a user runs it: the real binary on snapshot files.
// Golden outputs live in test/data/golden/<snapshot>.{json,txt}; regenerate one
// with `placer explain --snapshot test/data/snapshots/X.json [--format table]`
// after checking that the change is intended.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "placer_test_paths.h"

namespace {

using ::testing::HasSubstr;

struct PlacerRun {
  int exitCode = -1;
  std::string out;
  std::string err;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs placer with the arguments (already shell-safe), capturing stdout and stderr.
PlacerRun runPlacer(const std::string& args) {
  static int counter = 0;
  std::string errPath = ::testing::TempDir() + "/explain_stderr_" + std::to_string(::getpid()) + "_" +
                        std::to_string(counter++);
  std::string command = std::string(PLACER_BINARY) + " " + args + " 2>" + errPath;
  PlacerRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 65536> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  int status = ::pclose(pipe);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = readFile(errPath);
  std::remove(errPath.c_str());
  return run;
}

const std::string kData = std::string(PLACER_SOURCE_DIR) + "/test/data/";

class ExplainGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ExplainGolden, JsonMatches) {
  PlacerRun run = runPlacer("explain --snapshot " + kData + "snapshots/" + GetParam() + ".json");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, readFile(kData + "golden/" + GetParam() + ".json"));
  // The contract's shape.
  auto doc = nlohmann::json::parse(run.out);
  EXPECT_TRUE(doc["pod"].is_string());
  EXPECT_TRUE(doc["feasible"].is_array());
  EXPECT_TRUE(doc["unfeasible"].is_object());
  EXPECT_TRUE(doc["scores"].is_object());
  EXPECT_EQ(doc["scores"].size(), doc["feasible"].size());
  EXPECT_TRUE(doc["selected"].is_string() || doc["selected"].is_null());
}

TEST_P(ExplainGolden, TableMatches) {
  PlacerRun run = runPlacer("explain --format table --snapshot " + kData + "snapshots/" + GetParam() + ".json");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, readFile(kData + "golden/" + GetParam() + ".txt"));
}

INSTANTIATE_TEST_SUITE_P(, ExplainGolden,
                         ::testing::Values("web-deployment", "zone-preference", "highmem-toleration",
                                           "init-and-sidecar", "gpu-training", "arm-best-effort", "no-node-fits",
                                           "label-priority-config", "nominated-anti-affinity"),
                         [](const auto& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(Explain, NoFeasibleNodeStillExitsZeroWithNullSelected) {
  PlacerRun run = runPlacer("explain --snapshot " + kData + "snapshots/no-node-fits.json");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto doc = nlohmann::json::parse(run.out);
  EXPECT_TRUE(doc["selected"].is_null());
  EXPECT_EQ(doc["feasible"].size(), 0u);
  EXPECT_EQ(doc["unfeasible"]["compute-00000"], nlohmann::json::array({"Insufficient cpu"}));
}

TEST(Explain, ReadsStandardInput) {
  PlacerRun run = runPlacer("explain --snapshot - < " + kData + "snapshots/web-deployment.json");
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(run.out, readFile(kData + "golden/web-deployment.json"));
}

// A snapshot written inline, for the cases that are about one field.
std::string writeSnapshot(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/explain_" + std::to_string(::getpid()) + "_" + name + ".json";
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kNode =
    R"({"metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},)"
    R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})";
constexpr const char* kPod =
    R"({"metadata":{"name":"web","namespace":"default"},)"
    R"("spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}})";

struct BadCase {
  std::string name;
  std::string snapshot;  // file content; "@missing" for a file that does not exist
  std::string args;      // extra arguments
  std::string stderrHas;
};

class ExplainRefuses : public ::testing::TestWithParam<BadCase> {};

TEST_P(ExplainRefuses, WithExitTwoAndAClearMessage) {
  const BadCase& c = GetParam();
  std::string path = c.snapshot == "@missing" ? "/nonexistent/snapshot.json" : writeSnapshot(c.name, c.snapshot);
  PlacerRun run = runPlacer("explain --snapshot " + path + " " + c.args);
  EXPECT_EQ(run.exitCode, 2) << run.out;
  EXPECT_THAT(run.err, HasSubstr(c.stderrHas));
  EXPECT_EQ(run.out, "");
  if (c.snapshot != "@missing") std::remove(path.c_str());
}

std::string snap(const std::string& nodes, const std::string& pods, const std::string& pod,
                 const std::string& extra = "") {
  return R"({"nodes":[)" + nodes + R"(],"pods":[)" + pods + R"(],"pod":)" + pod + extra + "}";
}

INSTANTIATE_TEST_SUITE_P(
    , ExplainRefuses,
    ::testing::Values(
        BadCase{"missing_file", "@missing", "", "/nonexistent/snapshot.json: cannot read"},
        BadCase{"not_json", "{\"nodes\": [", "", "invalid JSON"},
        BadCase{"not_an_object", "[1,2,3]", "", "snapshot: expected a JSON object"},
        BadCase{"nodes_not_a_list", R"({"nodes":{"a":1},"pod":{}})", "", "nodes: expected an array"},
        BadCase{"node_of_the_wrong_type", snap("42", "", kPod), "", "nodes[0]"},
        BadCase{"node_without_a_name", snap(R"({"metadata":{}})", "", kPod), "",
                "nodes[0].metadata.name: Required value"},
        BadCase{"duplicate_node", snap(std::string(kNode) + "," + kNode, "", kPod), "",
                "nodes[1].metadata.name: Duplicate value: \"n1\""},
        BadCase{"bad_allocatable_quantity",
                snap(R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"four"}}})", "", kPod), "",
                "nodes[0].status.allocatable.cpu"},
        BadCase{"absurd_allocatable",
                snap(R"({"metadata":{"name":"n1"},"status":{"allocatable":{"memory":"9000Pi"}}})", "", kPod), "",
                "nodes[0].status.allocatable.memory: absurdly large"},
        BadCase{"quantity_beyond_64_bits",
                snap(R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"1e30"}}})", "", kPod), "",
                "nodes[0].status.allocatable.cpu"},
        BadCase{"negative_allocatable",
                snap(R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"-2"}}})", "", kPod), "",
                "nodes[0].status.allocatable"},
        BadCase{"bad_pod_request",
                snap(kNode,
                     R"({"metadata":{"name":"a","namespace":"x"},"spec":{"nodeName":"n1","containers":[{"name":"c",)"
                     R"("resources":{"requests":{"cpu":"lots"}}}]}})",
                     kPod),
                "", "pods[0].spec.containers[0].resources.requests.cpu"},
        BadCase{"containers_of_the_wrong_type",
                snap(kNode, R"({"metadata":{"name":"a"},"spec":{"nodeName":"n1","containers":"c"}})", kPod), "",
                "pods[0].spec.containers"},
        BadCase{"requests_adding_up_beyond_64_bits",
                snap(kNode,
                     R"({"metadata":{"name":"a"},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"memory":"7Pi"}}}]}},)"
                     R"({"metadata":{"name":"b"},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"memory":"7Pi"}}}]}})",
                     kPod),
                "", "the requests of the pods on node \"n1\" add up beyond 2^53"},
        BadCase{"pod_to_place_missing", snap(kNode, "", "null"), "", "\"pod\" is required"},
        BadCase{"pod_to_place_broken", snap(kNode, "", R"({"spec":{"tolerations":{"key":"x"}}})"), "",
                "pod.spec.tolerations"},
        BadCase{"unknown_top_level_key", R"({"nodes":[],"pods":[],"pod":{},"podz":1})", "", "podz: unknown field"},
        BadCase{"config_with_an_unknown_plugin",
                snap(kNode, "", kPod,
                     R"(,"config":{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",)"
                     R"("profiles":[{"plugins":{"score":{"enabled":[{"name":"Foo"}]}}}]})"),
                "", "config.profiles[0].plugins.score.enabled[0].name: unknown plugin \"Foo\""},
        BadCase{"bad_format_flag", snap(kNode, "", kPod), "--format yaml", "--format must be json or table"},
        BadCase{"unknown_flag", snap(kNode, "", kPod), "--verbose", "unknown argument \"--verbose\""}),
    [](const auto& info) { return info.param.name; });

TEST(Explain, WithoutSnapshotFlagExitsTwo) {
  PlacerRun run = runPlacer("explain");
  EXPECT_EQ(run.exitCode, 2);
  EXPECT_THAT(run.err, HasSubstr("give either --snapshot FILE or --kubeconfig FILE"));
}

}  // namespace
