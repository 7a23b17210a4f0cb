#pragma once
// CertificateApi over the Kubernetes REST API: the Secret that holds the
// webhook's certificates and the caBundle of its MutatingWebhookConfiguration.
//
// The JSON codecs are free functions so that tests check the wire format
// without a server. Requests are few (one pass every few minutes), so each
// opens its own connection.
//
// Thread-safety: one KubeCertificateApi per thread.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "certs/in_cluster.h"
#include "scoring/result.h"
#include "webhook/kube/kube_config.h"

namespace placer::certs {

// kubeconfig file, or in-cluster credentials when `kubeconfig` is empty.
Result<std::unique_ptr<CertificateApi>> makeCertificateApi(const std::string& kubeconfig);
Result<std::unique_ptr<CertificateApi>> makeCertificateApi(const kube::KubeConfig& config);

// --- Wire format -------------------------------------------------------------

// A v1 Secret of type kubernetes.io/tls with base64 data; resourceVersion is
// set when not empty (an update).
nlohmann::json encodeSecret(const std::string& ns, const std::string& name, const SecretData& data,
                            const std::string& resourceVersion);
Result<StoredSecret> decodeSecret(const nlohmann::json& secret);

Result<WebhookConfigurationState> decodeWebhookConfiguration(const nlohmann::json& config);

// A JSON Patch (RFC 6902) setting clientConfig.caBundle of the given webhooks,
// each guarded by a "test" of its name.
nlohmann::json caBundlePatch(const std::vector<std::pair<size_t, std::string>>& indexedNames,
                             const std::string& caBundlePem);


}  // namespace placer::certs
