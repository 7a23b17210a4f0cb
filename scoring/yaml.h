#pragma once
// A YAML 1.2 reader for configuration files, producing the JSON value a
// Kubernetes tool would see (sigs.k8s.io/yaml converts YAML to JSON the same
// way): block and flow mappings and sequences, plain/single/double-quoted and
// literal/folded block scalars, comments, "---" document separators (the first
// document is used). Anchors and tags are refused with a clear error.

#include <string_view>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer {

Result<nlohmann::json> parseYaml(std::string_view text);

}  // namespace placer
