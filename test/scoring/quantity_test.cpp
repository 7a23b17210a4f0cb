#include "scoring/quantity.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace placer {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct QuantityCase {
  std::string input;
  std::optional<int64_t> value;  // nullopt: parseQuantity fails
  std::optional<int64_t> milli;  // nullopt: parseMilliQuantity fails
};

void PrintTo(const QuantityCase& c, std::ostream* os) { *os << '"' << c.input << '"'; }

class QuantityTest : public ::testing::TestWithParam<QuantityCase> {};

TEST_P(QuantityTest, ValueAndMilliValueMatchApimachinery) {
  const QuantityCase& c = GetParam();
  auto value = parseQuantity(c.input);
  if (c.value) {
    ASSERT_TRUE(value.ok()) << value.error().message;
    EXPECT_EQ(*value, *c.value);
  } else {
    EXPECT_FALSE(value.ok()) << "parsed as " << *value;
  }
  auto milli = parseMilliQuantity(c.input);
  if (c.milli) {
    ASSERT_TRUE(milli.ok()) << milli.error().message;
    EXPECT_EQ(*milli, *c.milli);
  } else {
    EXPECT_FALSE(milli.ok()) << "parsed as " << *milli;
  }
}

// The valid inputs of apimachinery's TestQuantityParse, with the Value() and
// MilliValue() each one yields (both round up, away from zero).
INSTANTIATE_TEST_SUITE_P(
    UpstreamParseTable, QuantityTest,
    ::testing::Values(
        QuantityCase{"0", 0, 0}, QuantityCase{"0n", 0, 0}, QuantityCase{"0u", 0, 0}, QuantityCase{"0m", 0, 0},
        QuantityCase{"0Ki", 0, 0}, QuantityCase{"0k", 0, 0}, QuantityCase{"0Mi", 0, 0}, QuantityCase{"0M", 0, 0},
        QuantityCase{"0Gi", 0, 0}, QuantityCase{"0G", 0, 0}, QuantityCase{"0Ti", 0, 0}, QuantityCase{"0T", 0, 0},
        QuantityCase{"1", 1, 1000},
        // Binary suffixes
        QuantityCase{"1Ki", 1024, 1024000}, QuantityCase{"8Ki", 8192, 8192000},
        QuantityCase{"7Mi", 7340032, 7340032000}, QuantityCase{"6Gi", 6442450944, 6442450944000},
        QuantityCase{"5Ti", 5497558138880, 5497558138880000},
        QuantityCase{"4Pi", 4503599627370496, 4503599627370496000},
        QuantityCase{"3Ei", 3458764513820540928, std::nullopt},
        QuantityCase{"10Ti", 10995116277760, 10995116277760000},
        QuantityCase{"100Ti", 109951162777600, 109951162777600000},
        // Decimal suffixes
        QuantityCase{"5n", 1, 1}, QuantityCase{"4u", 1, 1}, QuantityCase{"3m", 1, 3}, QuantityCase{"9", 9, 9000},
        QuantityCase{"8k", 8000, 8000000}, QuantityCase{"50k", 50000, 50000000},
        QuantityCase{"7M", 7000000, 7000000000}, QuantityCase{"6G", 6000000000, 6000000000000},
        QuantityCase{"5T", 5000000000000, 5000000000000000}, QuantityCase{"40T", 40000000000000, 40000000000000000},
        QuantityCase{"300T", 300000000000000, 300000000000000000},
        QuantityCase{"2P", 2000000000000000, 2000000000000000000},
        QuantityCase{"1E", 1000000000000000000, std::nullopt},
        // Decimal exponents
        QuantityCase{"1E-3", 1, 1}, QuantityCase{"1e3", 1000, 1000000}, QuantityCase{"1E6", 1000000, 1000000000},
        QuantityCase{"1e9", 1000000000, 1000000000000}, QuantityCase{"1E12", 1000000000000, 1000000000000000},
        QuantityCase{"1e15", 1000000000000000, 1000000000000000000},
        QuantityCase{"1E18", 1000000000000000000, std::nullopt},
        QuantityCase{"1e14", 100000000000000, 100000000000000000},
        QuantityCase{"1e13", 10000000000000, 10000000000000000},
        QuantityCase{"100.035k", 100035, 100035000},
        // Things that look like floating point
        QuantityCase{"0.001", 1, 1}, QuantityCase{"0.0005k", 1, 500}, QuantityCase{"0.005", 1, 5},
        QuantityCase{"0.05", 1, 50}, QuantityCase{"0.5", 1, 500}, QuantityCase{"0.00050k", 1, 500},
        QuantityCase{"0.00500", 1, 5}, QuantityCase{"0.05000", 1, 50}, QuantityCase{"0.50000", 1, 500},
        QuantityCase{"0.5e0", 1, 500}, QuantityCase{"0.5e-1", 1, 50}, QuantityCase{"0.5e-2", 1, 5},
        QuantityCase{"10.035M", 10035000, 10035000000},
        QuantityCase{"1.2e3", 1200, 1200000}, QuantityCase{"1.3E+6", 1300000, 1300000000},
        QuantityCase{"1.40e9", 1400000000, 1400000000000},
        QuantityCase{"1.53E12", 1530000000000, 1530000000000000},
        QuantityCase{"1.6e15", 1600000000000000, 1600000000000000000},
        QuantityCase{"1.7E18", 1700000000000000000, std::nullopt},
        QuantityCase{"9.01", 10, 9010}, QuantityCase{"8.1k", 8100, 8100000},
        QuantityCase{"7.123456M", 7123456, 7123456000}, QuantityCase{"6.987654321G", 6987654321, 6987654321000},
        QuantityCase{"5.444T", 5444000000000, 5444000000000000},
        QuantityCase{"40.1T", 40100000000000, 40100000000000000},
        QuantityCase{"300.2T", 300200000000000, 300200000000000000},
        QuantityCase{"2.5P", 2500000000000000, 2500000000000000000},
        QuantityCase{"1.01E", 1010000000000000000, std::nullopt},
        // Things that saturate/round
        QuantityCase{"3.001n", 1, 1}, QuantityCase{"1.1E-9", 1, 1}, QuantityCase{"0.0000000001", 1, 1},
        QuantityCase{"0.0000000005", 1, 1}, QuantityCase{"0.00000000050", 1, 1}, QuantityCase{"0.5e-9", 1, 1},
        QuantityCase{"0.9n", 1, 1}, QuantityCase{"0.00000012345", 1, 1}, QuantityCase{"0.00000012354", 1, 1},
        // Binary-SI amounts are capped at 2^63-1 when parsed, as upstream does.
        QuantityCase{"9Ei", kMax, std::nullopt}, QuantityCase{"9223372036854775807Ki", kMax, std::nullopt},
        // "E" alone is the exa suffix, not an exponent: 12E = 1.2e19 does not fit.
        QuantityCase{"12E", std::nullopt, std::nullopt}, QuantityCase{"9E", 9000000000000000000, std::nullopt},
        // Fractional binary amounts
        QuantityCase{"100.035Ki", 102436, 102435840}, QuantityCase{"0.5Mi", 524288, 524288000},
        QuantityCase{"0.05Gi", 53687092, 53687091200}, QuantityCase{"0.025Ti", 27487790695, 27487790694400},
        // Things written by trolls
        QuantityCase{"0.000000000001Ki", 1, 1}, QuantityCase{".001", 1, 1}, QuantityCase{".0001k", 1, 100},
        QuantityCase{"1.", 1, 1000}, QuantityCase{"1.G", 1000000000, 1000000000000}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

INSTANTIATE_TEST_SUITE_P(
    RequestsSeenInClusters, QuantityTest,
    ::testing::Values(QuantityCase{"100m", 1, 100}, QuantityCase{"250m", 1, 250}, QuantityCase{"1500m", 2, 1500},
                      QuantityCase{"2", 2, 2000}, QuantityCase{"0.1", 1, 100}, QuantityCase{"1.5G", 1500000000, 1500000000000},
                      QuantityCase{"128Mi", 134217728, 134217728000}, QuantityCase{"1Gi", 1073741824, 1073741824000},
                      QuantityCase{"1.5Gi", 1610612736, 1610612736000}, QuantityCase{"110", 110, 110000},
                      QuantityCase{"3800m", 4, 3800}, QuantityCase{"16308988Ki", 16700403712, 16700403712000},
                      QuantityCase{"20Gi", 21474836480, 21474836480000}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

INSTANTIATE_TEST_SUITE_P(
    SignsAndEdges, QuantityTest,
    ::testing::Values(
        QuantityCase{"+1", 1, 1000}, QuantityCase{"-1", -1, -1000},
        // Negative amounts round away from zero, like int64Amount.AsScaledInt64.
        QuantityCase{"-100m", -1, -100}, QuantityCase{"-1.5", -2, -1500}, QuantityCase{"-9Ei", -kMax, std::nullopt},
        // The scanner accepts a lone sign or dot as zero, as parseQuantityString does.
        QuantityCase{".", 0, 0}, QuantityCase{"-.", 0, 0}, QuantityCase{"+", 0, 0}, QuantityCase{"000", 0, 0},
        QuantityCase{"007", 7, 7000},
        // A bare suffix has an empty (zero) number, as in parseQuantityString.
        QuantityCase{"Mi", 0, 0}, QuantityCase{"k", 0, 0},
        // int64 boundaries
        QuantityCase{"9223372036854775807", kMax, std::nullopt},
        QuantityCase{"9223372036854775808", std::nullopt, std::nullopt},
        QuantityCase{"9223372036854775", 9223372036854775, 9223372036854775000},
        QuantityCase{"9223372036854776", 9223372036854776, std::nullopt},
        QuantityCase{"99999999999999999999", std::nullopt, std::nullopt},
        QuantityCase{"99999999999999999999Ei", kMax, std::nullopt},
        QuantityCase{"1e19", std::nullopt, std::nullopt}, QuantityCase{"1e-400", 1, 1},
        QuantityCase{"1e999999999", std::nullopt, std::nullopt},
        // Long mantissas stay exact.
        QuantityCase{"0.1000000000000000000001Ki", 103, 102401},
        QuantityCase{"1.0000000000000000000000", 1, 1000},
        QuantityCase{"123456789012345678901234567890e-20", 1234567891, 1234567890124},
        QuantityCase{"0.0000000000000000000000000000001", 1, 1}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

// Syntax errors: apimachinery's invalid table and more.
INSTANTIATE_TEST_SUITE_P(
    Invalid, QuantityTest,
    ::testing::Values(QuantityCase{"", std::nullopt, std::nullopt}, QuantityCase{"1.1.M", std::nullopt, std::nullopt},
                      QuantityCase{"1+1.0M", std::nullopt, std::nullopt},
                      QuantityCase{"0.1mi", std::nullopt, std::nullopt},
                      QuantityCase{"0.1am", std::nullopt, std::nullopt}, QuantityCase{"aoeu", std::nullopt, std::nullopt},
                      QuantityCase{".5i", std::nullopt, std::nullopt}, QuantityCase{"1i", std::nullopt, std::nullopt},
                      QuantityCase{"-3.01i", std::nullopt, std::nullopt},
                      QuantityCase{"-3.01e-", std::nullopt, std::nullopt}, QuantityCase{" 1", std::nullopt, std::nullopt},
                      QuantityCase{"1 ", std::nullopt, std::nullopt}, QuantityCase{"abc", std::nullopt, std::nullopt},
                      QuantityCase{"1K", std::nullopt, std::nullopt}, QuantityCase{"1e", std::nullopt, std::nullopt},
                      QuantityCase{"1ee3", std::nullopt, std::nullopt}, QuantityCase{"1e3.5", std::nullopt, std::nullopt},
                      QuantityCase{"1Mi1", std::nullopt, std::nullopt},
                      QuantityCase{"--1", std::nullopt, std::nullopt}, QuantityCase{"1 Gi", std::nullopt, std::nullopt},
                      QuantityCase{"1e99999999999999999999", std::nullopt, std::nullopt},
                      QuantityCase{"0x10", std::nullopt, std::nullopt}, QuantityCase{"1,5", std::nullopt, std::nullopt}),
    [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(QuantityErrors, MessageQuotesTheInput) {
  auto r = parseQuantity("12abc");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "invalid quantity \"12abc\"");
  auto overflow = parseMilliQuantity("1E");
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.error().message.find("does not fit"), std::string::npos) << overflow.error().message;
}

TEST(QuantityRobustness, NeverCrashesOnGeneratedInputs) {
  // Every string of length <= 3 over the quantity alphabet, plus long runs.
  const std::string alphabet = "0159.+-eEinumkKMGTPx ";
  std::string s;
  int parsed = 0;
  for (char a : alphabet)
    for (char b : alphabet)
      for (char c : alphabet) {
        for (std::string candidate : {std::string{a}, std::string{a, b}, std::string{a, b, c}}) {
          parsed += parseQuantity(candidate).ok();
          parsed += parseMilliQuantity(candidate).ok();
        }
      }
  EXPECT_GT(parsed, 0);
  for (size_t n : {20, 40, 400, 5000}) {
    EXPECT_FALSE(parseQuantity(std::string(n, '9')).ok());
    EXPECT_TRUE(parseQuantity("0." + std::string(n, '9')).ok());
    EXPECT_TRUE(parseQuantity("0." + std::string(n, '9') + "Ei").ok());
  }
}

}  // namespace
}  // namespace placer
