#include "scoring/framework.h"

#include "scoring/exact_quotient.h"

namespace placer {

std::string_view toString(Code code) {
  switch (code) {
    case Code::Success: return "Success";
    case Code::Unschedulable: return "Unschedulable";
    case Code::UnschedulableAndUnresolvable: return "UnschedulableAndUnresolvable";
    case Code::Error: return "Error";
    case Code::Skip: return "Skip";
  }
  return "Unknown";
}

void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::span<int64_t> scores) {
  int64_t maxCount = 0;
  int64_t minCount = 0;
  for (int64_t s : scores) {
    maxCount = std::max(maxCount, s);
    minCount = std::min(minCount, s);
  }
  if (maxCount == 0) {
    if (reverse)
      for (int64_t& s : scores) s = maxPriority;
    return;
  }
  if (minCount >= 0 && maxPriority >= 0 && maxPriority <= kMaxNodeScore && maxCount < kExactQuotientBound / kMaxNodeScore) {
    // The same quotients without an integer division per node.
    auto normalized = [&](int64_t s) { return reverse ? maxPriority - exactQuotient(maxPriority * s, maxCount)
                                                      : exactQuotient(maxPriority * s, maxCount); };
    if (mapScoresThroughTable(scores, minCount, maxCount, normalized)) return;
    for (int64_t& s : scores) {
      s = exactQuotient(maxPriority * s, maxCount);
      if (reverse) s = maxPriority - s;
    }
    return;
  }
  for (int64_t& s : scores) {
    s = maxPriority * s / maxCount;
    if (reverse) s = maxPriority - s;
  }
}

}  // namespace placer
