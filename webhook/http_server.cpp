#include "webhook/http_server.h"

#include <algorithm>
#include <future>
#include <mutex>
#include <thread>

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/ThreadPool.h>
#include <openssl/ssl.h>

#include "webhook/log.h"

namespace placer {

// State shared between the listener and its request handlers.
struct HttpServer::Shared {
  std::shared_ptr<const ListenerOptions> options;
  std::atomic<int> inFlight{0};
};

namespace {

// TLS 1.2 suites: ECDHE key exchange with AEAD ciphers only. TLS 1.3 suites
// (OpenSSL's defaults) are all AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

int installCertificate(SSL* ssl, void* arg) {
  return static_cast<const ServingCertificate*>(arg)->install(ssl) ? 1 : 0;
}

Result<Poco::Net::Context::Ptr> makeServerContext(const ServingCertificate& certificate) {
  static std::once_flag sslInit;
  std::call_once(sslInit, [] { Poco::Net::initializeSSL(); });
  try {
    Poco::Net::Context::Params params;
    params.verificationMode = Poco::Net::Context::VERIFY_NONE;
    params.loadDefaultCAs = false;
    params.cipherList = kTls12Ciphers;
    Poco::Net::Context::Ptr context = new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, params);
    context->requireMinimumProtocol(Poco::Net::Context::PROTO_TLSV1_2);
    SSL_CTX* ctx = context->sslContext();
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    // The pair is picked per connection, so a reloaded certificate serves the next handshake.
    SSL_CTX_set_cert_cb(ctx, installCertificate, const_cast<ServingCertificate*>(&certificate));
    return context;
  } catch (const Poco::Exception& e) {
    return Error{"tls: " + e.displayText()};
  } catch (const std::exception& e) {
    return Error{std::string("tls: ") + e.what()};
  }
}

// Reads the whole body into `out`; false when it exceeds `cap`.
bool readBody(std::istream& in, size_t cap, std::string& out) {
  char buf[16384];
  while (in) {
    in.read(buf, sizeof buf);
    std::streamsize n = in.gcount();
    if (n <= 0) break;
    if (out.size() + size_t(n) > cap) return false;
    out.append(buf, size_t(n));
  }
  return true;
}

bool constantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

class RouterHandler : public Poco::Net::HTTPRequestHandler {
 public:
  explicit RouterHandler(std::shared_ptr<HttpServer::Shared> shared) : shared_(std::move(shared)) {}

  void handleRequest(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response) override {
    shared_->inFlight.fetch_add(1);
    struct Done {
      std::atomic<int>& n;
      ~Done() { n.fetch_sub(1); }
    } done{shared_->inFlight};

    HttpResponse answer;
    bool keepAlive = true;
    bool bodyTooLarge = false;
    try {
      answer = route(request, keepAlive, bodyTooLarge);
    } catch (const Poco::Exception& e) {
      answer = internalError(request, e.displayText());
    } catch (const std::exception& e) {
      answer = internalError(request, e.what());
    } catch (...) {
      answer = internalError(request, "unknown exception");
    }
    try {
      response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(answer.status));
      response.setContentType(answer.contentType);
      for (const auto& [k, v] : answer.headers) response.set(k, v);
      if (!keepAlive) response.setKeepAlive(false);
      response.setContentLength64(static_cast<Poco::Int64>(answer.body.size()));
      response.sendBuffer(answer.body.data(), answer.body.size());
      if (!keepAlive && bodyTooLarge) lingerOnBody(request);
    } catch (const Poco::Exception& e) {
      // The client went away; nothing left to answer.
      logEvent(LogLevel::Debug, "response not sent", {{"listener", shared_->options->name}, {"error", e.displayText()}});
    }
  }

 private:
  // After refusing a body too large to read, reads (and drops) what the client
  // is still sending for a short while before the connection closes, so that
  // closing with unread data does not reset the connection before the client
  // has read the 413 (nginx's lingering close).
  static void lingerOnBody(Poco::Net::HTTPServerRequest& request) {
    constexpr size_t kMaxDrainBytes = 16 * 1024 * 1024;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    try {
      auto& impl = static_cast<Poco::Net::HTTPServerRequestImpl&>(request);
      impl.socket().setReceiveTimeout(Poco::Timespan(0, 200 * 1000));
      std::istream& in = request.stream();
      char buf[16384];
      size_t drained = 0;
      while (in && drained < kMaxDrainBytes && std::chrono::steady_clock::now() < deadline) {
        in.read(buf, sizeof buf);
        if (in.gcount() <= 0) break;
        drained += size_t(in.gcount());
      }
    } catch (...) {
      // A timeout or a reset: the connection is closing anyway.
    }
  }

  HttpResponse internalError(const Poco::Net::HTTPServerRequest& request, const std::string& what) {
    logEvent(LogLevel::Error, "request handler failed",
             {{"listener", shared_->options->name}, {"method", request.getMethod()}, {"uri", request.getURI()},
              {"error", what}});
    return HttpResponse::text(500, "internal error\n");
  }

  HttpResponse route(Poco::Net::HTTPServerRequest& request, bool& keepAlive, bool& bodyTooLarge) {
    const ListenerOptions& options = *shared_->options;
    HttpRequest req;
    req.method = request.getMethod();
    const std::string& uri = request.getURI();
    size_t q = uri.find('?');
    req.path = uri.substr(0, q);
    if (q != std::string::npos) req.query = uri.substr(q + 1);
    req.contentType = request.getContentType();

    // Whatever the answer, the body is consumed (up to the cap) so the
    // connection can carry the next request; past the cap it is closed.
    auto consumeBody = [&]() -> bool {
      // Neither a length nor chunks: the body is empty (RFC 9112 6.3), never
      // "until the client closes", which would hold a worker.
      if (!request.hasContentLength() && !request.getChunkedTransferEncoding()) return true;
      if (request.hasContentLength() && request.getContentLength64() > static_cast<Poco::Int64>(options.maxBodyBytes)) {
        keepAlive = false;
        return false;
      }
      // One allocation for a body of known length (under the cap, checked above).
      if (request.hasContentLength()) req.body.reserve(static_cast<size_t>(request.getContentLength64()));
      if (!readBody(request.stream(), options.maxBodyBytes, req.body)) {
        keepAlive = false;
        return false;
      }
      return true;
    };
    auto tooLarge = [&] {
      bodyTooLarge = true;
      return HttpResponse::text(413, "request body larger than " + std::to_string(options.maxBodyBytes) + " bytes\n");
    };

    if (!options.bearerToken.empty()) {
      const std::string auth = request.get("Authorization", std::string());  // a copy: get() may return its default by reference
      constexpr std::string_view kBearer = "Bearer ";
      bool ok = auth.size() > kBearer.size() && std::string_view(auth).substr(0, kBearer.size()) == kBearer &&
                constantTimeEquals(std::string_view(auth).substr(kBearer.size()), options.bearerToken);
      if (!ok) {
        if (!consumeBody()) return tooLarge();
        HttpResponse r = HttpResponse::text(401, "unauthorized\n");
        r.headers.emplace_back("WWW-Authenticate", "Bearer");
        return r;
      }
    }

    const Route* match = nullptr;
    std::string allow;
    for (const Route& r : options.routes) {
      if (r.path != req.path) continue;
      if (r.method == req.method) match = &r;
      if (!allow.empty()) allow += ", ";
      allow += r.method;
    }
    if (!consumeBody()) return tooLarge();
    if (match == nullptr) {
      if (allow.empty()) return HttpResponse::text(404, "not found: " + req.path + "\n");
      HttpResponse r = HttpResponse::text(405, "method " + req.method + " not allowed for " + req.path + "\n");
      r.headers.emplace_back("Allow", allow);
      return r;
    }
    return match->handler(req);
  }

  std::shared_ptr<HttpServer::Shared> shared_;
};

class RouterFactory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit RouterFactory(std::shared_ptr<HttpServer::Shared> shared) : shared_(std::move(shared)) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(const Poco::Net::HTTPServerRequest&) override {
    return new RouterHandler(shared_);
  }

 private:
  std::shared_ptr<HttpServer::Shared> shared_;
};

}  // namespace

Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view address) {
  std::string host;
  std::string_view portText;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':')
      return Error{"address " + std::string(address) + ": expected [host]:port"};
    host = std::string(address.substr(1, close - 1));
    portText = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return Error{"address " + std::string(address) + ": expected host:port"};
    host = std::string(address.substr(0, colon));
    portText = address.substr(colon + 1);
  }
  if (portText.empty() || portText.size() > 5 ||
      !std::all_of(portText.begin(), portText.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Error{"address " + std::string(address) + ": bad port"};
  int port = std::stoi(std::string(portText));
  if (port > 65535) return Error{"address " + std::string(address) + ": bad port"};
  return std::make_pair(host, static_cast<uint16_t>(port));
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(ListenerOptions options) {
  auto hostPort = splitHostPort(options.address);
  if (!hostPort) return hostPort.error();
  if (options.workerThreads < 1) return Error{"workerThreads: must be at least 1"};

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->options_ = std::make_shared<const ListenerOptions>(std::move(options));
  const ListenerOptions& opts = *server->options_;
  server->shared_ = std::make_shared<Shared>();
  server->shared_->options = server->options_;

  try {
    std::string host = hostPort->first.empty() ? "0.0.0.0" : hostPort->first;
    Poco::Net::SocketAddress address(host, hostPort->second);
    std::unique_ptr<Poco::Net::ServerSocket> socket;
    if (opts.certificate) {
      auto context = makeServerContext(*opts.certificate);
      if (!context) return context.error();
      socket = std::make_unique<Poco::Net::SecureServerSocket>(address, 128, *context);
    } else {
      socket = std::make_unique<Poco::Net::ServerSocket>(address, 128);
    }
    server->port_ = socket->address().port();

    Poco::Net::HTTPServerParams::Ptr params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(opts.workerThreads);
    params->setMaxQueued(opts.maxQueuedConnections);
    params->setKeepAlive(true);
    params->setKeepAliveTimeout(Poco::Timespan(opts.keepAliveTimeout.count(), 0));
    params->setTimeout(Poco::Timespan(opts.idleTimeout.count(), 0));
    params->setMaxKeepAliveRequests(0);  // unlimited
    params->setServerName("placer");
    params->setSoftwareVersion("placer");

    server->pool_ = std::make_unique<Poco::ThreadPool>(1, opts.workerThreads);
    server->server_ = std::make_unique<Poco::Net::HTTPServer>(new RouterFactory(server->shared_), *server->pool_,
                                                              *socket, params);
    server->server_->start();
  } catch (const Poco::Exception& e) {
    return Error{"listen " + opts.address + ": " + e.displayText()};
  } catch (const std::exception& e) {
    return Error{"listen " + opts.address + ": " + e.what()};
  }
  logEvent(LogLevel::Info, "listening",
           {{"listener", opts.name}, {"address", opts.address}, {"port", server->port_},
            {"tls", opts.certificate != nullptr}});
  return server;
}

HttpServer::~HttpServer() {
  if (!stopped_) stop(std::chrono::seconds(5));
}

uint16_t HttpServer::port() const { return port_; }

int HttpServer::inFlight() const { return shared_->inFlight.load(); }

bool HttpServer::stop(std::chrono::milliseconds bound) {
  if (stopped_) return true;
  stopped_ = true;
  // stopAll(false) stops the acceptor, then waits for each connection's
  // request in progress before shutting the connection down.
  auto finished = std::async(std::launch::async, [this] {
    try {
      server_->stopAll(false);
    } catch (const Poco::Exception& e) {
      logEvent(LogLevel::Warning, "stopping listener", {{"listener", options_->name}, {"error", e.displayText()}});
    }
  });
  if (finished.wait_for(bound) != std::future_status::ready) {
    logEvent(LogLevel::Warning, "requests still running at shutdown; abandoning them",
             {{"listener", options_->name}, {"inFlight", inFlight()}});
    // The stopping thread still uses the server: leave both to process exit.
    new std::future<void>(std::move(finished));
    (void)server_.release();
    (void)pool_.release();
    return false;
  }
  server_.reset();
  pool_->joinAll();
  pool_.reset();
  return true;
}

}  // namespace placer
