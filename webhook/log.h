#pragma once
// Structured logs: one JSON object per line on stderr (or wherever
// setLogOutput() points), {"ts": RFC 3339 UTC, "level", "msg", ...fields}.
//
// Thread-safety: logEvent() may be called from any thread; each line is
// written with one call, so lines never interleave. setLogOutput() is meant
// for start-up and tests.

#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

namespace placer {

enum class LogLevel { Debug, Info, Warning, Error };

void logEvent(LogLevel level, std::string_view message, const nlohmann::json& fields = nlohmann::json::object());

// nullptr silences logging (benchmarks); the default is stderr.
void setLogOutput(std::FILE* out);

}  // namespace placer
