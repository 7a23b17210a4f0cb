#include "scoring/framework.h"

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
  for (int64_t s : scores) maxCount = std::max(maxCount, s);
  if (maxCount == 0) {
    if (reverse)
      for (int64_t& s : scores) s = maxPriority;
    return;
  }
  for (int64_t& s : scores) {
    s = maxPriority * s / maxCount;
    if (reverse) s = maxPriority - s;
  }
}

}  // namespace placer
