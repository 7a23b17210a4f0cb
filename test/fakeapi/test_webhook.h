#pragma once
// A tiny mutating admission webhook for tests: TLS with its own CA, answers
// each AdmissionReview with whatever the test's function returns, and records
// what it received (the request target and the parsed body).
//
// Thread-safety: the answer function runs on server threads; received() may
// be called from any thread.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::fakeapi {

struct WebhookCall {
  std::string target;  // path and query, e.g. "/mutate?timeout=10s"
  nlohmann::json review;
};

struct WebhookAnswer {
  int status = 200;
  std::string body;  // raw, so tests can send malformed answers
};

class TestWebhook {
 public:
  using Answer = std::function<WebhookAnswer(const nlohmann::json& review)>;
  static Result<std::unique_ptr<TestWebhook>> start(Answer answer);
  ~TestWebhook();

  std::string url(const std::string& path = "/mutate") const;  // https://127.0.0.1:<port><path>
  const std::string& caPem() const;
  std::vector<WebhookCall> received() const;

  // Helpers for answers.
  static WebhookAnswer allow(const nlohmann::json& review, const nlohmann::json& patch = nullptr);
  static WebhookAnswer deny(const nlohmann::json& review, const std::string& message, int code = 403);

  class Impl;

 private:
  explicit TestWebhook(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace placer::fakeapi
