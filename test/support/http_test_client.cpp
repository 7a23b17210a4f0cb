#include "test/support/http_test_client.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace placer::testing {
namespace {

std::string sslError(std::string_view what) {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "";
  if (code) ERR_error_string_n(code, buf, sizeof buf);
  return std::string(what) + ": " + buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<std::unique_ptr<HttpTestClient>> HttpTestClient::connect(const ClientOptions& options) {
  std::unique_ptr<HttpTestClient> client(new HttpTestClient());
  client->host_ = options.host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(options.port);
  if (getaddrinfo(options.host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr)
    return Error{"resolve " + options.host};
  int fd = ::socket(res->ai_family, SOCK_STREAM, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    return Error{"socket"};
  }
  client->fd_ = fd;
  int rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0) return Error{std::string("connect: ") + std::strerror(errno)};
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{options.timeoutMs / 1000, (options.timeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

  if (options.caPem) {
    client->ctx_ = SSL_CTX_new(TLS_client_method());
    if (!client->ctx_) return Error{sslError("SSL_CTX_new")};
    if (options.maxTlsVersion != 0) {
      SSL_CTX_set_min_proto_version(client->ctx_, TLS1_VERSION);
      SSL_CTX_set_max_proto_version(client->ctx_, options.maxTlsVersion);
      SSL_CTX_set_security_level(client->ctx_, 0);
    }
    X509_STORE* store = SSL_CTX_get_cert_store(client->ctx_);
    BIO* bio = BIO_new_mem_buf(options.caPem->data(), int(options.caPem->size()));
    while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, ca);
      X509_free(ca);
    }
    BIO_free(bio);
    ERR_clear_error();
    SSL_CTX_set_verify(client->ctx_, SSL_VERIFY_PEER, nullptr);
    client->ssl_ = SSL_new(client->ctx_);
    // One read() for a whole answer's record, not one for its header and
    // another for its body (the loadgens' clients share the server's cores).
    SSL_set_read_ahead(client->ssl_, 1);
    SSL_set_fd(client->ssl_, fd);
    SSL_set_tlsext_host_name(client->ssl_, options.serverName.c_str());
    SSL_set1_host(client->ssl_, options.serverName.c_str());
    if (SSL_connect(client->ssl_) != 1) return Error{sslError("TLS handshake")};
  }
  return client;
}

HttpTestClient::~HttpTestClient() {
  if (ssl_) {
    SSL_shutdown(ssl_);
    SSL_free(ssl_);
  }
  if (ctx_) SSL_CTX_free(ctx_);
  if (fd_ >= 0) ::close(fd_);
}

Outcome HttpTestClient::writeRaw(std::string_view bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    int n;
    if (ssl_) {
      n = SSL_write(ssl_, bytes.data() + off, int(std::min<size_t>(bytes.size() - off, 1 << 20)));
      if (n <= 0) return Error{sslError("write")};
    } else {
      n = int(::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL));
      if (n <= 0) return Error{std::string("write: ") + std::strerror(errno)};
    }
    off += size_t(n);
  }
  return {};
}

Result<size_t> HttpTestClient::readSome(char* buf, size_t n) {
  if (ssl_) {
    int r = SSL_read(ssl_, buf, int(n));
    if (r > 0) return size_t(r);
    int err = SSL_get_error(ssl_, r);
    ERR_clear_error();
    if (err == SSL_ERROR_ZERO_RETURN || err == SSL_ERROR_SYSCALL) return size_t(0);
    return Error{"read: TLS error " + std::to_string(err)};
  }
  ssize_t r = ::recv(fd_, buf, n, 0);
  if (r < 0) return Error{std::string("read: ") + std::strerror(errno)};
  return size_t(r);
}

Outcome HttpTestClient::fill() {
  char buf[16384];
  auto n = readSome(buf, sizeof buf);
  if (!n) return n.error();
  if (*n == 0) return Error{"connection closed"};
  buffer_.append(buf, *n);
  return {};
}

Result<HttpReply> HttpTestClient::readReply() {
  size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (auto o = fill(); !o) return o.error();
  std::string head = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);
  HttpReply reply;
  size_t lineEnd = head.find("\r\n");
  std::string status = head.substr(0, lineEnd);
  if (status.size() < 12 || status.compare(0, 5, "HTTP/") != 0) return Error{"bad status line: " + status};
  reply.status = std::stoi(status.substr(9, 3));
  size_t pos = lineEnd == std::string::npos ? head.size() : lineEnd + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string::npos) next = head.size();
    std::string line = head.substr(pos, next - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      reply.headers[lower(line.substr(0, colon))] = value;
    }
    pos = next + 2;
  }
  reply.keepAlive = lower(reply.header("connection")) != "close";
  if (reply.status >= 100 && reply.status < 200) return reply;  // interim (100 Continue): no body
  if (auto cl = reply.header("content-length"); !cl.empty()) {
    size_t length = std::stoul(cl);
    while (buffer_.size() < length)
      if (auto o = fill(); !o) return o.error();
    reply.body = buffer_.substr(0, length);
    buffer_.erase(0, length);
  } else if (lower(reply.header("transfer-encoding")) == "chunked") {
    for (;;) {
      size_t crlf;
      while ((crlf = buffer_.find("\r\n")) == std::string::npos)
        if (auto o = fill(); !o) return o.error();
      size_t size = std::stoul(buffer_.substr(0, crlf), nullptr, 16);
      while (buffer_.size() < crlf + 2 + size + 2)
        if (auto o = fill(); !o) return o.error();
      reply.body += buffer_.substr(crlf + 2, size);
      buffer_.erase(0, crlf + 2 + size + 2);
      if (size == 0) break;
    }
  } else {
    // Until the server closes.
    while (fill()) {
    }
    reply.body = std::move(buffer_);
    buffer_.clear();
    reply.keepAlive = false;
  }
  return reply;
}

Result<HttpReply> HttpTestClient::request(std::string_view method, std::string_view target, std::string_view body,
                                          const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string req;
  req.reserve(body.size() + 256);
  req.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ").append(host_).append("\r\n");
  for (const auto& [k, v] : headers) req.append(k).append(": ").append(v).append("\r\n");
  if (!body.empty() || method == "POST" || method == "PUT")
    req.append("Content-Type: application/json\r\nContent-Length: ").append(std::to_string(body.size())).append("\r\n");
  req.append("\r\n").append(body);
  if (auto o = writeRaw(req); !o) return o.error();
  return readReply();
}

Result<HttpReply> HttpTestClient::sendRaw(std::string_view bytes) {
  if (auto o = writeRaw(bytes); !o) return o.error();
  return readReply();
}

std::string HttpTestClient::peerCertificatePem() const {
  if (!ssl_) return {};
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (!cert) return {};
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, size_t(n));
  BIO_free(bio);
  X509_free(cert);
  return pem;
}

std::string HttpTestClient::protocol() const { return ssl_ ? SSL_get_version(ssl_) : "plain"; }

}  // namespace placer::testing
