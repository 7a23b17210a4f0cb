#pragma once
// `placer certs ensure`: the webhook's certificates kept in the cluster itself.
//
// The CA (with its key), the serving pair and the trust bundle live in one
// Secret of placer's namespace (type kubernetes.io/tls; keys tls.crt, tls.key,
// ca.crt = the bundle, ca.key). Each reconcile pass:
//   1. reads the Secret and decides with renew() (create, reissue, rotate CA);
//   2. makes the caBundle of every webhook of placer's
//      MutatingWebhookConfiguration equal to the bundle — restoring it when
//      something overwrote it — and does so BEFORE storing new material, so the
//      API server trusts a new CA before any replica can serve a leaf it signed;
//   3. creates or updates the Secret (optimistic concurrency: an update carries
//      the resourceVersion read in 1; on a conflict, another replica won and
//      the next pass adopts its material);
//   4. optionally writes the material to a directory that `placer serve`
//      watches (an emptyDir shared with the serving container).
// A CA rotation keeps the previous CA in the bundle until it expires, so
// clients that still hold the old bundle and servers that still serve the old
// leaf keep agreeing through the overlap.
//
// The Kubernetes API sits behind CertificateApi so that this logic is tested
// against a fake and adapted to the real client in webhook/.
//
// Thread-safety: a reconcile pass is sequential; one CertificateApi per caller.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "certs/renewal.h"
#include "scoring/result.h"

namespace placer::certs {

// Secret data, decoded (the bytes, not base64).
using SecretData = std::map<std::string, std::string>;

struct StoredSecret {
  SecretData data;
  std::string resourceVersion;
};

// One entry of MutatingWebhookConfiguration.webhooks.
struct WebhookCaBundle {
  std::string webhookName;
  std::string caBundlePem;  // decoded clientConfig.caBundle; empty when absent
};

struct WebhookConfigurationState {
  std::vector<WebhookCaBundle> webhooks;  // in list order
  std::string resourceVersion;
};

// The few calls `ensure` needs. Errors are transport or API failures with a
// readable message; "not found" and "conflict" are told apart by the types.
class CertificateApi {
 public:
  enum class WriteResult { Done, Conflict };  // Conflict: 409, someone else wrote first

  virtual ~CertificateApi() = default;
  // nullopt when the Secret does not exist.
  virtual Result<std::optional<StoredSecret>> getSecret(const std::string& ns, const std::string& name) = 0;
  virtual Result<WriteResult> createSecret(const std::string& ns, const std::string& name,
                                           const SecretData& data) = 0;
  virtual Result<WriteResult> updateSecret(const std::string& ns, const std::string& name, const SecretData& data,
                                           const std::string& resourceVersion) = 0;
  // nullopt when the configuration does not exist (not installed yet).
  virtual Result<std::optional<WebhookConfigurationState>> getWebhookConfiguration(const std::string& name) = 0;
  // Sets clientConfig.caBundle of the webhooks at these list indexes (each
  // checked against its name, so a concurrent reorder fails instead of
  // patching the wrong entry).
  virtual Result<WriteResult> patchCaBundles(const std::string& name,
                                             const std::vector<std::pair<size_t, std::string>>& indexedNames,
                                             const std::string& caBundlePem) = 0;
};

struct EnsureOptions {
  CertificateSpec spec;              // service and namespace of the webhook Service
  std::string secretNamespace;       // empty: spec.ns
  std::string secretName = "placer-certs";
  std::string webhookConfiguration = "placer";  // empty: do not patch any caBundle
  std::optional<std::filesystem::path> outDir;  // also write the files here
};

struct EnsureReport {
  RenewalAction action = RenewalAction::Kept;
  std::string reason;
  bool secretWritten = false;
  bool secretConflict = false;          // lost a race; the next pass adopts the winner's material
  std::vector<std::string> patchedWebhooks;  // webhooks whose caBundle was set
  bool webhookConfigurationMissing = false;
  bool filesWritten = false;
  CertificateMaterial material;
};

// Material <-> Secret data (keys of a kubernetes.io/tls Secret plus ca.key).
SecretData toSecretData(const CertificateMaterial& material);
std::optional<CertificateMaterial> fromSecretData(const SecretData& data);

// One pass, as described above. `now` decides expiry.
Result<EnsureReport> ensureInCluster(CertificateApi& api, const EnsureOptions& options, Clock::time_point now);

// Whether a caBundle trusts exactly the certificates of `bundle` (order and
// whitespace aside).
bool sameCertificates(std::string_view a, std::string_view b);

}  // namespace placer::certs
