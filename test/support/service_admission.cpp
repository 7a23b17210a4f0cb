#include "test/support/service_admission.h"

#include <unistd.h>

#include <random>

#include "test/fakeapi/admission.h"
#include "test/integration/watch_support.h"

namespace placer::testing {

using nlohmann::json;

void ServiceAdmission::setEndpoints(std::vector<int> ports) {
  std::lock_guard lock(mutex_);
  endpoints_ = std::move(ports);
}

std::vector<int> ServiceAdmission::endpoints() const {
  std::lock_guard lock(mutex_);
  return endpoints_;
}

LeaseView readLease(const fakeapi::FakeApiServer& server, const std::string& ns, const std::string& name) {
  auto lease = server.get(fakeapi::Kind::Lease, ns, name);
  if (!lease) return {};
  const json& meta = (*lease)["metadata"];
  return {(*lease)["spec"].value("holderIdentity", ""),
          meta.contains("annotations") ? meta["annotations"].value("placer.io/leader-address", "") : ""};
}

int leaderIndex(const fakeapi::FakeApiServer& server, const std::vector<int>& ports) {
  const LeaseView lease = readLease(server);
  if (lease.holder.empty()) return -1;
  for (size_t i = 0; i < ports.size(); ++i)
    if (lease.address == "127.0.0.1:" + std::to_string(ports[i])) return int(i);
  return -1;
}

std::vector<std::string> overcommittedNodes(const fakeapi::FakeApiServer& server) {
  watchtest::Truth truth = watchtest::serverTruth(server);
  std::vector<std::string> over;
  for (const auto& text : server.list(fakeapi::Kind::Node)) {
    auto node = decodeNode(text);
    if (!node) continue;
    const auto& totals = truth.nodes[node->name];
    if (totals.requested.milliCpu > node->allocatable.milliCpu || totals.requested.memory > node->allocatable.memory ||
        totals.pods > node->allocatable.pods)
      over.push_back(node->name);
  }
  return over;
}

json applyAdmissionAnswer(const json& pod, const std::string& answerBody) {
  json answer = json::parse(answerBody, nullptr, false);
  if (!answer.is_object() || !answer.contains("response")) return pod;
  const json& response = answer["response"];
  if (!response.contains("patch")) return pod;
  auto decoded = base64Decode(response["patch"].get<std::string>());
  if (!decoded) return pod;
  auto patched = fakeapi::applyJsonPatch(pod, json::parse(*decoded));
  return patched ? *patched : pod;
}

ServiceAdmission::Created ServiceAdmission::Client::create(json pod) {
  Created out;
  const std::vector<int> endpoints = service_.endpoints();
  const std::string ns = pod["metadata"].value("namespace", "default");
  static std::atomic<uint64_t> uids{0};
  const std::string uid = "review-" + std::to_string(getpid()) + "-" + std::to_string(++uids);
  if (!endpoints.empty()) {
    out.endpoint = endpoints[service_.next_++ % endpoints.size()];
    const json review = {{"kind", "AdmissionReview"},
                         {"apiVersion", "admission.k8s.io/v1"},
                         {"request",
                          {{"uid", uid},
                           {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                           {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                           {"namespace", ns},
                           {"operation", "CREATE"},
                           {"object", pod},
                           {"dryRun", false}}}};
    auto& connection = connections_[out.endpoint];
    auto call = [&]() -> Result<fakeapi::HttpResponse> {
      if (!connection) {
        auto opened = fakeapi::HttpsConnection::open("127.0.0.1", out.endpoint, service_.caPem_, service_.timeout_,
                                                     service_.serverName_);
        if (!opened) return opened.error();
        connection = std::move(*opened);
        connection->setTimeout(service_.timeout_);
      }
      const std::string target = "/mutate?timeout=" + std::to_string(service_.timeout_.count() / 1000) + "s";
      if (Outcome sent = connection->sendRequest(
              "POST", target, {{"Content-Type", "application/json"}, {"Accept", "application/json, */*"}},
              review.dump());
          !sent)
        return sent.error();
      return connection->readResponse();
    };
    auto answer = call();
    if (!answer) {
      connection.reset();  // a timed-out or broken connection is not reused
      out.error = answer.error().message;
    } else if (answer->status != 200) {
      out.error = "HTTP " + std::to_string(answer->status);
    } else {
      out.answered = true;
      pod = applyAdmissionAnswer(pod, answer->body);
      out.node = pod["spec"].value("nodeName", "");
    }
  } else {
    out.error = "no ready endpoint";
  }
  out.answeredAt = std::chrono::steady_clock::now();
  // failurePolicy Ignore: the pod is created either way.
  auto stored = service_.server_.create(fakeapi::Kind::Pod, std::move(pod));
  out.stored = bool(stored);
  if (!stored) out.error = stored.error().message;
  return out;
}

}  // namespace placer::testing
