#pragma once
// YAML configuration files read into the JSON value a Kubernetes tool would
// see: libyaml (the C parser go-yaml is ported from) parses, and plain scalars
// resolve as go-yaml v2 resolves them for sigs.k8s.io/yaml (booleans of YAML
// 1.1, Go's integer forms, floats, null); keys become JSON strings; the first
// document is used. Anchors, aliases, tags and merge keys, duplicate keys, and
// infinities or NaN (which JSON cannot carry) are refused. Every error names
// its line and column ("line L, column C: ...").

#include <string_view>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer {

Result<nlohmann::json> parseYaml(std::string_view text);

}  // namespace placer
