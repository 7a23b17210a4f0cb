#include "scoring/json_stream_scanner.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace placer {

using json_bytes::endsScalar;
using json_bytes::isSpace;
using json_bytes::nextStructural;

JsonStreamScanner::JsonStreamScanner(Mode mode, Sink onValue, Sink onMetadata)
    : mode_(mode), onValue_(std::move(onValue)), onMetadata_(std::move(onMetadata)) {
  if (mode == Mode::Members) std::abort();  // Members has its own constructor: a programming error
}

JsonStreamScanner::JsonStreamScanner(std::vector<std::string> splitKeys, MemberSink onMember, MemberSink onElement)
    : mode_(Mode::Members),
      splitKeys_(std::move(splitKeys)),
      onMember_(std::move(onMember)),
      onElement_(std::move(onElement)) {}

Outcome JsonStreamScanner::fail(std::string message, uint64_t at) {
  if (!failed_) {
    failed_ = true;
    error_ = "offset " + std::to_string(at) + ": " + std::move(message);
  }
  return Error{error_};
}

bool JsonStreamScanner::startValue(char c, uint64_t at, bool& capture) {
  capture = false;
  if (depth_ == 0) {
    if (c != '{') {
      const char* what = mode_ == Mode::TopLevelValues ? "expected an object at the top level"
                         : mode_ == Mode::ListItems    ? "a list must be an object"
                                                       : "expected an object";
      return (void)fail(what, at), false;
    }
    if (mode_ == Mode::TopLevelValues) {
      captureTarget_ = Target::Value;
      capture = true;
    }
    return true;
  }
  if (depth_ == 1 && mode_ == Mode::ListItems) {
    if (key_ == "items") {
      if (c == '[') inItems_ = true;
      else if (c != 'n') return (void)fail("items must be an array", at), false;
    } else if (key_ == "metadata" && c == '{') {
      captureTarget_ = Target::Metadata;
      capture = true;
    }
    return true;
  }
  if (depth_ == 1 && mode_ == Mode::Members) {
    if (c == '[' && std::find(splitKeys_.begin(), splitKeys_.end(), key_) != splitKeys_.end()) {
      inItems_ = true;
      return true;
    }
    captureTarget_ = Target::Member;
    capture = true;
    return true;
  }
  if (depth_ == 2 && inItems_) {
    if (mode_ == Mode::ListItems && c != '{') return (void)fail("items must be objects", at), false;
    captureTarget_ = mode_ == Mode::ListItems ? Target::Value : Target::Element;
    capture = true;
  }
  return true;
}

bool JsonStreamScanner::keyRead(uint64_t at) {
  if (mode_ != Mode::Members) return true;
  if (std::find(keysSeen_.begin(), keysSeen_.end(), key_) != keysSeen_.end())
    return (void)fail("\"" + key_ + "\" appears twice", at), false;
  keysSeen_.push_back(key_);
  return true;
}

Outcome JsonStreamScanner::emitFrom(const char* piece, size_t from, size_t to, uint64_t at) {
  capturing_ = false;
  std::string_view bytes;
  if (!spanning_) {
    // The whole value lies in this piece: hand it out without a copy.
    bytes = std::string_view(piece + from, to - from);
  } else {
    std::string& buffer = captureBuffer();
    buffer.append(piece + from, to - from);
    bytes = std::string_view(buffer).substr(spanFrom_);
  }
  spanning_ = false;
  Outcome result;
  switch (captureTarget_) {
    case Target::Value:
      if (onValue_) result = onValue_(bytes);
      break;
    case Target::Metadata:
      if (onMetadata_) result = onMetadata_(bytes);
      break;
    case Target::Member:
      if (onMember_) result = onMember_(key_, bytes);
      break;
    case Target::Element:
      if (onElement_) result = onElement_(key_, bytes);
      break;
  }
  capture_.clear();
  if (!result) return fail(result.error().message, at);
  return {};
}

namespace {

// Bit k of each mask is byte k of a 64-byte block.
struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

BlockMasks classify(const char* p) {
  BlockMasks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i lower = _mm_set1_epi8(0x20), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    // '[' | 0x20 == '{' and ']' | 0x20 == '}'; no other byte maps to either.
    const __m128i folded = _mm_or_si128(v, lower);
    const int shift = 16 * k;
    m.quote |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)))) << shift;
    m.backslash |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)))) << shift;
    m.open |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(folded, open)))) << shift;
    m.close |= uint64_t(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(folded, close)))) << shift;
  }
#else
  for (int k = 0; k < 64; ++k) {
    const char c = p[k];
    const uint64_t bit = uint64_t(1) << k;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (c == '{' || c == '[') m.open |= bit;
    if (c == '}' || c == ']') m.close |= bit;
  }
#endif
  return m;
}

// Bit k set when an odd number of bits at or below k are set in x.
uint64_t prefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

// The set bits of x (by halves, quarters, ...: the build targets no
// instruction for it).
int bitCount(uint64_t x) {
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

// The bytes of a block that a backslash escapes, as if every backslash were
// in a string (simdjson's find_escaped): a run of backslashes escapes the
// byte after it when the run is odd. `carry` says the block's first byte is
// escaped (the last block ended in an odd run) and is set for the next block.
uint64_t escapedBytes(uint64_t backslash, bool& carry) {
  constexpr uint64_t kEven = 0x5555555555555555ULL;  // bits 0, 2, 4, ...
  const uint64_t escapedFirst = carry ? 1 : 0;
  backslash &= ~escapedFirst;  // an escaped backslash escapes nothing
  const uint64_t followsBackslash = backslash << 1 | escapedFirst;
  // Runs starting on an odd bit, added to the backslashes, carry out of the
  // run: their sums keep set bits only past runs that started on even bits.
  const uint64_t oddStarts = backslash & ~kEven & ~followsBackslash;
  uint64_t evenStartSums = 0;
  carry = __builtin_add_overflow(oddStarts, backslash, &evenStartSums);
  const uint64_t invert = evenStartSums << 1;
  return (kEven ^ invert) & followsBackslash;
}

}  // namespace

size_t JsonStreamScanner::skipCapturedBlocks(const char* p, size_t i, size_t n) {
  while (n - i >= 64) {
    const BlockMasks m = classify(p + i);
    const uint64_t stringCarry = inString_ ? ~uint64_t(0) : 0;
    uint64_t quote = m.quote;
    bool escapeNext = false;
    uint64_t inString = 0;
    bool exact = true;
    if (m.backslash || escape_) {
      // A backslash escapes only in a string. Taking every backslash as an
      // escape gives the same strings as long as none is outside one (valid
      // JSON has none); when one is, this block goes byte by byte.
      escapeNext = escape_;
      quote &= ~escapedBytes(m.backslash, escapeNext);
      // Inside a string: after an odd number of quotes from the block's start
      // (the opening quote's own bit is set, the closing one's is not).
      inString = prefixXor(quote) ^ stringCarry;
      exact = (m.backslash & ~inString) == 0;
    } else {
      inString = prefixXor(quote) ^ stringCarry;
    }
    if (!exact) {
      for (size_t k = i; k < i + 64; ++k) {
        const char c = p[k];
        if (inString_) {
          if (escape_) escape_ = false;
          else if (c == '\\') escape_ = true;
          else if (c == '"') inString_ = false;
        } else if (c == '"') {
          inString_ = true;
        } else if (c == '{' || c == '[') {
          ++depth_;
        } else if (c == '}' || c == ']') {
          if (depth_ - 1 == captureDepth_) return k;
          --depth_;
        }
      }
      i += 64;
      continue;
    }
    const uint64_t open = m.open & ~inString, close = m.close & ~inString;
    const int closes = bitCount(close);
    if (depth_ - captureDepth_ > closes) {
      // The captured value cannot end in this block: only the depth moves.
      depth_ += bitCount(open) - closes;
    } else {
      uint64_t brackets = open | close;
      while (brackets) {
        const int k = std::countr_zero(brackets);
        brackets &= brackets - 1;
        if (open >> k & 1) {
          ++depth_;
        } else if (depth_ - 1 == captureDepth_) {
          inString_ = false;  // a bracket outside strings
          escape_ = false;
          return i + static_cast<size_t>(k);  // the captured value's last byte
        } else {
          --depth_;
        }
      }
    }
    inString_ = inString >> 63;
    escape_ = escapeNext;
    i += 64;
  }
  return i;
}

Outcome JsonStreamScanner::feed(std::string_view piece) {
  if (failed_) return Error{error_};
  const char* p = piece.data();
  const size_t n = piece.size();
  size_t captureFrom = 0;  // where the captured bytes of this piece begin
  size_t i = 0;

  // A value starts at piece[i] (depth before it: depth_): captured or not.
  auto begin = [&](char c) -> bool {
    bool capture = false;
    if (!startValue(c, offset_ + i, capture)) return false;
    if (capture) {
      capturing_ = true;
      captureDepth_ = depth_;
      captureFrom = i;
    }
    return true;
  };

  while (i < n) {
    if (inString_ && !readingKey_) {
      // A string body: memchr to the next quote; it ends the string unless an
      // odd run of backslashes precedes it. Position i is never itself escaped
      // here (a pending escape from the previous piece is consumed first), so
      // runs are counted back to i only.
      if (escape_) {
        escape_ = false;
        ++i;
        continue;
      }
      while (true) {
        const void* q = std::memchr(p + i, '"', n - i);
        size_t end = q ? static_cast<size_t>(static_cast<const char*>(q) - p) : n;
        size_t k = end;
        while (k > i && p[k - 1] == '\\') --k;
        const bool odd = (end - k) % 2 == 1;
        if (!q) {
          escape_ = odd;  // the next piece's first byte is escaped
          i = n;
          break;
        }
        i = end + 1;
        if (!odd) {
          inString_ = false;
          break;
        }
        if (i >= n) break;
      }
      // A captured string value (a member's or element's) ends with its quote.
      if (!inString_ && capturing_ && depth_ == captureDepth_)
        if (Outcome r = emitFrom(p, captureFrom, i, offset_ + i - 1); !r) return r;
      continue;
    }
    if (capturing_ && !inScalar_) {
      // Inside a captured object or array only strings and brackets matter;
      // the value's own syntax is checked when it is parsed.
      if (depth_ > captureDepth_) {
        i = skipCapturedBlocks(p, i, n);
        if (inString_) continue;
      }
      i = nextStructural(p, i, n);
      if (i >= n) break;
      const char c = p[i];
      if (c == '"') {
        inString_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (--depth_ == captureDepth_) {
        if (Outcome r = emitFrom(p, captureFrom, i + 1, offset_ + i); !r) return r;
      }
      ++i;
      continue;
    }
    if (inString_) {
      // A key at depth 1 of a list or an object of members.
      size_t j = i;
      if (escape_) {
        escape_ = false;
        ++j;
      }
      while (j < n && p[j] != '"' && p[j] != '\\') ++j;
      key_.append(p + i, j - i);
      if (j >= n) {
        i = n;
        break;
      }
      if (p[j] == '\\') {
        key_.push_back('\\');
        escape_ = true;
        i = j + 1;
        continue;
      }
      inString_ = false;
      readingKey_ = false;
      if (!keyRead(offset_ + j)) return Error{error_};
      i = j + 1;
      continue;
    }
    const char c = p[i];
    if (inScalar_) {
      if (!endsScalar(c)) {
        ++i;
        continue;
      }
      inScalar_ = false;
      // A captured number or literal ends at the byte after it.
      if (capturing_)
        if (Outcome r = emitFrom(p, captureFrom, i, offset_ + i); !r) return r;
    }
    if (isSpace(c)) {
      ++i;
      continue;
    }
    // Here nothing is being captured: a captured value is consumed above to its end.
    if (topClosed_ && objectMode())
      return fail(mode_ == Mode::ListItems ? "unexpected data after the list" : "unexpected data after the object",
                  offset_ + i);
    switch (c) {
      case '"':
        if (objectMode() && depth_ == 1 && expectKey_) {
          expectKey_ = false;
          readingKey_ = true;
          key_.clear();
        } else if (!begin(c)) {
          return Error{error_};
        }
        inString_ = true;
        break;
      case '{':
      case '[':
        if (!begin(c)) return Error{error_};
        ++depth_;
        if (depth_ == 1 && objectMode()) expectKey_ = true;
        break;
      case '}':
      case ']':
        if (depth_ == 0) return fail("unbalanced closing bracket", offset_ + i);
        --depth_;
        if (depth_ == 1 && c == ']') inItems_ = false;
        if (depth_ == 0 && objectMode()) topClosed_ = true;
        break;
      case ',':
        if (depth_ == 1 && objectMode()) expectKey_ = true;
        break;
      case ':':
        break;
      default:
        if (!begin(c)) return Error{error_};
        inScalar_ = true;
        break;
    }
    ++i;
  }
  if (capturing_) {
    std::string& buffer = captureBuffer();
    if (!spanning_) {
      spanning_ = true;
      spanFrom_ = buffer.size();
    }
    buffer.append(p + captureFrom, n - captureFrom);
  }
  offset_ += n;
  return {};
}

Outcome JsonStreamScanner::finish() {
  if (failed_) return Error{error_};
  if (inString_ || depth_ != 0 || capturing_) return fail("the body ended inside a value", offset_);
  if (mode_ == Mode::ListItems && !topClosed_) return fail("the body ended before the list", offset_);
  if (mode_ == Mode::Members && !topClosed_) return fail("the body ended before the object", offset_);
  return {};
}

}  // namespace placer
