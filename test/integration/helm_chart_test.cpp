// The Helm chart (deploy/helm/placer) against the kustomize manifests it
// mirrors. With default values it renders the base object for object; each
// overlay in deploy/overlays has a values file ci/<overlay>-values.yaml whose
// render equals that overlay's. Whoever changes one side sees these tests fail
// until the other matches. Every values file passes `helm lint` and
// `helm template`, names stay consistent under any release name, and the
// values schema refuses what the API server would refuse later.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "scoring/config.h"
#include "test/integration/deploy_support.h"
#include "placer_test_paths.h"

namespace placer {
namespace {

using namespace deploytest;

using ObjectKey = std::tuple<std::string, std::string, std::string>;  // kind, namespace, name

// A ConfigMap value that is a YAML document (config.yaml, scheduler-config.yaml)
// compares as data: helm writes the values' YAML in its own style.
json comparable(json object) {
  if (object.value("kind", "") == "ConfigMap" && object.contains("data")) {
    for (auto& [key, value] : object["data"].items()) {
      if (key.size() > 5 && key.substr(key.size() - 5) == ".yaml") {
        auto docs = yamlDocuments(value.get<std::string>());
        if (docs.size() == 1) value = docs[0];
      }
    }
  }
  return object;
}

std::map<ObjectKey, json> byKey(const std::vector<json>& objects) {
  std::map<ObjectKey, json> out;
  for (const json& o : objects) {
    ObjectKey key{o.value("kind", ""), o["metadata"].value("namespace", ""), o["metadata"].value("name", "")};
    EXPECT_FALSE(out.count(key)) << "rendered twice: " << std::get<0>(key) << " " << std::get<2>(key);
    out[key] = comparable(o);
  }
  return out;
}

std::string describe(const ObjectKey& k) {
  return std::get<0>(k) + " " + (std::get<1>(k).empty() ? "" : std::get<1>(k) + "/") + std::get<2>(k);
}

// Every object of `kustomize` equals the chart's object of the same kind,
// namespace and name, and the chart renders nothing else; `onlyKustomize`
// lists kinds the chart leaves out.
void expectSameObjects(const std::vector<json>& kustomize, const std::vector<json>& helm,
                       const std::set<std::string>& onlyKustomize = {}) {
  ASSERT_FALSE(kustomize.empty());
  ASSERT_FALSE(helm.empty());
  auto expected = byKey(kustomize);
  auto actual = byKey(helm);
  for (const auto& [key, object] : expected) {
    if (onlyKustomize.count(std::get<0>(key))) {
      EXPECT_FALSE(actual.count(key)) << describe(key);
      continue;
    }
    auto it = actual.find(key);
    if (it == actual.end()) {
      ADD_FAILURE() << "the chart does not render " << describe(key);
      continue;
    }
    EXPECT_EQ(it->second, object) << describe(key) << " differs:\n  kustomize: " << object.dump()
                                  << "\n  helm:      " << it->second.dump();
  }
  for (const auto& [key, object] : actual)
    EXPECT_TRUE(expected.count(key)) << "the chart renders " << describe(key) << ", kustomize does not";
}

fs::path valuesFile(const std::string& name) { return kChart / "ci" / (name + "-values.yaml"); }

TEST(HelmChartTest, DefaultRenderEqualsTheKustomizeBase) {
  // The Namespace is the one exception: `helm install --create-namespace`
  // makes it (a chart cannot install into a namespace it creates itself).
  expectSameObjects(renderKustomize(kDeploy), renderHelm({}), {"Namespace"});
}

TEST(HelmChartTest, WithNamespaceCreateTheRenderEqualsTheBaseInFull) {
  expectSameObjects(renderKustomize(kDeploy), renderHelm({.valuesFile = valuesFile("namespace")}));
}

std::vector<std::string> overlays() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kDeploy / "overlays"))
    if (fs::exists(e.path() / "kustomization.yaml")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class HelmOverlayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(HelmOverlayTest, ValuesFileRendersTheOverlay) {
  const fs::path values = valuesFile(GetParam());
  ASSERT_TRUE(fs::exists(values)) << "deploy/overlays/" << GetParam() << " has no chart counterpart: write "
                                  << values.lexically_relative(PLACER_SOURCE_DIR);
  expectSameObjects(renderKustomize(kDeploy / "overlays" / GetParam()), renderHelm({.valuesFile = values}),
                    {"Namespace"});
}

std::string testName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Overlays, HelmOverlayTest, ::testing::ValuesIn(overlays()), testName);

// ---------------------------------------------------------------------------
// Every values file: lint, template, and names that agree with each other.

std::vector<std::string> valuesFiles() {
  std::vector<std::string> names{"default"};
  for (const auto& e : fs::directory_iterator(kChart / "ci")) {
    std::string file = e.path().filename().string();
    const std::string suffix = "-values.yaml";
    if (file.size() > suffix.size() && file.substr(file.size() - suffix.size()) == suffix)
      names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

class HelmValuesTest : public ::testing::TestWithParam<std::string> {
 protected:
  HelmRelease release(std::string name = "placer", std::string ns = "placer-system") const {
    HelmRelease r{.name = std::move(name), .namespace_ = std::move(ns)};
    if (GetParam() != "default") r.valuesFile = valuesFile(GetParam());
    return r;
  }
};

TEST_P(HelmValuesTest, LintPasses) {
  if (!haveTool("helm")) return;
  Command lint = run("helm lint --strict " + quoted(kChart) + helmArgs(release()));
  EXPECT_EQ(lint.status, 0) << lint.out;
  EXPECT_NE(lint.out.find("0 chart(s) failed"), std::string::npos) << lint.out;
}

TEST_P(HelmValuesTest, TemplateRendersPlacerWithConsistentNamesUnderAnyReleaseName) {
  // Another release name and namespace: every reference must follow.
  const std::vector<json> objects = renderHelm(release("sched", "scheduling"));
  ASSERT_FALSE(objects.empty());
  const std::string base = "sched-placer";
  for (const json& o : objects) {
    const std::string kind = o["kind"];
    ASSERT_TRUE(o["metadata"].contains("name")) << o.dump();
    const std::string name = o["metadata"]["name"];
    if (kind == "Namespace") {
      EXPECT_EQ(name, "scheduling");
      continue;
    }
    EXPECT_EQ(name.rfind(base, 0), 0u) << kind << " " << name << " does not carry the release's name";
    static const std::set<std::string> clusterScoped = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                                                        "MutatingWebhookConfiguration"};
    if (!clusterScoped.count(kind)) {
      EXPECT_EQ(o["metadata"].value("namespace", ""), "scheduling") << kind << " " << name;
    }
  }

  const json* deployment = named(objects, "Deployment", base);
  const json* service = named(objects, "Service", base);
  const json* webhook = named(objects, "MutatingWebhookConfiguration", base);
  ASSERT_TRUE(deployment && service && webhook);
  const json& ref = (*webhook)["webhooks"][0]["clientConfig"]["service"];
  EXPECT_EQ(ref["name"], base);
  EXPECT_EQ(ref["namespace"], "scheduling");

  const json& pod = (*deployment)["spec"]["template"]["spec"];
  EXPECT_NE(named(objects, "ServiceAccount", pod["serviceAccountName"]), nullptr);
  for (const json& v : pod["volumes"]) {
    if (v.contains("configMap")) {
      EXPECT_NE(named(objects, "ConfigMap", v["configMap"]["name"]), nullptr) << v;
    }
  }
  // The Service selects the pods.
  for (const auto& [k, v] : (*service)["spec"]["selector"].items())
    EXPECT_EQ((*deployment)["spec"]["template"]["metadata"]["labels"].value(k, ""), v) << k;

  // `placer certs ensure` names the Service, the Secret and the webhook
  // configuration that exist, and RBAC lets it patch exactly that one.
  std::vector<json> containers = pod["containers"].get<std::vector<json>>();
  for (const json& c : pod.value("initContainers", json::array())) containers.push_back(c);
  for (const json& c : containers) {
    const json args = c.value("args", json::array());
    if (args.size() < 2 || args[0] != "certs") continue;
    EXPECT_NE(std::find(args.begin(), args.end(), "--service=" + base), args.end()) << c["name"];
    EXPECT_NE(std::find(args.begin(), args.end(), "--webhook-config=" + base), args.end()) << c["name"];
    EXPECT_NE(std::find(args.begin(), args.end(), "--secret=" + base + "-certs"), args.end()) << c["name"];
    const json* role = named(objects, "ClusterRole", base);
    ASSERT_NE(role, nullptr);
    bool patchesWebhook = false;
    for (const json& rule : (*role)["rules"])
      if (rule["resources"] == json::array({"mutatingwebhookconfigurations"}))
        patchesWebhook = rule["resourceNames"] == json::array({base});
    EXPECT_TRUE(patchesWebhook) << (*role).dump();
  }

  // placer's configuration parses as placer parses it at start-up.
  const json config = placerConfig(objects, base + "-config");
  ASSERT_TRUE(config.is_object());
  auto parsed = configurationFromJson(config);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
}

INSTANTIATE_TEST_SUITE_P(ValuesFiles, HelmValuesTest, ::testing::ValuesIn(valuesFiles()), testName);

// ---------------------------------------------------------------------------
// Values that have no kustomize counterpart land where they should.

const json& placerContainer(const json& deployment) {
  for (const json& c : deployment["spec"]["template"]["spec"]["containers"])
    if (c["name"] == "placer") return c;
  static const json none;
  return none;
}

TEST(HelmChartTest, CustomValuesReachThePodTheWebhookAndTheConfiguration) {
  const auto objects = renderHelm({.valuesFile = valuesFile("custom")});
  const json* deployment = named(objects, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& template_ = (*deployment)["spec"]["template"];
  const json& pod = template_["spec"];
  EXPECT_EQ(pod["priorityClassName"], "placer-critical");
  EXPECT_EQ(pod["imagePullSecrets"], json::parse(R"([{"name": "registry-credentials"}])"));
  EXPECT_EQ(pod["nodeSelector"], json::parse(R"({"node-role.kubernetes.io/control-plane": ""})"));
  EXPECT_EQ(pod["tolerations"][0]["key"], "node-role.kubernetes.io/control-plane");
  EXPECT_EQ(pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
               ["matchExpressions"][0]["values"],
            json::array({"amd64"}));
  EXPECT_EQ(template_["metadata"]["labels"]["team"], "scheduling");
  EXPECT_EQ(template_["metadata"]["labels"]["placer.io/skip"], "true") << "podLabels add to, never replace, the skip label";
  EXPECT_EQ(template_["metadata"]["annotations"]["example.com/owner"], "scheduling");
  for (const json& c : pod["containers"]) {
    if (c["name"] == "placer" || c["name"] == "certs") {
      EXPECT_EQ(c["image"], "registry.example.com/placer:9.9.9");
      EXPECT_EQ(c["imagePullPolicy"], "Always");
      EXPECT_EQ(c["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    }
  }
  EXPECT_EQ(placerContainer(*deployment)["resources"]["limits"]["memory"], "4Gi");

  const json* webhook = named(objects, "MutatingWebhookConfiguration", "placer");
  ASSERT_NE(webhook, nullptr);
  const json& w = (*webhook)["webhooks"][0];
  EXPECT_EQ(w["failurePolicy"], "Fail");
  EXPECT_EQ(w["timeoutSeconds"], 5);
  EXPECT_EQ(w["namespaceSelector"], json::parse(R"({"matchExpressions": [
      {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["batch", "ml"]}]})"));
  // The pod opt-out label holds whatever else the object selector asks.
  EXPECT_EQ(w["objectSelector"], json::parse(R"({"matchLabels": {"scheduling": "placer"},
      "matchExpressions": [{"key": "placer.io/skip", "operator": "NotIn", "values": ["true"]}]})"));

  auto parsed = configurationFromJson(placerConfig(objects));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->settings.schedulerNames, (std::vector<std::string>{"default-scheduler", "batch-scheduler"}));
  EXPECT_EQ(parsed->settings.reservationTtl, std::chrono::seconds(45));
  EXPECT_EQ(parsed->settings.excludedNamespaces, std::vector<std::string>{"kube-system"});
  EXPECT_EQ(parsed->settings.tlsCertFile, "/certs/tls.crt") << "the chart adds the certificate files";
  EXPECT_EQ(parsed->settings.webhookListen, "0.0.0.0:8443");
}

TEST(HelmChartTest, PdbAndNetworkPolicyCanBeTurnedOff) {
  const auto objects = renderHelm({.valuesFile = valuesFile("without-pdb-and-networkpolicy")});
  ASSERT_FALSE(objects.empty());
  EXPECT_TRUE(ofKind(objects, "PodDisruptionBudget").empty());
  EXPECT_TRUE(ofKind(objects, "NetworkPolicy").empty());
  EXPECT_NE(named(objects, "Deployment", "placer"), nullptr);
}

TEST(HelmChartTest, MetricsListenerAloneOpensItsPortWithoutOperatorObjects) {
  const auto objects = renderHelm({.valuesFile = valuesFile("metrics"), .set = {"metrics.port=9102"}});
  const json* deployment = named(objects, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& server = placerContainer(*deployment);
  EXPECT_NE(std::find(server["args"].begin(), server["args"].end(), "--metrics-listen=0.0.0.0:9102"),
            server["args"].end());
  EXPECT_EQ(server["ports"][1], json::parse(R"({"name": "metrics", "containerPort": 9102, "protocol": "TCP"})"));
  const json* service = named(objects, "Service", "placer");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ((*service)["spec"]["ports"][1]["port"], 9102);
  const json* policy = named(objects, "NetworkPolicy", "placer");
  ASSERT_NE(policy, nullptr);
  EXPECT_EQ((*policy)["spec"]["ingress"][1]["ports"][0]["port"], 9102);
  for (const char* kind : {"ServiceMonitor", "PodMonitor", "PrometheusRule"}) EXPECT_TRUE(ofKind(objects, kind).empty());
}

TEST(HelmChartTest, SchemaRefusesValuesTheApiServerWouldRefuse) {
  struct Case {
    std::string set;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"webhook.failurePolicy=Sometimes", "webhook.failurePolicy"},
           {"webhook.timeoutSeconds=31", "webhook.timeoutSeconds"},
           {"webhook.reinvocationPolicy=Always", "webhook.reinvocationPolicy"},
           {"metrics.port=70000", "metrics.port"},
           {"image.pullPolicy=Sometimes", "image.pullPolicy"},
           {"webhook.objectSelector.matchFields=x", "webhook.objectSelector"},
       }) {
    SCOPED_TRACE(c.set);
    Command out = helmTemplate({.set = {c.set}});
    EXPECT_NE(out.status, 0);
    EXPECT_NE(out.out.find(c.message), std::string::npos) << out.out;
  }
}

}  // namespace
}  // namespace placer
