#pragma once
// Small helpers shared by the in-tree plugins: checking the shape of a
// pluginConfig "args" object, and Go's strconv.ParseInt for label values
// (the parser kube-scheduler uses for Gt/Lt and that LabelPriority reuses).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "scoring/result.h"

namespace placer {

// Accepts null (no args) or an object whose keys are all in `allowed`;
// "apiVersion" and "kind" are always allowed and ignored. Errors name the
// field as "<argsType>.<key>", or "<argsType>" when args is not an object.
Outcome checkArgsObject(const nlohmann::json& args, std::string_view argsType,
                        std::initializer_list<std::string_view> allowed);

// strconv.ParseInt(text, 10, 64): an optional sign and one or more decimal
// digits, nothing else; nullopt on syntax errors and on int64 overflow.
std::optional<int64_t> parseGoInt64(std::string_view text);

}  // namespace placer
