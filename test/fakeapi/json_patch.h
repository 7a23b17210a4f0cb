#pragma once
// The API server's JSONPatch (evanphx/json-patch, as the mutating webhook
// dispatcher applies a webhook's patch), on JSON values; a patch's bytes are
// Go's base64 (scoring/base64.h). No sockets: the fuzz build (test/fuzz) links it too.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "scoring/base64.h"
#include "scoring/result.h"

namespace placer::fakeapi {

// RFC 6902 on a copy of doc; the error says which operation failed.
Result<nlohmann::json> applyJsonPatch(const nlohmann::json& doc, const nlohmann::json& patch);

}  // namespace placer::fakeapi
