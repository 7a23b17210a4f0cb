#pragma once
// Integer quotients through a floating-point division, for the normalising
// loops that divide every node's score by the same maximum: one division
// instruction that vectorises instead of an integer division per node.

#include <cstdint>

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

}  // namespace placer
