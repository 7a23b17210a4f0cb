#pragma once
// Small helpers shared by the in-tree plugins: checking the shape of a
// pluginConfig "args" object, Go's strconv.ParseInt for label values (the
// parser kube-scheduler uses for Gt/Lt and that LabelPriority reuses), and
// apimachinery's label-syntax validation with its exact messages.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Go's %q of a string (quotes; \" and \\ escaped; control bytes as \n, \t, \xNN).
std::string goQuote(std::string_view s);

// validation.IsQualifiedName (label keys, resource names): empty when valid,
// otherwise apimachinery's reasons, word for word.
std::vector<std::string> qualifiedNameErrors(std::string_view key);
// validation.IsValidLabelValue: empty when valid, otherwise the reasons.
std::vector<std::string> labelValueErrors(std::string_view value);

}  // namespace placer
