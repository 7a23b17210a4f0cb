#pragma once
// A follower hands each AdmissionReview to the leader: POST /mutate over TLS
// on a pool of keep-alive connections, verifying the leader's certificate
// against the same CA for the name every replica's certificate carries (the
// Service's DNS name), within a tight timeout well inside the webhook's. The
// request carries X-Placer-Forwarded-By, so that a replica that receives a
// forwarded review decides it itself or declines it, and never forwards it
// again (no loops while the replicas disagree about who leads).
//
// Thread-safety: forward() may be called from any number of threads at once;
// each call borrows one idle connection to the address, or opens a new one.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/result.h"

namespace placer {

namespace kube {
class ApiClient;
class Connection;
}  // namespace kube

inline constexpr std::string_view kForwardedByHeader = "X-Placer-Forwarded-By";

struct ReviewForwarderOptions {
  std::string identity;    // this replica, sent in X-Placer-Forwarded-By
  std::string serverName;  // verified in the leader's certificate
  std::string caPem;       // the CA that signed it
  std::chrono::milliseconds timeout{500};
  size_t maxIdleConnections = 32;
};

class ReviewForwarder {
 public:
  explicit ReviewForwarder(ReviewForwarderOptions options);
  ~ReviewForwarder();
  ReviewForwarder(const ReviewForwarder&) = delete;
  ReviewForwarder& operator=(const ReviewForwarder&) = delete;

  // POSTs `review` to https://<address>/mutate; the leader's AdmissionReview
  // answer when it answered 200, else why not.
  Result<std::string> forward(const std::string& address, const std::string& review);

 private:
  struct Pooled;
  Result<Pooled> borrow(const std::string& address);
  void giveBack(Pooled pooled);

  ReviewForwarderOptions options_;
  std::mutex mutex_;
  std::string address_;                        // the pool's address
  std::shared_ptr<kube::ApiClient> client_;    // for address_
  std::vector<std::unique_ptr<kube::Connection>> idle_;
};

}  // namespace placer
