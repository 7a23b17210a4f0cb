// Go's base64.StdEncoding, as every []byte field of a Kubernetes object is
// written and read: a Secret's data, a webhook's caBundle, an AdmissionReview
// patch, a kubeconfig's *-data.
#include "scoring/base64.h"

#include <string>

#include <gtest/gtest.h>

namespace placer {
namespace {

struct EncodeCase {
  std::string name;
  std::string bytes;
  std::string text;
};

TEST(Base64Test, EncodesRfc4648Vectors) {
  const EncodeCase cases[] = {
      {"Empty", "", ""},
      {"OneByteTwoPads", "f", "Zg=="},
      {"TwoBytesOnePad", "fo", "Zm8="},
      {"ThreeBytesNoPad", "foo", "Zm9v"},
      {"FourBytes", "foob", "Zm9vYg=="},
      {"FiveBytes", "fooba", "Zm9vYmE="},
      {"SixBytes", "foobar", "Zm9vYmFy"},
      {"HighBytesUsePlusAndSlash", std::string("\xff\xfe\xfb", 3), "//77"},
      {"NulBytes", std::string("\0\0", 2), "AAA="},
  };
  for (const EncodeCase& c : cases) {
    EXPECT_EQ(base64Encode(c.bytes), c.text) << c.name;
    auto back = base64Decode(c.text);
    ASSERT_TRUE(back.ok()) << c.name << ": " << back.error().message;
    EXPECT_EQ(*back, c.bytes) << c.name;
  }
}

struct DecodeCase {
  std::string name;
  std::string text;
  std::string bytes;  // when `error` is empty
  std::string error;
};

TEST(Base64Test, DecodesAsGoStdEncoding) {
  const DecodeCase cases[] = {
      {"LineBreaksIgnored", "Zm9v\nYmFy\r\n", "foobar", ""},
      {"PaddedThenLineBreak", "Zg==\n", "f", ""},
      {"MissingPadding", "Zg", "", "illegal base64 data at input byte 0"},
      {"MissingSecondPad", "Zg=", "", "illegal base64 data at input byte 3"},
      {"UnfinishedQuantum", "Zm9vY", "", "illegal base64 data at input byte 4"},
      {"NotInAlphabet", "Zm9v!mFy", "", "illegal base64 data at input byte 4"},
      {"UrlAlphabetIsNotStd", "-_8=", "", "illegal base64 data at input byte 0"},
      {"PaddingTooEarly", "Z===", "", "illegal base64 data at input byte 1"},
      {"DataAfterPadding", "Zg==Zm9v", "", "illegal base64 data at input byte 4"},
      {"SymbolAfterOnePadOfTwo", "Zm=9", "", "illegal base64 data at input byte 2"},
      {"LineBreakBetweenPads", "Zg=\n=", "f", ""},
      {"Space", "Zm9v YmFy", "", "illegal base64 data at input byte 4"},
  };
  for (const DecodeCase& c : cases) {
    auto r = base64Decode(c.text);
    if (c.error.empty()) {
      ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message;
      EXPECT_EQ(*r, c.bytes) << c.name;
    } else {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_EQ(r.error().message, c.error) << c.name;
    }
  }
}

}  // namespace
}  // namespace placer
