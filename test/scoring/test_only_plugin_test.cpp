// README "Adding a plugin" and "Adding a field a plugin reads", followed once:
// a test-only plugin, ExampleDraDriver, reads spec.resourceClaims (the field
// Pod::resourceClaims, added by those steps: model.h, its row in
// scoring/pod_fields.h, one line in model_decode.h) and keeps a pod that
// claims devices to the nodes labelled as running the example driver.
//
// It is written as an in-tree plugin would be (scoring/plugins/<name>.{h,cpp}
// plus one registry line); only its registration differs: a copy of the
// built-in registry with one more line, instead of an edit of registry.cpp.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scoring/decision_cache.h"
#include "scoring/engine.h"
#include "scoring/json_value.h"
#include "scoring/plugins/plugin_args.h"
#include "scoring/pod_fields.h"
#include "scoring/profile.h"
#include "scoring/registry.h"

namespace placer {
namespace {

using nlohmann::json;

// --- The plugin (what scoring/plugins/example_dra_driver.{h,cpp} would hold) ---

constexpr std::string_view kExampleDraDriver = "ExampleDraDriver";  // names.h
constexpr std::string_view kDriverLabel = "example.com/dra-driver";

class ExampleDraDriver final : public FilterPlugin {
 public:
  std::string_view name() const override { return kExampleDraDriver; }
  // It reads the pod's resourceClaims (a Shape field) and the node's labels:
  // its results may be reused for a pod of the same shape.
  bool resultsReusable() const override { return true; }

  Status filter(const CycleState&, const Pod& pod, const NodeInfo& node) const override {
    if (pod.resourceClaims == 0 || findLabel(node.node.labels, kDriverLabel) != nullptr) return Status::success();
    static const Status kRejected(Code::UnschedulableAndUnresolvable, "node(s) did not run the example DRA driver");
    return kRejected;
  }
};

Result<std::unique_ptr<Plugin>> newExampleDraDriver(const json& args) {
  if (Outcome ok = checkArgsObject(args, "ExampleDraDriverArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<ExampleDraDriver>());
}

// registry.cpp's one line, in a copy of the built-in registry.
const PluginRegistry& registryWithExample() {
  static const PluginRegistry registry = [] {
    PluginRegistry r = builtinPlugins();
    r.emplace(std::string(kExampleDraDriver), newExampleDraDriver);
    return r;
  }();
  return registry;
}

// --- The cluster and the pods ---

Node node(const std::string& name, bool driver) {
  Node n;
  n.name = name;
  n.uid = "uid-" + name;
  n.allocatable.milliCpu = 8000;
  n.allocatable.memory = int64_t{32} << 30;
  n.allocatable.pods = 110;
  n.labels = {{"kubernetes.io/hostname", name}};
  if (driver) n.labels.emplace_back(std::string(kDriverLabel), "true");
  std::sort(n.labels.begin(), n.labels.end());
  return n;
}

json podJson(bool claims) {
  json pod = {{"metadata", {{"namespace", "ml"}, {"generateName", "train-"}}},
              {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "trainer:1"},
                                                     {"resources", {{"requests", {{"cpu", "1"}}}}}}})}}}};
  if (claims) pod["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}});
  return pod;
}

std::vector<std::string> feasibleNames(const Decision& d) {
  std::vector<std::string> out;
  for (const NodeOutcome& n : d.nodes)
    if (n.code == Code::Success) out.push_back(n.node->node.name);
  std::sort(out.begin(), out.end());
  return out;
}

class TestOnlyPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.upsertNode(node("plain-1", false));
    view_.upsertNode(node("plain-2", false));
    view_.upsertNode(node("gpu-1", true));
    auto profile = Profile::fromJson(
        json{{"plugins", {{"filter", {{"enabled", json::array({{{"name", std::string(kExampleDraDriver)}}})}}}}}},
        registryWithExample());
    ASSERT_TRUE(profile) << profile.error().message;
    profile_ = *profile;
  }

  MutableClusterView view_;
  std::shared_ptr<const Profile> profile_;
};

TEST_F(TestOnlyPlugin, AProfileNamingItRunsItBesideTheDefaultPlugins) {
  ASSERT_FALSE(Profile::fromJson(json{{"plugins", {{"filter", {{"enabled", {{{"name", "ExampleDraDriver"}}}}}}}}}))
      << "the built-in registry does not know a test-only plugin";
  std::vector<std::string_view> filters;
  for (const FilterPlugin* p : profile_->filterPlugins()) filters.push_back(p->name());
  EXPECT_NE(std::find(filters.begin(), filters.end(), kExampleDraDriver), filters.end());
  EXPECT_NE(std::find(filters.begin(), filters.end(), "NodeResourcesFit"), filters.end()) << "defaults stay";
  auto badArgs = Profile::fromJson(
      json{{"plugins", {{"filter", {{"enabled", {{{"name", "ExampleDraDriver"}}}}}}}},
           {"pluginConfig", {{{"name", "ExampleDraDriver"}, {"args", {{"unknown", 1}}}}}}},
      registryWithExample());
  ASSERT_FALSE(badArgs);
  EXPECT_NE(badArgs.error().message.find("unknown"), std::string::npos) << badArgs.error().message;
}

TEST_F(TestOnlyPlugin, TheNewFieldReachesItFromEitherRepresentation) {
  Engine engine(profile_, 0);
  const std::string text = podJson(true).dump();
  auto fromDocument = decodePod(json::parse(text));
  JsonParser parser;
  auto parsed = parser.parse(text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  auto fromBytes = decodePod(*parsed);
  ASSERT_TRUE(fromDocument && fromBytes);
  EXPECT_EQ(fromDocument->resourceClaims, 1);
  EXPECT_EQ(*fromDocument, *fromBytes);

  for (const Pod* pod : {&*fromDocument, &*fromBytes}) {
    Decision d = engine.place(*pod, view_, Detail::Full);
    EXPECT_EQ(feasibleNames(d), std::vector<std::string>{"gpu-1"});
    ASSERT_NE(d.selected, nullptr);
    EXPECT_EQ(d.selected->node.name, "gpu-1");
  }
  auto plain = decodePod(podJson(false));
  ASSERT_TRUE(plain);
  EXPECT_EQ(feasibleNames(engine.place(*plain, view_, Detail::Full)),
            (std::vector<std::string>{"gpu-1", "plain-1", "plain-2"}));
}

TEST_F(TestOnlyPlugin, TheFieldsRowKeepsTheDecisionCacheExact) {
  // The row says Shape: two pods that differ only in the field are not the same shape...
  auto claims = decodePod(podJson(true));
  auto plain = decodePod(podJson(false));
  ASSERT_TRUE(claims && plain);
  EXPECT_FALSE(sameSchedulingFields(*claims, *plain));
  bool isShape = false;
  forEachPodField([&](const auto& row) {
    if constexpr (std::is_same_v<decltype(row.member), int32_t Pod::*>)
      if (row.member == &Pod::resourceClaims) isShape = row.role == FieldRole::Shape;
  });
  EXPECT_TRUE(isShape);

  // ...so the cached engine, asked for one and then the other, reuses nothing
  // between them: the same answers as an engine without a cache.
  Engine cached(profile_, 8);
  Engine uncached(profile_, 0);
  ASSERT_NE(cached.cache(), nullptr);
  std::vector<const NodeInfo*> all;
  for (const NodeInfo& n : view_.nodes()) all.push_back(&n);
  for (const Pod* pod : {&*claims, &*plain, &*claims, &*plain}) {
    Decision got = cached.evaluate(*pod, view_, all, Detail::FilterOnly, Engine::CacheUse::Reuse);
    Decision want = uncached.evaluate(*pod, view_, all, Detail::FilterOnly, Engine::CacheUse::Reuse);
    EXPECT_EQ(feasibleNames(got), feasibleNames(want)) << "resourceClaims " << pod->resourceClaims;
  }
}

}  // namespace
}  // namespace placer
