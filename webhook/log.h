#pragma once
// Structured logs on stderr (or wherever setLogOutput() points), one line per
// event, in one of two formats:
//  - json (the default): {"ts": RFC 3339 UTC, "level", "msg", ...fields};
//  - text, for people at a terminal:
//      2026-11-25T13:47:15.123Z info  admission node=general-1 pod=default/web-0
//    fields as key=value, a value quoted (JSON string syntax) when it holds a
//    space, a quote, '=' or a control character.
// Lines below the minimum level (setLogLevel, default info) are dropped.
//
// Thread-safety: logEvent() may be called from any thread; each line is
// written with one call, so lines never interleave. setLogOutput(),
// setLogLevel() and setLogFormat() are meant for start-up and tests.

#include <cstdio>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace placer {

enum class LogLevel { Debug, Info, Warning, Error };
enum class LogFormat { Json, Text };

void logEvent(LogLevel level, std::string_view message, const nlohmann::json& fields = nlohmann::json::object());
// The same line with its fields already written as JSON members
// ("\"key\":value,..." without braces; webhook/json_text.h), for the hot path
// of one line per admission. Empty `fields`: none.
void logEventFields(LogLevel level, std::string_view message, std::string_view fields);

// nullptr silences logging (benchmarks); the default is stderr.
void setLogOutput(std::FILE* out);
void setLogLevel(LogLevel minimum);
void setLogFormat(LogFormat format);
bool logEnabled(LogLevel level);

// "debug" | "info" | "warning" (or "warn") | "error"; nothing for anything else.
std::optional<LogLevel> parseLogLevel(std::string_view name);
// "json" | "text".
std::optional<LogFormat> parseLogFormat(std::string_view name);

}  // namespace placer
