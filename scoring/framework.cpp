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

void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::span<NodeScore> scores) {
  int64_t maxCount = 0;
  for (const NodeScore& s : scores) maxCount = std::max(maxCount, s.score);
  if (maxCount == 0) {
    if (reverse)
      for (NodeScore& s : scores) s.score = maxPriority;
    return;
  }
  for (NodeScore& s : scores) {
    s.score = maxPriority * s.score / maxCount;
    if (reverse) s.score = maxPriority - s.score;
  }
}

}  // namespace placer
