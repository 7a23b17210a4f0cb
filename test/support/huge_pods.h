#pragma once
// Huge but legal pods, with issue 15's sizes: requests of tens of thousands of
// distinct extended resources, written as text. Building them as a JSON
// document would cost the test or loadgen more time and memory than placer
// takes to answer them, and blur what is measured of placer.
//
// A document is written with a placeholder member (kResourcesPlaceholder: "")
// in the requests map, dumped, and withResources() puts the resources in its
// place. JSON libraries write an object's keys sorted; the placeholder's key
// sorts last, so it is always preceded by a comma.

#include <cstdio>
#include <string>
#include <string_view>

namespace placer::testing {

inline constexpr const char* kResourcesPlaceholder = "~resources~";

// `dumped` with the placeholder member replaced by `count` members
// "<prefix>NNNNNNN":"<value>" (seven digits). With a prefix and value of 21
// bytes together, each member takes 35 bytes: the 1.4 MB for 40,000
// resources, 2.8 MB for 80,000.
inline std::string withResources(std::string dumped, std::string_view prefix, int count, std::string_view value) {
  std::string members;
  members.reserve(static_cast<size_t>(count) * (prefix.size() + value.size() + 13));
  char digits[16];
  for (int i = 0; i < count; ++i) {
    std::snprintf(digits, sizeof digits, "%07d", i);
    members += ",\"";
    members += prefix;
    members += digits;
    members += "\":\"";
    members += value;
    members += '"';
  }
  const std::string mark = ",\"" + std::string(kResourcesPlaceholder) + "\":\"\"";
  const size_t at = dumped.find(mark);
  if (at != std::string::npos) dumped.replace(at, mark.size(), members);
  return dumped;
}

}  // namespace placer::testing
