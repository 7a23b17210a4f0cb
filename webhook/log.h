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
// The same line with its fields already written as JSON members
// ("\"key\":value,..." without braces; webhook/json_text.h), for the hot path
// of one line per admission. Empty `fields`: none.
void logEventFields(LogLevel level, std::string_view message, std::string_view fields);

// nullptr silences logging (benchmarks); the default is stderr.
void setLogOutput(std::FILE* out);

}  // namespace placer
