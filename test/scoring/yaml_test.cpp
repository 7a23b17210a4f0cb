#include "scoring/yaml.h"

#include <string>

#include <gtest/gtest.h>

namespace placer {
namespace {

using json = nlohmann::json;

struct YamlCase {
  std::string name;
  std::string yaml;
  std::string wantJson;  // compared as parsed JSON values
};

void PrintTo(const YamlCase& c, std::ostream* os) { *os << c.name; }

class YamlTest : public ::testing::TestWithParam<YamlCase> {};

TEST_P(YamlTest, ConvertsLikeSigsK8sYaml) {
  const YamlCase& c = GetParam();
  auto got = parseYaml(c.yaml);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const json want = json::parse(c.wantJson);
  EXPECT_EQ(*got, want) << "got " << got->dump();
  // Integers stay integers (a JSON consumer tells 1 from 1.0).
  EXPECT_EQ(got->dump(), want.dump());
}

INSTANTIATE_TEST_SUITE_P(
    Structure, YamlTest,
    ::testing::Values(
        YamlCase{"Empty", "", "null"}, YamlCase{"OnlyComments", "# nothing\n\n  # here\n", "null"},
        YamlCase{"FlatMapping", "a: 1\nb: two\n", R"({"a":1,"b":"two"})"},
        YamlCase{"NestedMapping", "a:\n  b:\n    c: d\n  e: f\ng: h\n", R"({"a":{"b":{"c":"d"},"e":"f"},"g":"h"})"},
        YamlCase{"Sequence", "- a\n- b\n", R"(["a","b"])"},
        YamlCase{"SequenceUnderKeyAtSameIndent", "list:\n- a\n- b\nnext: 1\n", R"({"list":["a","b"],"next":1})"},
        YamlCase{"SequenceUnderKeyIndented", "list:\n  - a\n  - b\n", R"({"list":["a","b"]})"},
        YamlCase{"SequenceOfMappings", "- name: a\n  weight: 1\n- name: b\n  weight: 2\n",
                 R"([{"name":"a","weight":1},{"name":"b","weight":2}])"},
        YamlCase{"NestedSequences", "- - a\n  - b\n- - c\n", R"([["a","b"],["c"]])"},
        YamlCase{"EmptyValues", "a:\nb: ~\nc: null\n", R"({"a":null,"b":null,"c":null})"},
        YamlCase{"EntryOnNextLine", "-\n  a: 1\n- \n", R"([{"a":1},null])"},
        YamlCase{"Comments", "# head\na: 1 # trailing\n# between\nb: \"x # not a comment\"\nc: x#y\n",
                 R"({"a":1,"b":"x # not a comment","c":"x#y"})"},
        YamlCase{"ColonsInsideValues", "url: http://host:8080/path\ntime: 12:30\n",
                 R"({"url":"http://host:8080/path","time":"12:30"})"},
        YamlCase{"QuotedKeys", "\"a b\": 1\n'c': 2\n", R"({"a b":1,"c":2})"},
        YamlCase{"CrlfLineEnds", "a: 1\r\nb:\r\n  - x\r\n", R"({"a":1,"b":["x"]})"},
        YamlCase{"DocumentMarkers", "%YAML 1.2\n---\na: 1\n...\n", R"({"a":1})"},
        YamlCase{"FirstDocumentIsUsed", "---\na: 1\n---\nb: 2\n", R"({"a":1})"},
        YamlCase{"ScalarAfterMarker", "--- hello\n", R"("hello")"},
        YamlCase{"MultiLinePlain", "a: this is\n  one value\n\n  and more\nb: 1\n",
                 R"({"a":"this is one value\nand more","b":1})"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Flow, YamlTest,
    ::testing::Values(
        YamlCase{"FlowSequence", "a: [1, two, \"three\", 'four']\n", R"({"a":[1,"two","three","four"]})"},
        YamlCase{"FlowMapping", "a: {b: 1, c: [x, z], d: {}}\n", R"({"a":{"b":1,"c":["x","z"],"d":{}}})"},
        YamlCase{"FlowAcrossLines", "a: [\n  1,\n  2, # two\n  3,\n]\n", R"({"a":[1,2,3]})"},
        YamlCase{"FlowMappingWithoutValue", "{a, b: 2}", R"({"a":null,"b":2})"},
        YamlCase{"FlowPairInSequence", "[a: 1, b]", R"([{"a":1},"b"])"},
        YamlCase{"FlowAtTop", "[]", "[]"},
        YamlCase{"UrlInFlow", "[http://x:1/y]", R"(["http://x:1/y"])"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Scalars, YamlTest,
    ::testing::Values(
        YamlCase{"Booleans11", "[true, True, TRUE, yes, Yes, on, ON, y, false, no, Off, n]",
                 "[true,true,true,true,true,true,true,true,false,false,false,false]"},
        YamlCase{"Nulls", "[~, null, Null, NULL, ]", "[null,null,null,null]"},
        YamlCase{"Integers", "[0, 42, -7, +3, 0x1F, 0o17, 017, 1_000, 9223372036854775807]",
                 "[0,42,-7,3,31,15,15,1000,9223372036854775807]"},
        YamlCase{"BigIntegers", "[9223372036854775808, -9223372036854775808]",
                 "[9223372036854775808,-9223372036854775808]"},
        YamlCase{"Floats", "[1.5, -0.25, .5, 1e3, 2.5e-1, 1., 08]", "[1.5,-0.25,0.5,1000,0.25,1,8]"},
        YamlCase{"NumberLikeStrings", "[1.2.3, 0x, 1e, 12:30, 100m, 1Gi, '1', \"2\", -, v1]",
                 R"(["1.2.3","0x","1e","12:30","100m","1Gi","1","2","-","v1"])"},
        YamlCase{"StringsThatAreNotBooleans", "[yess, nope, trueish, TrUe]", R"(["yess","nope","trueish","TrUe"])"},
        YamlCase{"SingleQuoted", "a: 'it''s # here'\n", R"({"a":"it's # here"})"},
        YamlCase{"DoubleQuotedEscapes", R"(a: "tab\there\nline \"q\" \\ \u00e9 \x41 \/")",
                 R"({"a":"tab\there\nline \"q\" \\ é A /"})"},
        YamlCase{"QuotedFolding", "a: \"one\n  two\n\n  three\"\n", R"({"a":"one two\nthree"})"},
        YamlCase{"EscapedLineBreak", "a: \"one\\\n  two\"\n", R"({"a":"onetwo"})"},
        YamlCase{"BooleanKeys", "yes: 1\n1: 2\n~: 3\n", R"({"true":1,"1":2,"null":3})"},
        YamlCase{"Utf8", "name: café ☕\n", R"({"name":"café ☕"})"}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    BlockScalars, YamlTest,
    ::testing::Values(
        YamlCase{"Literal", "a: |\n  line one\n  line two\nb: 1\n", R"({"a":"line one\nline two\n","b":1})"},
        YamlCase{"LiteralStrip", "a: |-\n  x\n  y\n\n", R"({"a":"x\ny"})"},
        YamlCase{"LiteralKeep", "a: |+\n  x\n\n\nb: 1\n", R"({"a":"x\n\n\n","b":1})"},
        YamlCase{"LiteralKeepsInnerIndentation", "a: |\n  def f():\n    return 1\n",
                 R"({"a":"def f():\n  return 1\n"})"},
        YamlCase{"LiteralBlankLinesInside", "a: |\n  x\n\n  y\n", R"({"a":"x\n\ny\n"})"},
        YamlCase{"Folded", "a: >\n  one\n  two\n\n  three\n", R"({"a":"one two\nthree\n"})"},
        YamlCase{"FoldedMoreIndented", "a: >\n  one\n    code\n  two\n", R"({"a":"one\n  code\ntwo\n"})"},
        YamlCase{"ExplicitIndentation", "a: |2\n    four\n  two\n", R"({"a":"  four\ntwo\n"})"},
        YamlCase{"EmptyBlockScalar", "a: |\nb: 1\n", R"({"a":"","b":1})"},
        YamlCase{"BlockScalarInSequence", "- |\n  x\n- z\n", R"(["x\n","z"])"},
        YamlCase{"BlockScalarWithComment", "a: | # note\n  x\n", R"({"a":"x\n"})"}),
    [](const auto& info) { return info.param.name; });

TEST(Yaml, ReadsAKubeSchedulerConfiguration) {
  const char* text = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        enabled:
          - name: NodeResourcesFit
            weight: 2
        disabled:
          - name: "*"
      score:
        disabled: [{name: ImageLocality}]
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources:
              - {name: cpu, weight: 1}
              - name: nvidia.com/gpu
                weight: 3
)";
  auto got = parseYaml(text);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const json& profile = (*got)["profiles"][0];
  EXPECT_EQ(profile["schedulerName"], "default-scheduler");
  EXPECT_EQ(profile["plugins"]["multiPoint"]["enabled"][0]["weight"], 2);
  EXPECT_EQ(profile["plugins"]["multiPoint"]["disabled"][0]["name"], "*");
  EXPECT_EQ(profile["plugins"]["score"]["disabled"][0]["name"], "ImageLocality");
  const json& resources = profile["pluginConfig"][0]["args"]["scoringStrategy"]["resources"];
  EXPECT_EQ(resources, json::parse(R"([{"name":"cpu","weight":1},{"name":"nvidia.com/gpu","weight":3}])"));
}

struct YamlErrorCase {
  std::string name;
  std::string yaml;
  std::string wantError;  // the full message, with its line and column (libyaml's words where it found the fault)
};

void PrintTo(const YamlErrorCase& c, std::ostream* os) { *os << c.name; }

class YamlErrorTest : public ::testing::TestWithParam<YamlErrorCase> {};

TEST_P(YamlErrorTest, ReportsTheLine) {
  const YamlErrorCase& c = GetParam();
  auto got = parseYaml(c.yaml);
  ASSERT_FALSE(got.ok()) << "parsed as " << got->dump();
  EXPECT_EQ(got.error().message, c.wantError);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, YamlErrorTest,
    ::testing::Values(
        YamlErrorCase{"BadIndentation", "a:\n    b: 1\n  c: 2\n",
                      "line 3, column 3: did not find expected key (while parsing a block mapping that started at line 1, column 1)"},
        YamlErrorCase{"KeyInsideAValue", "a:\n  b: 1\n    c: 2\n",
                      "line 3, column 6: mapping values are not allowed in this context"},
        YamlErrorCase{"MappingInValue", "a: b: c\n",
                      "line 1, column 5: mapping values are not allowed in this context"},
        YamlErrorCase{"SequenceAfterKeyOnSameLine", "a: - b\n",
                      "line 1, column 4: block sequence entries are not allowed in this context"},
        YamlErrorCase{"DuplicateKey", "a: 1\nb: 2\na: 3\n",
                      "line 3, column 1: duplicate key \"a\""},
        YamlErrorCase{"UnterminatedDoubleQuote", "a: 1\nb: \"open\n",
                      "line 3, column 1: found unexpected end of stream (while scanning a quoted scalar that started at line 2, column 4)"},
        YamlErrorCase{"UnterminatedSingleQuote", "a: 'open\n",
                      "line 2, column 1: found unexpected end of stream (while scanning a quoted scalar that started at line 1, column 4)"},
        YamlErrorCase{"UnterminatedFlow", "a: [1, 2\n",
                      "line 2, column 1: did not find expected \',\' or \']\' (while parsing a flow sequence that started at line 1, column 4)"},
        YamlErrorCase{"FlowMissingComma", "a: [1 2 {x}]\n",
                      "line 1, column 9: did not find expected \',\' or \']\' (while parsing a flow sequence that started at line 1, column 4)"},
        YamlErrorCase{"Anchor", "a: &x 1\nb: *x\n",
                      "line 1, column 4: anchors and aliases are not supported"},
        YamlErrorCase{"Tag", "a: !!str 1\n",
                      "line 1, column 4: tags are not supported"},
        YamlErrorCase{"TabIndentation", "a:\n\tb: 1\n",
                      "line 2, column 1: found character that cannot start any token (while scanning for the next token that started at line 2, column 1)"},
        YamlErrorCase{"BadEscape", "a: \"\\q\"\n",
                      "line 1, column 5: found unknown escape character (while parsing a quoted scalar that started at line 1, column 4)"},
        YamlErrorCase{"Infinity", "a: .inf\n",
                      "line 1, column 4: \".inf\" (infinity or NaN) cannot be represented in JSON"},
        YamlErrorCase{"TrailingContent", "a: 1\n- b\n",
                      "line 2, column 1: did not find expected key (while parsing a block mapping that started at line 1, column 1)"},
        YamlErrorCase{"TextAfterQuoted", "a: \"x\" y\n",
                      "line 1, column 8: did not find expected key (while parsing a block mapping that started at line 1, column 1)"},
        YamlErrorCase{"InvalidUtf8", "a: 1\nb: \xC3\x28\n",
                      "line 2, column 4: invalid UTF-8"},
        YamlErrorCase{"MergeKey", "<<: {a: 1}\n",
                      "line 1, column 1: merge keys are not supported"}),
    [](const auto& info) { return info.param.name; });

TEST(YamlRobustness, DeepNestingIsAnErrorNotACrash) {
  EXPECT_FALSE(parseYaml(std::string(100000, '[')).ok());
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += std::string(static_cast<size_t>(i), ' ') + "a:\n";
  EXPECT_FALSE(parseYaml(deep).ok());
}

// Truncations and single-character mutations of a real configuration either
// parse or fail with a line-numbered error; nothing crashes or throws.
TEST(YamlRobustness, MutatedDocumentsParseOrFailCleanly) {
  const std::string original = R"(apiVersion: placer.io/v1alpha1
kind: PlacerConfiguration
# placer's own settings
schedulerNames: [default-scheduler, "batch"]
reservationTtl: 30s
excludedNamespaces:
- kube-system
- 'kube-public'
profile:
  plugins:
    score:
      enabled:
        - {name: NodeResourcesFit, weight: 3}
        - name: TaintToleration
  pluginConfig:
    - name: NodeResourcesFit
      args:
        scoringStrategy:
          type: LeastAllocated
          note: |
            keep "spare" room
              on every node
          folded: >-
            one
            two
)";
  ASSERT_TRUE(parseYaml(original).ok()) << parseYaml(original).error().message;
  int failures = 0;
  for (size_t cut = 0; cut <= original.size(); ++cut) {
    auto r = parseYaml(original.substr(0, cut));
    if (!r.ok()) {
      ++failures;
      EXPECT_EQ(r.error().message.rfind("line ", 0), 0u) << r.error().message;
        EXPECT_NE(r.error().message.find(", column "), std::string::npos) << r.error().message;
    }
  }
  const std::string replacements = " :-\"[{#|\t\n";
  for (size_t i = 0; i < original.size(); i += 3) {
    for (char c : replacements) {
      std::string mutated = original;
      mutated[i] = c;
      auto r = parseYaml(mutated);
      if (!r.ok()) {
        ++failures;
        EXPECT_EQ(r.error().message.rfind("line ", 0), 0u) << r.error().message;
      } else {
        EXPECT_NO_THROW((void)r->dump());
      }
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace placer
