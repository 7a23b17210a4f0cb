#include "scoring/base64.h"

#include <cstdint>

namespace placer {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int symbolValue(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

Error illegalAt(size_t offset) { return Error{"illegal base64 data at input byte " + std::to_string(offset)}; }

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])); };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  const uint32_t n = (byte(i) << 16) | (rest == 2 ? byte(i + 1) << 8 : 0);
  out += kAlphabet[(n >> 18) & 63];
  out += kAlphabet[(n >> 12) & 63];
  out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
  out += '=';
  return out;
}

// Go's decodeQuantum, quantum by quantum, with its error offsets.
Result<std::string> base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  auto lineBreak = [&](size_t at) { return text[at] == '\r' || text[at] == '\n'; };
  size_t si = 0;
  while (si < text.size()) {
    uint32_t quantum = 0;
    int j = 0;  // symbols of this quantum
    size_t padding = 0;
    for (; j < 4; ++j) {
      if (si == text.size()) {
        if (j == 0) return out;
        return illegalAt(si - static_cast<size_t>(j));  // an unfinished quantum (padding is required)
      }
      const char c = text[si++];
      if (const int v = symbolValue(c); v >= 0) {
        quantum = (quantum << 6) | static_cast<uint32_t>(v);
        continue;
      }
      if (c == '\r' || c == '\n') {
        --j;
        continue;
      }
      if (c != '=' || j < 2) return illegalAt(si - 1);
      if (j == 2) {
        // "==" is expected: the second "=" after any line breaks.
        while (si < text.size() && lineBreak(si)) ++si;
        if (si == text.size()) return illegalAt(text.size());
        if (text[si] != '=') return illegalAt(si - 1);
        ++si;
      }
      padding = 4 - j;
      while (si < text.size() && lineBreak(si)) ++si;
      if (si < text.size()) return illegalAt(si);  // data after the padding
      break;
    }
    quantum <<= 6 * padding;
    out += static_cast<char>((quantum >> 16) & 0xff);
    if (padding < 2) out += static_cast<char>((quantum >> 8) & 0xff);
    if (padding < 1) out += static_cast<char>(quantum & 0xff);
    if (padding > 0) return out;
  }
  return out;
}

}  // namespace placer
