// Renders deploy/ and every overlay with `kubectl kustomize` (offline) and
// checks what an operator relies on: least-privilege RBAC, a webhook that can
// never block pod creation, a hardened Deployment whose probes, ports and
// volumes line up, and overlays that do what their names say.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "scoring/config.h"
#include "scoring/yaml.h"
#include "test/integration/deploy_support.h"

namespace placer {
namespace {

using namespace deploytest;

std::vector<json> render(const fs::path& dir) { return renderKustomize(dir); }

std::vector<fs::path> renderings() {
  std::vector<fs::path> dirs{kDeploy};
  std::vector<fs::path> overlays;
  for (const auto& e : fs::directory_iterator(kDeploy / "overlays")) {
    if (fs::exists(e.path() / "kustomization.yaml")) overlays.push_back(e.path());
  }
  std::sort(overlays.begin(), overlays.end());
  dirs.insert(dirs.end(), overlays.begin(), overlays.end());
  return dirs;
}

bool isPlacers(const json& o) {
  return o["metadata"].contains("labels") && o["metadata"]["labels"].value("app.kubernetes.io/name", "") == "placer";
}

// (apiGroup, resource) -> verbs placer may hold cluster-wide, and whether the
// grant must be limited to named objects.
struct Allowed {
  std::set<std::string> verbs;
  std::set<std::string> resourceNames;  // empty: not limited
};
const std::map<std::pair<std::string, std::string>, Allowed> kClusterGrants = {
    {{"", "nodes"}, {{"get", "list", "watch"}, {}}},
    {{"", "pods"}, {{"get", "list", "watch"}, {}}},
    {{"", "namespaces"}, {{"list", "watch"}, {}}},
    {{"", "services"}, {{"list", "watch"}, {}}},
    {{"", "replicationcontrollers"}, {{"list", "watch"}, {}}},
    {{"apps", "replicasets"}, {{"list", "watch"}, {}}},
    {{"apps", "statefulsets"}, {{"list", "watch"}, {}}},
    {{"", "pods/binding"}, {{"create"}, {}}},
    {{"", "events"}, {{"create"}, {}}},
    {{"events.k8s.io", "events"}, {{"create"}, {}}},
    {{"admissionregistration.k8s.io", "mutatingwebhookconfigurations"}, {{"get", "patch"}, {"placer"}}},
};

class DeployTest : public ::testing::TestWithParam<fs::path> {
 protected:
  void SetUp() override {
    objects_ = render(GetParam());
    ASSERT_FALSE(objects_.empty());
  }
  std::vector<json> objects_;
};

TEST_P(DeployTest, RendersEveryPartOfTheInstall) {
  for (const char* kind : {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment",
                           "Service", "PodDisruptionBudget", "MutatingWebhookConfiguration", "NetworkPolicy",
                           "ConfigMap"}) {
    EXPECT_FALSE(ofKind(objects_, kind).empty()) << kind;
  }
  for (const json& o : objects_) {
    if (o["kind"] == "Namespace" || o["kind"] == "ClusterRole" || o["kind"] == "ClusterRoleBinding" ||
        o["kind"] == "MutatingWebhookConfiguration") {
      continue;
    }
    EXPECT_EQ(o["metadata"].value("namespace", ""), "placer-system") << o["kind"] << " " << o["metadata"]["name"];
  }
}

TEST_P(DeployTest, ClusterRolesGrantNoMoreThanListed) {
  for (const json& role : ofKind(objects_, "ClusterRole")) {
    if (!isPlacers(role)) continue;
    const std::string name = role["metadata"]["name"];
    for (const json& rule : role["rules"]) {
      for (const json& group : rule["apiGroups"]) {
        for (const json& resource : rule["resources"]) {
          auto it = kClusterGrants.find({group.get<std::string>(), resource.get<std::string>()});
          ASSERT_NE(it, kClusterGrants.end()) << name << " grants " << group << "/" << resource;
          for (const json& verb : rule["verbs"]) {
            EXPECT_TRUE(it->second.verbs.count(verb.get<std::string>()))
                << name << ": " << verb << " on " << resource;
          }
          if (!it->second.resourceNames.empty()) {
            ASSERT_TRUE(rule.contains("resourceNames")) << name << ": " << resource << " must be limited by name";
            for (const json& n : rule["resourceNames"]) {
              EXPECT_TRUE(it->second.resourceNames.count(n.get<std::string>())) << name << ": " << n;
            }
          }
        }
      }
      EXPECT_FALSE(rule.contains("nonResourceURLs")) << name;
    }
  }
  // Nothing anywhere uses wildcards or borrows a powerful built-in role.
  for (const char* kind : {"ClusterRole", "Role"}) {
    for (const json& role : ofKind(objects_, kind)) {
      for (const json& rule : role["rules"]) {
        for (const char* field : {"apiGroups", "resources", "verbs", "resourceNames"}) {
          if (!rule.contains(field)) continue;
          for (const json& v : rule[field]) EXPECT_NE(v, "*") << kind << " " << role["metadata"]["name"];
        }
      }
    }
  }
  for (const char* kind : {"ClusterRoleBinding", "RoleBinding"}) {
    for (const json& binding : ofKind(objects_, kind)) {
      const std::string ref = binding["roleRef"]["name"];
      EXPECT_TRUE(ref != "cluster-admin" && ref != "admin" && ref != "edit") << binding["metadata"]["name"];
    }
  }
}

// Roles exist only in placer's namespace, for its certificate Secret and its
// leader-election Lease, each limited by name but for create.
TEST_P(DeployTest, RolesReachOnlyPlacersSecretAndLease) {
  const std::map<std::string, std::string> allowed = {{"secrets", "placer-certs"}, {"leases", "placer"}};
  for (const json& role : ofKind(objects_, "Role")) {
    EXPECT_EQ(role["metadata"]["namespace"], "placer-system");
    for (const json& rule : role["rules"]) {
      ASSERT_EQ(rule["resources"].size(), 1u) << rule;
      auto it = allowed.find(rule["resources"][0].get<std::string>());
      ASSERT_NE(it, allowed.end()) << role["metadata"]["name"] << " grants " << rule["resources"];
      EXPECT_EQ(rule["apiGroups"], json::array({it->first == "leases" ? "coordination.k8s.io" : ""}));
      for (const json& verb : rule["verbs"]) {
        const std::string v = verb;
        EXPECT_TRUE(v == "get" || v == "update" || v == "create") << v;
        if (v != "create") {
          EXPECT_EQ(rule["resourceNames"], json::array({it->second}));
        }
      }
    }
  }
}

TEST_P(DeployTest, ReplicasElectALeaderAndSpreadAcrossNodes) {
  const json* deployment = named(objects_, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  EXPECT_EQ((*deployment)["spec"]["replicas"], 2);
  const json& pod = (*deployment)["spec"]["template"]["spec"];
  ASSERT_TRUE(pod.contains("topologySpreadConstraints"));
  EXPECT_EQ(pod["topologySpreadConstraints"][0]["topologyKey"], "kubernetes.io/hostname");
  std::map<std::string, std::string> fieldRefs;
  for (const json& c : pod["containers"]) {
    if (c["name"] != "placer") continue;
    for (const json& e : c["env"]) fieldRefs[e["name"]] = e["valueFrom"]["fieldRef"]["fieldPath"];
  }
  EXPECT_EQ(fieldRefs["POD_NAME"], "metadata.name");
  EXPECT_EQ(fieldRefs["POD_IP"], "status.podIP");
  EXPECT_EQ(fieldRefs["POD_NAMESPACE"], "metadata.namespace");
  bool leases = false;
  for (const json& role : ofKind(objects_, "Role"))
    for (const json& rule : role["rules"])
      if (rule["resources"] == json::array({"leases"}) && rule.contains("resourceNames")) leases = true;
  EXPECT_TRUE(leases) << "get/update of the Lease";
}

TEST_P(DeployTest, WebhookNeverBlocksPodCreation) {
  const auto configs = ofKind(objects_, "MutatingWebhookConfiguration");
  ASSERT_EQ(configs.size(), 1u);
  const json& config = configs[0];
  EXPECT_EQ(config["metadata"]["name"], "placer") << "RBAC limits patching to this name";
  ASSERT_FALSE(config["webhooks"].empty());
  for (const json& w : config["webhooks"]) {
    SCOPED_TRACE(w["name"].get<std::string>());
    EXPECT_EQ(w["failurePolicy"], "Ignore");
    EXPECT_EQ(w["sideEffects"], "NoneOnDryRun");
    EXPECT_EQ(w["timeoutSeconds"], 2);
    EXPECT_EQ(w["reinvocationPolicy"], "IfNeeded");
    EXPECT_EQ(w["admissionReviewVersions"], json::array({"v1"}));
    ASSERT_EQ(w["rules"].size(), 1u);
    EXPECT_EQ(w["rules"][0]["operations"], json::array({"CREATE"}));
    EXPECT_EQ(w["rules"][0]["resources"], json::array({"pods"}));
    EXPECT_EQ(w["rules"][0]["apiGroups"], json::array({""}));
    EXPECT_EQ(w["namespaceSelector"], json({{"matchLabels", {{"placer.io/enabled", "true"}}}}));
    EXPECT_EQ(w["objectSelector"],
              json({{"matchExpressions", {{{"key", "placer.io/skip"}, {"operator", "NotIn"}, {"values", {"true"}}}}}}));
    // The Service it calls exists and forwards to the container's https port.
    const json& svcRef = w["clientConfig"]["service"];
    EXPECT_EQ(svcRef["path"], "/mutate");
    EXPECT_EQ(svcRef["namespace"], "placer-system");
    const json* svc = named(objects_, "Service", svcRef["name"]);
    ASSERT_NE(svc, nullptr) << svcRef;
    bool portFound = false;
    for (const json& p : (*svc)["spec"]["ports"]) {
      if (p["port"] == svcRef.value("port", 443)) portFound = p["targetPort"] == "https";
    }
    EXPECT_TRUE(portFound);
  }
}

TEST_P(DeployTest, DeploymentIsHardenedAndProbed) {
  const json* deployment = named(objects_, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& pod = (*deployment)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "placer");
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_EQ((*deployment)["spec"]["template"]["metadata"]["labels"]["placer.io/skip"], "true")
      << "placer's own pods must not wait for placer";

  std::vector<json> containers = pod["containers"].get<std::vector<json>>();
  if (pod.contains("initContainers")) {
    for (const json& c : pod["initContainers"]) containers.push_back(c);
  }
  for (const json& c : containers) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const json& sc = c["securityContext"];
    EXPECT_EQ(sc["readOnlyRootFilesystem"], true);
    EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
    EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"}));
    EXPECT_FALSE(sc["capabilities"].contains("add"));
    EXPECT_NE(sc.value("privileged", false), true);
    EXPECT_TRUE(c["resources"]["requests"].contains("cpu"));
    EXPECT_TRUE(c["resources"]["requests"].contains("memory"));
  }

  const json* server = nullptr;
  for (const json& c : pod["containers"]) {
    if (c["name"] == "placer") server = &c;
  }
  ASSERT_NE(server, nullptr);
  // The webhook port, and the plain-HTTP metrics port only where placer is
  // told to listen on it.
  ASSERT_GE((*server)["ports"].size(), 1u);
  EXPECT_EQ((*server)["ports"][0]["name"], "https");
  EXPECT_EQ((*server)["ports"][0]["containerPort"], 8443);
  if ((*server)["ports"].size() > 1) {
    ASSERT_EQ((*server)["ports"].size(), 2u);
    EXPECT_EQ((*server)["ports"][1]["name"], "metrics");
    const std::string listen = "--metrics-listen=0.0.0.0:" + std::to_string((*server)["ports"][1]["containerPort"].get<int>());
    EXPECT_NE(std::find((*server)["args"].begin(), (*server)["args"].end(), listen), (*server)["args"].end()) << listen;
  }
  for (auto [probe, path] : {std::pair{"livenessProbe", "/livez"}, std::pair{"readinessProbe", "/readyz"}}) {
    const json& get = (*server)[probe]["httpGet"];
    EXPECT_EQ(get["path"], path) << probe;
    EXPECT_EQ(get["scheme"], "HTTPS") << probe;
    EXPECT_EQ(get["port"], "https") << probe;
  }

  // The serving certificate files the config names are on a mounted volume.
  const json* config = named(objects_, "ConfigMap", "placer-config");
  ASSERT_NE(config, nullptr);
  auto parsed = parseConfiguration((*config)["data"]["config.yaml"].get<std::string>());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const std::string certFile = parsed->settings.tlsCertFile;
  bool mounted = false;
  for (const json& m : (*server)["volumeMounts"]) {
    if (certFile.rfind(m["mountPath"].get<std::string>() + "/", 0) == 0) mounted = true;
  }
  EXPECT_TRUE(mounted) << certFile;
  EXPECT_EQ(parsed->settings.webhookListen, "0.0.0.0:8443");
}

TEST_P(DeployTest, DisruptionBudgetAndNetworkPolicyCoverThePods) {
  const json* deployment = named(objects_, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& podLabels = (*deployment)["spec"]["template"]["metadata"]["labels"];
  auto selects = [&](const json& selector) {
    for (const auto& [k, v] : selector["matchLabels"].items()) {
      if (!podLabels.contains(k) || podLabels[k] != v) return false;
    }
    return !selector["matchLabels"].empty();
  };
  const json* pdb = named(objects_, "PodDisruptionBudget", "placer");
  ASSERT_NE(pdb, nullptr);
  EXPECT_TRUE(selects((*pdb)["spec"]["selector"]));
  if ((*deployment)["spec"].value("replicas", 1) == 1) {
    // One replica: the budget must still let a node drain.
    EXPECT_FALSE((*pdb)["spec"].contains("minAvailable"));
  } else {
    // Several: a drain always leaves one serving.
    EXPECT_EQ((*pdb)["spec"]["minAvailable"], 1);
  }

  const json* policy = named(objects_, "NetworkPolicy", "placer");
  ASSERT_NE(policy, nullptr);
  EXPECT_TRUE(selects((*policy)["spec"]["podSelector"]));
  EXPECT_EQ((*policy)["spec"]["policyTypes"], json::array({"Ingress"}));
  // The webhook port admits addresses only; the metrics port (when placer
  // listens on it) may admit pods, since Prometheus is one.
  std::set<int> containerPorts;
  for (const json& c : (*deployment)["spec"]["template"]["spec"]["containers"])
    for (const json& p : c.value("ports", json::array())) containerPorts.insert(p["containerPort"].get<int>());
  bool webhookRule = false;
  for (const json& rule : (*policy)["spec"]["ingress"]) {
    ASSERT_TRUE(rule.contains("from") && !rule["from"].empty()) << "an empty from admits every pod";
    ASSERT_EQ(rule["ports"].size(), 1u) << rule;
    const int port = rule["ports"][0]["port"];
    EXPECT_EQ(rule["ports"][0]["protocol"], "TCP");
    EXPECT_TRUE(containerPorts.count(port)) << "the policy opens a port no container listens on: " << port;
    if (port != 8443) continue;
    webhookRule = true;
    for (const json& peer : rule["from"]) {
      // Addresses (the API server), or placer's own replicas forwarding to
      // the leader: no other pod, no namespace.
      EXPECT_FALSE(peer.contains("namespaceSelector")) << peer;
      if (peer.contains("podSelector")) {
        EXPECT_EQ(peer["podSelector"], (*policy)["spec"]["podSelector"]) << "only placer's pods: " << peer;
      } else {
        EXPECT_TRUE(peer.contains("ipBlock")) << peer;
      }
    }
  }
  EXPECT_TRUE(webhookRule) << "the API server must reach the webhook port";
}

INSTANTIATE_TEST_SUITE_P(Renderings, DeployTest, ::testing::ValuesIn(renderings()), [](const auto& info) {
  std::string name = info.param == kDeploy ? "base" : info.param.filename().string();
  for (char& c : name) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
});

class DeployOverlayTest : public ::testing::Test {};

TEST_F(DeployOverlayTest, BaseInjectsCertificatesWithPlacerCertsEnsure) {
  const auto objects = render(kDeploy);
  const json* deployment = named(objects, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& pod = (*deployment)["spec"]["template"]["spec"];
  ASSERT_EQ(pod["initContainers"].size(), 1u);
  const json& args = pod["initContainers"][0]["args"];
  EXPECT_EQ(args[0], "certs");
  EXPECT_EQ(args[1], "ensure");
  EXPECT_NE(std::find(args.begin(), args.end(), "--webhook-config=placer"), args.end());
  bool sidecar = false;
  for (const json& c : pod["containers"]) {
    if (c["args"][0] == "certs" && c["args"][1] == "ensure") sidecar = true;
  }
  EXPECT_TRUE(sidecar) << "a sidecar keeps renewing and restoring the caBundle";
}

TEST_F(DeployOverlayTest, MatchConditionsSkipPodsThatAlreadyHaveANode) {
  const auto objects = render(kDeploy / "overlays" / "match-conditions");
  const auto configs = ofKind(objects, "MutatingWebhookConfiguration");
  ASSERT_EQ(configs.size(), 1u);
  for (const json& w : configs[0]["webhooks"]) {
    ASSERT_TRUE(w.contains("matchConditions"));
    ASSERT_EQ(w["matchConditions"].size(), 1u);
    const std::string expr = w["matchConditions"][0]["expression"];
    EXPECT_NE(expr.find("object.spec.nodeName"), std::string::npos) << expr;
  }
}

TEST_F(DeployOverlayTest, CertManagerIssuesTheServingSecretAndInjectsTheCa) {
  const auto objects = render(kDeploy / "overlays" / "cert-manager");
  const auto configs = ofKind(objects, "MutatingWebhookConfiguration");
  ASSERT_EQ(configs.size(), 1u);
  const std::string inject = configs[0]["metadata"]["annotations"]["cert-manager.io/inject-ca-from"];
  const std::string certName = inject.substr(inject.find('/') + 1);
  EXPECT_EQ(inject.substr(0, inject.find('/')), "placer-system");
  const json* cert = named(objects, "Certificate", certName);
  ASSERT_NE(cert, nullptr) << inject;
  EXPECT_EQ((*cert)["spec"]["dnsNames"],
            json::array({"placer", "placer.placer-system", "placer.placer-system.svc",
                         "placer.placer-system.svc.cluster.local"}));
  const json* issuer = named(objects, "Issuer", (*cert)["spec"]["issuerRef"]["name"]);
  ASSERT_NE(issuer, nullptr);

  const json* deployment = named(objects, "Deployment", "placer");
  ASSERT_NE(deployment, nullptr);
  const json& pod = (*deployment)["spec"]["template"]["spec"];
  EXPECT_FALSE(pod.contains("initContainers"));
  EXPECT_EQ(pod["containers"].size(), 1u);
  bool secretMounted = false;
  for (const json& v : pod["volumes"]) {
    if (v.contains("secret") && v["secret"]["secretName"] == (*cert)["spec"]["secretName"]) secretMounted = true;
  }
  EXPECT_TRUE(secretMounted);
  for (const json& role : ofKind(objects, "Role"))
    for (const json& rule : role["rules"])
      EXPECT_NE(rule["resources"], json::array({"secrets"})) << "cert-manager writes the Secret, placer does not";
}

TEST_F(DeployOverlayTest, FallbackSchedulerCallsPlacersExtenderOverLocalhost) {
  const auto objects = render(kDeploy / "overlays" / "fallback-scheduler");
  const json* schedulerConfig = named(objects, "ConfigMap", "placer-fallback-scheduler");
  ASSERT_NE(schedulerConfig, nullptr);
  auto config = parseYaml((*schedulerConfig)["data"]["scheduler-config.yaml"].get<std::string>());
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ((*config)["kind"], "KubeSchedulerConfiguration");
  ASSERT_EQ((*config)["profiles"].size(), 1u);
  EXPECT_EQ((*config)["profiles"][0]["schedulerName"], "placer-fallback");
  ASSERT_EQ((*config)["extenders"].size(), 1u);
  const json& extender = (*config)["extenders"][0];
  EXPECT_EQ(extender["urlPrefix"], "http://127.0.0.1:8888");
  EXPECT_EQ(extender["filterVerb"], "filter");
  EXPECT_EQ(extender["prioritizeVerb"], "prioritize");
  EXPECT_EQ(extender["bindVerb"], "bind");
  EXPECT_EQ(extender["preemptVerb"], "preempt");
  EXPECT_EQ(extender["nodeCacheCapable"], true);
  EXPECT_GT(extender["weight"].get<int>(), 0);
  EXPECT_TRUE(extender.contains("httpTimeout"));

  // The extender runs next to the scheduler, on loopback only.
  const json* deployment = named(objects, "Deployment", "placer-fallback");
  ASSERT_NE(deployment, nullptr);
  bool extenderSidecar = false;
  for (const json& c : (*deployment)["spec"]["template"]["spec"]["containers"]) {
    for (const json& a : c.value("args", json::array()))
      if (a == "--extender-listen=127.0.0.1:8888") extenderSidecar = true;
  }
  EXPECT_TRUE(extenderSidecar);

  // The webhook hands what it cannot place to that scheduler.
  const json* placerConfig = named(objects, "ConfigMap", "placer-config");
  ASSERT_NE(placerConfig, nullptr);
  auto parsed = parseConfiguration((*placerConfig)["data"]["config.yaml"].get<std::string>());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->settings.fallbackSchedulerName, "placer-fallback");
}

}  // namespace
}  // namespace placer
