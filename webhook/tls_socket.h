#pragma once
// A TLS stream over a non-blocking Asio socket, for the HTTP listener's
// connections (webhook/http_server.cpp) and the connections it relays
// requests on (webhook/http_relay.cpp). Internal to webhook/: it brings Asio
// and OpenSSL with it.

#include <algorithm>
#include <cerrno>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

namespace placer {

// Frees an SSL_CTX: the deleter of the listener's and the relay's contexts.
struct SslContextFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// TLS on a non-blocking socket, driven by readiness: OpenSSL reads and writes
// the socket itself, so with SSL_MODE_RELEASE_BUFFERS an idle connection
// keeps only its SSL object (a few KB) — no record buffers, no BIO pair.
// An asynchronous stream for Beast (async_read_some, async_write_some). A
// connection reads and writes one at a time, never both at once.
class TlsSocket {
 public:
  using executor_type = boost::asio::ip::tcp::socket::executor_type;

  TlsSocket(boost::asio::ip::tcp::socket& socket, SSL_CTX* context)
      : socket_(&socket), ssl_(SSL_new(context)) {
    boost::system::error_code ignored;
    socket_->non_blocking(true, ignored);
    if (ssl_ != nullptr) SSL_set_fd(ssl_, static_cast<int>(socket_->native_handle()));
  }
  ~TlsSocket() { SSL_free(ssl_); }
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  executor_type get_executor() { return socket_->get_executor(); }
  // The same descriptor, now wrapped by another socket object (another
  // lane's; the connection moves lanes with no operation in progress).
  void rebind(boost::asio::ip::tcp::socket& socket) { socket_ = &socket; }
  // Bytes received and not yet read: decrypted, or records OpenSSL read
  // ahead of the one returned (read_ahead below).
  bool pending() const { return ssl_ != nullptr && SSL_has_pending(ssl_) == 1; }
  // From now on one read() takes whatever the socket holds, records beyond
  // the first kept for the next reads (pending() sees them), instead of a
  // read() for each record's header and another for its body.
  void readAhead() {
    if (ssl_ != nullptr) SSL_set_read_ahead(ssl_, 1);
  }

  SSL* native_handle() { return ssl_; }

  // The server's side of the handshake.
  template <class Handler>  // void(boost::system::error_code)
  void async_handshake(Handler handler) {
    step(
        [this] { return SSL_accept(ssl_); },
        [handler = std::move(handler)](const boost::system::error_code& ec, size_t) mutable { handler(ec); });
  }

  // The client's side (the name to verify and to send is set on native_handle() first).
  template <class Handler>  // void(boost::system::error_code)
  void async_client_handshake(Handler handler) {
    step(
        [this] { return SSL_connect(ssl_); },
        [handler = std::move(handler)](const boost::system::error_code& ec, size_t) mutable { handler(ec); });
  }

  template <class Buffers, class Handler>  // void(boost::system::error_code, size_t)
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    const boost::asio::mutable_buffer buffer = first(buffers);
    if (buffer.size() == 0) return complete(std::forward<Handler>(handler), boost::system::error_code(), 0);
    step([this, buffer] { return SSL_read(ssl_, buffer.data(), clampInt(buffer.size())); },
         std::forward<Handler>(handler));
  }

  // One read that does not wait: the bytes read, or would_block when no
  // whole record has arrived.
  size_t readNow(boost::asio::mutable_buffer buffer, boost::system::error_code& ec) {
    const Attempt a = attempt([&] { return SSL_read(ssl_, buffer.data(), clampInt(buffer.size())); });
    ec = a.want != 0 ? boost::system::error_code(boost::asio::error::would_block) : a.ec;
    return a.n;
  }

  // Writes what the socket takes now, without waiting: the bytes written,
  // fewer than asked when the socket's buffer is full (then the rest is
  // written with async_write_some from the first byte not written, which
  // repeats the record OpenSSL could not send, as it requires).
  size_t writeNow(boost::asio::const_buffer buffer, boost::system::error_code& ec) {
    ec = {};
    size_t written = 0;
    while (written < buffer.size()) {
      // At most one record per call, so that a retry by async_write_some
      // (which may pass more) covers the record left pending.
      const Attempt a = attempt([&] {
        return SSL_write(ssl_, static_cast<const char*>(buffer.data()) + written,
                         clampInt(std::min<size_t>(buffer.size() - written, kRecord)));
      });
      written += a.n;
      if (a.n == 0) {
        ec = a.ec;  // none when the socket's buffer is full
        break;
      }
    }
    return written;
  }

  template <class Buffers, class Handler>  // void(boost::system::error_code, size_t)
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    boost::asio::const_buffer buffer = first(buffers);
    // A small answer's pieces (status line, headers, body) go out as one
    // record: gathered here, kept until the write completes.
    const size_t total = boost::asio::buffer_size(buffers);
    if (buffer.size() < total && total <= kGather) {
      gathered_.resize(total);
      boost::asio::buffer_copy(boost::asio::buffer(gathered_), buffers);
      buffer = boost::asio::buffer(gathered_);
    }
    if (buffer.size() == 0) return complete(std::forward<Handler>(handler), boost::system::error_code(), 0);
    step([this, buffer] { return SSL_write(ssl_, buffer.data(), clampInt(buffer.size())); },
         [this, handler = std::forward<Handler>(handler)](const boost::system::error_code& ec,
                                                          size_t n) mutable {
           std::string().swap(gathered_);  // an idle connection keeps no copy
           handler(ec, n);
         });
  }

 private:
  static int clampInt(size_t n) { return static_cast<int>(std::min<size_t>(n, 1 << 30)); }

  template <class Buffers>
  static auto first(const Buffers& buffers) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it)
      if ((*it).size() > 0) return *it;
    return *boost::asio::buffer_sequence_begin(buffers);
  }

  // Handlers always run later on the connection's executor, never inside the
  // call that started the operation.
  template <class Handler>
  void complete(Handler&& handler, const boost::system::error_code& ec, size_t n) {
    boost::asio::post(socket_->get_executor(),
                      [handler = std::forward<Handler>(handler), ec, n]() mutable { handler(ec, n); });
  }

  // One try of an OpenSSL call: the bytes it moved; or none, and the
  // readiness it waits for (SSL_ERROR_WANT_READ or _WRITE); or none, and why
  // it failed.
  struct Attempt {
    size_t n = 0;
    int want = 0;
    boost::system::error_code ec;
  };
  template <class Operation>
  Attempt attempt(Operation&& operation) {
    if (ssl_ == nullptr) return {0, 0, boost::asio::error::no_memory};
    ERR_clear_error();
    const int n = operation();
    if (n > 0) return {static_cast<size_t>(n), 0, {}};
    const int error = SSL_get_error(ssl_, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return {0, error, {}};
    return {0, 0, failure(error, n)};
  }

  template <class Operation, class Handler>
  void step(Operation operation, Handler&& handler) {
    const Attempt a = attempt(operation);
    if (a.want == 0) return complete(std::forward<Handler>(handler), a.ec, a.n);
    socket_->async_wait(a.want == SSL_ERROR_WANT_READ ? boost::asio::ip::tcp::socket::wait_read
                                                      : boost::asio::ip::tcp::socket::wait_write,
                        [this, operation, handler = std::forward<Handler>(handler)](
                            const boost::system::error_code& ec) mutable {
                          if (ec) return complete(std::move(handler), ec, 0);
                          step(operation, std::move(handler));
                        });
  }

  // eof for a clean close_notify or a peer gone mid-record; the OpenSSL
  // error otherwise.
  static boost::system::error_code failure(int error, int n) {
    const unsigned long queued = ERR_peek_error();
    if (error == SSL_ERROR_ZERO_RETURN) return boost::asio::error::eof;
    if (error == SSL_ERROR_SYSCALL && queued == 0)
      return n == 0 || errno == 0 ? boost::system::error_code(boost::asio::error::eof)
                                  : boost::system::error_code(errno, boost::system::system_category());
    if (ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return boost::asio::error::eof;
    if (queued == 0) return boost::asio::error::connection_aborted;
    return boost::system::error_code(static_cast<int>(queued), boost::asio::error::get_ssl_category());
  }

  static constexpr size_t kGather = 16 * 1024;
  static constexpr size_t kRecord = 16 * 1024;  // TLS's largest record payload
  boost::asio::ip::tcp::socket* socket_;
  SSL* ssl_;
  std::string gathered_;
};

}  // namespace placer
