#pragma once
// A small Kubernetes API client over HTTPS (Poco + OpenSSL): GET requests
// whose bodies are handed over piece by piece as they arrive, so that lists
// and watch streams are decoded without being held whole.
//
// Thread-safety: an ApiClient is shared by the threads that use it (its TLS
// context and bearer token are safe to use concurrently). A Connection belongs
// to one thread, except abort(), which any thread may call to unblock it.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scoring/result.h"
#include "webhook/kube/kube_config.h"

#include <Poco/Net/Context.h>

namespace Poco::Net {
class HTTPClientSession;
}  // namespace Poco::Net

namespace placer::kube {

// The bearer token: fixed, or read from a file that is re-read when older than
// refreshInterval and right after the server answered 401 (service-account
// tokens are rotated by the kubelet). Safe to call from any thread.
class BearerToken {
 public:
  BearerToken(std::string fixed, std::string file, std::chrono::milliseconds refreshInterval);
  std::string current();
  // The server refused the token: read the file again on the next use.
  void invalidate();

 private:
  std::mutex mutex_;
  std::string token_;
  std::string file_;
  std::chrono::milliseconds refresh_;
  std::chrono::steady_clock::time_point readAt_{};
  bool stale_ = true;
};

struct ApiClientOptions {
  std::chrono::milliseconds tokenRefresh{std::chrono::minutes(1)};
  std::chrono::milliseconds connectTimeout{std::chrono::seconds(10)};
  std::string userAgent = "placer";
};

// How a request ended when it got an HTTP answer.
struct ApiResponse {
  int status = 0;
  std::string body;        // the error body (a Status) when status != 200, at most 64 KB
  std::string retryAfter;  // Retry-After header, if any
};

// One request of a pipelined send (Connection::sendPipelined).
struct ApiRequest {
  std::string method;
  std::string target;
  std::string contentType;
  std::string body;
};

class ApiClient;

// One keep-alive connection to the API server, reused by consecutive requests.
class Connection {
 public:
  explicit Connection(ApiClient& client);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // GET `target` (path and query). With status 200 the body goes to onBody in
  // pieces as it arrives; an error returned by onBody ends the request (the
  // connection is then closed) and is returned. Transport failures are errors.
  // receiveTimeout bounds each wait for bytes, not the whole request.
  using BodySink = std::function<Outcome(std::string_view piece)>;
  Result<ApiResponse> get(const std::string& target, const BodySink& onBody,
                          std::chrono::milliseconds receiveTimeout);

  // Any other request (POST a Binding, PATCH, ...): the whole answer, whatever
  // its status (error bodies up to 64 KB). Retried once on a fresh connection
  // only when a reused keep-alive connection failed before any answer arrived.
  Result<ApiResponse> send(const std::string& method, const std::string& target, const std::string& contentType,
                           const std::string& body, std::chrono::milliseconds receiveTimeout);

  // Several requests written back to back (HTTP/1.1 pipelining: the server
  // answers them in order) before their answers are read, so that they cost
  // one round trip, not one each. The answers, in request order (bodies as
  // send() gives them), as far as they arrived: after a transport failure, or
  // an answer that closes the connection, the requests left have none (each
  // may or may not have reached the server) and `error` says why. Retried once
  // on a fresh connection only when a reused keep-alive connection failed
  // before the first answer.
  struct Pipelined {
    std::vector<ApiResponse> answers;
    std::string error;  // set when answers.size() < the requests
  };
  Pipelined sendPipelined(const std::vector<ApiRequest>& requests, std::chrono::milliseconds receiveTimeout);

  // Unblocks a get() in progress on another thread (it fails) and makes
  // further calls fail at once. Any thread.
  void abort();

 private:
  Result<ApiResponse> attempt(const std::string& method, const std::string& target, const std::string& contentType,
                              const std::string& requestBody, const BodySink& onBody,
                              std::chrono::milliseconds receiveTimeout, bool& sent);
  // The session, opened if needed, with this request's timeouts (under mutex_).
  void openSession(std::chrono::milliseconds receiveTimeout);
  // Writes one request (headers and body in one write) on the session. Throws Poco's exceptions.
  void writeRequest(const std::string& method, const std::string& target, const std::string& contentType,
                    const std::string& requestBody, const std::string& token);
  // Reads the next answer; a 200 body goes to onBody (an error it returns
  // resets the session and is returned). `answered` is set once its status
  // line and headers have arrived. Throws Poco's exceptions.
  Result<ApiResponse> readAnswer(const BodySink& onBody, bool& answered);
  void reset();

  ApiClient& client_;
  std::mutex mutex_;  // guards session_ against abort()
  std::unique_ptr<Poco::Net::HTTPClientSession> session_;
  std::atomic<bool> aborted_{false};
  bool used_ = false;  // the session already served a request (a stale keep-alive may fail)
};

class ApiClient {
 public:
  static Result<std::unique_ptr<ApiClient>> create(const KubeConfig& config, ApiClientOptions options = {});
  ~ApiClient();

  const std::string& server() const { return server_; }
  BearerToken& token() { return token_; }

 private:
  friend class Connection;
  ApiClient(const KubeConfig& config, ApiClientOptions options);

  std::string server_;
  std::string scheme_, host_, pathPrefix_;
  uint16_t port_ = 443;
  ApiClientOptions options_;
  BearerToken token_;
  Poco::Net::Context::Ptr context_;  // null for http://
};

// Percent-encodes a query parameter value.
std::string urlEncode(std::string_view value);

}  // namespace placer::kube
