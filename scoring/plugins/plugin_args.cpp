#include "scoring/plugins/plugin_args.h"

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace placer {

Outcome checkArgsObject(const nlohmann::json& args, std::string_view argsType,
                        std::initializer_list<std::string_view> allowed) {
  if (args.is_null()) return {};
  if (!args.is_object()) return fieldError(argsType, "must be an object");
  for (const auto& [key, value] : args.items()) {
    if (key == "apiVersion" || key == "kind") continue;
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) return fieldError(std::string(argsType) + "." + key, "unknown field");
  }
  return {};
}

std::optional<int64_t> parseGoInt64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  if (text.front() == '+' || text.front() == '-') {
    negative = text.front() == '-';
    text.remove_prefix(1);
    if (text.empty()) return std::nullopt;
  }
  // Accumulate as a negative number so that INT64_MIN is representable.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    int digit = c - '0';
    if (value < (kMin + digit) / 10) return std::nullopt;
    value = value * 10 - digit;
  }
  if (!negative) {
    if (value == kMin) return std::nullopt;
    value = -value;
  }
  return value;
}

}  // namespace placer
