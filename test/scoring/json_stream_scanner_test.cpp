// Splitting bodies that stream in pieces: watch streams framed without
// newlines, lists split into items as they arrive, snapshot objects split into
// members and array elements, wherever the pieces break.
#include "scoring/json_stream_scanner.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace placer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Collected {
  std::vector<std::string> values;
  std::vector<std::string> metadata;
};

// Feeds `body` in pieces of `step` bytes (0: all at once).
Outcome scan(JsonStreamScanner::Mode mode, std::string_view body, size_t step, Collected& out) {
  JsonStreamScanner scanner(
      mode,
      [&](std::string_view v) {
        out.values.emplace_back(v);
        return Outcome();
      },
      [&](std::string_view m) {
        out.metadata.emplace_back(m);
        return Outcome();
      });
  if (step == 0) step = body.size() ? body.size() : 1;
  for (size_t i = 0; i < body.size(); i += step)
    if (Outcome r = scanner.feed(body.substr(i, step)); !r) return r;
  return scanner.finish();
}

const std::string kEventA = R"({"type":"ADDED","object":{"metadata":{"name":"a}{\"","resourceVersion":"5"}}})";
const std::string kEventB = R"({"type":"MODIFIED","object":{"s":"\\","n":[1,{"x":"]"}],"u":"\u00e9"}})";
const std::string kEventC = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";

struct SplitCase {
  const char* name;
  std::string body;
  std::vector<std::string> values;
};

class WatchFramingTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(WatchFramingTest, YieldsEachEventWhereverThePiecesBreak) {
  for (size_t step : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(7), size_t(64)}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::TopLevelValues, GetParam().body, step, got);
    ASSERT_TRUE(r) << "step " << step << ": " << r.error().message;
    EXPECT_EQ(got.values, GetParam().values) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WatchFramingTest,
    ::testing::Values(SplitCase{"Empty", "", {}},
                      SplitCase{"OneEvent", kEventA, {kEventA}},
                      SplitCase{"ConcatenatedWithoutNewlines", kEventA + kEventB + kEventC, {kEventA, kEventB, kEventC}},
                      SplitCase{"NewlineDelimited", kEventA + "\n" + kEventB + "\r\n", {kEventA, kEventB}},
                      SplitCase{"WhitespaceBetween", "  \n" + kEventC + " \t " + kEventA, {kEventC, kEventA}}),
    [](const auto& info) { return info.param.name; });

// Backslash runs of every parity next to quotes and brackets, cut at every
// byte: whether a quote ends a string depends on bytes of the previous piece.
TEST(WatchEscapeTest, BackslashRunsAcrossEveryPieceBoundary) {
  const std::string a = R"({"type":"ADDED","object":{"a":"\\","b":"\\\"}","c":"x\\\\","d":"\"{[","e":["\\\\\\\"]"]}})";
  const std::string b = R"({"type":"DELETED","object":{"k\\\"":"}\\\\\\","z":{}}})";
  const std::string body = a + "\n" + b;
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    Collected got;
    JsonStreamScanner scanner(JsonStreamScanner::Mode::TopLevelValues, [&](std::string_view v) -> Outcome {
      got.values.emplace_back(v);
      return {};
    });
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(0, cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.finish()) << "cut " << cut;
    EXPECT_THAT(got.values, ElementsAre(a, b)) << "cut " << cut;
  }
  for (size_t step = 1; step < 10; ++step) {
    Collected got;
    ASSERT_TRUE(scan(JsonStreamScanner::Mode::TopLevelValues, body, step, got));
    EXPECT_THAT(got.values, ElementsAre(a, b)) << "step " << step;
    EXPECT_TRUE(nlohmann::json::accept(got.values[0]));
  }
}

struct BadStream {
  const char* name;
  JsonStreamScanner::Mode mode;
  std::string body;
  const char* error;
};

class StreamErrorTest : public ::testing::TestWithParam<BadStream> {};

TEST_P(StreamErrorTest, IsAnErrorNotACrash) {
  for (size_t step : {size_t(0), size_t(1)}) {
    Collected got;
    Outcome r = scan(GetParam().mode, GetParam().body, step, got);
    ASSERT_FALSE(r) << "step " << step;
    EXPECT_THAT(r.error().message, HasSubstr(GetParam().error));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StreamErrorTest,
    ::testing::Values(
        BadStream{"CutMidEvent", JsonStreamScanner::Mode::TopLevelValues, kEventA + kEventB.substr(0, 20),
                  "ended inside a value"},
        BadStream{"CutInString", JsonStreamScanner::Mode::TopLevelValues, R"({"a":"x)", "ended inside a value"},
        BadStream{"TopLevelScalar", JsonStreamScanner::Mode::TopLevelValues, "42", "expected an object"},
        BadStream{"StrayClose", JsonStreamScanner::Mode::TopLevelValues, kEventA + "}", "unbalanced"},
        BadStream{"ListNotObject", JsonStreamScanner::Mode::ListItems, "[1,2]", "a list must be an object"},
        BadStream{"ItemsNotArray", JsonStreamScanner::Mode::ListItems, R"({"items":{"a":1}})", "items must be an array"},
        BadStream{"ItemNotObject", JsonStreamScanner::Mode::ListItems, R"({"items":[1]})", "items must be objects"},
        BadStream{"ListCut", JsonStreamScanner::Mode::ListItems, R"({"metadata":{},"items":[{"a":1})",
                  "ended inside a value"},
        BadStream{"EmptyListBody", JsonStreamScanner::Mode::ListItems, "", "ended before the list"}),
    [](const auto& info) { return info.param.name; });

TEST(ListScanTest, YieldsItemsAndMetadataWhereverThePiecesBreak) {
  const std::string item1 = R"({"metadata":{"name":"p1","labels":{"items":"x"}},"items":[{"metadata":{}}]})";
  const std::string item2 = R"({"metadata":{"name":"p\"2"},"spec":{}})";
  const std::string meta = R"({"resourceVersion":"123","continue":"abc"})";
  const std::string body = R"({"kind":"PodList","apiVersion":"v1","metadata":)" + meta + R"(,"items":[ )" + item1 +
                           " ,\n" + item2 + R"(],"extra":{"items":[{"no":1}]}})";
  for (size_t step : {size_t(0), size_t(1), size_t(5), size_t(13)}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::ListItems, body, step, got);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_THAT(got.values, ElementsAre(item1, item2)) << "step " << step;
    EXPECT_THAT(got.metadata, ElementsAre(meta)) << "step " << step;
  }
}

// Items long enough to be stepped over in 64-byte blocks: quotes, escaped
// quotes, backslash runs and brackets inside strings land at every offset of
// a block (the padding string shifts them by one byte per item), and the body
// is cut in two at every position.
TEST(ListScanTest, LongItemsWhereverTheBlocksAndPiecesBreak) {
  std::vector<std::string> items;
  for (size_t shift = 0; shift < 64; ++shift)
    items.push_back(R"({"pad":")" + std::string(shift, 'x') + R"(","s":"a}{][\"\\","n":[[1,{"x":"]}"}],{}],)" +
                    R"("long":")" + std::string(70, '{') + std::string(70, ']') + R"(",)" +
                    R"("esc":"\\\\\\\"}\\","q":"\"","e":{"k":[],"\\":"\\\\"}})");
  std::string body = R"({"metadata":{"resourceVersion":"7"},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) body += (i ? "," : "") + items[i];
  body += "]}";
  for (const std::string& item : items) ASSERT_TRUE(nlohmann::json::accept(item)) << item;
  for (size_t cut = 0; cut <= body.size(); cut += 7) {
    std::vector<std::string> got;
    JsonStreamScanner scanner(JsonStreamScanner::Mode::ListItems, [&](std::string_view v) -> Outcome {
      got.emplace_back(v);
      return {};
    });
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(0, cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.feed(std::string_view(body).substr(cut))) << "cut " << cut;
    ASSERT_TRUE(scanner.finish()) << "cut " << cut;
    ASSERT_EQ(got, items) << "cut " << cut;
  }
  for (size_t step : {size_t(0), size_t(63), size_t(64), size_t(65), size_t(127), size_t(4096)}) {
    Collected got;
    ASSERT_TRUE(scan(JsonStreamScanner::Mode::ListItems, body, step, got)) << "step " << step;
    EXPECT_EQ(got.values, items) << "step " << step;
  }
}

// Within a captured value whole 64-byte blocks are stepped over by masks:
// brackets counted a block at a time while the value cannot end in it, and
// strings with backslashes found without a byte-by-byte walk as long as no
// backslash stands outside a string. Each case is framed whole and byte by
// byte (which never takes the block path): the two must give the same values
// and the same error, valid or not.
struct BlockCase {
  const char* name;
  std::string body;
  std::optional<size_t> values;  // top-level values framed (valid bodies)
};

class BlockPathTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(BlockPathTest, FramesAsByteByByte) {
  for (JsonStreamScanner::Mode mode : {JsonStreamScanner::Mode::TopLevelValues, JsonStreamScanner::Mode::ListItems}) {
    const std::string body = mode == JsonStreamScanner::Mode::ListItems
                                 ? R"({"metadata":{},"items":[)" + GetParam().body + "]}"
                                 : GetParam().body;
    Collected whole, bytes;
    const Outcome a = scan(mode, body, 0, whole);
    const Outcome b = scan(mode, body, 1, bytes);
    ASSERT_EQ(a.ok(), b.ok()) << (a ? b.error().message : a.error().message);
    if (!a) {
      EXPECT_EQ(a.error().message, b.error().message);
    }
    EXPECT_EQ(whole.values, bytes.values);
    if (GetParam().values && mode == JsonStreamScanner::Mode::TopLevelValues) {
      ASSERT_TRUE(a) << a.error().message;
      EXPECT_EQ(whole.values.size(), *GetParam().values);
      for (const std::string& v : whole.values) EXPECT_TRUE(nlohmann::json::accept(v)) << v;
    }
  }
}

std::string nested(size_t depth, const std::string& inside) {
  return std::string(depth, '[') + inside + std::string(depth, ']');
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BlockPathTest,
    ::testing::Values(
        BlockCase{"DeepArraysEndingInOneBlock", R"({"a":)" + nested(150, "1") + "}" + R"({"b":)" + nested(40, "{}") + "}", 2},
        BlockCase{"ClosesAtEveryOffset",
                  [] {
                    std::string body;
                    for (size_t shift = 0; shift < 64; ++shift)
                      body += R"({"p":")" + std::string(shift, 'x') + R"(","v":)" + nested(70, "{}") + "}";
                    return body;
                  }(),
                  64},
        BlockCase{"BackslashRunsInStringsAtEveryOffset",
                  [] {
                    std::string body;
                    for (size_t shift = 0; shift < 64; ++shift)
                      body += R"({"p":")" + std::string(shift, 'x') + R"(","s":")" + std::string(shift % 9, '\\') +
                              std::string(shift % 9 % 2, '\\') + R"(\"]}","t":[")" + std::string(63, '\\') +
                              R"("","\\\\"]})";
                    return body;
                  }(),
                  64},
        BlockCase{"BackslashOutsideAString",
                  R"({"a":[)" + std::string(20, ' ') + R"(\"}],"b":")" + std::string(100, 'x') + R"("})" +
                      R"({"c":1})",
                  std::nullopt},
        BlockCase{"BackslashRunEndingABlock",
                  R"({"a":[")" + std::string(57, 'y') + R"(\\\\\\\"","z"]})" + R"({"b":[")" + std::string(56, 'y') +
                      R"(\\\\\\\"","z"]})",
                  2},
        BlockCase{"BackslashesAroundAStringOutsideStrings",
                  R"({"a":[)" + std::string(20, ' ') + R"(\\"x"\\ ],"b":")" + std::string(100, 'x') + R"("})" +
                      R"({"b":2})",
                  std::nullopt}),
    [](const auto& info) { return info.param.name; });

// A list's items gathered in the caller's buffer (as the list decoder's
// batches take them): an item that spans pieces arrives as the buffer's last
// bytes, one within a piece as a view of the piece; either way the caller's
// buffer then holds exactly the items, back to back, and the metadata still
// arrives on its own.
TEST(ListScanTest, ItemsGatheredInTheCallersBufferWhereverThePiecesBreak) {
  std::vector<std::string> items;
  for (size_t size : {2, 40, 63, 64, 65, 200, 1000, 4097})
    items.push_back(R"({"name":")" + std::string(size, 'a') + R"(","s":"}{\"]\\","n":[{}]})");
  std::string body = R"({"kind":"PodList","items":[)";
  for (size_t i = 0; i < items.size(); ++i) body += (i ? " ,\n" : "") + items[i];
  body += R"(],"metadata":{"resourceVersion":"9","continue":"c"}})";
  std::string all;
  for (const std::string& item : items) all += item;
  for (size_t step : {size_t(1), size_t(7), size_t(64), size_t(100), size_t(4096), body.size()}) {
    SCOPED_TRACE("step " + std::to_string(step));
    std::string buffer;
    std::vector<std::string> got;
    std::vector<std::string> metadata;
    size_t inPlace = 0;
    JsonStreamScanner scanner(
        JsonStreamScanner::Mode::ListItems,
        [&](std::string_view v) -> Outcome {
          got.emplace_back(v);
          if (!v.empty() && v.data() + v.size() == buffer.data() + buffer.size() && v.size() <= buffer.size())
            ++inPlace;
          else
            buffer.append(v);
          return {};
        },
        [&](std::string_view v) -> Outcome {
          metadata.emplace_back(v);
          return {};
        });
    scanner.gatherValuesInto(&buffer);
    for (size_t at = 0; at < body.size(); at += step)
      ASSERT_TRUE(scanner.feed(std::string_view(body).substr(at, step)));
    ASSERT_TRUE(scanner.finish());
    EXPECT_EQ(got, items);
    EXPECT_EQ(buffer, all);
    EXPECT_EQ(metadata, std::vector<std::string>{R"({"resourceVersion":"9","continue":"c"})"});
    if (step < 4096) {
      EXPECT_GT(inPlace, 0u) << "some items span pieces at this step";
    }
    if (step == body.size()) {
      EXPECT_EQ(inPlace, 0u) << "one piece: every item is a view of it";
    }
  }
}

TEST(ListScanTest, EmptyAndNullItems) {
  for (const char* body : {R"({"metadata":{"resourceVersion":"1"},"items":[]})",
                           R"({"metadata":{"resourceVersion":"1"},"items":null})"}) {
    Collected got;
    Outcome r = scan(JsonStreamScanner::Mode::ListItems, body, 1, got);
    ASSERT_TRUE(r) << body << ": " << r.error().message;
    EXPECT_TRUE(got.values.empty());
    EXPECT_EQ(got.metadata.size(), 1u);
  }
}

TEST(ListScanTest, ASinkErrorStopsTheStream) {
  JsonStreamScanner scanner(JsonStreamScanner::Mode::TopLevelValues,
                            [](std::string_view) { return Outcome(Error{"stop here"}); });
  Outcome r = scanner.feed(kEventA + kEventB);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("stop here"));
  EXPECT_FALSE(scanner.feed(kEventC));
}


// --- Members: a snapshot's top-level object ------------------------------------

// (what, key, bytes) in the order handed out: what is "member" or "element".
using Handed = std::vector<std::tuple<std::string, std::string, std::string>>;

Outcome scanMembers(std::string_view body, size_t step, Handed& out) {
  JsonStreamScanner scanner(
      {"nodes", "pods"},
      [&](std::string_view key, std::string_view v) {
        out.emplace_back("member", key, v);
        return Outcome();
      },
      [&](std::string_view key, std::string_view v) {
        out.emplace_back("element", key, v);
        return Outcome();
      });
  if (step == 0) step = body.size() ? body.size() : 1;
  for (size_t i = 0; i < body.size(); i += step)
    if (Outcome r = scanner.feed(body.substr(i, step)); !r) return r;
  return scanner.finish();
}

TEST(MembersScanTest, SplitsTheNamedArraysAndHandsOutEveryOtherMemberWhole) {
  const std::string body =
      R"( {"config":{"a":[1,{"b":"]"}]},"nodes":[ {"n":"}\""} , 42,"s\\",null,[1],true ],)"
      "\n"
      R"("pod":null,"count":-7.5e3,"name":"x}","tags":[1,2],"pods":[],"k\"ey":{}} )";
  const Handed expected = {
      {"member", "config", R"({"a":[1,{"b":"]"}]})"},
      {"element", "nodes", R"({"n":"}\""})"},
      {"element", "nodes", "42"},
      {"element", "nodes", R"("s\\")"},
      {"element", "nodes", "null"},
      {"element", "nodes", "[1]"},
      {"element", "nodes", "true"},
      {"member", "pod", "null"},
      {"member", "count", "-7.5e3"},
      {"member", "name", R"("x}")"},
      {"member", "tags", "[1,2]"},
      {"member", R"(k\"ey)", "{}"},
  };
  for (size_t step : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(7), size_t(64)}) {
    Handed got;
    Outcome r = scanMembers(body, step, got);
    ASSERT_TRUE(r) << "step " << step << ": " << r.error().message;
    EXPECT_EQ(got, expected) << "step " << step;
  }
}

TEST(MembersScanTest, ANamedMemberThatIsNotAnArrayIsHandedOutWhole) {
  Handed got;
  ASSERT_TRUE(scanMembers(R"({"nodes":{"a":1},"pods":null})", 1, got));
  EXPECT_EQ(got, (Handed{{"member", "nodes", R"({"a":1})"}, {"member", "pods", "null"}}));
}

struct BadMembers {
  const char* name;
  std::string body;
  const char* error;
};

class MembersErrorTest : public ::testing::TestWithParam<BadMembers> {};

TEST_P(MembersErrorTest, IsAnErrorNotACrash) {
  for (size_t step : {size_t(0), size_t(1)}) {
    Handed got;
    Outcome r = scanMembers(GetParam().body, step, got);
    ASSERT_FALSE(r) << "step " << step;
    EXPECT_THAT(r.error().message, HasSubstr(GetParam().error));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MembersErrorTest,
    ::testing::Values(BadMembers{"NotAnObject", "[1,2,3]", "offset 0: expected an object"},
                      BadMembers{"Empty", "", "ended before the object"},
                      BadMembers{"CutInAnElement", R"({"nodes":[{"a":1},{"b")", "ended inside a value"},
                      BadMembers{"CutInAScalar", R"({"count":12)", "ended inside a value"},
                      BadMembers{"KeyTwice", R"({"nodes":[],"pod":{},"nodes":[]})", "\"nodes\" appears twice"},
                      BadMembers{"DataAfter", R"({"pods":[]} {})", "unexpected data after the object"}),
    [](const auto& info) { return info.param.name; });

TEST(MembersScanTest, ASinkErrorStopsTheStreamAtItsOffset) {
  JsonStreamScanner scanner(
      {"pods"}, [](std::string_view, std::string_view) { return Outcome(); },
      [](std::string_view, std::string_view v) { return v == "2" ? Outcome(Error{"not two"}) : Outcome(); });
  Outcome r = scanner.feed(R"({"pods":[1,2,3]})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "offset 12: not two");
  EXPECT_FALSE(scanner.finish());
}

}  // namespace
}  // namespace placer
