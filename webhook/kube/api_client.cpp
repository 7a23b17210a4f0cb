#include "webhook/kube/api_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <istream>
#include <streambuf>
#include <string_view>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLManager.h>

#include "certs/openssl_error.h"
#include "certs/peer_verification.h"

namespace placer::kube {
namespace {

// The bytes a stream buffer holds and has not handed out yet (its get area),
// read in place. The get area's pointers are protected members of
// std::streambuf; pointers to them, formed here, reach them on any buffer.
struct BufferedPiece : std::streambuf {
  // Not empty after a successful sgetc().
  static std::string_view of(std::streambuf& buffer) {
    char* (std::streambuf::*next)() const = &BufferedPiece::gptr;
    char* (std::streambuf::*end)() const = &BufferedPiece::egptr;
    const char* from = (buffer.*next)();
    return {from, static_cast<size_t>((buffer.*end)() - from)};
  }
  // Marks n bytes of the get area read (n <= of(buffer).size()).
  static void consume(std::streambuf& buffer, size_t n) {
    void (std::streambuf::*bump)(int) = &BufferedPiece::gbump;
    (buffer.*bump)(static_cast<int>(n));
  }
};

constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr size_t kTlsReadBuffer = 128 * 1024;  // OpenSSL's read-ahead buffer per connection

// What a session writes can be gathered and sent as one write: a request's
// headers and body become one TLS record and one send(2), not two. (Not a
// whole pipelined round: a server that polls its socket between requests,
// as Poco's does, would not see requests left decrypted in its TLS buffer.)
class GatheredWrites {
 public:
  virtual void gather() = 0;
  // Sends what was gathered and stops gathering. Throws Poco's exceptions.
  virtual void sendGathered() = 0;

 protected:
  ~GatheredWrites() = default;
};

// A Poco client session whose failed write fails the request. Poco's own
// HTTPClientSession::write reconnects and writes again when a write on a
// kept-alive connection fails: for pipelined requests that would send a
// later request on a fresh connection that never saw the earlier ones, and
// read its answer as theirs. A stale connection is instead retried by
// Connection, for the requests not answered.
template <class Session>
class WriteOnceSession final : public Session, public GatheredWrites {
 public:
  using Session::Session;

  void gather() override { gathering_ = true; }

  void sendGathered() override {
    gathering_ = false;
    size_t sent = 0;
    while (sent < gathered_.size()) {
      const auto piece = static_cast<std::streamsize>(std::min<size_t>(gathered_.size() - sent, 1 << 20));
      const int n = Poco::Net::HTTPSession::write(gathered_.data() + sent, piece);
      if (n <= 0) throw Poco::Net::NetException("the connection took no bytes");
      sent += static_cast<size_t>(n);
    }
    gathered_.clear();
  }

 protected:
  // No Nagle delay, as Go's clients (and the API server) have it: a request
  // or a pipelined round must not wait for the ACK of the one before.
  void connect(const Poco::Net::SocketAddress& address) override {
    Session::connect(address);
    this->socket().setNoDelay(true);
  }

  int write(const char* buffer, std::streamsize length) override {
    if (gathering_) {
      gathered_.append(buffer, static_cast<size_t>(length));
      return static_cast<int>(length);
    }
    return Poco::Net::HTTPSession::write(buffer, length);
  }

 private:
  bool gathering_ = false;
  std::string gathered_;
};

// The session's write gathering (every session Connection opens is a WriteOnceSession).
GatheredWrites& gatheredWrites(Poco::Net::HTTPClientSession& session) {
  return dynamic_cast<GatheredWrites&>(session);
}

Outcome useClientCertificate(SSL_CTX* ctx, const std::string& certPem, const std::string& keyPem) {
  BIO* certBio = BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size()));
  X509* cert = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr);
  Outcome result;
  if (!cert) {
    result = Error{"client certificate: not a PEM certificate (" + certs::takeOpensslError("unknown OpenSSL error") + ")"};
  } else if (SSL_CTX_use_certificate(ctx, cert) != 1) {
    result = Error{"client certificate: " + certs::takeOpensslError("unknown OpenSSL error")};
  } else {
    // The rest of the file is the chain.
    while (X509* extra = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr))
      if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) X509_free(extra);
    ERR_clear_error();
  }
  if (cert) X509_free(cert);
  BIO_free(certBio);
  if (!result) return result;

  BIO* keyBio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
  if (!key) {
    result = Error{"client key: not a PEM private key (" + certs::takeOpensslError("unknown OpenSSL error") + ")"};
  } else if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    result = Error{"client key: does not match the client certificate (" + certs::takeOpensslError("unknown OpenSSL error") + ")"};
  }
  if (key) EVP_PKEY_free(key);
  BIO_free(keyBio);
  return result;
}

struct ParsedServer {
  std::string scheme, host, pathPrefix;
  uint16_t port = 0;
};

Result<ParsedServer> parseServer(const std::string& server) {
  ParsedServer out;
  size_t schemeEnd = server.find("://");
  if (schemeEnd == std::string::npos) return Error{"server " + server + ": no scheme"};
  out.scheme = server.substr(0, schemeEnd);
  if (out.scheme != "https" && out.scheme != "http") return Error{"server " + server + ": scheme must be https or http"};
  std::string rest = server.substr(schemeEnd + 3);
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) out.pathPrefix = rest.substr(slash);
  while (!out.pathPrefix.empty() && out.pathPrefix.back() == '/') out.pathPrefix.pop_back();
  std::string portText;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string::npos) return Error{"server " + server + ": bad IPv6 address"};
    out.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':') portText = authority.substr(close + 2);
  } else {
    size_t colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) portText = authority.substr(colon + 1);
  }
  if (out.host.empty()) return Error{"server " + server + ": no host"};
  out.port = out.scheme == "https" ? 443 : 80;
  if (!portText.empty()) {
    char* end = nullptr;
    long port = std::strtol(portText.c_str(), &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) return Error{"server " + server + ": bad port"};
    out.port = static_cast<uint16_t>(port);
  }
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t start = 0;
  while (start < s.size() && (s[start] == ' ' || s[start] == '\t')) ++start;
  return s.substr(start);
}

}  // namespace

std::string urlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------

BearerToken::BearerToken(std::string fixed, std::string file, std::chrono::milliseconds refreshInterval)
    : token_(std::move(fixed)), file_(std::move(file)), refresh_(refreshInterval) {}

std::string BearerToken::current() {
  std::lock_guard lock(mutex_);
  if (!file_.empty()) {
    auto now = std::chrono::steady_clock::now();
    if (stale_ || now - readAt_ >= refresh_) {
      // A failed read keeps the last good token: the file is replaced atomically
      // by the kubelet, but a test or an operator may briefly remove it.
      if (auto text = readFileText(file_); text) token_ = trimmed(std::move(*text));
      readAt_ = now;
      stale_ = false;
    }
  }
  return token_;
}

void BearerToken::invalidate() {
  std::lock_guard lock(mutex_);
  stale_ = true;
}

// ---------------------------------------------------------------------------

ApiClient::ApiClient(const KubeConfig& config, ApiClientOptions options)
    : server_(config.server), options_(std::move(options)),
      token_(config.token, config.tokenFile, options_.tokenRefresh) {}

ApiClient::~ApiClient() = default;

Result<std::unique_ptr<ApiClient>> ApiClient::create(const KubeConfig& config, ApiClientOptions options) {
  auto parsed = parseServer(config.server);
  if (!parsed) return parsed.error();
  std::unique_ptr<ApiClient> client(new ApiClient(config, std::move(options)));
  client->scheme_ = parsed->scheme;
  client->host_ = parsed->host;
  client->port_ = parsed->port;
  client->pathPrefix_ = parsed->pathPrefix;
  if (client->scheme_ == "http") return client;

  static std::once_flag sslInit;
  std::call_once(sslInit, [] { Poco::Net::initializeSSL(); });
  try {
    using Poco::Net::Context;
    Context::Params params;
    params.verificationMode = config.insecureSkipTlsVerify ? Context::VERIFY_NONE : Context::VERIFY_RELAXED;
    params.loadDefaultCAs = config.caPem.empty() && !config.insecureSkipTlsVerify;
    params.cipherList = "DEFAULT";
    Context::Ptr context = new Context(Context::TLS_CLIENT_USE, params);
    // Verification is OpenSSL's own (chain + host name or IP address), not
    // Poco's: Poco matches only DNS names and skips the check for localhost.
    context->enableExtendedCertificateVerification(false);
    SSL_CTX* ctx = context->sslContext();
    // Poco asks SSL_read for at most 4 KB (its HTTP buffer); without read-ahead
    // OpenSSL then makes two read() calls per 16 KB record (header, body). With
    // it, one read() takes whatever has arrived, up to the buffer below: a
    // list of a gigabyte is read in far fewer system calls.
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, kTlsReadBuffer);
    if (config.insecureSkipTlsVerify) {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    } else {
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      if (!config.caPem.empty()) {
        if (Outcome ca = certs::addCaBundle(ctx, config.caPem); !ca) return ca.error();
      }
      const std::string& name = config.tlsServerName.empty() ? client->host_ : config.tlsServerName;
      if (Outcome verified = certs::verifyPeerName(ctx, name); !verified) return verified.error();
    }
    if (!config.clientCertPem.empty()) {
      if (Outcome cert = useClientCertificate(ctx, config.clientCertPem, config.clientKeyPem); !cert)
        return cert.error();
    }
    client->context_ = context;
  } catch (const Poco::Exception& e) {
    return Error{"TLS setup: " + e.displayText()};
  }
  return client;
}

// ---------------------------------------------------------------------------

Connection::Connection(ApiClient& client) : client_(client) {}
Connection::~Connection() = default;

void Connection::abort() {
  aborted_ = true;
  std::lock_guard lock(mutex_);
  if (session_) {
    // shutdown(2), not close: the reading thread still owns the descriptor and
    // the TLS state; its blocked read returns and it cleans up itself.
    try {
      auto fd = session_->socket().impl()->sockfd();
      if (fd != POCO_INVALID_SOCKET) ::shutdown(fd, SHUT_RDWR);
    } catch (...) {
    }
  }
}

void Connection::reset() {
  std::lock_guard lock(mutex_);
  session_.reset();
  used_ = false;
}

Result<ApiResponse> Connection::get(const std::string& target, const BodySink& onBody,
                                    std::chrono::milliseconds receiveTimeout) {
  bool sent = false;
  bool reused = used_;
  const std::string get = Poco::Net::HTTPRequest::HTTP_GET;
  auto result = attempt(get, target, "", "", onBody, receiveTimeout, sent);
  // A keep-alive connection the server closed meanwhile fails before any
  // answer: GET is idempotent, so try once more on a fresh connection.
  if (!result && reused && !sent && !aborted_) result = attempt(get, target, "", "", onBody, receiveTimeout, sent);
  return result;
}

Result<ApiResponse> Connection::send(const std::string& method, const std::string& target,
                                     const std::string& contentType, const std::string& body,
                                     std::chrono::milliseconds receiveTimeout) {
  std::string collected;
  auto collect = [&](std::string_view piece) -> Outcome {
    collected.append(piece);
    return {};
  };
  bool sent = false;
  bool reused = used_;
  auto result = attempt(method, target, contentType, body, collect, receiveTimeout, sent);
  if (!result && reused && !sent && !aborted_) {
    collected.clear();
    result = attempt(method, target, contentType, body, collect, receiveTimeout, sent);
  }
  if (result && result->status == 200) result->body = std::move(collected);
  return result;
}

void Connection::openSession(std::chrono::milliseconds receiveTimeout) {
  std::lock_guard lock(mutex_);
  if (!session_) {
    if (client_.context_)
      session_ = std::make_unique<WriteOnceSession<Poco::Net::HTTPSClientSession>>(client_.host_, client_.port_,
                                                                                   client_.context_);
    else
      session_ = std::make_unique<WriteOnceSession<Poco::Net::HTTPClientSession>>(client_.host_, client_.port_);
    session_->setKeepAlive(true);
    used_ = false;
  }
  auto toSpan = [](std::chrono::milliseconds ms) { return Poco::Timespan(ms.count() * 1000); };
  session_->setTimeout(toSpan(client_.options_.connectTimeout), toSpan(std::chrono::seconds(30)),
                       toSpan(receiveTimeout));
}

void Connection::writeRequest(const std::string& method, const std::string& target, const std::string& contentType,
                              const std::string& requestBody, const std::string& token) {
  Poco::Net::HTTPRequest request(method, client_.pathPrefix_ + target, Poco::Net::HTTPMessage::HTTP_1_1);
  request.setKeepAlive(true);
  request.set("Accept", "application/json");
  request.set("User-Agent", client_.options_.userAgent);
  if (!token.empty()) request.set("Authorization", "Bearer " + token);
  if (!requestBody.empty()) {
    request.setContentType(contentType);
    request.setContentLength(static_cast<std::streamsize>(requestBody.size()));
  }
  GatheredWrites& writes = gatheredWrites(*session_);
  writes.gather();
  std::ostream& requestStream = session_->sendRequest(request);
  if (!requestBody.empty()) requestStream.write(requestBody.data(), static_cast<std::streamsize>(requestBody.size()));
  requestStream.flush();
  writes.sendGathered();
  if (aborted_) throw Poco::Net::NetException("aborted");
}

Result<ApiResponse> Connection::readAnswer(const BodySink& onBody, bool& answered) {
  Poco::Net::HTTPResponse response;
  std::istream& body = session_->receiveResponse(response);
  answered = true;
  used_ = true;
  ApiResponse out;
  out.status = static_cast<int>(response.getStatus());
  out.retryAfter = response.get("Retry-After", "");

  // The body is handed over from the stream's own buffer, where Poco put
  // what it decrypted, piece by piece: an istream::read would copy every
  // byte once more first (a list body is about a gigabyte at 150,000 pods).
  std::streambuf& in = *body.rdbuf();
  bool lost = false;
  while (true) {
    int next = std::char_traits<char>::eof();
    try {
      next = in.sgetc();  // refills the buffer when it is empty
    } catch (const std::exception&) {
      lost = true;  // as istream::peek would set badbit
      break;
    }
    if (next == std::char_traits<char>::eof()) break;
    const std::string_view piece = BufferedPiece::of(in);
    if (out.status == 200) {
      if (Outcome r = onBody(piece); !r) {
        reset();  // the rest of the body is unread: this connection cannot be reused
        return r.error();
      }
    } else if (out.body.size() < kMaxErrorBody) {
      out.body.append(piece.substr(0, kMaxErrorBody - out.body.size()));
    }
    BufferedPiece::consume(in, piece.size());
  }
  if (lost || body.bad() || aborted_) throw Poco::Net::NetException(aborted_ ? "aborted" : "connection lost mid-body");
  if (!response.getKeepAlive()) reset();
  return out;
}

Result<ApiResponse> Connection::attempt(const std::string& method, const std::string& target,
                                        const std::string& contentType, const std::string& requestBody,
                                        const BodySink& onBody, std::chrono::milliseconds receiveTimeout,
                                        bool& sent) {
  sent = false;
  const std::string url = client_.server_ + target;
  if (aborted_) return Error{method + " " + url + ": aborted"};
  try {
    openSession(receiveTimeout);
    writeRequest(method, target, contentType, requestBody, client_.token_.current());
    return readAnswer(onBody, sent);
  } catch (const Poco::Exception& e) {
    reset();
    return Error{method + " " + url + ": " + e.displayText()};
  } catch (const std::exception& e) {
    reset();
    return Error{method + " " + url + ": " + e.what()};
  }
}

Connection::Pipelined Connection::sendPipelined(const std::vector<ApiRequest>& requests,
                                                std::chrono::milliseconds receiveTimeout) {
  Pipelined out;
  std::string collected;
  auto collect = [&](std::string_view piece) -> Outcome {
    collected.append(piece);
    return {};
  };
  for (int round = 0; round < 2 && out.answers.empty() && !requests.empty(); ++round) {
    const bool reused = used_;
    out.error.clear();
    if (aborted_) {
      out.error = "aborted";
      return out;
    }
    try {
      openSession(receiveTimeout);
      const std::string token = client_.token_.current();
      for (const ApiRequest& r : requests) writeRequest(r.method, r.target, r.contentType, r.body, token);
      while (out.answers.size() < requests.size()) {
        collected.clear();
        const bool open = session_ != nullptr;
        if (!open) throw Poco::Net::NetException("the server closed the connection");
        bool answered = false;
        auto answer = readAnswer(collect, answered);
        if (!answer) throw Poco::Net::NetException(answer.error().message);
        if (answer->status == 200) answer->body = std::move(collected);
        out.answers.push_back(std::move(*answer));
      }
      return out;
    } catch (const Poco::Exception& e) {
      reset();
      out.error = client_.server_ + ": " + e.displayText();
    } catch (const std::exception& e) {
      reset();
      out.error = client_.server_ + ": " + e.what();
    }
    if (!reused) break;  // a fresh connection failed: no second try
  }
  return out;
}

}  // namespace placer::kube
