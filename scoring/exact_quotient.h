#pragma once
// Integer quotients through a floating-point division, for the normalising
// loops that divide every node's score by the same maximum: one division
// instruction that vectorises instead of an integer division per node.

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace placer {

// exactQuotient(n, d) == n / d (truncated, as Go and C++ divide integers)
// for 0 <= n < kExactQuotientBound and 1 <= d < kExactQuotientBound: both
// convert exactly, and the correctly rounded quotient is off by less than
// (n / d) * 2^-53 < 1 / d, less than its distance to the next integer
// whenever it is not one, so the truncation never crosses an integer.
inline constexpr int64_t kExactQuotientBound = int64_t{1} << 53;

inline int64_t exactQuotient(int64_t numerator, int64_t divisor) {
  return static_cast<int64_t>(static_cast<double>(numerator) / static_cast<double>(divisor));
}

// Normalising maps each score through one function of it; when every score
// lies in [lo, hi] and that range is small beside their number (replicas
// spread over a few counts), f is evaluated once per value of the range and
// each score is a table read: the same results, f's division done a few
// times instead of once per node. Returns false, changing nothing, when the
// range does not qualify; the caller then maps them itself.
// This form reads the scores from `in` and writes the mapped ones to `out`
// (out may be in; out is left unchanged on false).
template <class F>
bool mapScoresThroughTable(std::span<const int64_t> in, std::span<int64_t> out, int64_t lo, int64_t hi, F&& f) {
  constexpr int64_t kMaxTable = 256;
  if (hi < lo || hi - lo >= kMaxTable || static_cast<size_t>(hi - lo) * 4 >= in.size()) return false;
  int64_t table[kMaxTable];
  for (int64_t v = lo; v <= hi; ++v) table[v - lo] = f(v);
  for (size_t j = 0; j < in.size(); ++j) out[j] = table[in[j] - lo];
  return true;
}
template <class F>
bool mapScoresThroughTable(std::span<int64_t> scores, int64_t lo, int64_t hi, F&& f) {
  return mapScoresThroughTable(std::span<const int64_t>(scores), scores, lo, hi, std::forward<F>(f));
}

}  // namespace placer
