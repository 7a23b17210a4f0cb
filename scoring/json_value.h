#pragma once
// JSON parsed with simdjson's DOM, for decoding Kubernetes objects straight
// from the bytes the API server sent (model.h's decodePod / decodeNode / ...
// overloads for JsonValue): no intermediate nlohmann document is built and
// nothing is kept but the decoded object. The decoders are model.cpp's,
// written once for both representations (model_decode.h).
//
// Thread-safety: none. One JsonParser per thread; a JsonValue is valid until
// its parser parses the next document or is destroyed.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "scoring/result.h"

namespace placer {

class JsonParser;

// One value of a parsed document (a 16-byte view, copied freely).
class JsonValue {
 public:
  bool isObject() const;
  // An object's member (the last one of that key, as Go and nlohmann read
  // duplicates); nullopt when absent, JSON null, or this is not an object.
  std::optional<JsonValue> member(std::string_view key) const;
  // The string, or nullopt when this is not a string.
  std::optional<std::string_view> string() const;
  // The boolean, or nullopt when this is not true or false.
  std::optional<bool> boolean() const;
  // The number when it is an integer that fits int64_t, else nullopt.
  std::optional<int64_t> integer() const;
  // Minified JSON text of this value (for messages).
  std::string text() const;

 private:
  friend class JsonParser;
  friend struct JsonValueAccess;  // json_value.cpp
  JsonValue() = default;
  alignas(8) unsigned char element_[16];  // a simdjson::dom::element
};

class JsonParser {
 public:
  // Bytes simdjson may read past the end of a document.
  static constexpr size_t kPadding = 64;

  JsonParser();
  ~JsonParser();
  JsonParser(const JsonParser&) = delete;
  JsonParser& operator=(const JsonParser&) = delete;

  // Parses one complete JSON value; the previous document's values become
  // invalid. With `padded`, the caller promises that kPadding bytes after
  // `bytes` are readable (e.g. spare capacity of its buffer) and they are not
  // copied. The whole text is validated (UTF-8, syntax); an error says why it
  // is malformed. Never throws.
  Result<JsonValue> parse(std::string_view bytes, bool padded = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The parser for one document of `bytes` bytes: this thread's, its buffers
// reused between documents, or for a document of 64 KiB or more `own`
// (emplaced here), freed with the caller's scope, so that no thread keeps a
// huge document's buffers for the next small one. A value from this thread's
// parser is valid until the thread's next document: use it before the next call.
JsonParser& threadParserFor(size_t bytes, std::optional<JsonParser>& own);

}  // namespace placer
