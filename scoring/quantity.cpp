#include "scoring/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace placer {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
using u128 = unsigned __int128;

// A quantity split the way apimachinery's parseQuantityString splits it:
// sign, integer digits, fraction digits and the suffix (validated later).
struct QuantityParts {
  bool positive = true;
  std::string_view integer;   // leading zeros stripped; may be empty
  std::string_view fraction;  // digits after '.', may be empty
  std::string_view suffix;
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isSuffixLetter(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

Error syntaxError(std::string_view text) {
  std::string m = "invalid quantity \"";
  m.append(text).append("\"");
  return Error{std::move(m)};
}

// Mirrors parseQuantityString: "[+-]digits[.digits](suffix letters)[+-]digits".
Result<QuantityParts> split(std::string_view s) {
  QuantityParts parts;
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    parts.positive = s[0] == '+';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) return parts;  // only zeros (or only a sign): zero
  size_t start = pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  parts.integer = s.substr(start, pos - start);
  if (pos < end && s[pos] == '.') {
    ++pos;
    start = pos;
    while (pos < end && isDigit(s[pos])) ++pos;
    parts.fraction = s.substr(start, pos - start);
  }
  const size_t suffixStart = pos;
  while (pos < end && isSuffixLetter(s[pos])) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos != end) return syntaxError(s);
  parts.suffix = s.substr(suffixStart);
  return parts;
}

// How a suffix scales the number: value * 10^decimalExponent * 2^binaryExponent.
struct Scale {
  int64_t decimalExponent = 0;
  int binaryExponent = 0;
};

bool interpretSuffix(std::string_view suffix, Scale& scale) {
  struct Entry {
    std::string_view name;
    int decimal;
    int binary;
  };
  static constexpr Entry kTable[] = {
      {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
      {"G", 9, 0},  {"T", 12, 0}, {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
  };
  for (const Entry& e : kTable) {
    if (suffix == e.name) {
      scale.decimalExponent = e.decimal;
      scale.binaryExponent = e.binary;
      return true;
    }
  }
  // A decimal exponent: "e3", "E-3", "e+6". Upstream parses it with
  // strconv.ParseInt(.., 64) and then narrows to int32; so do we.
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view digits = suffix.substr(1);
    bool negative = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty()) return false;
    uint64_t magnitude = 0;
    for (char c : digits) {
      if (!isDigit(c)) return false;
      if (magnitude > (static_cast<uint64_t>(kInt64Max) + 1 - (c - '0')) / 10) return false;
      magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
    }
    if (!negative && magnitude > static_cast<uint64_t>(kInt64Max)) return false;
    const uint64_t bits = negative ? (~magnitude + 1) : magnitude;
    scale.decimalExponent = static_cast<int32_t>(static_cast<uint32_t>(bits));
    return true;
  }
  return false;
}

enum class Fit { Ok, Overflow };

// ceil(|digits| * 10^exp10 * 2^exp2), all exact. `digits` has no leading zeros
// and is non-empty. On overflow of int64 returns Fit::Overflow.
Fit ceilMagnitude(std::string_view digits, int64_t exp10, int exp2, int64_t& out) {
  // Drop trailing zeros into the exponent so that the mantissa stays short.
  while (digits.size() > 1 && digits.back() == '0') {
    digits.remove_suffix(1);
    ++exp10;
  }
  const int64_t len = static_cast<int64_t>(digits.size());
  // The value is at least 10^(len-1+exp10); 10^19 > int64 max.
  if (len - 1 + exp10 >= 19) return Fit::Overflow;

  if (len <= 19) {
    u128 n = 0;
    for (char c : digits) n = n * 10 + static_cast<unsigned>(c - '0');
    n <<= exp2;  // < 10^19 * 2^60 < 2^124
    if (exp10 >= 0) {
      for (int64_t i = 0; i < exp10; ++i) {
        n *= 10;
        if (n > static_cast<u128>(kInt64Max)) return Fit::Overflow;
      }
    } else if (exp10 < -38) {
      n = n == 0 ? 0 : 1;  // n < 10^38, so the value is in (0, 1)
    } else {
      u128 divisor = 1;
      for (int64_t i = 0; i < -exp10; ++i) divisor *= 10;
      const bool remainder = n % divisor != 0;
      n = n / divisor + (remainder ? 1 : 0);
    }
    if (n > static_cast<u128>(kInt64Max)) return Fit::Overflow;
    out = static_cast<int64_t>(n);
    return Fit::Ok;
  }

  // A long mantissa (more than 19 significant digits, necessarily with a
  // negative exponent): exact decimal arithmetic on a digit vector.
  std::vector<uint8_t> d;  // little-endian decimal digits of digits * 2^exp2
  d.reserve(digits.size() + 20);
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) d.push_back(static_cast<uint8_t>(*it - '0'));
  for (int i = 0; i < exp2; ++i) {
    unsigned carry = 0;
    for (uint8_t& digit : d) {
      const unsigned v = digit * 2u + carry;
      digit = static_cast<uint8_t>(v % 10);
      carry = v / 10;
    }
    if (carry) d.push_back(static_cast<uint8_t>(carry));
  }
  // exp10 < 0 here; the lowest -exp10 digits are the fraction.
  const size_t fractionDigits = static_cast<size_t>(-exp10);
  bool fractional = false;
  for (size_t i = 0; i < fractionDigits && i < d.size(); ++i) fractional |= d[i] != 0;
  u128 n = 0;
  for (size_t i = d.size(); i > fractionDigits; --i) {
    n = n * 10 + d[i - 1];
    if (n > static_cast<u128>(kInt64Max)) return Fit::Overflow;
  }
  if (fractional) ++n;
  if (n > static_cast<u128>(kInt64Max)) return Fit::Overflow;
  out = static_cast<int64_t>(n);
  return Fit::Ok;
}

// scaleExponent: 0 for Value(), 3 for MilliValue().
Result<int64_t> parseScaled(std::string_view text, int scaleExponent) {
  if (text.empty()) return syntaxError(text);
  auto parts = split(text);
  if (!parts) return parts.error();
  Scale scale;
  if (!interpretSuffix(parts->suffix, scale)) return syntaxError(text);

  // The significant digits: integer then fraction, leading zeros dropped.
  std::string digits;
  digits.reserve(parts->integer.size() + parts->fraction.size());
  digits.append(parts->integer).append(parts->fraction);
  size_t firstNonZero = digits.find_first_not_of('0');
  if (firstNonZero == std::string::npos) return int64_t{0};
  const std::string_view significant = std::string_view(digits).substr(firstNonZero);

  const int64_t exp10 = scale.decimalExponent - static_cast<int64_t>(parts->fraction.size()) + scaleExponent;
  int64_t magnitude = 0;
  if (ceilMagnitude(significant, exp10, scale.binaryExponent, magnitude) == Fit::Overflow) {
    // apimachinery caps binary-SI quantities at 2^63-1 when parsing; the
    // capped amount still overflows once scaled to thousandths.
    const bool binary = scale.binaryExponent > 0;
    if (!binary || scaleExponent != 0) {
      std::string m = "quantity \"";
      m.append(text).append("\" does not fit in a 64-bit integer");
      return Error{std::move(m)};
    }
    magnitude = kInt64Max;
  }
  return parts->positive ? magnitude : -magnitude;
}

}  // namespace

Result<int64_t> parseQuantity(std::string_view text) { return parseScaled(text, 0); }

Result<int64_t> parseMilliQuantity(std::string_view text) { return parseScaled(text, 3); }

}  // namespace placer
