#include "webhook/http_server.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http.hpp>
#include <semaphore.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "webhook/allocator.h"
#include "webhook/http_relay.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/tls_socket.h"

namespace placer {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using boost::system::error_code;

namespace {

// TLS 1.2 suites: ECDHE key exchange with AEAD ciphers only. TLS 1.3 suites
// (OpenSSL's defaults) are all AEAD.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Request line and headers; the API server's are a few hundred bytes.
constexpr uint32_t kHeaderLimit = 16 * 1024;
// After refusing a body (413, 401), what is still read and dropped before the
// connection closes, so that closing with unread data does not reset the
// connection before the client has read the answer (nginx's lingering close).
constexpr size_t kLingerBytes = 16 * 1024 * 1024;
constexpr std::chrono::milliseconds kLingerTime{2000};
// The CPU priority of the large requests' workers (ListenerOptions::largeBodyBytes).
// An unauthenticated request's body up to this size is read (and dropped) to
// keep the connection; a larger one closes it unread.
constexpr uint64_t kUnauthenticatedBodyBytes = 64 * 1024;
// The handshake and slow lanes' threads run at these nice values (the I/O
// threads and workers at the process's): with both cores busy a nice 5 thread
// gets about a third of a normal thread's share, a nice 10 one a tenth.
constexpr int kHandshakeLaneNice = 5;
// A slow-lane connection's headers are read on the lane's ticks, every
// kSlowLanePace, and never on the socket's readiness: at each tick whatever
// has arrived is read at once (OpenSSL reading ahead, many records in one
// read()). Meanwhile the socket is not reported readable (SO_RCVLOWAT at the
// header limit: a byte arriving wakes no thread), and every slow connection's
// timer expires on the same tick, so 200 clients sending a byte every few
// milliseconds wake the lane's thread 4 times a second, not once per byte.
// The header deadline is unchanged. The API server sends its headers in one
// piece and never reaches this lane.
constexpr std::chrono::milliseconds kSlowLanePace{250};
constexpr int kSlowLaneNice = 10;
// After a request this large its worker gives the arenas' free memory back.
constexpr size_t kTrimAfterBodyBytes = 1024 * 1024;

int installCertificate(SSL* ssl, void* arg) {
  return static_cast<const ServingCertificate*>(arg)->install(ssl) ? 1 : 0;
}

using SslContext = std::unique_ptr<SSL_CTX, SslContextFree>;

Result<SslContext> makeServerContext(const ServingCertificate& certificate) {
  SslContext context(SSL_CTX_new(TLS_server_method()));
  SSL_CTX* ctx = context.get();
  if (ctx == nullptr) return Error{"tls: cannot create a context"};
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1)
    return Error{"tls: cannot set the protocol versions and ciphers"};
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  // Idle connections give their record buffers back (about 34 KB each);
  // writes may complete partly, as a stream's async_write_some does.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  // No resumption: the API server's client (client-go's TLSConfigFor) sets no
  // ClientSessionCache, so the two TLS 1.3 tickets OpenSSL sends after every
  // handshake (and the TLS 1.2 session cache) would be work for nothing.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  // The pair is picked per connection, so a reloaded certificate serves the next handshake.
  SSL_CTX_set_cert_cb(ctx, installCertificate, const_cast<ServingCertificate*>(&certificate));
  return context;
}

std::string text(boost::beast::string_view v) { return std::string(v.data(), v.size()); }

bool constantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// A fixed pool of workers over a bounded queue of jobs. Thread-safe: any
// thread may push; stop() once, from one thread.
//
// A push wakes one sleeping worker through a semaphore (one futex wake when a
// worker sleeps, none when one is awake; a worker finds its job under a
// mutex held only to pop it): glibc's condition variable took 3.5 futex calls
// per request here, and every wakeup is expensive on a VM (RESULTS.md, issue
// 16 session 13). There are as many semaphore counts as queued jobs, plus one
// per worker once stopping.
class WorkQueue {
 public:
  WorkQueue(size_t capacity, Gauge& queued) : capacity_(capacity), queued_(queued) { sem_init(&ready_, 0, 0); }
  ~WorkQueue() { sem_destroy(&ready_); }

  void start(int threads, const std::shared_ptr<WorkQueue>& self) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([self] { self->work(); });
  }

  // False (and nothing queued) when the queue is full or stopping.
  bool tryPush(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_ || jobs_.size() >= capacity_) return false;
      jobs_.push_back(std::move(job));
      queued_.add(1);
    }
    sem_post(&ready_);
    return true;
  }

  // Runs what is queued, then ends the workers. False when they have not
  // ended within `bound`: they are then left to finish on their own.
  bool stop(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    for (size_t i = 0; i < threads_.size(); ++i) sem_post(&ready_);
    const bool ended = done_.wait_until(lock, deadline, [&] { return running_ == 0 && started_ == threads_.size(); });
    lock.unlock();
    for (std::thread& t : threads_) ended ? t.join() : t.detach();
    threads_.clear();
    return ended;
  }

 private:
  void work() {
    {
      std::lock_guard lock(mutex_);
      ++started_;
      ++running_;
    }
    while (true) {
      while (sem_wait(&ready_) != 0) {  // EINTR
      }
      std::function<void()> job;
      {
        std::lock_guard lock(mutex_);
        if (jobs_.empty()) break;  // stopping, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
        queued_.add(-1);
      }
      job();
    }
    std::lock_guard lock(mutex_);
    --running_;
    done_.notify_all();
  }

  const size_t capacity_;
  Gauge& queued_;
  sem_t ready_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  size_t started_ = 0;
  size_t running_ = 0;
  std::vector<std::thread> threads_;
};

class Connection;

}  // namespace

// Everything a listener runs: the I/O threads, the acceptor, the workers, the
// live connections and the metrics. Shared by the connections (each holds it).
struct HttpServer::Shared {
  std::shared_ptr<const ListenerOptions> options;
  std::unique_ptr<MetricsRegistry> ownMetrics;  // when options->metrics is null
  std::atomic<int> inFlight{0};

  Gauge* open = nullptr;
  Gauge* idle = nullptr;
  Gauge* queued = nullptr;
  Counter* shed = nullptr;
  Counter* refused = nullptr;
  Counter* handshakeTimeout = nullptr;
  Counter* handshakeClosed = nullptr;
  Counter* handshakeTls = nullptr;
  Counter* headerTimeouts = nullptr;
  Counter* bodyTimeouts = nullptr;
  Counter* idleTimeouts = nullptr;
  Gauge* slow = nullptr;
  Counter* slowReads = nullptr;

  net::io_context io;           // the fast lane: accepting, and requests
  net::io_context handshakeIo;  // the handshake lane: TLS connections until their handshake is done
  net::io_context slowIo;       // the slow lane: connections whose headers arrive in pieces
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keepRunning;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keepHandshakeRunning;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keepSlowRunning;
  std::vector<std::thread> ioThreads;  // every lane's
  std::unique_ptr<tcp::acceptor> acceptor;
  SslContext tls;  // null: plain HTTP
  std::shared_ptr<WorkQueue> work;
  std::shared_ptr<WorkQueue> largeWork;  // bodies of options->largeBodyBytes or more
  // Per route, in options->routes' order: its relay, or null.
  std::vector<std::shared_ptr<HttpRelay>> relays;

  std::mutex liveMutex;
  std::condition_variable liveChanged;
  std::unordered_set<Connection*> live;
  std::atomic<bool> stopping{false};

  std::unique_ptr<net::steady_timer> acceptRetry;

  void accept(const std::shared_ptr<Shared>& self);
};

namespace {

// One client connection, from accept to close. Runs on its own strand; a
// worker hands its answer back by posting to that strand.
//
// Three lanes, each an io_context with its own thread(s), so that no
// connection's I/O waits behind another kind's. A TLS connection starts on
// the handshake lane (one thread at a lower CPU priority: a handshake costs
// about a millisecond of CPU with OpenSSL 3, and the slowloris clients of the
// benchmark reopen 40 connections a second), and moves to the fast lane (the
// I/O threads) when its handshake is done; a plain one starts there. One
// whose request headers then arrive in pieces (a slowloris client, a byte at
// a time) moves to the slow lane (one thread at a still lower priority) and
// stays there until it closes: each byte costs a wakeup, reads and a parse,
// and 200 of them arriving together on the fast lane delayed every admission
// queued behind them. The API server sends a request's headers in one piece.
// A move happens with no operation in progress (RESULTS.md, session 10).
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class Phase { Handshake, Idle, Header, Body, Queued, Writing, Lingering, Closed };

  Connection(std::shared_ptr<HttpServer::Shared> server, tcp::socket socket)
      : server_(std::move(server)), executor_(socket.get_executor()) {
    timer_.emplace(executor_);
    socket_.emplace(std::move(socket));
    if (server_->tls) tls_.emplace(*socket_, server_->tls.get());
  }

  ~Connection() {
    server_->open->add(-1);
    if (phase_ == Phase::Idle) server_->idle->add(-1);
    if (slowLane_) server_->slow->add(-1);
    std::lock_guard lock(server_->liveMutex);
    server_->live.erase(this);
    server_->liveChanged.notify_all();
  }

  void start() {
    {
      std::lock_guard lock(server_->liveMutex);
      server_->live.insert(this);
    }
    net::dispatch(executor_, [self = shared_from_this()] {
      if (self->server_->stopping) return self->close();
      if (!self->tls_) return self->awaitRequest();
      self->arm(Phase::Handshake, self->server_->options->handshakeTimeout);
      self->tls_->async_handshake([self](const error_code& ec) { self->onHandshake(ec); });
    });
  }

  // From another thread: closes the connection unless a request is being
  // answered (that one finishes, then the connection closes).
  void stop() {
    const net::any_io_executor executor = currentExecutor();
    net::post(executor, [self = shared_from_this(), executor] {
      // Moved to another lane meanwhile: again, on that lane's strand.
      if (self->currentExecutor() != executor) return self->stop();
      std::lock_guard lock(self->handoff_);
      if (self->phase_ != Phase::Queued && self->phase_ != Phase::Writing) self->close();
    });
  }

 private:
  // ---- deadlines ----

  void arm(Phase phase, std::chrono::milliseconds limit) {
    setPhase(phase);
    timer_->expires_after(limit);
    awaitDeadline();
  }

  void awaitDeadline() {
    const uint64_t generation = ++timerGeneration_;
    timer_->async_wait([self = shared_from_this(), generation](const error_code& ec) {
      if (ec || generation != self->timerGeneration_.load()) return;
      std::lock_guard lock(self->handoff_);
      if (generation != self->timerGeneration_.load()) return;
      self->onDeadline();
    });
  }

  void disarm(Phase phase) {
    setPhase(phase);
    ++timerGeneration_;
    timer_->cancel();
  }

  void setPhase(Phase phase) {
    if (phase == phase_) return;
    if (phase_ == Phase::Idle) server_->idle->add(-1);
    if (phase == Phase::Idle) server_->idle->add(1);
    phase_ = phase;
  }

  void onDeadline() {
    timedOut_ = true;
    switch (phase_) {
      case Phase::Handshake: server_->handshakeTimeout->inc(); break;
      case Phase::Header: server_->headerTimeouts->inc(); break;
      case Phase::Body: server_->bodyTimeouts->inc(); break;
      case Phase::Idle: server_->idleTimeouts->inc(); break;
      default: break;
    }
    close();
  }

  void close() {
    if (phase_ == Phase::Closed) return;
    disarm(Phase::Closed);
    if (pace_) pace_->cancel();
    error_code ignored;
    socket_->shutdown(tcp::socket::shutdown_both, ignored);
    socket_->close(ignored);
  }

  // ---- the phases ----

  void onHandshake(const error_code& ec) {
    if (ec) {
      if (!timedOut_) {
        const bool closed = ec == net::error::eof || ec == net::error::connection_reset ||
                            ec == net::error::operation_aborted || ec == net::error::broken_pipe;
        (closed ? server_->handshakeClosed : server_->handshakeTls)->inc();
      }
      return close();
    }
    // One read() takes a whole request's records (an AdmissionReview is one
    // record of a few KB), not one for each record's header and another for
    // its body.
    tls_->readAhead();
    // Handshakes run on their own lane; requests on the fast one.
    moveTo(server_->io, [](Connection& c) { c.awaitRequest(); });
  }

  // Between requests: wait for the socket to be readable without a buffer,
  // a parser or a thread. Bytes already received (pipelined, or decrypted
  // and kept by OpenSSL) go straight to the headers.
  void awaitRequest() {
    if (server_->stopping) return close();
    parser_.reset();
    if (buffer_.size() == 0) buffer_ = boost::beast::flat_buffer();  // give the memory back while idle
    const bool pending = buffer_.size() > 0 || (tls_ && tls_->pending());
    if (pending) return readHeader();
    arm(Phase::Idle, std::chrono::duration_cast<std::chrono::milliseconds>(server_->options->keepAliveTimeout));
    socket_->async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      std::lock_guard lock(self->handoff_);
      if (ec || self->phase_ != Phase::Idle) return self->close();
      self->readHeader();
    });
  }

  void readHeader() {
    const ListenerOptions& options = *server_->options;
    parser_.emplace();
    version_ = 11;
    head_ = false;
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(options.maxBodyBytes);
    arm(Phase::Header, options.headerTimeout);
    if (buffer_.size() > 0) return parseHeader();
    readHeaderBytes();
  }

  // The headers are read a piece at a time (as Beast's async_read_header
  // does), so that a connection whose headers arrive in pieces is seen.
  void readHeaderBytes() {
    const auto into = buffer_.prepare(boost::beast::read_size(buffer_, kHeaderLimit));
    if (tls_) {
      // Readable already (awaitRequest): what arrived is read and parsed at
      // once, without a round through the I/O thread's queue.
      error_code ec;
      const size_t n = tls_->readNow(into, ec);
      if (!ec) {
        buffer_.commit(n);
        return parseHeader();
      }
      if (ec != net::error::would_block) return onReadError(ec);
    }
    auto done = [self = shared_from_this()](const error_code& ec, size_t n) {
      if (ec) return self->onReadError(ec);
      self->buffer_.commit(n);
      self->parseHeader();
    };
    if (tls_)
      tls_->async_read_some(into, std::move(done));
    else
      socket_->async_read_some(into, std::move(done));
  }

  void parseHeader() {
    error_code ec;
    const size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more) {
      if (slowLane_) return tls_ && tls_->pending() ? readHeaderNow() : awaitTick();
      if (buffer_.size() > 0) return moveToSlowLane();
      return readHeaderBytes();
    }
    if (ec) return onReadError(ec);
    if (!parser_->is_header_done()) return parseHeader();
    if (slowLane_) wakeOnEveryByte(true);  // the body and what follows are read on readiness
    onHeader(ec);
  }

  // Between two reads of a request's headers.
  void moveToSlowLane() {
    slowLane_ = true;
    server_->slow->add(1);
    if (tls_) tls_->readAhead();
    moveTo(server_->slowIo, [](Connection& c) {
      c.server_->slowReads->inc();
      c.readHeaderNow();
    });
  }

  // SO_RCVLOWAT: false, the socket is reported readable only once a header's
  // limit of bytes waits (or at its end, or an error); true, on every byte.
  // Reads that do not wait return what has arrived either way.
  void wakeOnEveryByte(bool every) {
    if (every == wakeOnEveryByte_) return;
    wakeOnEveryByte_ = every;
    const int bytes = every ? 1 : static_cast<int>(kHeaderLimit);
    (void)::setsockopt(socket_->native_handle(), SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes);
  }

  // On the slow lane: reads what has arrived, without waiting, and parses it;
  // when nothing has, waits for the next tick.
  void readHeaderNow() {
    bool read = false;
    do {
      const auto into = buffer_.prepare(boost::beast::read_size(buffer_, kHeaderLimit));
      error_code ec;
      const size_t n = tls_ ? tls_->readNow(into, ec) : socket_->read_some(into, ec);
      if (ec == net::error::would_block || ec == net::error::try_again) break;
      if (ec) return onReadError(ec);
      buffer_.commit(n);
      read = true;
    } while (tls_ && tls_->pending() && buffer_.size() < kHeaderLimit);
    if (!read) return awaitTick();
    parseHeader();
  }

  void awaitTick() {
    wakeOnEveryByte(false);
    if (!pace_) pace_.emplace(executor_);
    const auto now = std::chrono::steady_clock::now().time_since_epoch();
    pace_->expires_at(std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>((now / kSlowLanePace + 1) * kSlowLanePace)));
    pace_->async_wait([self = shared_from_this()](const error_code& ec) {
      if (ec || self->phase_ != Phase::Header) return;  // closed meanwhile (its deadline, a stop)
      self->server_->slowReads->inc();
      self->readHeaderNow();
    });
  }

  // With no operation in progress: the descriptor leaves its lane's reactor
  // for `lane`'s, keeps its deadline, and `next` runs on the new strand.
  template <class Next>  // void(Connection&)
  void moveTo(net::io_context& lane, Next next) {
    error_code ec;
    const auto protocol = socket_->local_endpoint(ec).protocol();
    if (ec) return close();
    const auto deadline = timer_->expiry();
    ++timerGeneration_;  // a deadline already queued on the old strand is stale
    const tcp::socket::native_handle_type fd = socket_->release(ec);
    if (ec) return close();
    const net::any_io_executor executor = net::make_strand(lane);
    tcp::socket moved(executor);
    moved.assign(protocol, fd, ec);
    if (ec) {
      ::close(fd);
      return close();
    }
    {
      std::lock_guard lock(server_->liveMutex);  // currentExecutor() reads it from other threads
      socket_.emplace(std::move(moved));
      timer_.emplace(executor);
      executor_ = executor;
    }
    if (tls_) tls_->rebind(*socket_);
    socket_->non_blocking(true, ec);
    net::post(executor, [self = shared_from_this(), deadline, next = std::move(next)]() mutable {
      if (self->server_->stopping) return self->close();
      self->timer_->expires_at(deadline);
      self->awaitDeadline();
      next(*self);
    });
  }

  net::any_io_executor currentExecutor() {
    std::lock_guard lock(server_->liveMutex);
    return executor_;
  }

  void onHeader(const error_code& ec) {
    if (ec) return onReadError(ec);
    const ListenerOptions& options = *server_->options;
    const auto& request = parser_->get();
    version_ = request.version();
    if (!options.bearerToken.empty()) {
      const std::string_view auth(request[http::field::authorization].data(),
                                  request[http::field::authorization].size());
      constexpr std::string_view kBearer = "Bearer ";
      const bool ok = auth.size() > kBearer.size() && auth.substr(0, kBearer.size()) == kBearer &&
                      constantTimeEquals(auth.substr(kBearer.size()), options.bearerToken);
      if (!ok) {
        // Refused before the body is read: an unauthenticated client gets no
        // buffer of its size. A small body of known length is read and
        // dropped, keeping the connection; anything else closes it.
        const auto length = parser_->content_length();
        if (parser_->is_done() || (length && *length <= kUnauthenticatedBodyBytes)) {
          unauthorized_ = true;
        } else {
          return answer(unauthorized(), Ending::Linger);
        }
      }
    }
    if (parser_->is_done()) return onRequest();
    if (auto length = parser_->content_length()) request_body_reserve(*length);
    const auto expect = request[http::field::expect];
    if (boost::beast::iequals(expect, "100-continue")) {
      arm(Phase::Body, options.bodyTimeout);
      writeRaw(net::buffer(kContinue.data(), kContinue.size()), [self = shared_from_this()](const error_code& ec, size_t) {
        if (ec || self->timedOut_) return self->close();
        self->readBody();
      });
      return;
    }
    readBody();
  }

  void request_body_reserve(uint64_t length) {
    // One allocation for a body of known length (at most the cap: the parser refused more).
    parser_->get().body().reserve(static_cast<size_t>(length));
  }

  void readBody() {
    if (buffer_.size() > 0) {
      // The body arrived with the headers (an AdmissionReview is one TLS
      // record): parsed at once, with no deadline armed and cancelled for it.
      parser_->eager(true);
      error_code ec;
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (!ec && parser_->is_done()) return onRequest();
      if (ec && ec != http::error::need_more) return onReadError(ec);
    }
    arm(Phase::Body, server_->options->bodyTimeout);
    auto done = [self = shared_from_this()](const error_code& ec, size_t) {
      if (ec) return self->onReadError(ec);
      self->onRequest();
    };
    if (tls_)
      http::async_read(*tls_, buffer_, *parser_, std::move(done));
    else
      http::async_read(*socket_, buffer_, *parser_, std::move(done));
  }

  void onReadError(const error_code& ec) {
    if (timedOut_ || phase_ == Phase::Closed) return close();
    if (ec == http::error::body_limit) {
      const size_t cap = server_->options->maxBodyBytes;
      return answer(HttpResponse::text(413, "request body larger than " + std::to_string(cap) + " bytes\n"),
                    Ending::Linger);
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::operation_aborted || ec == http::error::partial_message ||
        ec.category() == net::error::get_ssl_category())
      return close();
    // Anything else the parser refused: a malformed request line or header, an
    // invalid Content-Length, headers over the limit, a bad chunk.
    answer(HttpResponse::text(400, std::string("bad request: ") + ec.message() + "\n"), Ending::Close);
  }

  static HttpResponse unauthorized() {
    HttpResponse r = HttpResponse::text(401, "unauthorized\n");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }

  // A whole request: route it, then queue it for a worker.
  void onRequest() {
    auto message = parser_->release();
    parser_.reset();
    if (unauthorized_) {
      unauthorized_ = false;
      keepAlive_ = message.keep_alive();
      return answer(unauthorized(), ending());
    }
    HttpRequest request;
    request.method = text(message.method_string());
    const std::string_view target(message.target().data(), message.target().size());
    const size_t q = target.find('?');
    request.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) request.query = std::string(target.substr(q + 1));
    request.contentType = text(message[http::field::content_type]);
    request.forwardedBy = text(message["X-Placer-Forwarded-By"]);
    request.body = std::move(message.body());
    head_ = message.method() == http::verb::head;
    keepAlive_ = message.keep_alive();
    version_ = message.version();

    const ListenerOptions& options = *server_->options;
    const Route* match = nullptr;
    std::string allow;
    for (const Route& r : options.routes) {
      if (r.path != request.path) continue;
      if (r.method == request.method) match = &r;
      if (!allow.empty()) allow += ", ";
      allow += r.method;
    }
    if (match == nullptr) {
      if (allow.empty()) return answer(HttpResponse::text(404, "not found: " + request.path + "\n"), ending());
      HttpResponse r = HttpResponse::text(405, "method " + request.method + " not allowed for " + request.path + "\n");
      r.headers.emplace_back("Allow", allow);
      return answer(std::move(r), ending());
    }

    if (const auto& relay = server_->relays[static_cast<size_t>(match - options.routes.data())]) {
      std::string upstream;
      try {
        upstream = match->relay->to(request);
      } catch (const std::exception& e) {
        logEvent(LogLevel::Error, "relay target failed", {{"listener", options.name}, {"error", e.what()}});
      }
      if (!upstream.empty()) return relayRequest(*match, *relay, std::move(request), upstream);
    }

    disarm(Phase::Queued);
    const bool large = request.body.size() >= options.largeBodyBytes;
    auto shared = std::make_shared<HttpRequest>(std::move(request));
    auto job = [self = shared_from_this(), route = match, shared] {
      HttpResponse response = self->run(*route, *shared);
      // A large request (a pod with tens of thousands of resources) leaves
      // tens of MB of small blocks freed in this worker's malloc arena; give
      // them back, so a burst of large pods does not leave the process that
      // much larger.
      if (shared->body.size() >= kTrimAfterBodyBytes) {
        shared->body = std::string();
        releaseFreeMemory();
      }
      self->answerOnWorker(std::move(response));
    };
    if ((large ? server_->largeWork : server_->work)->tryPush(std::move(job))) return;
    server_->shed->inc();
    answer(shedAnswer(*match, *shared), ending());
  }

  // Sent on from this thread; answered on this connection's strand when the
  // upstream has answered or failed. No worker is involved.
  void relayRequest(const Route& route, HttpRelay& relay, HttpRequest request, const std::string& upstream) {
    disarm(Phase::Queued);
    auto shared = std::make_shared<const HttpRequest>(std::move(request));
    relay.relay(server_->io, upstream, shared,
                [self = shared_from_this(), route = &route, shared, executor = executor_](Result<std::string> answer) {
                  net::post(executor, [self, route, shared, answer = std::move(answer)]() mutable {
                    self->answer(self->relayedAnswer(*route, *shared, std::move(answer)), self->ending());
                  });
                });
  }

  HttpResponse relayedAnswer(const Route& route, const HttpRequest& request, Result<std::string> upstreamAnswer) {
    try {
      return route.relay->answered(request, std::move(upstreamAnswer));
    } catch (const std::exception& e) {
      return internalError(request, e.what());
    }
  }

  HttpResponse shedAnswer(const Route& route, const HttpRequest& request) {
    if (route.shed) {
      try {
        return route.shed(request);
      } catch (const std::exception& e) {
        logEvent(LogLevel::Error, "shed handler failed", {{"listener", server_->options->name}, {"error", e.what()}});
      }
    }
    HttpResponse r = HttpResponse::text(503, "overloaded: every worker busy and the queue full\n");
    r.headers.emplace_back("Retry-After", "1");
    return r;
  }

  // On a worker.
  HttpResponse run(const Route& route, const HttpRequest& request) {
    server_->inFlight.fetch_add(1);
    struct Done {
      std::atomic<int>& n;
      ~Done() { n.fetch_sub(1); }
    } done{server_->inFlight};
    try {
      return route.handler(request);
    } catch (const std::exception& e) {
      return internalError(request, e.what());
    } catch (...) {
      return internalError(request, "unknown exception");
    }
  }

  HttpResponse internalError(const HttpRequest& request, const std::string& what) {
    logEvent(LogLevel::Error, "request handler failed",
             {{"listener", server_->options->name}, {"method", request.method}, {"uri", request.path},
              {"error", what}});
    return HttpResponse::text(500, "internal error\n");
  }

  // ---- answering ----

  enum class Ending { KeepAlive, Close, Linger };
  Ending ending() const { return keepAlive_ && !server_->stopping ? Ending::KeepAlive : Ending::Close; }

  void answer(HttpResponse response, Ending end) {
    if (phase_ == Phase::Closed) return;
    if (server_->stopping && end == Ending::KeepAlive) end = Ending::Close;
    response_.emplace(message(std::move(response), end));
    arm(Phase::Writing, std::chrono::duration_cast<std::chrono::milliseconds>(server_->options->idleTimeout));
    auto done = [self = shared_from_this(), end](const error_code& ec, size_t) {
      self->response_.reset();
      self->head_ = false;
      if (ec || self->timedOut_) return self->close();
      if (end == Ending::KeepAlive) return self->awaitRequest();
      if (end == Ending::Linger) return self->linger();
      self->close();
    };
    if (tls_)
      http::async_write(*tls_, *response_, std::move(done));
    else
      http::async_write(*socket_, *response_, std::move(done));
  }

  http::response<http::string_body> message(HttpResponse response, Ending end) const {
    http::response<http::string_body> out;
    out.version(version_ == 10 ? 10 : 11);
    out.result(static_cast<unsigned>(response.status));
    out.set(http::field::server, "placer");
    out.set(http::field::content_type, response.contentType);
    for (const auto& [k, v] : response.headers) out.set(k, v);
    out.keep_alive(end == Ending::KeepAlive);
    const size_t length = response.body.size();
    if (!head_) out.body() = std::move(response.body);
    out.content_length(length);
    return out;
  }

  // On the worker that ran the handler, which owns the connection from the
  // push until it hands it back (RESULTS.md, issue 16 session 13: each
  // hand-off between threads costs a wakeup, ~10 µs of CPU on each side on
  // this VM). The answer is written at once, without waiting: a small one
  // fits the socket's buffer.
  // Then, under handoff_, the wait for the next request is armed here, as
  // awaitRequest() does on the strand; its completion and the connection's
  // deadline and stop() take handoff_ too, so they run after this. Anything
  // else (an answer the socket did not take whole, an error, bytes of a next
  // request already here) goes back to the strand as before.
  void answerOnWorker(HttpResponse response) {
    const Ending end = ending();
    auto out = message(std::move(response), end);
    answerBytes_ = serialized(out);
    error_code ec;
    const size_t written = writeNow(net::buffer(answerBytes_), ec);
    std::unique_lock lock(handoff_);
    if (ec) return close();
    if (written < answerBytes_.size()) {
      lock.unlock();
      net::post(executor_, [self = shared_from_this(), written, end] {
        std::lock_guard strandLock(self->handoff_);
        self->writeRest(written, end);
      });
      return;
    }
    std::string().swap(answerBytes_);
    head_ = false;
    if (end != Ending::KeepAlive) return close();
    if (server_->stopping) return close();
    parser_.reset();
    if (buffer_.size() > 0 || (tls_ && tls_->pending())) {
      lock.unlock();
      net::post(executor_, [self = shared_from_this()] {
        std::lock_guard strandLock(self->handoff_);
        self->awaitRequest();
      });
      return;
    }
    awaitRequest();
  }

  // On the strand: the part of the answer the worker could not write at once.
  void writeRest(size_t written, Ending end) {
    if (phase_ == Phase::Closed) return;
    arm(Phase::Writing, std::chrono::duration_cast<std::chrono::milliseconds>(server_->options->idleTimeout));
    writeRaw(net::buffer(answerBytes_) + written, [self = shared_from_this(), end](const error_code& ec, size_t) {
      std::string().swap(self->answerBytes_);
      self->head_ = false;
      if (ec || self->timedOut_ || end != Ending::KeepAlive) return self->close();
      self->awaitRequest();
    });
  }

  static std::string serialized(http::response<http::string_body>& message) {
    std::string bytes;
    bytes.reserve(message.body().size() + 256);
    http::serializer<false, http::string_body> serializer(message);
    error_code ec;
    do {
      serializer.next(ec, [&](error_code&, const auto& buffers) {
        size_t n = 0;
        for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers); ++it) {
          bytes.append(static_cast<const char*>((*it).data()), (*it).size());
          n += (*it).size();
        }
        serializer.consume(n);
      });
    } while (!ec && !serializer.is_done());
    return bytes;
  }

  // Writes what the socket takes now, without waiting.
  size_t writeNow(net::const_buffer bytes, error_code& ec) {
    if (tls_) return tls_->writeNow(bytes, ec);
    ec = {};
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::send(socket_->native_handle(), static_cast<const char*>(bytes.data()) + written,
                               bytes.size() - written, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        written += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      ec = n < 0 ? error_code(errno, boost::system::system_category()) : net::error::eof;
      break;
    }
    return written;
  }

  // Reads and drops what the client still sends, for a bounded time and
  // amount, then closes.
  void linger() {
    parser_.reset();
    buffer_ = boost::beast::flat_buffer();
    arm(Phase::Lingering, kLingerTime);
    drained_ = 0;
    drain();
  }

  void drain() {
    if (!drainBuffer_) drainBuffer_ = std::make_unique<std::array<char, 16384>>();
    auto done = [self = shared_from_this()](const error_code& ec, size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ >= kLingerBytes) return self->close();
      self->drain();
    };
    if (tls_)
      tls_->async_read_some(net::buffer(*drainBuffer_), std::move(done));
    else
      socket_->async_read_some(net::buffer(*drainBuffer_), std::move(done));
  }

  template <class F>
  void writeRaw(net::const_buffer bytes, F&& f) {
    if (tls_)
      net::async_write(*tls_, bytes, std::forward<F>(f));
    else
      net::async_write(*socket_, bytes, std::forward<F>(f));
  }

  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

  std::shared_ptr<HttpServer::Shared> server_;
  // The strand of the connection's lane; written under server_->liveMutex.
  net::any_io_executor executor_;
  std::optional<net::steady_timer> timer_;  // on the lane's strand
  std::optional<net::steady_timer> pace_;   // the slow lane's ticks (awaitTick)
  std::optional<tcp::socket> socket_;        // on the lane's strand
  std::optional<TlsSocket> tls_;
  boost::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  std::unique_ptr<std::array<char, 16384>> drainBuffer_;
  // Held by a worker while it hands the connection back (answerOnWorker),
  // and by the strand's handlers that may run meanwhile: a stop, a deadline,
  // the next request's arrival. Never held while waiting for anything else.
  std::mutex handoff_;
  std::string answerBytes_;  // an answer written by its worker, kept while the strand finishes it
  size_t drained_ = 0;
  Phase phase_ = Phase::Handshake;
  // Atomic: a deadline queued on the strand the connection left reads it.
  std::atomic<uint64_t> timerGeneration_{0};
  bool slowLane_ = false;
  bool wakeOnEveryByte_ = true;  // SO_RCVLOWAT is 1 (wakeOnEveryByte)
  bool timedOut_ = false;
  bool unauthorized_ = false;  // the request's body is read only to be dropped
  bool keepAlive_ = true;
  bool head_ = false;
  unsigned version_ = 11;
};

}  // namespace

void HttpServer::Shared::accept(const std::shared_ptr<Shared>& self) {
  // A TLS connection's socket starts on the handshake lane.
  acceptor->async_accept(net::make_strand(tls ? handshakeIo : io), [self](const error_code& ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || self->stopping) return;
    if (!ec) {
      if (self->open->value() >= self->options->maxConnections) {
        self->refused->inc();
        error_code ignored;
        socket.close(ignored);
      } else {
        self->open->add(1);
        error_code ignored;
        // Answers are written whole: no waiting for the peer's delayed ACK.
        socket.set_option(tcp::no_delay(true), ignored);
        std::make_shared<Connection>(self, std::move(socket))->start();
      }
    } else {
      // EMFILE and the like: the listener goes on and tries again shortly
      // (at once would spin while no descriptor is free).
      logEvent(LogLevel::Warning, "accept failed", {{"listener", self->options->name}, {"error", ec.message()}});
      self->acceptRetry->expires_after(std::chrono::milliseconds(50));
      self->acceptRetry->async_wait([self](const error_code& waited) {
        if (!waited && !self->stopping) self->accept(self);
      });
      return;
    }
    if (!self->stopping) self->accept(self);
  });
}

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
  if (options.ioThreads < 1) return Error{"ioThreads: must be at least 1"};
  if (options.maxConnections < 1) return Error{"maxConnections: must be at least 1"};
  if (options.maxQueuedRequests < 0) return Error{"maxQueuedRequests: must not be negative"};
  if (options.largeWorkerThreads < 1) return Error{"largeWorkerThreads: must be at least 1"};
  if (options.maxQueuedLargeRequests < 0) return Error{"maxQueuedLargeRequests: must not be negative"};

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->options_ = std::make_shared<const ListenerOptions>(std::move(options));
  const ListenerOptions& opts = *server->options_;
  auto shared = std::make_shared<Shared>();
  server->shared_ = shared;
  shared->options = server->options_;

  MetricsRegistry* metrics = opts.metrics;
  if (metrics == nullptr) {
    shared->ownMetrics = std::make_unique<MetricsRegistry>();
    metrics = shared->ownMetrics.get();
  }
  const MetricLabels listener{{"listener", opts.name}};
  auto with = [&](std::string key, std::string value) {
    MetricLabels labels = listener;
    labels.emplace_back(std::move(key), std::move(value));
    return labels;
  };
  shared->open = &metrics->gauge("placer_http_connections", "Open client connections, by listener.", listener);
  shared->idle = &metrics->gauge("placer_http_idle_connections",
                                 "Open connections waiting for their next request (keep-alive), by listener.",
                                 listener);
  shared->queued = &metrics->gauge("placer_http_requests_queued",
                                   "Fully received requests waiting for a worker, by listener.", listener);
  shared->shed = &metrics->counter("placer_http_requests_shed_total",
                                   "Requests answered at once without a worker because the queue was full.", listener);
  shared->refused = &metrics->counter("placer_http_connections_refused_total",
                                      "Connections closed at accept because maxConnections were open.", listener);
  const char* handshakeHelp = "TLS handshakes that failed, by reason: timeout, closed (by the client), tls (protocol).";
  shared->handshakeTimeout = &metrics->counter("placer_http_handshake_failures_total", handshakeHelp,
                                               with("reason", "timeout"));
  shared->handshakeClosed = &metrics->counter("placer_http_handshake_failures_total", handshakeHelp,
                                              with("reason", "closed"));
  shared->handshakeTls = &metrics->counter("placer_http_handshake_failures_total", handshakeHelp, with("reason", "tls"));
  const char* timeoutHelp = "Connections closed because a phase passed its deadline: idle, header, body.";
  shared->idleTimeouts = &metrics->counter("placer_http_timeouts_total", timeoutHelp, with("phase", "idle"));
  shared->headerTimeouts = &metrics->counter("placer_http_timeouts_total", timeoutHelp, with("phase", "header"));
  shared->bodyTimeouts = &metrics->counter("placer_http_timeouts_total", timeoutHelp, with("phase", "body"));
  shared->slow = &metrics->gauge(
      "placer_http_slow_connections",
      "Open connections whose request headers arrived in pieces, served at a lower CPU priority, by listener.",
      listener);
  shared->slowReads = &metrics->counter(
      "placer_http_slow_reads_total",
      "Reads of request headers on the slow lane, by listener: at most one per connection per 250 ms tick, with all that arrived since.", listener);

  if (opts.certificate) {
    auto context = makeServerContext(*opts.certificate);
    if (!context) return context.error();
    shared->tls = std::move(*context);
  }

  try {
    const std::string host = hostPort->first.empty() ? "0.0.0.0" : hostPort->first;
    error_code ec;
    tcp::endpoint endpoint;
    if (const auto address = net::ip::make_address(host, ec); !ec) {
      endpoint = tcp::endpoint(address, hostPort->second);
    } else {  // a name: its first address
      tcp::resolver resolver(shared->io);
      const auto found = resolver.resolve(host, std::to_string(hostPort->second), ec);
      if (ec || found.empty()) return Error{"listen " + opts.address + ": cannot resolve " + host};
      endpoint = found.begin()->endpoint();
    }
    auto acceptor = std::make_unique<tcp::acceptor>(shared->io);
    acceptor->open(endpoint.protocol());
    // SO_REUSEADDR (rebinding over TIME_WAIT) but never SO_REUSEPORT: a second
    // placer on an address in use fails here instead of silently sharing it.
    acceptor->set_option(net::socket_base::reuse_address(true));
    acceptor->bind(endpoint, ec);
    if (ec) return Error{"listen " + opts.address + ": " + ec.message()};
    acceptor->listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Error{"listen " + opts.address + ": " + ec.message()};
    server->port_ = acceptor->local_endpoint().port();
    shared->acceptor = std::move(acceptor);
  } catch (const boost::system::system_error& e) {
    return Error{"listen " + opts.address + ": " + e.code().message()};
  }

  for (const Route& route : opts.routes) {
    std::shared_ptr<HttpRelay> relay;
    if (route.relay) {
      if (!route.relay->to || !route.relay->answered) return Error{"route " + route.path + ": a relay needs to and answered"};
      auto created = HttpRelay::create(route.relay->options, opts.maxBodyBytes);
      if (!created) return Error{"route " + route.path + ": " + created.error().message};
      relay = std::move(*created);
    }
    shared->relays.push_back(std::move(relay));
  }

  shared->work = std::make_shared<WorkQueue>(static_cast<size_t>(opts.maxQueuedRequests), *shared->queued);
  shared->work->start(opts.workerThreads, shared->work);
  shared->largeWork = std::make_shared<WorkQueue>(static_cast<size_t>(opts.maxQueuedLargeRequests), *shared->queued);
  shared->largeWork->start(opts.largeWorkerThreads, shared->largeWork);
  shared->keepRunning.emplace(shared->io.get_executor());
  shared->keepHandshakeRunning.emplace(shared->handshakeIo.get_executor());
  shared->keepSlowRunning.emplace(shared->slowIo.get_executor());
  shared->acceptRetry = std::make_unique<net::steady_timer>(shared->io);
  shared->accept(shared);
  for (int i = 0; i < opts.ioThreads; ++i)
    shared->ioThreads.emplace_back([io = &shared->io, name = opts.name] {
      try {
        io->run();
      } catch (const std::exception& e) {
        logEvent(LogLevel::Error, "listener I/O thread failed", {{"listener", name}, {"error", e.what()}});
      }
    });
  for (auto [io, nice] : {std::pair{&shared->handshakeIo, kHandshakeLaneNice}, std::pair{&shared->slowIo, kSlowLaneNice}})
    shared->ioThreads.emplace_back([io = io, nice = nice, name = opts.name] {
      // A thread's own nice value (Linux): a lower priority than the others'.
      (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
      try {
        io->run();
      } catch (const std::exception& e) {
        logEvent(LogLevel::Error, "listener I/O thread failed", {{"listener", name}, {"error", e.what()}});
      }
    });
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

HttpServer::Stats HttpServer::stats() const {
  Stats s;
  s.openConnections = static_cast<int64_t>(shared_->open->value());
  s.idleConnections = static_cast<int64_t>(shared_->idle->value());
  s.queuedRequests = static_cast<int64_t>(shared_->queued->value());
  s.shedRequests = shared_->shed->value();
  s.refusedConnections = shared_->refused->value();
  s.handshakeFailures =
      shared_->handshakeTimeout->value() + shared_->handshakeClosed->value() + shared_->handshakeTls->value();
  return s;
}

bool HttpServer::stop(std::chrono::milliseconds bound) {
  if (stopped_) return true;
  stopped_ = true;
  if (!shared_->work) return true;  // start() failed before anything ran
  const auto deadline = std::chrono::steady_clock::now() + bound;
  Shared& s = *shared_;
  s.stopping = true;
  // Stop accepting, and close every connection that is not being answered;
  // those finish their answer, then close.
  net::post(s.io, [shared = shared_] {
    error_code ignored;
    shared->acceptor->close(ignored);
    shared->acceptRetry->cancel();
    std::vector<std::shared_ptr<Connection>> connections;
    {
      std::lock_guard lock(shared->liveMutex);
      for (Connection* c : shared->live)
        if (auto alive = c->weak_from_this().lock()) connections.push_back(std::move(alive));
    }
    for (const auto& c : connections) c->stop();
  });
  bool clean;
  {
    std::unique_lock lock(s.liveMutex);
    clean = s.liveChanged.wait_until(lock, deadline, [&] { return s.live.empty(); });
  }
  const bool workEnded = s.work->stop(deadline);
  const bool largeWorkEnded = s.largeWork->stop(deadline);
  clean = workEnded && largeWorkEnded && clean && s.inFlight.load() == 0;
  if (!clean) {
    logEvent(LogLevel::Warning, "requests still running at shutdown; abandoning them",
             {{"listener", options_->name}, {"inFlight", inFlight()}});
    // Workers and I/O threads may still use the listener: leave it to process exit.
    s.keepRunning.reset();
    s.keepHandshakeRunning.reset();
    s.keepSlowRunning.reset();
    for (std::thread& t : s.ioThreads) t.detach();
    new std::shared_ptr<Shared>(shared_);
    return false;
  }
  // Nothing is left for the I/O threads but the acceptor's cancelled wait
  // (idle relayed connections wait for nothing): without the guard they
  // return once it has run.
  for (const auto& relay : s.relays)
    if (relay) relay->closeIdle();
  s.keepRunning.reset();
  s.keepHandshakeRunning.reset();
  s.keepSlowRunning.reset();
  for (std::thread& t : s.ioThreads) t.join();
  s.ioThreads.clear();
  return true;
}

}  // namespace placer
