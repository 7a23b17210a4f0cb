#pragma once
// A client for tests that talk to the fake API server over real TLS: plain
// requests, and watch streams read chunk by chunk and split into JSON objects
// without relying on newlines (as a real client must).
//
// Thread-safety: a TestClient may be shared (each call opens its own
// connection); a WatchStream belongs to one thread.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scoring/result.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/fakeapi/https_client.h"

namespace placer::fakeapi {

// Splits a byte stream of concatenated JSON values into complete top-level
// objects, whatever the chunk boundaries.
class JsonObjectSplitter {
 public:
  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete object's text, if one is buffered.
  std::optional<std::string> next();

 private:
  std::string buffer_;
  std::size_t scanned_ = 0;
  int depth_ = 0;
  bool inString_ = false;
  bool escaped_ = false;
  std::size_t start_ = std::string::npos;
};

class WatchStream {
 public:
  WatchStream(std::unique_ptr<HttpsConnection> connection, HttpResponse head)
      : connection_(std::move(connection)), head_(std::move(head)) {}
  const HttpResponse& head() const { return head_; }
  // The next event; nullopt when the server ended the stream cleanly (final
  // chunk). An error when the connection broke mid-stream or timed out.
  Result<std::optional<nlohmann::json>> next();

 private:
  std::unique_ptr<HttpsConnection> connection_;
  HttpResponse head_;
  JsonObjectSplitter splitter_;
  bool ended_ = false;
};

class TestClient {
 public:
  TestClient(const FakeApiServer& server, std::string token = "test-token")
      : port_(server.port()), ca_(server.caPem()), token_(std::move(token)) {}
  void setToken(std::string token) { token_ = std::move(token); }

  Result<HttpResponse> request(const std::string& method, const std::string& target, const std::string& body = "",
                               const std::string& contentType = "application/json") const;
  Result<HttpResponse> get(const std::string& target) const { return request("GET", target); }
  // GET and parse; a transport error or non-JSON body is an Error.
  Result<nlohmann::json> getJson(const std::string& target, int* status = nullptr) const;
  Result<WatchStream> watch(const std::string& target,
                            std::chrono::milliseconds readTimeout = std::chrono::seconds(5)) const;

 private:
  int port_;
  std::string ca_;
  std::string token_;
};

}  // namespace placer::fakeapi
