#include "test/fakeapi/admission.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <ctime>

#include "test/fakeapi/api_status.h"
#include "test/fakeapi/https_client.h"

namespace placer::fakeapi {
namespace {

using nlohmann::json;

const char* const kServiceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";

json& objectAt(json& parent, const char* key) {
  json& v = parent[key];
  if (!v.is_object()) v = json::object();
  return v;
}

std::string pullPolicyFor(const std::string& image) {
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  auto slash = image.rfind('/');
  auto colon = image.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "Always";
  return image.substr(colon + 1) == "latest" ? "Always" : "IfNotPresent";
}

void defaultContainer(json& c) {
  if (!c.is_object()) return;
  if (!c.contains("imagePullPolicy") && c.contains("image") && c["image"].is_string())
    c["imagePullPolicy"] = pullPolicyFor(c["image"].get<std::string>());
  if (!c.contains("terminationMessagePath")) c["terminationMessagePath"] = "/dev/termination-log";
  if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
  json& resources = objectAt(c, "resources");
  // SetDefaults_Pod: a limit without a request makes the request equal to it.
  if (resources.contains("limits") && resources["limits"].is_object()) {
    json& requests = objectAt(resources, "requests");
    for (const auto& [name, value] : resources["limits"].items())
      if (!requests.contains(name)) requests[name] = value;
  }
  if (c.contains("ports") && c["ports"].is_array())
    for (json& p : c["ports"])
      if (p.is_object() && !p.contains("protocol")) p["protocol"] = "TCP";
}

bool tolerates(const json& tolerations, const std::string& key) {
  if (!tolerations.is_array()) return false;
  for (const json& t : tolerations) {
    if (!t.is_object()) continue;
    const std::string effect = t.value("effect", "");
    if (!effect.empty() && effect != "NoExecute") continue;
    const std::string tkey = t.value("key", "");
    const std::string op = t.value("operator", "Equal");
    if (tkey.empty() && op == "Exists") return true;
    if (tkey == key) return true;
  }
  return false;
}

bool mountsServiceAccount(const json& containers) {
  if (!containers.is_array()) return false;
  for (const json& c : containers)
    if (c.is_object() && c.contains("volumeMounts") && c["volumeMounts"].is_array())
      for (const json& m : c["volumeMounts"])
        if (m.is_object() && m.value("mountPath", "") == kServiceAccountMountPath) return true;
  return false;
}

// --- RFC 6902 ------------------------------------------------------------

bool isPodLabelsMatch(const json& selector, const LabelPairs& labels, std::string& error) {
  auto q = labelSelectorFromJson(selector);
  if (!q) {
    error = q.error().message;
    return false;
  }
  return q->matches(labels);
}

LabelPairs podLabels(const json& pod) {
  LabelPairs out;
  auto m = pod.find("metadata");
  if (m == pod.end() || !m->is_object()) return out;
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return out;
  for (const auto& [k, v] : l->items())
    if (v.is_string()) out.emplace_back(k, v.get<std::string>());
  return out;
}

}  // namespace

std::string nowRfc3339() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string randomUid(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  uint64_t a = rng(), b = rng();
  for (int i = 0; i < 32; ++i) {
    uint64_t& src = i < 16 ? a : b;
    int nibble = static_cast<int>(src & 0xf);
    src >>= 4;
    if (i == 12) nibble = 4;                    // version 4
    if (i == 16) nibble = 8 | (nibble & 0x3);  // variant 10xx
    s += hex[nibble];
    if (i == 7 || i == 11 || i == 15 || i == 19) s += '-';
  }
  return s;
}

std::string generateNameSuffix(std::mt19937_64& rng) {
  // k8s.io/apimachinery/pkg/util/rand: consonants and digits, no vowels.
  static const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += alphabet[rng() % alphabet.size()];
  return s;
}

void applyPodCreateDefaults(json& pod, const std::string& ns, std::mt19937_64& rng) {
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  json& meta = objectAt(pod, "metadata");
  meta["namespace"] = ns;
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = nullptr;
  json& spec = objectAt(pod, "spec");
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("securityContext")) spec["securityContext"] = json::object();
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
  for (const char* list : {"initContainers", "containers"})
    if (spec.contains(list) && spec[list].is_array())
      for (json& c : spec[list]) defaultContainer(c);

  // ServiceAccount admission: the default account and its projected token.
  if (!spec.contains("serviceAccountName") || !spec["serviceAccountName"].is_string() ||
      spec["serviceAccountName"].get<std::string>().empty())
    spec["serviceAccountName"] = "default";
  spec["serviceAccount"] = spec["serviceAccountName"];
  const bool automount = !(spec.contains("automountServiceAccountToken") &&
                           spec["automountServiceAccountToken"].is_boolean() &&
                           !spec["automountServiceAccountToken"].get<bool>());
  if (automount && !mountsServiceAccount(spec.value("containers", json()))) {
    const std::string volumeName = "kube-api-access-" + generateNameSuffix(rng);
    json volume = {
        {"name", volumeName},
        {"projected",
         {{"defaultMode", 420},
          {"sources",
           json::array({{{"serviceAccountToken", {{"expirationSeconds", 3607}, {"path", "token"}}}},
                        {{"configMap",
                          {{"name", "kube-root-ca.crt"},
                           {"items", json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}},
                        {{"downwardAPI",
                          {{"items", json::array({{{"path", "namespace"},
                                                   {"fieldRef", {{"apiVersion", "v1"},
                                                                 {"fieldPath", "metadata.namespace"}}}}})}}}}})}}}};
    if (!spec.contains("volumes") || !spec["volumes"].is_array()) spec["volumes"] = json::array();
    spec["volumes"].push_back(std::move(volume));
    json mount = {{"name", volumeName}, {"readOnly", true}, {"mountPath", kServiceAccountMountPath}};
    for (const char* list : {"initContainers", "containers"})
      if (spec.contains(list) && spec[list].is_array())
        for (json& c : spec[list]) {
          if (!c.is_object()) continue;
          if (!c.contains("volumeMounts") || !c["volumeMounts"].is_array()) c["volumeMounts"] = json::array();
          c["volumeMounts"].push_back(mount);
        }
  }

  // DefaultTolerationSeconds.
  if (!spec.contains("tolerations") || !spec["tolerations"].is_array()) {
    if (!spec.contains("tolerations") || spec["tolerations"].is_null()) spec["tolerations"] = json::array();
  }
  if (spec["tolerations"].is_array()) {
    for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})
      if (!tolerates(spec["tolerations"], key))
        spec["tolerations"].push_back(
            {{"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
  }

  // Priority admission (no PriorityClass objects: only the two system classes).
  const std::string priorityClass = spec.value("priorityClassName", "");
  if (!spec.contains("priority")) {
    if (priorityClass == "system-node-critical") spec["priority"] = 2000001000;
    else if (priorityClass == "system-cluster-critical") spec["priority"] = 2000000000;
    else spec["priority"] = 0;
  }
  if (!spec.contains("preemptionPolicy")) spec["preemptionPolicy"] = "PreemptLowerPriority";
}

std::string podQosClass(const json& pod) {
  bool any = false;
  bool guaranteed = true;
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return "BestEffort";
  for (const char* list : {"initContainers", "containers"}) {
    auto cs = spec->find(list);
    if (cs == spec->end() || !cs->is_array()) continue;
    for (const json& c : *cs) {
      if (!c.is_object()) continue;
      json resources = c.value("resources", json::object());
      json requests = resources.is_object() ? resources.value("requests", json::object()) : json::object();
      json limits = resources.is_object() ? resources.value("limits", json::object()) : json::object();
      for (const char* r : {"cpu", "memory"}) {
        const bool hasRequest = requests.is_object() && requests.contains(r);
        const bool hasLimit = limits.is_object() && limits.contains(r);
        if (hasRequest || hasLimit) any = true;
        if (!hasLimit || (hasRequest && requests[r] != limits[r])) guaranteed = false;
      }
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void preparePodForCreate(json& pod, std::mt19937_64& rng) {
  json& meta = objectAt(pod, "metadata");
  if (meta.value("name", "").empty() && !meta.value("generateName", "").empty())
    meta["name"] = meta["generateName"].get<std::string>() + generateNameSuffix(rng);
  meta["uid"] = randomUid(rng);
  meta["creationTimestamp"] = nowRfc3339();
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("resourceVersion");
  pod["status"] = {{"phase", "Pending"}, {"qosClass", podQosClass(pod)}};
}

namespace {

// One webhook call (callAttrMutatingHook): the pod is patched in place.
// The refusal when the create must fail; otherwise whether the pod changed.
struct HookResult {
  std::optional<AdmissionRefusal> refusal;
  bool changed = false;
  bool called = false;
};

HookResult callMutatingHook(const MutatingWebhook& hook, json& pod, const AdmissionRequestContext& request,
                            std::atomic<uint64_t>& calls) {
  auto refuse = [](AdmissionRefusal r) { return HookResult{std::move(r), false, false}; };
  std::string selectorError;
  if (!isPodLabelsMatch(hook.namespaceSelector, request.namespaceLabels, selectorError)) {
    if (!selectorError.empty()) return refuse(AdmissionRefusal{500, internalError(selectorError)});
    return {};
  }
  if (!isPodLabelsMatch(hook.objectSelector, podLabels(pod), selectorError)) {
    if (!selectorError.empty()) return refuse(AdmissionRefusal{500, internalError(selectorError)});
    return {};
  }
  HookResult called;
  called.called = true;
    const std::string url =
        hook.url + (hook.url.find('?') == std::string::npos ? "?" : "&") + "timeout=" +
        std::to_string(hook.timeoutSeconds) + "s";
    auto callFailed = [&](const std::string& why) -> std::optional<HookResult> {
      if (hook.failurePolicy == MutatingWebhook::FailurePolicy::Ignore) return std::nullopt;
      return refuse(AdmissionRefusal{500, internalError("failed calling webhook \"" + hook.name + "\": " + why)});
    };

    json req = {{"uid", request.requestUid},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                {"namespace", request.ns},
                {"operation", "CREATE"},
                {"userInfo", {{"username", request.username}, {"groups", request.groups}}},
                {"object", pod},
                {"oldObject", nullptr},
                {"dryRun", request.dryRun},
                {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}};
    if (!request.name.empty()) req["name"] = request.name;
    const json review = {{"kind", "AdmissionReview"}, {"apiVersion", "admission.k8s.io/v1"}, {"request", req}};

    ++calls;
    auto response = httpsRequest("POST", url, hook.caBundlePem,
                                 {{"Content-Type", "application/json"}, {"Accept", "application/json, */*"}},
                                 review.dump(), std::chrono::seconds(hook.timeoutSeconds));
    if (!response) {
      if (auto r = callFailed("failed to call webhook: Post \"" + url + "\": " + response.error().message)) return *r;
      return called;
    }
    if (response->status < 200 || response->status >= 300) {
      if (auto r = callFailed("failed to call webhook: the server responded with the status code " +
                              std::to_string(response->status) + " but did not return more information"))
        return *r;
      return called;
    }
    json answer;
    try {
      answer = json::parse(response->body);
    } catch (const std::exception& e) {
      if (auto r = callFailed("failed to call webhook: " + std::string(e.what()))) return *r;
      return called;
    }
    // Keys are matched case-sensitively, as the API server's decoder does.
    std::string invalidWhy;
    const json* result = nullptr;
    if (!answer.is_object() || answer.value("apiVersion", json()) != "admission.k8s.io/v1" ||
        answer.value("kind", json()) != "AdmissionReview") {
      invalidWhy = "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got " +
                   (answer.is_object() ? answer.value("apiVersion", json("")).dump() + ", Kind=" +
                                             answer.value("kind", json("")).dump()
                                       : std::string("a non-object"));
    } else if (!answer.contains("response") || !answer["response"].is_object()) {
      invalidWhy = "webhook response was absent";
    } else {
      result = &answer["response"];
      const std::string uid = result->value("uid", json("")).is_string() ? result->value("uid", "") : "";
      if (uid != request.requestUid) invalidWhy = "expected response.uid=\"" + request.requestUid + "\", got \"" + uid + "\"";
    }
    if (!invalidWhy.empty()) {
      if (auto r = callFailed("received invalid webhook response: " + invalidWhy)) return *r;
      return called;
    }
    const bool allowed = result->contains("allowed") && (*result)["allowed"].is_boolean() &&
                         (*result)["allowed"].get<bool>();
    if (!allowed) {
      json st = result->value("status", json::object());
      int code = st.is_object() && st.contains("code") && st["code"].is_number_integer() ? st["code"].get<int>() : 0;
      if (code == 0) code = 403;
      std::string message = st.is_object() ? st.value("message", "") : "";
      std::string text = "admission webhook \"" + hook.name + "\" denied the request" +
                         (message.empty() ? std::string(" without explanation") : ": " + message);
      return refuse(AdmissionRefusal{code, statusFailure(code, st.is_object() ? st.value("reason", "") : "", text)});
    }
    const bool hasPatch = result->contains("patch") && !(*result)["patch"].is_null();
    const bool hasPatchType = result->contains("patchType") && !(*result)["patchType"].is_null();
    if (hasPatch != hasPatchType) {
      if (auto r = callFailed(std::string("received invalid webhook response: webhook returned response.") +
                              (hasPatch ? "patch but not response.patchType" : "patchType but not response.patch")))
        return *r;
      return called;
    }
    if (!hasPatch) return called;
    if ((*result)["patchType"] != "JSONPatch") {
      if (auto r = callFailed("received invalid webhook response: webhook returned invalid response.patchType of " +
                              (*result)["patchType"].dump()))
        return *r;
      return called;
    }
    if (!(*result)["patch"].is_string()) {
      if (auto r = callFailed("failed to call webhook: response.patch: illegal base64 data")) return *r;
      return called;
    }
    auto patchBytes = base64Decode((*result)["patch"].get<std::string>());
    if (!patchBytes) {
      if (auto r = callFailed("failed to call webhook: " + patchBytes.error().message)) return *r;
      return called;
    }
    // From here on a failure is not a call failure: failurePolicy does not apply.
    json patch;
    try {
      patch = json::parse(*patchBytes);
    } catch (const std::exception& e) {
      return refuse(AdmissionRefusal{500, internalError(e.what())});
    }
    auto patched = applyJsonPatch(pod, patch);
    if (!patched) return refuse(AdmissionRefusal{500, internalError(patched.error().message)});
    if (!patched->is_object() || !patched->contains("metadata") || !(*patched)["metadata"].is_object() ||
        !(!patched->contains("spec") || (*patched)["spec"].is_object()))
      return refuse(AdmissionRefusal{500, internalError("patched object is not a valid Pod")});
    called.changed = *patched != pod;
    pod = std::move(*patched);
  return called;
}

}  // namespace

std::optional<AdmissionRefusal> runMutatingWebhooks(const std::vector<MutatingWebhook>& webhooks, json& pod,
                                                    const AdmissionRequestContext& request,
                                                    std::atomic<uint64_t>& calls) {
  // The dispatcher's reinvocation bookkeeping (webhookReinvokeContext): a
  // change makes every IfNeeded webhook called before it due again.
  std::vector<size_t> previouslyInvoked;
  std::vector<char> reinvoke(webhooks.size(), 0);
  bool anyReinvoke = false;
  auto pass = [&](bool reinvocation) -> std::optional<AdmissionRefusal> {
    for (size_t i = 0; i < webhooks.size(); ++i) {
      const MutatingWebhook& hook = webhooks[i];
      if (reinvocation && !reinvoke[i]) continue;
      AdmissionRequestContext call = request;
      if (reinvocation) {
        std::mt19937_64 rng(std::random_device{}());
        call.requestUid = randomUid(rng);
      }
      HookResult r = callMutatingHook(hook, pod, call, calls);
      if (r.refusal) return r.refusal;
      if (!r.called) continue;
      if (r.changed) {
        for (size_t j : previouslyInvoked) reinvoke[j] = 1;
        previouslyInvoked.clear();
        anyReinvoke = true;
      }
      if (hook.reinvocationPolicy == MutatingWebhook::Reinvocation::IfNeeded) previouslyInvoked.push_back(i);
    }
    return std::nullopt;
  };
  if (auto refused = pass(false)) return refused;
  if (!anyReinvoke || std::none_of(reinvoke.begin(), reinvoke.end(), [](char c) { return c != 0; })) return std::nullopt;
  return pass(true);
}

}  // namespace placer::fakeapi
