#include "webhook/kube/json_stream.h"

#include <cstring>

#include "scoring/json_stream_scanner.h"

namespace placer::kube {
namespace {

using json_bytes::endsScalar;
using json_bytes::isSpace;
using json_bytes::nextStructural;

constexpr int kMaxDepth = 64;  // parseWhole refuses deeper values (no stack exhaustion in any later walk)

// Splits one JSON value into its members or elements without building it.
class RawParser {
 public:
  explicit RawParser(std::string_view bytes) : b_(bytes) {}

  Result<std::vector<RawMember>> members() {
    std::vector<RawMember> out;
    if (Outcome r = membersInto(out); !r) return r.error();
    return out;
  }
  Outcome membersInto(std::vector<RawMember>& out) {
    out.clear();
    skipWs();
    if (pos_ >= b_.size() || b_[pos_] != '{') return fail("expected a JSON object"), Outcome(error());
    ++pos_;
    skipWs();
    if (pos_ < b_.size() && b_[pos_] == '}') {
      ++pos_;
      return finished();
    }
    while (true) {
      skipWs();
      RawMember& m = out.emplace_back();
      if (!string(m.key)) return error();
      skipWs();
      if (pos_ >= b_.size() || b_[pos_] != ':') return fail("expected ':'"), Outcome(error());
      ++pos_;
      skipWs();
      size_t start = pos_;
      if (!skipValue()) return error();
      m.value = b_.substr(start, pos_ - start);
      skipWs();
      if (pos_ >= b_.size()) return fail("unterminated object"), Outcome(error());
      if (b_[pos_] == '}') {
        ++pos_;
        return finished();
      }
      if (b_[pos_] != ',') return fail("expected ',' or '}'"), Outcome(error());
      ++pos_;
    }
  }

  Result<std::vector<std::string_view>> rawElements() {
    std::vector<std::string_view> out;
    if (Outcome r = rawElementsInto(out); !r) return r.error();
    return out;
  }
  // An array's elements, each as its bytes.
  Outcome rawElementsInto(std::vector<std::string_view>& out) {
    out.clear();
    skipWs();
    if (pos_ >= b_.size() || b_[pos_] != '[') return fail("expected an array"), Outcome(error());
    ++pos_;
    skipWs();
    if (pos_ < b_.size() && b_[pos_] == ']') {
      ++pos_;
      return finished();
    }
    while (true) {
      skipWs();
      size_t start = pos_;
      if (!skipValue()) return error();
      out.push_back(b_.substr(start, pos_ - start));
      skipWs();
      if (pos_ >= b_.size()) return fail("unterminated array"), Outcome(error());
      if (b_[pos_] == ']') {
        ++pos_;
        return finished();
      }
      if (b_[pos_] != ',') return fail("expected ',' or ']'"), Outcome(error());
      ++pos_;
    }
  }
  Result<std::string> wholeString() {
    std::string out;
    if (!string(out)) return error();
    if (pos_ != b_.size()) return fail("unexpected data after the string"), error();
    return out;
  }

 private:
  Outcome finished() {
    skipWs();
    if (pos_ != b_.size()) return fail("unexpected data after the value"), Outcome(error());
    return {};
  }

  Error error() const { return Error{"invalid JSON at offset " + std::to_string(errorAt_) + ": " + message_}; }
  bool fail(const char* message) {
    if (message_.empty()) {
      message_ = message;
      errorAt_ = pos_;
    }
    return false;
  }
  void skipWs() {
    while (pos_ < b_.size() && isSpace(b_[pos_])) ++pos_;
  }
  // pos_ at the opening quote; leaves pos_ after the closing quote.
  bool skipString() {
    ++pos_;
    while (true) {
      const char* start = b_.data() + pos_;
      size_t left = b_.size() - pos_;
      // Fast path: find the next quote, then check it is not escaped.
      const void* q = std::memchr(start, '"', left);
      if (!q) return pos_ = b_.size(), fail("unterminated string");
      size_t quote = static_cast<const char*>(q) - b_.data();
      size_t backslashes = 0;
      while (quote - backslashes > pos_ && b_[quote - 1 - backslashes] == '\\') ++backslashes;
      pos_ = quote + 1;
      if (backslashes % 2 == 0) return true;
    }
  }
  // Steps over one value of any kind without building it.
  bool skipValue() {
    if (pos_ >= b_.size()) return fail("unexpected end");
    char c = b_[pos_];
    if (c == '"') return skipString();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (true) {
        pos_ = nextStructural(b_.data(), pos_, b_.size());
        if (pos_ >= b_.size()) break;
        char d = b_[pos_];
        if (d == '"') {
          if (!skipString()) return false;
          continue;
        }
        if (d == '{' || d == '[') {
          ++depth;
        } else if (d == '}' || d == ']') {
          if (--depth == 0) {
            ++pos_;
            return true;
          }
        }
        ++pos_;
      }
      return fail("unterminated object or array");
    }
    size_t start = pos_;
    while (pos_ < b_.size() && !endsScalar(b_[pos_])) ++pos_;
    if (pos_ == start) return fail("expected a value");
    return true;
  }
  // A string at pos_, unescaped. Escapes are rare in Kubernetes objects: they
  // take nlohmann's decoder (\uXXXX, surrogate pairs).
  bool string(std::string& out) {
    if (pos_ >= b_.size() || b_[pos_] != '"') return fail("expected a string");
    size_t start = pos_;
    if (!skipString()) return false;
    std::string_view raw = b_.substr(start + 1, pos_ - start - 2);
    if (raw.find('\\') == std::string_view::npos) {
      out.assign(raw);
      return true;
    }
    auto decoded = nlohmann::json::parse(b_.begin() + start, b_.begin() + pos_, nullptr, false);
    if (!decoded.is_string()) return pos_ = start, fail("malformed string");
    out = decoded.get<std::string>();
    return true;
  }

  std::string_view b_;
  size_t pos_ = 0;
  std::string message_;
  size_t errorAt_ = 0;
};

}  // namespace

Result<nlohmann::json> parseWhole(std::string_view bytes) {
  // nlohmann's parser keeps its own stack (no recursion); the callback stops
  // it at the first value nested deeper than kMaxDepth.
  struct TooDeep {};
  auto limit = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) throw TooDeep{};
    return true;
  };
  try {
    return nlohmann::json::parse(bytes, limit);
  } catch (const TooDeep&) {
    return Error{"invalid JSON: nested more than " + std::to_string(kMaxDepth) + " levels deep"};
  } catch (const nlohmann::json::exception& e) {
    return Error{std::string("invalid JSON: ") + e.what()};
  }
}

Result<std::vector<RawMember>> rawObjectMembers(std::string_view bytes) { return RawParser(bytes).members(); }

Result<std::vector<std::string_view>> rawArrayElements(std::string_view bytes) {
  return RawParser(bytes).rawElements();
}

Outcome rawObjectMembers(std::string_view bytes, std::vector<RawMember>& out) {
  return RawParser(bytes).membersInto(out);
}

Outcome rawArrayElements(std::string_view bytes, std::vector<std::string_view>& out) {
  return RawParser(bytes).rawElementsInto(out);
}

Result<std::string> unescapeJsonString(std::string_view quoted) { return RawParser(quoted).wholeString(); }

}  // namespace placer::kube
