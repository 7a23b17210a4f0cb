#pragma once
// The API server's pod create path up to storage: defaulting and the default
// admission plugins, then the mutating webhook dispatcher
// (k8s.io/apiserver/pkg/admission/plugin/webhook/mutating), then the
// registry's BeforeCreate (name, uid, creationTimestamp, status).

#include <atomic>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/json_patch.h"
#include "test/fakeapi/selectors.h"

namespace placer::fakeapi {

// SetDefaults_Pod / SetDefaults_Container and the ServiceAccount,
// DefaultTolerationSeconds and Priority admission plugins, as a pod looks when
// it reaches the webhooks. `ns` is the request's namespace.
void applyPodCreateDefaults(nlohmann::json& pod, const std::string& ns, std::mt19937_64& rng);

// The registry's BeforeCreate for pods: name from generateName, uid,
// creationTimestamp, generation, status {phase: Pending, qosClass}.
void preparePodForCreate(nlohmann::json& pod, std::mt19937_64& rng);

std::string podQosClass(const nlohmann::json& pod);
std::string randomUid(std::mt19937_64& rng);
std::string generateNameSuffix(std::mt19937_64& rng);  // 5 chars, as names.SimpleNameGenerator
std::string nowRfc3339();

struct AdmissionRequestContext {
  std::string ns;
  std::string name;  // "" for generateName pods
  std::string requestUid;
  bool dryRun = false;
  LabelPairs namespaceLabels;
  std::string username = "kubernetes-admin";
  std::vector<std::string> groups = {"system:masters", "system:authenticated"};
};

struct AdmissionRefusal {
  int code = 500;
  nlohmann::json status;
};

// Calls each matching webhook in order and applies its patch to `pod`.
// Returns the refusal (a Status) when the create must fail.
std::optional<AdmissionRefusal> runMutatingWebhooks(const std::vector<MutatingWebhook>& webhooks, nlohmann::json& pod,
                                                    const AdmissionRequestContext& request,
                                                    std::atomic<uint64_t>& calls);

}  // namespace placer::fakeapi
