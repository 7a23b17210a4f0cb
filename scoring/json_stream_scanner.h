#pragma once
// Splits a JSON body into the values a decoder wants, without holding the
// body whole: it is fed in arbitrary pieces (as a socket or a file delivers
// them) and hands out each complete value it is asked for, as bytes, for the
// caller to parse (JsonParser) and decode. Everything else is skipped as it
// streams by. The one splitter of the program: API list pages and watch
// streams (webhook/kube/list_watch.cpp) and snapshot files (snapshot.cpp).
//
//  - Mode::TopLevelValues: every top-level value of a watch stream
//    (concatenated JSON objects; newlines are not relied upon).
//  - Mode::ListItems: each element of a list's "items" array, and the list's
//    "metadata".
//  - Mode::Members: each member of one top-level object with its key; the
//    value of a member named in `splitKeys` that is an array is handed out
//    element by element instead (a snapshot's nodes and pods).
//
// Only the structure is checked here (strings closed, brackets balanced, what
// the mode needs at the top); a value's own syntax is checked when it is parsed.
// Thread-safety: none; one scanner per stream.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/result.h"

namespace placer {

// Byte classes for walking JSON text without building it (also used by
// webhook/kube/json_stream.cpp's filtered parser).
namespace json_bytes {
inline bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline bool endsScalar(char c) { return isSpace(c) || c == ',' || c == '}' || c == ']' || c == ':'; }
// The bytes that matter when stepping over a value: strings (whose bodies
// memchr skips) and brackets. Everything else (numbers, literals, ':', ',',
// whitespace) is passed over by one table look-up a byte.
struct StructuralTable {
  bool at[256] = {};
  constexpr StructuralTable() {
    for (char c : {'"', '{', '}', '[', ']'}) at[static_cast<unsigned char>(c)] = true;
  }
};
inline constexpr StructuralTable kStructural;
// The first structural byte at or after i (n when none).
inline size_t nextStructural(const char* p, size_t i, size_t n) {
  while (i < n && !kStructural.at[static_cast<unsigned char>(p[i])]) ++i;
  return i;
}
}  // namespace json_bytes

class JsonStreamScanner {
 public:
  enum class Mode { TopLevelValues, ListItems, Members };
  // `bytes` is valid only during the call.
  using Sink = std::function<Outcome(std::string_view bytes)>;
  // Mode::Members: the member's key as sent (escapes not decoded) and the
  // value's (or element's) bytes; both valid only during the call.
  using MemberSink = std::function<Outcome(std::string_view key, std::string_view bytes)>;

  // TopLevelValues or ListItems. In ListItems mode onMetadata receives the
  // list's "metadata" object.
  JsonStreamScanner(Mode mode, Sink onValue, Sink onMetadata = nullptr);
  // Members. A key may appear once: a value handed out cannot be taken back,
  // so "the last one wins" cannot apply, and a repeated key is an error.
  JsonStreamScanner(std::vector<std::string> splitKeys, MemberSink onMember, MemberSink onElement);

  // Feeds the next piece of the body. An error (malformed JSON, or one returned
  // by a sink) ends the stream: later calls return it again. Errors name the
  // byte offset ("offset 17: ..."), a sink's error included.
  Outcome feed(std::string_view piece);
  // The body ended: an error if a value is incomplete (or, for a list or an
  // object of members, if the top-level object is not closed).
  Outcome finish();

  uint64_t bytesSeen() const { return offset_; }
  // onValue's values (list items, watch events) that span pieces are gathered
  // at the end of *buffer instead of in the scanner's own buffer, so that a
  // sink that keeps them there (a batch of list items) copies nothing again:
  // such a value reaches the sink as the last bytes of *buffer. A value
  // within one piece still reaches it as a view of the piece. The caller
  // only appends to *buffer, or clears it between values; buffer outlives
  // the scanner's feeding.
  void gatherValuesInto(std::string* buffer) { valueBuffer_ = buffer; }

 private:
  enum class Target : uint8_t { Value, Metadata, Member, Element };
  bool objectMode() const { return mode_ != Mode::TopLevelValues; }
  Outcome fail(std::string message, uint64_t at);
  // Decides what the value starting with `c` at depth_ is: captured (for which
  // sink) or skipped. False on a structural error (already recorded).
  bool startValue(char c, uint64_t at, bool& capture);
  // A member's key at depth 1 is complete (Members mode: checked for repeats).
  bool keyRead(uint64_t at);
  // The captured value ends at piece[to - 1]; it began at piece[from] or in an earlier piece.
  Outcome emitFrom(const char* piece, size_t from, size_t to, uint64_t at);
  // Inside a captured object or array (depth_ > captureDepth_, outside a
  // string): steps over p[i, n) 64 bytes at a time, keeping inString_,
  // escape_ and depth_, and stops at the bracket that closes the captured
  // value (not consumed) or where fewer than 64 bytes are left. Returns the
  // new position. A block without backslashes costs a few mask operations
  // (strings from the quotes' running parity), not a step per string.
  size_t skipCapturedBlocks(const char* p, size_t i, size_t n);

  Mode mode_;
  Sink onValue_;
  Sink onMetadata_;
  std::vector<std::string> splitKeys_;
  MemberSink onMember_;
  MemberSink onElement_;
  std::vector<std::string> keysSeen_;  // Members mode

  // Lexical state.
  uint64_t offset_ = 0;
  int depth_ = 0;
  bool inString_ = false;
  bool escape_ = false;
  bool inScalar_ = false;  // inside a number / literal outside captured containers
  // Capture of the current value of interest.
  bool capturing_ = false;
  int captureDepth_ = 0;  // depth at which the captured value started
  Target captureTarget_ = Target::Value;
  std::string capture_;
  std::string* valueBuffer_ = nullptr;  // gatherValuesInto
  bool spanning_ = false;    // the captured value began in an earlier piece
  size_t spanFrom_ = 0;      // where it begins in captureBuffer()
  std::string& captureBuffer() {
    return captureTarget_ == Target::Value && valueBuffer_ ? *valueBuffer_ : capture_;
  }
  // ListItems / Members: the key at depth 1 and whether the next string at depth 1 is a key.
  bool expectKey_ = false;
  bool readingKey_ = false;
  std::string key_;
  bool inItems_ = false;  // inside the array being split (depth 2 values are its elements)
  bool topClosed_ = false;
  bool failed_ = false;
  std::string error_;
};

}  // namespace placer
