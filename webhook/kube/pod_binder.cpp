// The extender's /bind over the API server: POST a v1 Binding to the pod's
// binding subresource, as kube-scheduler's DefaultBinder does.
#include <mutex>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/json_value.h"
#include "webhook/extender.h"
#include "webhook/kube/api_client.h"

namespace placer {
namespace {

constexpr auto kBindTimeout = std::chrono::seconds(10);

// The API server's message from a metav1.Status body, else the raw body.
std::string statusMessage(const kube::ApiResponse& response) {
  try {
    auto status = nlohmann::json::parse(response.body);
    if (status.is_object() && status.contains("message") && status["message"].is_string())
      return status["message"].get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return "HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200);
}

// Thread-safety: bind() may be called concurrently; each call borrows one of
// the idle keep-alive connections or opens a new one.
class ApiPodBinder : public PodBinder {
 public:
  explicit ApiPodBinder(std::unique_ptr<kube::ApiClient> client) : client_(std::move(client)) {}

  Outcome bind(const std::string& podNamespace, const std::string& podName, const std::string& podUid,
               const std::string& nodeName) override {
    nlohmann::json metadata = {{"name", podName}, {"namespace", podNamespace}};
    if (!podUid.empty()) metadata["uid"] = podUid;  // the precondition: the pod we decided for
    nlohmann::json binding = {{"apiVersion", "v1"},
                              {"kind", "Binding"},
                              {"metadata", metadata},
                              {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", nodeName}}}};
    const std::string target = "/api/v1/namespaces/" + kube::urlEncode(podNamespace) + "/pods/" +
                               kube::urlEncode(podName) + "/binding";
    std::unique_ptr<kube::Connection> connection = borrow();
    auto response = connection->send("POST", target, "application/json", binding.dump(), kBindTimeout);
    if (!response) return response.error();
    if (response->status == 401) client_->token().invalidate();
    giveBack(std::move(connection));
    if (response->status == 200 || response->status == 201) return {};
    return Error{statusMessage(*response)};
  }

  Result<Pod> getPod(const std::string& podNamespace, const std::string& podName) override {
    const std::string target = "/api/v1/namespaces/" + kube::urlEncode(podNamespace) + "/pods/" + kube::urlEncode(podName);
    std::unique_ptr<kube::Connection> connection = borrow();
    auto response = connection->send("GET", target, "", "", kBindTimeout);
    if (!response) return response.error();
    if (response->status == 401) client_->token().invalidate();
    giveBack(std::move(connection));
    if (response->status != 200) return Error{statusMessage(*response)};
    std::optional<JsonParser> own;
    auto parsed = threadParserFor(response->body.size(), own).parse(response->body);
    if (!parsed) return Error{"the pod is not JSON: " + parsed.error().message};
    return decodePod(*parsed);
  }

 private:
  std::unique_ptr<kube::Connection> borrow() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return std::make_unique<kube::Connection>(*client_);
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  void giveBack(std::unique_ptr<kube::Connection> c) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < 8) idle_.push_back(std::move(c));
  }

  std::unique_ptr<kube::ApiClient> client_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<kube::Connection>> idle_;
};

}  // namespace

Result<std::unique_ptr<PodBinder>> makeApiBinder(const std::string& kubeconfig) {
  auto config = kubeconfig.empty() ? kube::loadInClusterConfig() : kube::loadKubeconfigFile(kubeconfig);
  if (!config) return config.error();
  auto client = kube::ApiClient::create(*config);
  if (!client) return client.error();
  return std::unique_ptr<PodBinder>(std::make_unique<ApiPodBinder>(std::move(*client)));
}

}  // namespace placer
