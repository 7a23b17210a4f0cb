#pragma once
// Writing JSON by hand into one growing string, for answers on the hot path
// (extender results for thousands of nodes, admission patches) where building
// an nlohmann DOM costs more than the answer is worth.
//
// Strings are escaped as nlohmann::json::dump() escapes them (\" \\ \b \f \n
// \r \t, other control characters as \u00xx, everything else as is), except
// that a byte sequence that is not UTF-8 is written as \ufffd (Go's
// encoding/json does the same; nlohmann would throw).

#include <cstdint>
#include <string>
#include <string_view>

namespace placer {

// Appends `text` as a JSON string token, quotes included.
void appendJsonString(std::string& out, std::string_view text);
// Whether `text` is printable ASCII without '"' or '\\': appendJsonString then
// writes it as it is between the quotes.
bool plainJsonString(std::string_view text);
void appendJsonInt(std::string& out, int64_t value);

}  // namespace placer
