#pragma once
// The API server's JSONPatch (evanphx/json-patch, as the mutating webhook
// dispatcher applies a webhook's patch) and Go's base64.StdEncoding, on JSON
// values. No sockets: the fuzz build (test/fuzz) links it too.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::fakeapi {

// RFC 6902 on a copy of doc; the error says which operation failed.
Result<nlohmann::json> applyJsonPatch(const nlohmann::json& doc, const nlohmann::json& patch);
Result<std::string> base64Decode(std::string_view text);
std::string base64Encode(std::string_view bytes);

}  // namespace placer::fakeapi
