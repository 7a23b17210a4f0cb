#include "webhook/json_text.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace placer {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0.
size_t utf8Sequence(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto continuation = [&](size_t k) { return k < s.size() && (at(k) & 0xC0) == 0x80; };
  unsigned char c = at(i);
  if (c >= 0xC2 && c <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    unsigned char c1 = at(i + 1);
    if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
    if (c == 0xED && c1 >= 0xA0) return 0; // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    unsigned char c1 = at(i + 1);
    if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
    if (c == 0xF4 && c1 >= 0x90) return 0; // above U+10FFFF
    return 4;
  }
  return 0;
}

// Bytes written as they are: printable ASCII but the quote and the backslash.
constexpr auto kPlain = [] {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return table;
}();

bool plain(unsigned char c) { return kPlain[c]; }

// Whether none of 8 bytes needs escaping (all printable ASCII, no quote or
// backslash), tested on the word at once. Each term is the classic "has a
// byte less than n" / "has a zero byte" test: exact as a yes/no.
bool plainWord(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto hasZeroByte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t control = (w - kOnes * 0x20) & ~w & kHigh;
  return ((w & kHigh) | control | hasZeroByte(w ^ (kOnes * '"')) | hasZeroByte(w ^ (kOnes * '\\'))) == 0;
}

// The end of the run of plain bytes starting at `from`: 8 bytes at a time,
// then byte by byte.
size_t plainRunEnd(std::string_view text, size_t from) {
  auto word = [&](size_t at) {
    uint64_t w;
    std::memcpy(&w, text.data() + at, 8);
    return w;
  };
  size_t i = from;
  for (; i + 8 <= text.size(); i += 8)
    if (!plainWord(word(i))) break;
  // A tail shorter than a word: the last word, overlapping bytes already seen plain.
  if (i + 8 > text.size() && i < text.size() && text.size() - from >= 8 && plainWord(word(text.size() - 8)))
    return text.size();
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(text.data());
  while (i < text.size() && plain(bytes[i])) ++i;
  return i;
}

}  // namespace

bool plainJsonString(std::string_view text) { return plainRunEnd(text, 0) == text.size(); }

void appendJsonString(std::string& out, std::string_view text) {
  size_t i = plainRunEnd(text, 0);
  if (i == text.size()) {  // the usual name or reason: nothing to escape
    out += '"';
    out.append(text);
    out += '"';
    return;
  }
  out += '"';
  out.append(text.data(), i);
  while (i < text.size()) {
    size_t run = plainRunEnd(text, i);
    out.append(text.data() + i, run - i);
    i = run;
    if (i >= text.size()) break;
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
      continue;
    }
    if (size_t n = utf8Sequence(text, i)) {
      out.append(text.data() + i, n);
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out += '"';
}

void appendJsonInt(std::string& out, int64_t value) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace placer
