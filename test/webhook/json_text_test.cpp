// Hand-written JSON strings: the same bytes as nlohmann's dump where that is
// defined, and \ufffd for bytes that are not UTF-8 (where nlohmann throws).
#include "webhook/json_text.h"

#include <cstdio>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "webhook/log.h"

namespace placer {
namespace {

TEST(JsonTextTest, EscapesLikeNlohmann) {
  const std::vector<std::string> cases = {
      "",
      "node-a.eu-west-1.compute.internal",
      "quote \" backslash \\ slash /",
      "controls \b\f\n\r\t and \x01\x1f and DEL \x7f",
      "utf-8: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      std::string("nul \0 inside", 12),
  };
  for (const std::string& text : cases) {
    std::string out;
    appendJsonString(out, text);
    EXPECT_EQ(out, nlohmann::json(text).dump()) << text;
    EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), text);
  }
}

// The plain runs are found a word at a time: a byte to escape, or a
// non-ASCII one, at every position of strings of every length around the
// word size is still found.
TEST(JsonTextTest, EscapesFoundAtEveryPositionOfEveryLength) {
  for (size_t length = 1; length <= 40; ++length) {
    for (size_t at = 0; at < length; ++at) {
      for (std::string special : {"\"", "\\", "\n", "\x01", "\x1f", "\x7f", " ", "\xc3\xa9", "\xff"}) {
        std::string text(length, 'n');
        text.replace(at, 1, special);
        std::string out;
        appendJsonString(out, text);
        if (special != "\xff") {
          EXPECT_EQ(out, nlohmann::json(text).dump()) << length << " " << at;
        } else {
          EXPECT_EQ(out, "\"" + std::string(at, 'n') + "\\ufffd" + std::string(length - at - 1, 'n') + "\"") << length << " " << at;
        }
        const bool ascii = special == " " || special == "\x7f";
        EXPECT_EQ(plainJsonString(text), ascii) << length << " " << at;
        if (ascii) {
          EXPECT_EQ(out, "\"" + text + "\"");
        }
      }
    }
  }
}

TEST(JsonTextTest, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  struct Case {
    const char* name;
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"lone continuation", "a\x80z", R"("a\ufffdz")"},
      {"truncated sequence", "a\xe2\x82", R"("a\ufffd\ufffd")"},
      {"overlong", "\xc0\xaf", R"("\ufffd\ufffd")"},
      {"surrogate", "\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},
  };
  for (const Case& c : cases) {
    std::string out;
    appendJsonString(out, c.text);
    EXPECT_EQ(out, c.expected) << c.name;
    EXPECT_NO_THROW({
      const nlohmann::json parsed = nlohmann::json::parse(out);
      EXPECT_TRUE(parsed.is_string()) << c.name;
    }) << c.name;
  }
}

TEST(JsonTextTest, IntegersAsDecimal) {
  std::string out;
  appendJsonInt(out, 0);
  out += ',';
  appendJsonInt(out, -42);
  out += ',';
  appendJsonInt(out, INT64_MAX);
  EXPECT_EQ(out, "0,-42,9223372036854775807");
}

}  // namespace
}  // namespace placer

namespace placer {
namespace {

std::string logged(const std::function<void()>& write) {
  std::FILE* f = std::tmpfile();
  setLogOutput(f);
  write();
  setLogOutput(stderr);
  std::string text(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  size_t n = std::fread(text.data(), 1, text.size(), f);
  std::fclose(f);
  text.resize(n);
  return text.substr(text.find("\"level\""));  // past the timestamp
}

TEST(JsonTextTest, LogLineWithWrittenFieldsIsTheSameLine) {
  std::string fields;
  fields += "\"node\":";
  appendJsonString(fields, "node-a");
  fields += ",\"reason\":";
  appendJsonString(fields, "0/3 nodes are available: 3 Insufficient \"cpu\".");
  fields += ",\"score\":";
  appendJsonInt(fields, 71);
  EXPECT_EQ(logged([&] { logEventFields(LogLevel::Info, "admission", fields); }),
            logged([] {
              logEvent(LogLevel::Info, "admission",
                       {{"score", 71}, {"node", "node-a"}, {"reason", "0/3 nodes are available: 3 Insufficient \"cpu\"."}});
            }));
  EXPECT_EQ(logged([] { logEventFields(LogLevel::Warning, "x", ""); }),
            logged([] { logEvent(LogLevel::Warning, "x"); }));
}

}  // namespace
}  // namespace placer
