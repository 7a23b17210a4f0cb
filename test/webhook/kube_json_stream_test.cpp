// The raw splitters and the bounded whole-value parse of webhook/kube/json_stream.h,
// which the extender uses to read its large bodies. (Splitting streamed
// bodies: test/scoring/json_stream_scanner_test.cpp; objects parsed with
// simdjson and decoded: test/scoring/json_value_test.cpp.)
#include "webhook/kube/json_stream.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace placer::kube {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RawObjectMembersTest, SplitsAnObjectIntoItsMembersAsSent) {
  const std::string body = R"( {"Pod": {"metadata":{"name":"a}"}} , "NodeNames":["n1","n\"2"],"k\/x":null,"Nodes":{}} )";
  auto members = rawObjectMembers(body);
  ASSERT_TRUE(members) << members.error().message;
  ASSERT_EQ(members->size(), 4u);
  EXPECT_EQ((*members)[0].key, "Pod");
  EXPECT_EQ((*members)[0].value, R"({"metadata":{"name":"a}"}})");
  EXPECT_EQ((*members)[1].key, "NodeNames");
  EXPECT_EQ((*members)[1].value, R"(["n1","n\"2"])");
  EXPECT_EQ((*members)[2].key, "k/x") << "keys are unescaped";
  EXPECT_EQ((*members)[2].value, "null");
  EXPECT_EQ((*members)[3].value, "{}");
}

TEST(RawArrayElementsTest, SplitsAnArrayIntoItsElementsAsSent) {
  auto elements = rawArrayElements(R"([ {"a":[1,2]}, "x]", 3 ,true,null ])");
  ASSERT_TRUE(elements) << elements.error().message;
  EXPECT_THAT(*elements, ElementsAre(R"({"a":[1,2]})", R"("x]")", "3", "true", "null"));
  auto empty = rawArrayElements(" [ ] ");
  ASSERT_TRUE(empty) << empty.error().message;
  EXPECT_TRUE(empty->empty());
}

struct BrokenCase {
  const char* name;
  std::string input;
  const char* error;
};

class RawSplitErrorTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(RawSplitErrorTest, SaysWhereTheStructureIsBroken) {
  auto got = rawObjectMembers(GetParam().input);
  ASSERT_FALSE(got);
  EXPECT_THAT(got.error().message, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RawSplitErrorTest,
    ::testing::Values(BrokenCase{"Truncated", R"({"Pod":{"name":"a")", "invalid JSON at offset"},
                      BrokenCase{"MissingColon", R"({"Pod" {}})", "expected ':'"},
                      BrokenCase{"UnterminatedString", R"({"junk":"abc)", "unterminated string"},
                      BrokenCase{"TrailingData", R"({} {})", "unexpected data after the value"},
                      BrokenCase{"NotAnObject", "[1]", "expected a JSON object"},
                      BrokenCase{"Empty", "", "expected a JSON object"}),
    [](const auto& info) { return info.param.name; });

TEST(ParseWholeTest, KeepsEveryValue) {
  auto got = parseWhole(R"( {"a":-1.5e3,"b":true,"c":null,"d":18446744073709551615,"e":{"x":["\u00e9",[]]}} )");
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, (json{{"a", -1500.0}, {"b", true}, {"c", nullptr}, {"d", 18446744073709551615ull},
                        {"e", {{"x", json::array({"\u00e9", json::array()})}}}}));
}

class ParseWholeErrorTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(ParseWholeErrorTest, RefusesWithAReason) {
  auto got = parseWhole(GetParam().input);
  ASSERT_FALSE(got);
  EXPECT_THAT(got.error().message, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseWholeErrorTest,
    ::testing::Values(BrokenCase{"Truncated", R"({"PodName":"a")", "parse error"},
                      BrokenCase{"TrailingData", R"({} {})", "parse error"},
                      BrokenCase{"InvalidUtf8", "{\"PodName\":\"\xff\"}", "parse error"},
                      BrokenCase{"Empty", "", "parse error"},
                      // Deep nesting is refused before it is built (nothing later recurses into it).
                      BrokenCase{"NestedTooDeeply", "{\"Pods\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
                                 "nested more than 64 levels deep"},
                      BrokenCase{"NestedTooDeeplyAndTruncated", std::string(100000, '['), "nested more than 64"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace placer::kube
