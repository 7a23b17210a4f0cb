#include "webhook/http_relay.h"

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "certs/peer_verification.h"
#include "webhook/tls_socket.h"

namespace placer {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

// A client context that verifies the upstream's chain against `caPem` and
// its certificate for `serverName` (a DNS name, or an IP address).
Result<std::shared_ptr<SSL_CTX>> makeClientContext(const RelayOptions& options) {
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_client_method()), SslContextFree());
  SSL_CTX* ctx = context.get();
  if (ctx == nullptr) return Error{"relay: cannot create a TLS context"};
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
    return Error{"relay: cannot set the protocol versions"};
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // An answer arrives as one record: one read(2) takes it whole (without
  // read-ahead OpenSSL reads a record's header and body separately).
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (Outcome ca = certs::addCaBundle(ctx, options.caPem); !ca) return Error{"relay: " + ca.error().message};
  if (Outcome name = certs::verifyPeerName(ctx, options.serverName); !name)
    return Error{"relay: " + name.error().message};
  return context;
}

// True when a kept-alive connection is still usable: the upstream has
// neither closed it nor sent anything since its last answer.
bool stillOpen(int fd, SSL* ssl) {
  if (ssl == nullptr || SSL_has_pending(ssl)) return false;
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

// One connection to the upstream. Used by one exchange at a time, on its
// strand; idle in the pool otherwise (no operation in progress).
struct HttpRelay::Upstream {
  explicit Upstream(net::any_io_executor strand) : socket(std::move(strand)) {}
  ~Upstream() { close(); }
  void close() {
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  tcp::socket socket;                // its executor is the connection's strand
  std::shared_ptr<SSL_CTX> context;  // outlives `tls`
  std::optional<TlsSocket> tls;      // after the TCP connection is made
  boost::beast::flat_buffer buffer;
  bool used = false;  // has answered a request (a kept-alive connection may have been closed since)
};

// Idle connections to the one address followers forward to.
struct HttpRelay::Pool {
  std::shared_ptr<SSL_CTX> context;

  // An idle connection to `address`, or null (a new one is to be opened);
  // the address's endpoint in `endpoint`, or why it is unusable in `error`.
  std::shared_ptr<Upstream> take(const std::string& address, tcp::endpoint& endpoint, std::string& error) {
    std::lock_guard lock(mutex_);
    if (address != address_) {
      // A new upstream (a new leader): its endpoint, and the old pool goes.
      auto hostPort = splitHostPort(address);
      if (!hostPort) return error = hostPort.error().message, nullptr;
      error_code ec;
      net::ip::address ip = net::ip::make_address(hostPort->first, ec);
      if (ec) {
        // Leaders publish their pod's IP: a name is rare (a listen address
        // such as localhost), and resolved once per new address.
        net::io_context resolving;
        tcp::resolver resolver(resolving);
        const auto found = resolver.resolve(hostPort->first, std::to_string(hostPort->second), ec);
        if (ec || found.empty()) return error = "cannot resolve " + hostPort->first, nullptr;
        ip = found.begin()->endpoint().address();
      }
      idle_.clear();
      address_ = address;
      endpoint_ = tcp::endpoint(ip, hostPort->second);
    }
    endpoint = endpoint_;
    if (idle_.empty()) return nullptr;
    auto upstream = std::move(idle_.back());
    idle_.pop_back();
    return upstream;
  }

  // Kept for the next request when it is still the current address's and
  // the pool has room; otherwise it closes as it goes.
  void giveBack(const std::string& address, std::shared_ptr<Upstream> upstream, size_t maxIdle) {
    std::lock_guard lock(mutex_);
    if (address == address_ && idle_.size() < maxIdle) idle_.push_back(std::move(upstream));
  }

  void closeIdle() {
    std::vector<std::shared_ptr<Upstream>> idle;
    std::lock_guard lock(mutex_);
    idle.swap(idle_);
  }

 private:
  std::mutex mutex_;
  std::string address_;
  tcp::endpoint endpoint_;
  std::vector<std::shared_ptr<Upstream>> idle_;
};

// One request and its answer, on the strand of its connection (a retry on a
// new connection uses the same strand), so its steps never run concurrently.
struct HttpRelay::Exchange : std::enable_shared_from_this<Exchange> {
  std::shared_ptr<HttpRelay> relay;  // declared first: destroyed after the connection
  std::string address;
  tcp::endpoint endpoint;
  std::string bytes;  // the whole request, written at once
  Done done;
  std::shared_ptr<Upstream> upstream;
  std::optional<net::steady_timer> deadline;
  std::optional<http::response_parser<http::string_body>> parser;
  bool retried = false;
  bool expired = false;
  bool finished = false;

  void start(bool pooled) {
    deadline.emplace(upstream->socket.get_executor());
    deadline->expires_after(relay->options_.timeout);
    deadline->async_wait([self = shared_from_this()](const error_code& ec) {
      if (ec || self->finished) return;
      self->expired = true;
      self->upstream->close();  // what is in progress ends with an error
    });
    if (pooled &&
        !stillOpen(static_cast<int>(upstream->socket.native_handle()), upstream->tls->native_handle()))
      renew();
    if (upstream->tls) return write();
    connect();
  }

  // A new connection on the same strand, in place of the current one.
  void renew() {
    upstream->close();
    auto fresh = std::make_shared<Upstream>(upstream->socket.get_executor());
    upstream = std::move(fresh);
  }

  void connect() {
    upstream->context = relay->pool_->context;
    upstream->socket.async_connect(endpoint,
                                   [self = shared_from_this(), up = upstream](const error_code& ec) {
                                     if (self->stale(up)) return;
                                     if (ec) return self->fail("connect", ec, false);
                                     error_code ignored;
                                     up->socket.set_option(tcp::no_delay(true), ignored);
                                     up->tls.emplace(up->socket, up->context.get());
                                     SSL* ssl = up->tls->native_handle();
                                     if (ssl == nullptr)
                                       return self->fail("tls", net::error::no_memory, false);
                                     SSL_set_tlsext_host_name(ssl, self->relay->options_.serverName.c_str());
                                     up->tls->async_client_handshake([self, up](const error_code& ec) {
                                       if (self->stale(up)) return;
                                       if (ec) return self->fail("tls handshake", ec, false);
                                       self->write();
                                     });
                                   });
  }

  void write() {
    auto up = upstream;
    net::async_write(*up->tls, net::buffer(bytes),
                     [self = shared_from_this(), up](const error_code& ec, size_t) {
                       if (self->stale(up)) return;
                       if (ec) return self->fail("write", ec, false);
                       self->read();
                     });
  }

  void read() {
    auto up = upstream;
    parser.emplace();
    parser->body_limit(relay->maxAnswerBytes_);
    http::async_read(*up->tls, up->buffer, *parser,
                     [self = shared_from_this(), up](const error_code& ec, size_t) {
                       if (self->stale(up)) return;
                       if (ec)
                         return self->fail("answer", ec, self->parser->got_some() || up->buffer.size() > 0);
                       self->answered();
                     });
  }

  void answered() {
    auto message = parser->release();
    parser.reset();
    upstream->used = true;
    const bool reusable = message.keep_alive() && upstream->buffer.size() == 0;
    if (reusable) relay->pool_->giveBack(address, std::move(upstream), relay->options_.maxIdleConnections);
    upstream.reset();
    if (message.result_int() != 200)
      return finish(Error{"relay to " + address + ": answered HTTP " + std::to_string(message.result_int())});
    finish(std::move(message.body()));
  }

  // A kept-alive connection that fails before any byte of its answer was
  // most likely closed by the upstream while idle: once more on a new one.
  void fail(const char* step, const error_code& ec, bool answerStarted) {
    if (expired)
      return finish(Error{"relay to " + address + ": no answer within " +
                          std::to_string(relay->options_.timeout.count()) + "ms"});
    if (upstream->used && !answerStarted && !retried) {
      retried = true;
      renew();
      return connect();
    }
    finish(Error{"relay to " + address + ": " + step + ": " + ec.message()});
  }

  void finish(Result<std::string> answer) {
    finished = true;
    deadline->cancel();
    if (upstream) upstream->close();
    Done call = std::move(done);
    call(std::move(answer));
  }

  // A completion for a connection this exchange has left, or after it ended.
  bool stale(const std::shared_ptr<Upstream>& up) const { return finished || up != upstream; }
};

HttpRelay::HttpRelay(RelayOptions options, size_t maxAnswerBytes)
    : options_(std::move(options)), maxAnswerBytes_(maxAnswerBytes), pool_(std::make_unique<Pool>()) {}

HttpRelay::~HttpRelay() = default;

Result<std::shared_ptr<HttpRelay>> HttpRelay::create(RelayOptions options, size_t maxAnswerBytes) {
  auto context = makeClientContext(options);
  if (!context) return context.error();
  std::shared_ptr<HttpRelay> relay(new HttpRelay(std::move(options), maxAnswerBytes));
  relay->pool_->context = std::move(*context);
  return relay;
}

void HttpRelay::closeIdle() { pool_->closeIdle(); }

void HttpRelay::relay(net::io_context& io, const std::string& address,
                      std::shared_ptr<const HttpRequest> request, Done done) {
  auto exchange = std::make_shared<Exchange>();
  std::string error;
  std::shared_ptr<Upstream> idle = pool_->take(address, exchange->endpoint, error);
  if (!error.empty()) return done(Error{"relay to " + address + ": " + error});
  exchange->relay = shared_from_this();
  exchange->address = address;
  exchange->done = std::move(done);
  const bool pooled = idle != nullptr;
  exchange->upstream = pooled ? std::move(idle) : std::make_shared<Upstream>(net::make_strand(io));

  std::string& out = exchange->bytes;
  out.reserve(256 + request->body.size());
  out.append(request->method).append(" ").append(request->path);
  out.append("?timeout=").append(std::to_string(options_.timeout.count())).append("ms HTTP/1.1\r\n");
  out.append("Host: ").append(options_.serverName).append("\r\n");
  out.append("User-Agent: ").append(options_.userAgent).append("\r\n");
  out.append("Accept: application/json\r\n");
  for (const auto& [name, value] : options_.headers)
    out.append(name).append(": ").append(value).append("\r\n");
  if (!request->contentType.empty()) out.append("Content-Type: ").append(request->contentType).append("\r\n");
  out.append("Content-Length: ").append(std::to_string(request->body.size())).append("\r\n\r\n");
  out.append(request->body);

  net::dispatch(exchange->upstream->socket.get_executor(), [exchange, pooled] { exchange->start(pooled); });
}

}  // namespace placer
