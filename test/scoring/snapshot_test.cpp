// Snapshots (scoring/snapshot.h): read as they stream, each element decoded
// on its own and checked, with the element at fault named in every error;
// streamed into a view, they give the view that decoding them whole gives.
#include "scoring/snapshot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scoring/cluster_state.h"
#include "test/support/cluster_generator.h"

namespace placer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kNode =
    R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})";

std::string boundPod(const std::string& name, const std::string& cpu, const std::string& memory = "1Gi") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default"},"spec":{"nodeName":"n1","containers":[)" +
         R"({"name":"c","resources":{"requests":{"cpu":")" + cpu + R"(","memory":")" + memory + R"("}}}]}})";
}

struct BadSnapshot {
  const char* name;
  std::string text;
  std::string error;  // the whole message, or its beginning when `prefixOnly`
  bool prefixOnly = false;
};

class SnapshotRefuses : public ::testing::TestWithParam<BadSnapshot> {};

TEST_P(SnapshotRefuses, NamingTheElementAtFault) {
  auto snapshot = parseSnapshot(GetParam().text);
  ASSERT_FALSE(snapshot.ok());
  if (GetParam().prefixOnly)
    EXPECT_THAT(snapshot.error().message, StartsWith(GetParam().error));
  else
    EXPECT_EQ(snapshot.error().message, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SnapshotRefuses,
    ::testing::Values(
        BadSnapshot{"NotAnObject", " [1,2,3]", "snapshot: expected a JSON object with \"nodes\" and \"pods\""},
        BadSnapshot{"CutShort", R"({"nodes": [)", "invalid JSON: ", true},
        BadSnapshot{"DataAfterTheObject", R"({"nodes": []} x)", "invalid JSON: ", true},
        BadSnapshot{"NodesNotAList", R"({"nodes":{"a":1}})", "nodes: expected an array of v1.Node"},
        BadSnapshot{"PodsNotAList", R"({"pods":"x"})", "pods: expected an array of v1.Pod"},
        BadSnapshot{"ServicesNotAList", R"({"services":7})", "services: expected an array"},
        BadSnapshot{"MalformedElement", R"({"nodes":[)" + std::string(kNode) + R"(,{"metadata":}]})",
                    "nodes[1]: malformed JSON: ", true},
        BadSnapshot{"NodeOfTheWrongType", R"({"nodes":[42]})", "nodes[0].expected a Node object, got a number"},
        BadSnapshot{"NodeWithoutAName", R"({"nodes":[{"metadata":{}}]})", "nodes[0].metadata.name: Required value"},
        BadSnapshot{"DuplicateNode", R"({"nodes":[)" + std::string(kNode) + "," + kNode + "]}",
                    "nodes[1].metadata.name: Duplicate value: \"n1\""},
        BadSnapshot{"AbsurdAllocatable", R"({"nodes":[{"metadata":{"name":"n"},"status":{"allocatable":{"memory":"9000Pi"}}}]})",
                    "nodes[0].status.allocatable.memory: absurdly large (", true},
        BadSnapshot{"BadPodQuantity", R"({"nodes":[)" + std::string(kNode) + R"(],"pods":[)" + boundPod("a", "1") + "," +
                                          boundPod("b", "abc") + "]}",
                    "pods[1].spec.containers[0].resources.requests.cpu: invalid quantity \"abc\""},
        BadSnapshot{"DuplicatePod", R"({"pods":[)" + boundPod("a", "1") + "," + boundPod("a", "2") + "]}",
                    "pods[1].metadata: Duplicate pod \"default/a\""},
        BadSnapshot{"RequestsAddingUpBeyond2To53", R"({"pods":[)" + boundPod("a", "1", "7Pi") + "," +
                                                       boundPod("b", "1", "7Pi") + "]}",
                    "pods[1].spec: the requests of the pods on node \"n1\" add up beyond 2^53"},
        BadSnapshot{"PodToPlaceBroken", R"({"pod":{"spec":{"tolerations":{"key":"x"}}}})", "pod.spec.tolerations: ",
                    true},
        BadSnapshot{"ConfigNotJson", R"({"config":{"a":tru}})", "config: invalid JSON: ", true},
        BadSnapshot{"UnknownKey", R"({"nodes":[],"podz":1})", "podz: unknown field (a snapshot has nodes, pods, pod, ",
                    true},
        BadSnapshot{"KeyGivenTwice", R"({"nodes":[],"pods":[],"nodes":[]})", "invalid JSON: offset ", true}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Snapshot, KeyGivenTwiceSaysWhich) {
  auto snapshot = parseSnapshot(R"({"nodes":[],"pods":[],"nodes":[]})");
  ASSERT_FALSE(snapshot.ok());
  EXPECT_THAT(snapshot.error().message, HasSubstr("\"nodes\" appears twice"));
}

TEST(Snapshot, AbsentAndNullListsAreEmpty) {
  auto snapshot = parseSnapshot(R"({"nodes":null,"pods":[],"pod":null,"config":null})");
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  EXPECT_TRUE(snapshot->nodes.empty());
  EXPECT_TRUE(snapshot->pods.empty());
  EXPECT_FALSE(snapshot->pod.has_value());
  EXPECT_TRUE(snapshot->config.is_null());
}

TEST(Snapshot, DecodesAnyJsonDocumentAsItsText) {
  nlohmann::json document = {{"nodes", {nlohmann::json::parse(kNode)}},
                             {"pods", {nlohmann::json::parse(boundPod("a", "250m"))}},
                             {"config", {{"apiVersion", "placer.io/v1"}}}};
  auto snapshot = decodeSnapshot(document);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
  ASSERT_EQ(snapshot->nodes.size(), 1u);
  ASSERT_EQ(snapshot->pods.size(), 1u);
  EXPECT_EQ(snapshot->pods[0].requests.milliCpu, 250);
  EXPECT_EQ(snapshot->config, document["config"]);
  EXPECT_EQ(decodeSnapshot(nlohmann::json::array()).error().message,
            "snapshot: expected a JSON object with \"nodes\" and \"pods\"");
}

// A generated cluster several read pieces long, so that elements span pieces.
class SnapshotFile : public ::testing::Test {
 protected:
  void SetUp() override {
    params_.nodes = 60;
    params_.podsPerNode = 12;
    path_ = ::testing::TempDir() + "/placer-snapshot-test-" + std::to_string(::getpid()) + ".json";
    std::ofstream out(path_, std::ios::binary);
    writeSnapshot(out, params_, /*pendingPodIndex=*/3);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // What a decision reads of each node, and of the view as a whole.
  static void expectSameView(const ClusterView& a, const ClusterView& b) {
    ASSERT_EQ(a.nodes().size(), b.nodes().size());
    EXPECT_EQ(a.podCount(), b.podCount());
    for (const NodeInfo& n : a.nodes()) {
      const NodeInfo* m = b.findNode(n.name());
      ASSERT_NE(m, nullptr) << n.name();
      EXPECT_EQ(n.requested, m->requested) << n.name();
      EXPECT_EQ(n.nonZeroRequested, m->nonZeroRequested) << n.name();
      EXPECT_EQ(n.podCount, m->podCount) << n.name();
      EXPECT_EQ(n.usedPorts, m->usedPorts) << n.name();
      EXPECT_EQ(n.node.labels, m->node.labels) << n.name();
    }
    size_t namespacesA = 0, namespacesB = 0;
    a.forEachNamespace([&](std::string_view, const Labels&) { ++namespacesA; });
    b.forEachNamespace([&](std::string_view, const Labels&) { ++namespacesB; });
    EXPECT_EQ(namespacesA, namespacesB);
    EXPECT_GT(namespacesA, 0u);
  }

  GeneratorParams params_;
  std::string path_;
};

TEST_F(SnapshotFile, StreamedIntoAViewGivesTheViewOfTheWholeDocument) {
  ASSERT_GT(std::filesystem::file_size(path_), 3u << 20) << "the file should span several read pieces";
  auto whole = parseSnapshot(text());
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->pods.size(), size_t(params_.nodes * params_.podsPerNode));
  MutableClusterView expected;
  fillView(expected, *whole);

  MutableClusterView streamed;
  auto query = loadSnapshotFile(path_, streamed);
  ASSERT_TRUE(query.ok()) << query.error().message;
  expectSameView(streamed, expected);
  ASSERT_TRUE(query->pod.has_value());
  EXPECT_EQ(query->pod->requests, whole->pod->requests);
  EXPECT_EQ(query->pod->labels, whole->pod->labels);

  ClusterState state;
  auto intoState = loadSnapshotFile(path_, state);
  ASSERT_TRUE(intoState.ok()) << intoState.error().message;
  state.read([&](const ClusterView& view) { expectSameView(view, expected); });
}

TEST_F(SnapshotFile, AnErrorNamesTheFileAndTheElement) {
  std::string broken = text();
  const std::string cpu = R"("requests":{"cpu":")";
  size_t at = broken.find(cpu, broken.find("\"pods\":["));
  ASSERT_NE(at, std::string::npos);
  broken.insert(at + cpu.size(), "x");
  std::ofstream(path_, std::ios::binary) << broken;
  MutableClusterView view;
  auto query = loadSnapshotFile(path_, view);
  ASSERT_FALSE(query.ok());
  EXPECT_THAT(query.error().message, StartsWith(path_ + ": pods[0].spec."));
  EXPECT_THAT(query.error().message, HasSubstr("invalid quantity \"x"));
}

TEST(SnapshotFileMissing, SaysSo) {
  MutableClusterView view;
  auto query = loadSnapshotFile("/nonexistent/snapshot.json", view);
  ASSERT_FALSE(query.ok());
  EXPECT_EQ(query.error().message, "/nonexistent/snapshot.json: cannot read: No such file or directory");
}

}  // namespace
}  // namespace placer
