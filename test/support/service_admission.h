#pragma once
// The API server's part in a pod create when the webhook is a Service with
// several endpoints (placer's replicas): each review goes to the next ready
// endpoint, as kube-proxy spreads connections, over a keep-alive TLS
// connection verified for the Service's name, within the webhook's timeout;
// with failurePolicy Ignore a failed call creates the pod unchanged. The
// patched pod is then stored in the fake API server (a direct create: the
// fake's own admission chain calls one URL, not a Service's endpoints).
//
// Thread-safety: setEndpoints() from any thread; each thread creates pods
// through its own Client.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/https_client.h"

namespace placer::testing {

class ServiceAdmission {
 public:
  ServiceAdmission(fakeapi::FakeApiServer& server, std::string caPem, std::string serverName,
                   std::chrono::milliseconds timeout)
      : server_(server), caPem_(std::move(caPem)), serverName_(std::move(serverName)), timeout_(timeout) {}

  // The ready endpoints (loopback ports); an empty list fails every call.
  void setEndpoints(std::vector<int> ports);
  std::vector<int> endpoints() const;

  struct Created {
    bool stored = false;    // the pod exists in the server
    bool answered = false;  // a replica answered the review
    std::string node;       // spec.nodeName the answer wrote, if any
    int endpoint = 0;       // the port called
    std::string error;      // why the call failed (the pod was created unchanged)
    std::chrono::steady_clock::time_point answeredAt;  // the answer (or the failure) arrived
  };

  class Client {
   public:
    explicit Client(ServiceAdmission& service) : service_(service) {}
    // Admits `pod` (namespace in metadata.namespace) through the next
    // endpoint and stores the result.
    Created create(nlohmann::json pod);

   private:
    ServiceAdmission& service_;
    std::map<int, std::unique_ptr<fakeapi::HttpsConnection>> connections_;
    uint64_t counter_ = 0;
  };

 private:
  fakeapi::FakeApiServer& server_;
  const std::string caPem_;
  const std::string serverName_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::vector<int> endpoints_;
  std::atomic<uint64_t> next_{0};
};

// The leader Lease as the replicas wrote it: holderIdentity and the
// placer.io/leader-address annotation ("" when absent).
struct LeaseView {
  std::string holder;
  std::string address;
};
LeaseView readLease(const fakeapi::FakeApiServer& server, const std::string& ns = "placer-system",
                    const std::string& name = "placer");
// The index of the port in `ports` the Lease's address names (127.0.0.1:port), or -1.
int leaderIndex(const fakeapi::FakeApiServer& server, const std::vector<int>& ports);

// Nodes whose bound non-terminal pods request more cpu, memory or pods than
// the node allocates, by the server's own count (never placer's).
std::vector<std::string> overcommittedNodes(const fakeapi::FakeApiServer& server);

// Decoded `response.patch` of an AdmissionReview answer applied to `pod`;
// the pod unchanged when the answer carries no patch.
nlohmann::json applyAdmissionAnswer(const nlohmann::json& pod, const std::string& answerBody);

}  // namespace placer::testing
