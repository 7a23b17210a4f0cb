#pragma once
// A small HTTP/1.1 client over TLS (OpenSSL), verifying the server against a
// PEM CA bundle and a host name or IP address the way Go's crypto/tls does.
// The fake API server calls admission webhooks with it, and tests talk to the
// fake server with it, including reading watch streams chunk by chunk.
//
// Thread-safety: one connection is used by one thread at a time.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scoring/result.h"

namespace placer::fakeapi {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  int status = 0;
  Headers headers;
  std::string body;
  // Case-insensitive lookup; "" when absent.
  std::string header(const std::string& name) const;
};

class HttpsConnection {
 public:
  // Connects to host:port and completes the handshake. The certificate must
  // chain to caPem and carry serverName (default: host) as a DNS or IP SAN.
  static Result<std::unique_ptr<HttpsConnection>> open(const std::string& host, int port, const std::string& caPem,
                                                       std::chrono::milliseconds timeout,
                                                       const std::string& serverName = "");
  ~HttpsConnection();
  HttpsConnection(const HttpsConnection&) = delete;
  HttpsConnection& operator=(const HttpsConnection&) = delete;

  // Per read/write timeout.
  void setTimeout(std::chrono::milliseconds timeout);
  // The negotiated cipher suite, as OpenSSL names it ("TLS_AES_128_GCM_SHA256").
  std::string cipher() const;

  Outcome sendRequest(const std::string& method, const std::string& target, const Headers& headers,
                      const std::string& body = "");
  // Status line and headers; the body stays unread.
  Result<HttpResponse> readHead();
  // The whole body of the response whose head was read (Content-Length,
  // chunked, or until close).
  Result<std::string> readBody(const HttpResponse& head);
  // Head and body.
  Result<HttpResponse> readResponse();
  // For chunked streams: the next chunk's data, or nullopt after the final
  // (zero-length) chunk. A connection cut mid-chunk is an error.
  Result<std::optional<std::string>> readChunk();

  class Impl;

 private:
  explicit HttpsConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection. url: "https://host:port/path?query".
Result<HttpResponse> httpsRequest(const std::string& method, const std::string& url, const std::string& caPem,
                                  const Headers& headers, const std::string& body,
                                  std::chrono::milliseconds timeout);

struct ParsedUrl {
  std::string host;
  int port = 443;
  std::string target;  // path and query, at least "/"
};
Result<ParsedUrl> parseHttpsUrl(const std::string& url);

}  // namespace placer::fakeapi
