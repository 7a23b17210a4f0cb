#include "webhook/certs_kube_api.h"

#include <mutex>
#include <sstream>

#include <Poco/Net/HTTPRequest.h>

#include "scoring/base64.h"
#include "webhook/kube/api_client.h"

namespace placer::certs {
namespace {

using nlohmann::json;

constexpr const char* kWebhookConfigurations = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/";

std::string secretsPath(const std::string& ns) { return "/api/v1/namespaces/" + kube::urlEncode(ns) + "/secrets"; }

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// The API server's message from a metav1.Status body, or the raw body.
std::string statusMessage(const HttpAnswer& a) {
  try {
    json status = json::parse(a.body);
    if (status.is_object() && status.contains("message") && status["message"].is_string()) {
      return "HTTP " + std::to_string(a.status) + ": " + status["message"].get<std::string>();
    }
  } catch (const json::exception&) {
  }
  return "HTTP " + std::to_string(a.status) + ": " + a.body.substr(0, 200);
}

Result<json> parseBody(const HttpAnswer& a, std::string_view what) {
  try {
    return json::parse(a.body);
  } catch (const json::exception& e) {
    return Error{std::string(what) + ": response is not JSON: " + e.what()};
  }
}

class KubeCertificateApi : public CertificateApi {
 public:
  static Result<std::unique_ptr<CertificateApi>> create(const kube::KubeConfig& config);

  Result<std::optional<StoredSecret>> getSecret(const std::string& ns, const std::string& name) override {
    auto a = request(Poco::Net::HTTPRequest::HTTP_GET, secretsPath(ns) + "/" + kube::urlEncode(name), "", "");
    if (!a) return a.error();
    if (a->status == 404) return std::optional<StoredSecret>{};
    if (a->status != 200) return Error{statusMessage(*a)};
    auto body = parseBody(*a, "secret");
    if (!body) return body.error();
    auto secret = decodeSecret(*body);
    if (!secret) return secret.error();
    return std::optional<StoredSecret>(std::move(*secret));
  }

  Result<WriteResult> createSecret(const std::string& ns, const std::string& name, const SecretData& data) override {
    auto a = request(Poco::Net::HTTPRequest::HTTP_POST, secretsPath(ns), "application/json",
                     encodeSecret(ns, name, data, "").dump());
    return writeResult(a);
  }

  Result<WriteResult> updateSecret(const std::string& ns, const std::string& name, const SecretData& data,
                                   const std::string& resourceVersion) override {
    auto a = request(Poco::Net::HTTPRequest::HTTP_PUT, secretsPath(ns) + "/" + kube::urlEncode(name),
                     "application/json", encodeSecret(ns, name, data, resourceVersion).dump());
    return writeResult(a);
  }

  Result<std::optional<WebhookConfigurationState>> getWebhookConfiguration(const std::string& name) override {
    auto a = request(Poco::Net::HTTPRequest::HTTP_GET, kWebhookConfigurations + kube::urlEncode(name), "", "");
    if (!a) return a.error();
    if (a->status == 404) return std::optional<WebhookConfigurationState>{};
    if (a->status != 200) return Error{statusMessage(*a)};
    auto body = parseBody(*a, "mutatingwebhookconfiguration");
    if (!body) return body.error();
    auto state = decodeWebhookConfiguration(*body);
    if (!state) return state.error();
    return std::optional<WebhookConfigurationState>(std::move(*state));
  }

  Result<WriteResult> patchCaBundles(const std::string& name,
                                     const std::vector<std::pair<size_t, std::string>>& indexedNames,
                                     const std::string& caBundlePem) override {
    auto a = request("PATCH", kWebhookConfigurations + kube::urlEncode(name), "application/json-patch+json",
                     caBundlePatch(indexedNames, caBundlePem).dump());
    // A failed "test" operation (the list changed under us) is 422 upstream.
    if (a && a->status == 422) return WriteResult::Conflict;
    return writeResult(a);
  }

 private:
  explicit KubeCertificateApi(std::unique_ptr<kube::ApiClient> client) : client_(std::move(client)) {}

  static Result<WriteResult> writeResult(const Result<HttpAnswer>& a) {
    if (!a) return a.error();
    if (a->status == 409) return WriteResult::Conflict;
    if (a->status < 200 || a->status >= 300) return Error{statusMessage(*a)};
    return WriteResult::Done;
  }

  // Requests are few (one pass every few minutes): one connection each.
  Result<HttpAnswer> request(const std::string& method, const std::string& path, const std::string& contentType,
                             const std::string& body) {
    kube::Connection connection(*client_);
    auto response = connection.send(method, path, contentType, body, std::chrono::seconds(30));
    if (!response) return response.error();
    if (response->status == 401) client_->token().invalidate();
    return HttpAnswer{response->status, std::move(response->body)};
  }

  std::unique_ptr<kube::ApiClient> client_;
};

Result<std::unique_ptr<CertificateApi>> KubeCertificateApi::create(const kube::KubeConfig& config) {
  auto client = kube::ApiClient::create(config, kube::ApiClientOptions{.userAgent = "placer-certs"});
  if (!client) return client.error();
  return std::unique_ptr<CertificateApi>(new KubeCertificateApi(std::move(*client)));
}

// A []byte field's bytes; the error names the field.
Result<std::string> base64Field(std::string_view field, std::string_view text) {
  auto decoded = base64Decode(text);
  if (!decoded) return fieldError(field, "invalid base64");
  return decoded;
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

json encodeSecret(const std::string& ns, const std::string& name, const SecretData& data,
                  const std::string& resourceVersion) {
  json encoded = json::object();
  for (const auto& [key, value] : data) encoded[key] = base64Encode(value);
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", ns},
                   {"labels", {{"app.kubernetes.io/name", "placer"}, {"app.kubernetes.io/component", "certificates"}}}}},
                 {"type", "kubernetes.io/tls"},
                 {"data", encoded}};
  if (!resourceVersion.empty()) secret["metadata"]["resourceVersion"] = resourceVersion;
  return secret;
}

Result<StoredSecret> decodeSecret(const json& secret) {
  StoredSecret out;
  const json* metadata = member(secret, "metadata");
  if (metadata == nullptr || !metadata->is_object()) return fieldError("metadata", "missing");
  if (const json* rv = member(*metadata, "resourceVersion"); rv != nullptr && rv->is_string()) {
    out.resourceVersion = rv->get<std::string>();
  }
  if (const json* data = member(secret, "data")) {
    if (!data->is_object()) return fieldError("data", "must be a mapping");
    for (const auto& [key, value] : data->items()) {
      if (!value.is_string()) return fieldError("data." + key, "must be a string");
      auto decoded = base64Field("data." + key, value.get<std::string>());
      if (!decoded) return decoded.error();
      out.data[key] = std::move(*decoded);
    }
  }
  return out;
}

Result<WebhookConfigurationState> decodeWebhookConfiguration(const json& config) {
  WebhookConfigurationState out;
  if (const json* metadata = member(config, "metadata")) {
    if (const json* rv = member(*metadata, "resourceVersion"); rv != nullptr && rv->is_string()) {
      out.resourceVersion = rv->get<std::string>();
    }
  }
  const json* webhooks = member(config, "webhooks");
  if (webhooks == nullptr) return out;
  if (!webhooks->is_array()) return fieldError("webhooks", "must be a list");
  for (size_t i = 0; i < webhooks->size(); ++i) {
    const std::string path = "webhooks[" + std::to_string(i) + "]";
    const json& w = (*webhooks)[i];
    const json* name = member(w, "name");
    if (name == nullptr || !name->is_string()) return fieldError(path + ".name", "must be a string");
    WebhookCaBundle entry{name->get<std::string>(), ""};
    if (const json* client = member(w, "clientConfig")) {
      if (const json* bundle = member(*client, "caBundle")) {
        if (!bundle->is_string()) return fieldError(path + ".clientConfig.caBundle", "must be a string");
        auto decoded = base64Field(path + ".clientConfig.caBundle", bundle->get<std::string>());
        // An undecodable bundle is one to restore, not a reason to stop.
        entry.caBundlePem = decoded ? std::move(*decoded) : std::string("<invalid base64>");
      }
    }
    out.webhooks.push_back(std::move(entry));
  }
  return out;
}

json caBundlePatch(const std::vector<std::pair<size_t, std::string>>& indexedNames, const std::string& caBundlePem) {
  json patch = json::array();
  const std::string encoded = base64Encode(caBundlePem);
  for (const auto& [index, name] : indexedNames) {
    const std::string base = "/webhooks/" + std::to_string(index);
    patch.push_back({{"op", "test"}, {"path", base + "/name"}, {"value", name}});
    // "add" replaces an existing member and creates a missing one.
    patch.push_back({{"op", "add"}, {"path", base + "/clientConfig/caBundle"}, {"value", encoded}});
  }
  return patch;
}

Result<std::unique_ptr<CertificateApi>> makeCertificateApi(const kube::KubeConfig& config) {
  return KubeCertificateApi::create(config);
}

Result<std::unique_ptr<CertificateApi>> makeCertificateApi(const std::string& kubeconfig) {
  auto config = kubeconfig.empty() ? kube::loadInClusterConfig() : kube::loadKubeconfigFile(kubeconfig);
  if (!config) return config.error();
  return KubeCertificateApi::create(*config);
}

}  // namespace placer::certs
