#include "test/fakeapi/https_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <csignal>
#include <cctype>
#include <cstring>

namespace placer::fakeapi {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string opensslError(const std::string& what) {
  std::string m = what;
  unsigned long e = ERR_get_error();
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    m += ": ";
    m += buf;
  }
  ERR_clear_error();
  return m;
}

bool isIpAddress(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

void setSocketTimeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Result<int> connectTcp(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (int rc = getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
    return Error{"dial tcp " + host + ": lookup failed: " + gai_strerror(rc)};
  std::string lastError = "no addresses";
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int flags = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (ready == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        if (ready == 0) errno = ETIMEDOUT;
        rc = -1;
      }
    }
    if (rc == 0) {
      fcntl(fd, F_SETFL, flags);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      setSocketTimeout(fd, timeout);
      freeaddrinfo(res);
      return fd;
    }
    lastError = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(res);
  return Error{"dial tcp " + host + ":" + std::to_string(port) + ": " + lastError};
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  const std::string want = lower(name);
  for (const auto& [k, v] : headers)
    if (lower(k) == want) return v;
  return "";
}

class HttpsConnection::Impl {
 public:
  ~Impl() {
    if (ssl_) SSL_free(ssl_);
    if (ctx_) SSL_CTX_free(ctx_);
    if (fd_ >= 0) ::close(fd_);
  }

  Outcome open(const std::string& host, int port, const std::string& caPem, std::chrono::milliseconds timeout,
               const std::string& serverName) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (!ctx_) return Error{opensslError("SSL_CTX_new")};
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
    if (caPem.empty()) {
      SSL_CTX_set_default_verify_paths(ctx_);
    } else {
      BIO* bio = BIO_new_mem_buf(caPem.data(), static_cast<int>(caPem.size()));
      int added = 0;
      while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
        X509_STORE_add_cert(store, cert);
        X509_free(cert);
        ++added;
      }
      BIO_free(bio);
      ERR_clear_error();
      if (added == 0) return Error{"caBundle: no PEM certificate found"};
    }
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);

    std::signal(SIGPIPE, SIG_IGN);  // a peer that hangs up must be an error value, not a signal
    auto fd = connectTcp(host, port, timeout);
    if (!fd) return fd.error();
    fd_ = *fd;

    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    std::string name = serverName.empty() ? host : serverName;
    if (name.size() > 2 && name.front() == '[') name = name.substr(1, name.size() - 2);
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    if (isIpAddress(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl_, name.c_str());
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
    }
    if (SSL_connect(ssl_) != 1) {
      long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK)
        return Error{std::string("tls: failed to verify certificate: ") + X509_verify_cert_error_string(verify)};
      return Error{opensslError("tls handshake with " + host + ":" + std::to_string(port) + " failed")};
    }
    return {};
  }

  void setTimeout(std::chrono::milliseconds t) { setSocketTimeout(fd_, t); }

  Outcome writeAll(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      int n = SSL_write(ssl_, data.data() + done, static_cast<int>(data.size() - done));
      if (n <= 0) return Error{opensslError("write failed")};
      done += static_cast<std::size_t>(n);
    }
    return {};
  }

  // Appends more bytes to buf_; false at end of stream or error (error_ set).
  bool fill() {
    char tmp[16384];
    int n = SSL_read(ssl_, tmp, sizeof tmp);
    if (n > 0) {
      buf_.append(tmp, static_cast<std::size_t>(n));
      return true;
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_ZERO_RETURN) {
      error_ = "connection closed";
    } else if (err == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      error_ = "read timed out";
    } else {
      error_ = opensslError("connection broken");
    }
    eof_ = true;
    return false;
  }

  Result<std::string> readLine() {
    for (;;) {
      auto at = buf_.find("\r\n", pos_);
      if (at != std::string::npos) {
        std::string line = buf_.substr(pos_, at - pos_);
        pos_ = at + 2;
        compact();
        return line;
      }
      if (!fill()) return Error{error_};
    }
  }

  Result<std::string> readExactly(std::size_t n) {
    while (buf_.size() - pos_ < n)
      if (!fill()) return Error{error_};
    std::string out = buf_.substr(pos_, n);
    pos_ += n;
    compact();
    return out;
  }

  std::string readToEnd() {
    while (fill()) {
    }
    std::string out = buf_.substr(pos_);
    buf_.clear();
    pos_ = 0;
    return out;
  }

  void compact() {
    if (pos_ > 65536) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
  }

  Result<std::optional<std::string>> readChunk() {
    auto sizeLine = readLine();
    if (!sizeLine) return sizeLine.error();
    std::string hex = *sizeLine;
    if (auto semi = hex.find(';'); semi != std::string::npos) hex.resize(semi);
    std::size_t size = 0;
    try {
      size = std::stoul(hex, nullptr, 16);
    } catch (...) {
      return Error{"malformed chunk size \"" + *sizeLine + "\""};
    }
    if (size == 0) {
      // trailers until an empty line
      for (;;) {
        auto l = readLine();
        if (!l) return l.error();
        if (l->empty()) break;
      }
      return std::optional<std::string>{};
    }
    auto data = readExactly(size);
    if (!data) return data.error();
    auto crlf = readExactly(2);
    if (!crlf) return crlf.error();
    if (*crlf != "\r\n") return Error{"malformed chunk terminator"};
    return std::optional<std::string>{std::move(*data)};
  }

  std::string cipher() const {
    const char* name = ssl_ ? SSL_get_cipher_name(ssl_) : nullptr;
    return name ? name : "";
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  std::string buf_;
  std::size_t pos_ = 0;
  bool eof_ = false;
  std::string error_;
};

HttpsConnection::HttpsConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpsConnection::~HttpsConnection() = default;

Result<std::unique_ptr<HttpsConnection>> HttpsConnection::open(const std::string& host, int port,
                                                               const std::string& caPem,
                                                               std::chrono::milliseconds timeout,
                                                               const std::string& serverName) {
  auto impl = std::make_unique<Impl>();
  if (auto o = impl->open(host, port, caPem, timeout, serverName); !o) return o.error();
  return std::unique_ptr<HttpsConnection>(new HttpsConnection(std::move(impl)));
}

void HttpsConnection::setTimeout(std::chrono::milliseconds timeout) { impl_->setTimeout(timeout); }

std::string HttpsConnection::cipher() const { return impl_->cipher(); }

Outcome HttpsConnection::sendRequest(const std::string& method, const std::string& target, const Headers& headers,
                                     const std::string& body) {
  std::string req = method + " " + target + " HTTP/1.1\r\n";
  bool hasHost = false;
  for (const auto& [k, v] : headers) {
    req += k + ": " + v + "\r\n";
    if (lower(k) == "host") hasHost = true;
  }
  if (!hasHost) req += "Host: fake\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n";
  req += body;
  return impl_->writeAll(req);
}

Result<HttpResponse> HttpsConnection::readHead() {
  auto status = impl_->readLine();
  if (!status) return status.error();
  HttpResponse r;
  // "HTTP/1.1 200 OK"
  auto sp = status->find(' ');
  if (sp == std::string::npos || status->compare(0, 5, "HTTP/") != 0)
    return Error{"malformed status line \"" + *status + "\""};
  try {
    r.status = std::stoi(status->substr(sp + 1, 3));
  } catch (...) {
    return Error{"malformed status line \"" + *status + "\""};
  }
  for (;;) {
    auto line = impl_->readLine();
    if (!line) return line.error();
    if (line->empty()) break;
    auto colon = line->find(':');
    if (colon == std::string::npos) continue;
    std::string value = line->substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers.emplace_back(line->substr(0, colon), value);
  }
  return r;
}

Result<std::string> HttpsConnection::readBody(const HttpResponse& head) {
  if (lower(head.header("Transfer-Encoding")).find("chunked") != std::string::npos) {
    std::string body;
    for (;;) {
      auto chunk = readChunk();
      if (!chunk) return chunk.error();
      if (!chunk->has_value()) return body;
      body += **chunk;
    }
  }
  if (std::string len = head.header("Content-Length"); !len.empty()) {
    std::size_t n = 0;
    try {
      n = std::stoul(len);
    } catch (...) {
      return Error{"malformed Content-Length"};
    }
    return impl_->readExactly(n);
  }
  if (head.status == 204 || head.status == 304) return std::string();
  return impl_->readToEnd();
}

Result<HttpResponse> HttpsConnection::readResponse() {
  auto head = readHead();
  if (!head) return head;
  auto body = readBody(*head);
  if (!body) return body.error();
  head->body = std::move(*body);
  return head;
}

Result<std::optional<std::string>> HttpsConnection::readChunk() { return impl_->readChunk(); }

Result<ParsedUrl> parseHttpsUrl(const std::string& url) {
  const std::string scheme = "https://";
  if (url.compare(0, scheme.size(), scheme) != 0) return Error{"url: only https:// is supported: " + url};
  ParsedUrl p;
  std::string rest = url.substr(scheme.size());
  auto slash = rest.find_first_of("/?");
  std::string hostPort = rest.substr(0, slash);
  p.target = slash == std::string::npos ? "/" : rest.substr(slash);
  if (!p.target.empty() && p.target.front() == '?') p.target = "/" + p.target;
  std::size_t colon;
  if (!hostPort.empty() && hostPort.front() == '[') {
    auto close = hostPort.find(']');
    if (close == std::string::npos) return Error{"url: malformed host: " + url};
    p.host = hostPort.substr(0, close + 1);
    colon = hostPort.find(':', close);
  } else {
    colon = hostPort.find(':');
    p.host = hostPort.substr(0, colon);
  }
  if (colon != std::string::npos) {
    try {
      p.port = std::stoi(hostPort.substr(colon + 1));
    } catch (...) {
      return Error{"url: malformed port: " + url};
    }
  }
  if (p.host.empty()) return Error{"url: missing host: " + url};
  return p;
}

Result<HttpResponse> httpsRequest(const std::string& method, const std::string& url, const std::string& caPem,
                                  const Headers& headers, const std::string& body,
                                  std::chrono::milliseconds timeout) {
  auto u = parseHttpsUrl(url);
  if (!u) return u.error();
  auto conn = HttpsConnection::open(u->host, u->port, caPem, timeout);
  if (!conn) return conn.error();
  Headers h = headers;
  h.emplace_back("Host", u->host + ":" + std::to_string(u->port));
  h.emplace_back("Connection", "close");
  if (auto o = (*conn)->sendRequest(method, u->target, h, body); !o) return o.error();
  return (*conn)->readResponse();
}

}  // namespace placer::fakeapi
