#pragma once
// Parts of API server and extender bodies without building them whole: raw
// splitters of one object's members or one array's elements (a large
// extender request is split, and only the members it reads are parsed), and a
// whole-value parse with a nesting bound for the small bodies read as a DOM.
// Objects (pods, nodes, AdmissionReviews) are parsed with simdjson's DOM and
// decoded by model.h (scoring/json_value.h); bodies that stream in pieces
// (list pages, watch streams) are split by scoring/json_stream_scanner.h.
//
// Thread-safety: none; each call stands alone.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::kube {

// One complete JSON value as a nlohmann document, refusing values nested more
// than 64 levels deep. Errors say what is wrong and where. Never throws.
Result<nlohmann::json> parseWhole(std::string_view bytes);

// The raw structure of one complete JSON value, without building it: for
// decoders that pick a few members of a large document (extender requests of
// tens of MB) and parse or echo only those. Only the structure is checked
// (strings closed, brackets balanced, separators in place); a member's or
// element's value is validated when it is itself parsed. Never throws.
struct RawMember {
  std::string key;         // unescaped
  std::string_view value;  // the value's bytes as sent
};
Result<std::vector<RawMember>> rawObjectMembers(std::string_view bytes);  // an object, in document order
Result<std::vector<std::string_view>> rawArrayElements(std::string_view bytes);
// The same into a caller's vector (cleared first), so a loop reuses its capacity.
Outcome rawObjectMembers(std::string_view bytes, std::vector<RawMember>& out);
Outcome rawArrayElements(std::string_view bytes, std::vector<std::string_view>& out);

// A JSON string token (quotes included) unescaped; `quoted` must be one whole token.
Result<std::string> unescapeJsonString(std::string_view quoted);

}  // namespace placer::kube
