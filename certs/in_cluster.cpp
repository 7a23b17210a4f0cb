#include "certs/in_cluster.h"

#include <algorithm>

#include "certs/cert_files.h"

namespace placer::certs {
namespace {

constexpr const char* kSecretCaCert = "ca.crt";
constexpr const char* kSecretCaKey = "ca.key";
constexpr const char* kSecretTlsCert = "tls.crt";
constexpr const char* kSecretTlsKey = "tls.key";

// A lost race is retried at once with what the winner stored; more than this
// many losses in one pass means something else keeps writing the Secret.
constexpr int kMaxAttempts = 3;

// The PEM blocks of a bundle, sorted and deduplicated; an unparsable bundle
// matches nothing.
std::vector<std::string> certificateSet(std::string_view bundle) {
  auto certs = splitCertificates(bundle);
  if (!certs) return {"<unparsable>"};
  std::sort(certs->begin(), certs->end());
  certs->erase(std::unique(certs->begin(), certs->end()), certs->end());
  return std::move(*certs);
}

// Makes every webhook's caBundle equal to `bundle`.
Result<CertificateApi::WriteResult> syncCaBundles(CertificateApi& api, const EnsureOptions& options,
                                                  const std::string& bundle, EnsureReport& report) {
  if (options.webhookConfiguration.empty()) return CertificateApi::WriteResult::Done;
  auto config = api.getWebhookConfiguration(options.webhookConfiguration);
  if (!config) return Error{"mutatingwebhookconfigurations/" + options.webhookConfiguration + ": " +
                            config.error().message};
  if (!*config) {
    report.webhookConfigurationMissing = true;
    return CertificateApi::WriteResult::Done;
  }
  std::vector<std::pair<size_t, std::string>> stale;
  for (size_t i = 0; i < (*config)->webhooks.size(); ++i) {
    const WebhookCaBundle& w = (*config)->webhooks[i];
    if (!sameCertificates(w.caBundlePem, bundle)) stale.emplace_back(i, w.webhookName);
  }
  if (stale.empty()) return CertificateApi::WriteResult::Done;
  auto patched = api.patchCaBundles(options.webhookConfiguration, stale, bundle);
  if (!patched) return Error{"mutatingwebhookconfigurations/" + options.webhookConfiguration + ": " +
                             patched.error().message};
  if (*patched == CertificateApi::WriteResult::Done) {
    for (const auto& [index, name] : stale) report.patchedWebhooks.push_back(name);
  }
  return *patched;
}

}  // namespace

bool sameCertificates(std::string_view a, std::string_view b) { return certificateSet(a) == certificateSet(b); }

SecretData toSecretData(const CertificateMaterial& m) {
  return {{kSecretCaCert, m.caBundle},
          {kSecretCaKey, m.ca.privateKeyPem},
          {kSecretTlsCert, m.serving.certificatePem},
          {kSecretTlsKey, m.serving.privateKeyPem}};
}

std::optional<CertificateMaterial> fromSecretData(const SecretData& data) {
  auto get = [&](const char* key) {
    auto it = data.find(key);
    return it == data.end() ? std::string() : it->second;
  };
  CertificateMaterial m;
  m.caBundle = get(kSecretCaCert);
  m.ca.privateKeyPem = get(kSecretCaKey);
  m.serving.certificatePem = get(kSecretTlsCert);
  m.serving.privateKeyPem = get(kSecretTlsKey);
  if (m.caBundle.empty() && m.ca.privateKeyPem.empty() && m.serving.certificatePem.empty() &&
      m.serving.privateKeyPem.empty()) {
    return std::nullopt;
  }
  if (auto certs = splitCertificates(m.caBundle); certs && !certs->empty()) m.ca.certificatePem = certs->front();
  return m;
}

Result<EnsureReport> ensureInCluster(CertificateApi& api, const EnsureOptions& options, Clock::time_point now) {
  const std::string& ns = options.secretNamespace.empty() ? options.spec.ns : options.secretNamespace;
  const std::string secretPath = "secrets/" + ns + "/" + options.secretName;
  EnsureReport report;

  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    report = EnsureReport{};
    auto stored = api.getSecret(ns, options.secretName);
    if (!stored) return Error{secretPath + ": " + stored.error().message};
    std::optional<CertificateMaterial> existing;
    if (*stored) existing = fromSecretData((*stored)->data);

    auto renewal = renew(existing, options.spec, now);
    if (!renewal) return renewal.error();
    report.action = renewal->action;
    report.reason = renewal->reason;
    report.material = renewal->material;

    // Trust first: the API server must know a new CA before anyone serves its leaf.
    auto synced = syncCaBundles(api, options, renewal->material.caBundle, report);
    if (!synced) return synced.error();
    if (*synced == CertificateApi::WriteResult::Conflict) continue;

    const SecretData data = toSecretData(renewal->material);
    const bool unchanged = *stored && (*stored)->data == data;
    if (!unchanged) {
      auto written = *stored ? api.updateSecret(ns, options.secretName, data, (*stored)->resourceVersion)
                             : api.createSecret(ns, options.secretName, data);
      if (!written) return Error{secretPath + ": " + written.error().message};
      if (*written == CertificateApi::WriteResult::Conflict) {
        report.secretConflict = true;
        continue;  // another replica stored its material: adopt it on the next attempt
      }
      report.secretWritten = true;
    }

    if (options.outDir) {
      auto onDisk = readCertificateDir(*options.outDir);
      const bool same = onDisk && *onDisk && toSecretData(**onDisk) == data;
      if (!same) {
        if (Outcome o = writeCertificateDir(*options.outDir, renewal->material); !o) return o.error();
        report.filesWritten = true;
      }
    }
    return report;
  }
  return Error{secretPath + ": still conflicting after " + std::to_string(kMaxAttempts) +
               " attempts; is something else writing this Secret?"};
}

}  // namespace placer::certs
