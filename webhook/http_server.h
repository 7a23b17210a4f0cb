#pragma once
// An HTTP/1.1 listener over TLS (TLS 1.2 and 1.3 only, AEAD cipher suites, no
// renegotiation, no compression) or plain HTTP (the extender on loopback, the
// metrics listener). One process may run several, each with its own route
// table: the webhook's, the extender's.
//
// Connections are cheap and threads do work. Event-driven I/O (Boost.Asio,
// HTTP parsing by Boost.Beast) on a few I/O threads carries every connection
// through its TLS handshake, its idle keep-alive time and the arrival of its
// request; only a request whose body has fully arrived takes a worker. So
// idle keep-alive connections (the API server keeps a pool of them), slow
// handshakes and slow senders hold no thread, and cost a few KB each.
//
// Each listener:
//  - routes on (method, path), ignoring the query string (the API server
//    appends ?timeout=10s); an unknown path is 404, a known path with another
//    method 405 with an Allow header;
//  - reads the whole body before calling a handler, refusing with 413 a body
//    larger than the cap (by Content-Length before reading it, and while
//    reading a chunked body); a malformed request (an invalid Content-Length
//    among them) is a 400, and the connection is closed;
//  - optionally requires "Authorization: Bearer <token>": a request without
//    it is refused with 401 as soon as its headers arrive, before any body;
//  - bounds every phase: the TLS handshake, a request's headers, its body,
//    the idle time between keep-alive requests, the writing of an answer;
//  - caps open connections (more are closed at once, counted);
//  - queues fully received requests for a fixed pool of workers; when the
//    queue is full the route's `shed` answer is given at once (counted), or a
//    503 for routes without one: never a stall;
//  - turns any exception escaping a handler into a 500 and a log line;
//  - may relay a route's requests to another server (Route::relay) from the
//    I/O thread, without a worker.
//
// A handler is decode -> pure function -> encode: it gets the request as
// plain data and returns the response as plain data.
//
// Thread-safety: handlers run concurrently on the worker threads and must be
// safe for that; a route's `shed` and `relay` functions run on an I/O thread
// and must be cheap.
// start() and stop() belong to one owning thread; port(), inFlight() and
// stats() may be called from any thread.

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

namespace placer {

class MetricsRegistry;

struct HttpRequest {
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', may be empty
  std::string contentType;
  // X-Placer-Forwarded-By: the replica that forwarded this review to the
  // leader (webhook/webhook_routes.h, kForwardedByHeader); empty for the API server's calls.
  std::string forwardedBy;
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

// How a route sends requests on to another server (webhook/http_relay.h):
// HTTPS with keep-alive, the server's certificate verified against `caPem`
// for `serverName` (also sent as SNI and Host).
struct RelayOptions {
  std::string serverName;
  std::string caPem;
  // Bound on one relayed request: connecting, the handshake, writing it and
  // reading the whole answer.
  std::chrono::milliseconds timeout{500};
  std::string userAgent = "placer";
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
  size_t maxIdleConnections = 32;
};

struct Route {
  std::string method;  // "GET", "POST"
  std::string path;    // exact match: "/mutate"
  RouteHandler handler;
  // The answer when the request queue is full (on an I/O thread: cheap, no
  // locks held long). Empty: 503 with Retry-After.
  RouteHandler shed{};

  // Optional: requests this route sends on to another server instead of
  // running `handler` (a follower's reviews, to the leader). Both functions
  // run on an I/O thread and must be cheap. `to` gives the upstream's
  // host:port for a request, or "" to run the handler as usual; `answered`
  // turns the upstream's 200 body, or why there is none (no connection, a
  // failed TLS verification, the timeout, another status), into the answer.
  // No worker is taken while the upstream answers.
  struct Relay {
    RelayOptions options;
    std::function<std::string(const HttpRequest&)> to;
    std::function<HttpResponse(const HttpRequest&, Result<std::string> upstreamAnswer)> answered;
  };
  std::shared_ptr<const Relay> relay{};
};

struct ListenerOptions {
  std::string name = "webhook";       // for logs
  std::string address = "0.0.0.0:8443";  // host:port; port 0 picks a free one
  // Null: plain HTTP. Shared with the poller that reloads it.
  std::shared_ptr<const ServingCertificate> certificate;
  std::vector<Route> routes;
  size_t maxBodyBytes = 3 * 1024 * 1024;
  int workerThreads = 8;
  std::chrono::seconds keepAliveTimeout{30};  // idle time allowed between keep-alive requests
  std::chrono::seconds idleTimeout{30};       // to write an answer
  // Non-empty: every request must carry "Authorization: Bearer <token>".
  std::string bearerToken;

  // Open connections beyond this are closed as they are accepted.
  int maxConnections = 4096;
  // Fully received requests waiting for a worker; past this, requests are shed.
  int maxQueuedRequests = 256;
  // Requests whose body is at least largeBodyBytes (a pod with tens of
  // thousands of resources or host ports; an ordinary review is a few KB) run
  // on their own largeWorkerThreads, with their own queue of
  // maxQueuedLargeRequests (past it they are shed): however many arrive, they
  // never take a worker from ordinary admissions, and at most
  // largeWorkerThreads of them are in memory at once. Same CPU priority as
  // the other workers: a lower one let ordinary admissions wait on view
  // locks held by a preempted large worker (priority inversion).
  size_t largeBodyBytes = 256 * 1024;
  int largeWorkerThreads = 1;
  int maxQueuedLargeRequests = 8;
  // Threads running the TLS and HTTP I/O of every connection.
  int ioThreads = 1;
  std::chrono::milliseconds handshakeTimeout{5000};  // accept to TLS handshake done
  std::chrono::milliseconds headerTimeout{5000};     // a request's first byte to its last header byte
  std::chrono::milliseconds bodyTimeout{10000};      // its headers to its last body byte
  // Where the listener's series go (labelled listener=name); null: kept
  // privately, still readable through stats().
  MetricsRegistry* metrics = nullptr;
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

  // What the listener's metrics say now.
  struct Stats {
    int64_t openConnections = 0;
    int64_t idleConnections = 0;  // between keep-alive requests
    int64_t queuedRequests = 0;
    uint64_t shedRequests = 0;
    uint64_t refusedConnections = 0;  // over maxConnections
    uint64_t handshakeFailures = 0;   // every reason
  };
  Stats stats() const;

  struct Shared;

 private:
  HttpServer() = default;
  std::shared_ptr<const ListenerOptions> options_;
  std::shared_ptr<Shared> shared_;
  uint16_t port_ = 0;
  bool stopped_ = false;
};

// Splits "host:port" ("[::1]:8443" for IPv6); the host may be empty (all interfaces).
Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view address);

}  // namespace placer
