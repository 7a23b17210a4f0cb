#include "test/fakeapi/test_client.h"

namespace placer::fakeapi {

std::optional<std::string> JsonObjectSplitter::next() {
  for (; scanned_ < buffer_.size(); ++scanned_) {
    const char c = buffer_[scanned_];
    if (inString_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') inString_ = false;
      continue;
    }
    if (c == '"') {
      inString_ = true;
    } else if (c == '{' || c == '[') {
      if (depth_++ == 0) start_ = scanned_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        std::string object = buffer_.substr(start_, scanned_ + 1 - start_);
        buffer_.erase(0, scanned_ + 1);
        scanned_ = 0;
        start_ = std::string::npos;
        return object;
      }
    }
  }
  return std::nullopt;
}

Result<std::optional<nlohmann::json>> WatchStream::next() {
  for (;;) {
    if (auto text = splitter_.next()) {
      try {
        return std::optional<nlohmann::json>(nlohmann::json::parse(*text));
      } catch (const std::exception& e) {
        return Error{std::string("watch event is not JSON: ") + e.what()};
      }
    }
    if (ended_) return std::optional<nlohmann::json>{};
    auto chunk = connection_->readChunk();
    if (!chunk) return chunk.error();
    if (!chunk->has_value()) {
      ended_ = true;
      continue;
    }
    splitter_.feed(**chunk);
  }
}

Result<HttpResponse> TestClient::request(const std::string& method, const std::string& target,
                                         const std::string& body, const std::string& contentType) const {
  Headers headers = {{"Accept", "application/json"}, {"Connection", "close"}};
  if (!token_.empty()) headers.emplace_back("Authorization", "Bearer " + token_);
  if (!body.empty()) headers.emplace_back("Content-Type", contentType);
  return httpsRequest(method, "https://127.0.0.1:" + std::to_string(port_) + target, ca_, headers, body,
                      std::chrono::seconds(10));
}

Result<nlohmann::json> TestClient::getJson(const std::string& target, int* status) const {
  auto r = get(target);
  if (!r) return r.error();
  if (status) *status = r->status;
  try {
    return nlohmann::json::parse(r->body);
  } catch (const std::exception& e) {
    return Error{"GET " + target + ": " + std::to_string(r->status) + " body is not JSON: " + r->body};
  }
}

Result<WatchStream> TestClient::watch(const std::string& target, std::chrono::milliseconds readTimeout) const {
  auto conn = HttpsConnection::open("127.0.0.1", port_, ca_, std::chrono::seconds(5));
  if (!conn) return conn.error();
  Headers headers = {{"Accept", "application/json"}, {"Host", "127.0.0.1:" + std::to_string(port_)}};
  if (!token_.empty()) headers.emplace_back("Authorization", "Bearer " + token_);
  if (auto o = (*conn)->sendRequest("GET", target, headers); !o) return o.error();
  (*conn)->setTimeout(readTimeout);
  auto head = (*conn)->readHead();
  if (!head) return head.error();
  return WatchStream(std::move(*conn), std::move(*head));
}

}  // namespace placer::fakeapi
