#include "webhook/log.h"

#include <atomic>
#include <chrono>
#include <ctime>

#include "webhook/json_text.h"

namespace placer {
namespace {

std::atomic<std::FILE*> g_output{stderr};
std::atomic<LogLevel> g_level{LogLevel::Info};
std::atomic<LogFormat> g_format{LogFormat::Json};

std::string_view levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
  }
  return "info";
}

std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return buf;
}

bool needsQuotes(std::string_view text) {
  if (text.empty()) return true;
  for (unsigned char c : text)
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  return false;
}

void appendTextValue(std::string& out, const nlohmann::json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (needsQuotes(s))
      appendJsonString(out, s);
    else
      out += s;
  } else {
    out += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

// "<ts> <level> <msg> k=v k=v\n"
std::string textLine(LogLevel level, std::string_view message, const nlohmann::json& fields) {
  std::string text = timestamp();
  text += ' ';
  std::string_view name = levelName(level);
  text += name;
  text.append(name.size() < 7 ? 8 - name.size() : 1, ' ');
  text += message;
  if (fields.is_object()) {
    for (const auto& [k, v] : fields.items()) {
      text += ' ';
      text += k;
      text += '=';
      appendTextValue(text, v);
    }
  }
  text += '\n';
  return text;
}

void write(const std::string& text, std::FILE* out) { std::fwrite(text.data(), 1, text.size(), out); }

}  // namespace

void setLogOutput(std::FILE* out) { g_output.store(out); }
void setLogLevel(LogLevel minimum) { g_level.store(minimum); }
void setLogFormat(LogFormat format) { g_format.store(format); }
bool logEnabled(LogLevel level) { return g_output.load() != nullptr && level >= g_level.load(); }

std::optional<LogLevel> parseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::Debug;
  if (name == "info") return LogLevel::Info;
  if (name == "warning" || name == "warn") return LogLevel::Warning;
  if (name == "error") return LogLevel::Error;
  return std::nullopt;
}

std::optional<LogFormat> parseLogFormat(std::string_view name) {
  if (name == "json") return LogFormat::Json;
  if (name == "text") return LogFormat::Text;
  return std::nullopt;
}

void logEvent(LogLevel level, std::string_view message, const nlohmann::json& fields) {
  if (!logEnabled(level)) return;
  std::FILE* out = g_output.load();
  if (out == nullptr) return;
  if (g_format.load() == LogFormat::Text) return write(textLine(level, message, fields), out);
  nlohmann::ordered_json line;
  line["ts"] = timestamp();
  line["level"] = levelName(level);
  line["msg"] = message;
  if (fields.is_object())
    for (const auto& [k, v] : fields.items()) line[k] = v;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  write(text, out);
}

void logEventFields(LogLevel level, std::string_view message, std::string_view fields) {
  if (!logEnabled(level)) return;
  std::FILE* out = g_output.load();
  if (out == nullptr) return;
  if (g_format.load() == LogFormat::Text) {
    // Not the hot path's format: parse the members back.
    std::string object = "{";
    object.append(fields).append("}");
    nlohmann::json parsed = nlohmann::json::parse(object, nullptr, false);
    return write(textLine(level, message, parsed.is_discarded() ? nlohmann::json::object() : parsed), out);
  }
  std::string text;
  text.reserve(64 + message.size() + fields.size());
  text += "{\"ts\":\"";
  text += timestamp();
  text += "\",\"level\":\"";
  text += levelName(level);
  text += "\",\"msg\":";
  appendJsonString(text, message);
  if (!fields.empty()) {
    text += ',';
    text += fields;
  }
  text += "}\n";
  write(text, out);
}

}  // namespace placer
