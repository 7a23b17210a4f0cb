#include "webhook/review_forwarding.h"

#include "webhook/kube/api_client.h"

namespace placer {

struct ReviewForwarder::Pooled {
  std::shared_ptr<kube::ApiClient> client;  // outlives its connection
  std::unique_ptr<kube::Connection> connection;
};

ReviewForwarder::ReviewForwarder(ReviewForwarderOptions options) : options_(std::move(options)) {}

ReviewForwarder::~ReviewForwarder() {
  idle_.clear();  // connections before the client they point to
  client_.reset();
}

Result<ReviewForwarder::Pooled> ReviewForwarder::borrow(const std::string& address) {
  std::lock_guard lock(mutex_);
  if (address != address_ || !client_) {
    // A new leader: a new client for its address; the old pool is dropped.
    kube::KubeConfig config;
    config.server = "https://" + address;
    config.tlsServerName = options_.serverName;
    config.caPem = options_.caPem;
    kube::ApiClientOptions clientOptions;
    clientOptions.connectTimeout = options_.timeout;
    clientOptions.userAgent = "placer-forwarder";
    clientOptions.headers = {{std::string(kForwardedByHeader), options_.identity}};
    auto client = kube::ApiClient::create(config, clientOptions);
    if (!client) return client.error();
    idle_.clear();
    client_ = std::move(*client);
    address_ = address;
  }
  Pooled pooled{client_, nullptr};
  if (!idle_.empty()) {
    pooled.connection = std::move(idle_.back());
    idle_.pop_back();
  } else {
    pooled.connection = std::make_unique<kube::Connection>(*client_);
  }
  return pooled;
}

void ReviewForwarder::giveBack(Pooled pooled) {
  std::lock_guard lock(mutex_);
  if (pooled.client == client_ && idle_.size() < options_.maxIdleConnections)
    idle_.push_back(std::move(pooled.connection));
  // Otherwise the connection closes here, before its client (declared first) goes.
}

Result<std::string> ReviewForwarder::forward(const std::string& address, const std::string& review) {
  auto pooled = borrow(address);
  if (!pooled) return pooled.error();
  auto answer = pooled->connection->send("POST", "/mutate?timeout=" + std::to_string(options_.timeout.count()) + "ms",
                                         "application/json", review, options_.timeout);
  if (!answer) return answer.error();  // the failed connection is dropped, not pooled
  const int status = answer->status;
  std::string body = std::move(answer->body);
  giveBack(std::move(*pooled));
  if (status != 200) return Error{"leader " + address + " answered HTTP " + std::to_string(status)};
  return body;
}

}  // namespace placer
