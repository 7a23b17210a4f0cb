// Log lines as an operator reads them: JSON by default, key=value text on
// request, and nothing below the chosen level.
#include <cstdio>
#include <functional>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "webhook/json_text.h"
#include "webhook/log.h"

namespace placer {
namespace {

// What `write` logs, without the leading timestamp.
std::string logged(const std::function<void()>& write, LogFormat format, LogLevel minimum = LogLevel::Info) {
  std::FILE* f = std::tmpfile();
  setLogOutput(f);
  setLogFormat(format);
  setLogLevel(minimum);
  write();
  setLogOutput(stderr);
  setLogFormat(LogFormat::Json);
  setLogLevel(LogLevel::Info);
  std::string text(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

TEST(LogTest, TextLinesAreTimestampLevelMessageAndKeyValues) {
  std::string line = logged(
      [] {
        logEvent(LogLevel::Warning, "list failed",
                 {{"resource", "pods"}, {"status", 503}, {"error", "connection refused"}, {"synced", false}});
      },
      LogFormat::Text);
  EXPECT_TRUE(std::regex_match(line, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warning list failed )"
                                                R"(error="connection refused" resource=pods status=503 synced=false\n)")))
      << line;
}

TEST(LogTest, TextQuotesValuesThatWouldReadAmbiguously) {
  std::string line = logged(
      [] { logEvent(LogLevel::Info, "x", {{"a", "k=v"}, {"b", ""}, {"c", "say \"hi\""}, {"d", "tab\there"}}); },
      LogFormat::Text);
  EXPECT_NE(line.find(R"(a="k=v" b="" c="say \"hi\"" d="tab\there")"), std::string::npos) << line;
}

TEST(LogTest, PrewrittenFieldsReadTheSameInText) {
  std::string fields;
  fields += "\"node\":";
  appendJsonString(fields, "node-a");
  fields += ",\"score\":";
  appendJsonInt(fields, 71);
  auto a = logged([&] { logEventFields(LogLevel::Info, "admission", fields); }, LogFormat::Text);
  auto b = logged([] { logEvent(LogLevel::Info, "admission", {{"node", "node-a"}, {"score", 71}}); }, LogFormat::Text);
  EXPECT_EQ(a.substr(a.find(' ')), b.substr(b.find(' ')));
  EXPECT_NE(a.find("info    admission node=node-a score=71\n"), std::string::npos) << a;
}

TEST(LogTest, LinesBelowTheLevelAreDropped) {
  auto write = [] {
    logEvent(LogLevel::Debug, "d");
    logEvent(LogLevel::Info, "i");
    logEventFields(LogLevel::Info, "i2", "");
    logEvent(LogLevel::Warning, "w");
    logEvent(LogLevel::Error, "e");
  };
  std::string warning = logged(write, LogFormat::Json, LogLevel::Warning);
  EXPECT_EQ(warning.find("\"msg\":\"i"), std::string::npos) << warning;
  EXPECT_NE(warning.find("\"msg\":\"w\""), std::string::npos);
  EXPECT_NE(warning.find("\"msg\":\"e\""), std::string::npos);
  std::string debug = logged(write, LogFormat::Json, LogLevel::Debug);
  EXPECT_NE(debug.find("\"level\":\"debug\",\"msg\":\"d\""), std::string::npos) << debug;
  EXPECT_EQ(logged(write, LogFormat::Json).find("\"msg\":\"d\""), std::string::npos);
}

TEST(LogTest, LevelAndFormatNames) {
  EXPECT_EQ(parseLogLevel("debug"), LogLevel::Debug);
  EXPECT_EQ(parseLogLevel("warn"), LogLevel::Warning);
  EXPECT_EQ(parseLogLevel("error"), LogLevel::Error);
  EXPECT_FALSE(parseLogLevel("verbose"));
  EXPECT_EQ(parseLogFormat("text"), LogFormat::Text);
  EXPECT_FALSE(parseLogFormat("xml"));
}

}  // namespace
}  // namespace placer
