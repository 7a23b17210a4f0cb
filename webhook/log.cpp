#include "webhook/log.h"

#include <atomic>
#include <chrono>
#include <ctime>

#include "webhook/json_text.h"

namespace placer {
namespace {

std::atomic<std::FILE*> g_output{stderr};

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

}  // namespace

void setLogOutput(std::FILE* out) { g_output.store(out); }

void logEvent(LogLevel level, std::string_view message, const nlohmann::json& fields) {
  std::FILE* out = g_output.load();
  if (out == nullptr) return;
  nlohmann::ordered_json line;
  line["ts"] = timestamp();
  line["level"] = levelName(level);
  line["msg"] = message;
  if (fields.is_object())
    for (const auto& [k, v] : fields.items()) line[k] = v;
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), out);
}

void logEventFields(LogLevel level, std::string_view message, std::string_view fields) {
  std::FILE* out = g_output.load();
  if (out == nullptr) return;
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
  std::fwrite(text.data(), 1, text.size(), out);
}

}  // namespace placer
