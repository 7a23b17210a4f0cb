#pragma once
// An HTTP/1.1 listener on Poco::Net::HTTPServer, over TLS (Poco NetSSL,
// TLS 1.2 and 1.3 only, AEAD cipher suites, no renegotiation, no compression)
// or plain HTTP (the extender on loopback). One process may run several, each
// with its own route table: the webhook's, the extender's.
//
// Each listener:
//  - routes on (method, path), ignoring the query string (the API server
//    appends ?timeout=10s); an unknown path is 404, a known path with another
//    method 405 with an Allow header;
//  - reads the whole body before calling a handler, refusing with 413 a body
//    larger than the cap (by Content-Length, and while reading a chunked body);
//  - optionally requires "Authorization: Bearer <token>" (401 otherwise);
//  - keeps connections alive, on a bounded pool of worker threads with a
//    bounded queue of accepted connections waiting for a worker;
//  - turns any exception escaping a handler into a 500 and a log line.
//
// A handler is decode -> pure function -> encode: it gets the request as
// plain data and returns the response as plain data.
//
// Thread-safety: handlers run concurrently on the worker threads and must be
// safe for that. start() and stop() belong to one owning thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scoring/result.h"
#include "webhook/serving_certificate.h"

namespace Poco {
class ThreadPool;
namespace Net {
class HTTPServer;
}
}  // namespace Poco

namespace placer {

struct HttpRequest {
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', may be empty
  std::string contentType;
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse text(int status, std::string body) {
    return HttpResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
  }
  static HttpResponse json(int status, std::string body) {
    return HttpResponse{status, "application/json", std::move(body), {}};
  }
};

using RouteHandler = std::function<HttpResponse(const HttpRequest&)>;

struct Route {
  std::string method;  // "GET", "POST"
  std::string path;    // exact match: "/mutate"
  RouteHandler handler;
};

struct ListenerOptions {
  std::string name = "webhook";       // for logs
  std::string address = "0.0.0.0:8443";  // host:port; port 0 picks a free one
  // Null: plain HTTP. Shared with the poller that reloads it.
  std::shared_ptr<const ServingCertificate> certificate;
  std::vector<Route> routes;
  size_t maxBodyBytes = 3 * 1024 * 1024;
  int workerThreads = 8;
  int maxQueuedConnections = 64;
  std::chrono::seconds keepAliveTimeout{30};
  std::chrono::seconds idleTimeout{30};  // receive/send timeout while a request is in progress
  // Non-empty: every request must carry "Authorization: Bearer <token>".
  std::string bearerToken;
};

class HttpServer {
 public:
  // Binds the socket and starts accepting; fails with a message when the
  // address is unusable or TLS cannot be set up.
  static Result<std::unique_ptr<HttpServer>> start(ListenerOptions options);
  ~HttpServer();

  uint16_t port() const;
  const ListenerOptions& options() const { return *options_; }

  // Graceful stop: stops accepting, lets requests in progress finish and
  // closes idle keep-alive connections. Returns false if requests were still
  // running when `bound` passed (they are then abandoned to process exit).
  bool stop(std::chrono::milliseconds bound);

  // Requests currently inside a handler.
  int inFlight() const;

  struct Shared;

 private:
  HttpServer() = default;
  std::shared_ptr<const ListenerOptions> options_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<Poco::ThreadPool> pool_;
  std::unique_ptr<Poco::Net::HTTPServer> server_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

// Splits "host:port" ("[::1]:8443" for IPv6); the host may be empty (all interfaces).
Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view address);

}  // namespace placer
