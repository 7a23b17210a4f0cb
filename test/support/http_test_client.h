#pragma once
// A small blocking HTTP/1.1 client over TLS (OpenSSL, verifying the server
// against a given CA and host name) or plain TCP, for tests and load
// generators. One connection, kept alive across requests; it can also write
// raw bytes, to send what a well-behaved client never would.
//
// Thread-safety: one client per thread.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scoring/result.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace placer::testing {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool keepAlive = true;
  std::string header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  // Set: TLS, verifying the server certificate against this CA for serverName.
  std::optional<std::string> caPem;
  std::string serverName = "localhost";
  // 0: the library's range. Otherwise e.g. TLS1_1_VERSION to try an old protocol.
  int maxTlsVersion = 0;
  int timeoutMs = 10000;
};

class HttpTestClient {
 public:
  static Result<std::unique_ptr<HttpTestClient>> connect(const ClientOptions& options);
  ~HttpTestClient();

  // Sends a request with a Content-Length body and reads the response.
  Result<HttpReply> request(std::string_view method, std::string_view target, std::string_view body = {},
                            const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Writes bytes as they are, then reads one response.
  Result<HttpReply> sendRaw(std::string_view bytes);
  Outcome writeRaw(std::string_view bytes);
  Result<HttpReply> readReply();

  // The server's certificate (PEM) of this connection; empty over plain TCP.
  std::string peerCertificatePem() const;
  // The negotiated protocol, e.g. "TLSv1.3".
  std::string protocol() const;

 private:
  HttpTestClient() = default;
  Result<size_t> readSome(char* buf, size_t n);
  Outcome fill();

  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string host_;
  std::string buffer_;  // read but not consumed
};

}  // namespace placer::testing
