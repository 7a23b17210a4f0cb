#include "certs/x509.h"

#include <gtest/gtest.h>

#include <chrono>

namespace placer::certs {
namespace {

using namespace std::chrono_literals;

struct KeyCase {
  const char* name;
  KeyType type;
  bool keyEncipherment;
};

class X509KeyTypeTest : public ::testing::TestWithParam<KeyCase> {};

TEST_P(X509KeyTypeTest, ServingCertificateChainsToItsCaWithServiceNames) {
  const KeyCase& c = GetParam();
  auto ca = generateCa("placer-ca", 365, c.type);
  ASSERT_TRUE(ca.ok()) << ca.error().message;
  const auto names = serviceDnsNames("placer", "placer-system");
  auto leaf = generateServingCert(*ca, names, {"127.0.0.1"}, 90, c.type);
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;

  for (const std::string& name : names) {
    Outcome v = verifyServingChain(leaf->certificatePem, ca->certificatePem, name);
    EXPECT_TRUE(v.ok()) << name << ": " << v.error().message;
  }
  EXPECT_FALSE(verifyServingChain(leaf->certificatePem, ca->certificatePem, "placer.other").ok());
  EXPECT_TRUE(checkKeyMatchesCertificate(leaf->certificatePem, leaf->privateKeyPem).ok());
  EXPECT_TRUE(checkKeyMatchesCertificate(ca->certificatePem, ca->privateKeyPem).ok());
  EXPECT_FALSE(checkKeyMatchesCertificate(leaf->certificatePem, ca->privateKeyPem).ok());

  auto info = inspectCertificate(leaf->certificatePem);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->dnsNames, names);
  EXPECT_EQ(info->ipAddresses, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(info->subjectCommonName, "placer");
  EXPECT_EQ(info->issuerCommonName, "placer-ca");
  EXPECT_FALSE(info->isCa);
  EXPECT_TRUE(info->basicConstraintsCritical);
  EXPECT_TRUE(info->keyUsageDigitalSignature);
  EXPECT_EQ(info->keyUsageKeyEncipherment, c.keyEncipherment);
  EXPECT_FALSE(info->keyUsageKeyCertSign);
  EXPECT_TRUE(info->extendedKeyUsageServerAuth);
  EXPECT_EQ(info->keyType, c.type);

  auto caInfo = inspectCertificate(ca->certificatePem);
  ASSERT_TRUE(caInfo.ok());
  EXPECT_TRUE(caInfo->isCa);
  EXPECT_TRUE(caInfo->keyUsageKeyCertSign);
  EXPECT_FALSE(caInfo->subjectKeyId.empty());
  EXPECT_EQ(info->authorityKeyId, caInfo->subjectKeyId);
  EXPECT_NE(info->subjectKeyId, caInfo->subjectKeyId);

  const auto now = Clock::now();
  EXPECT_LE(info->notBefore, now);
  using Days = std::chrono::duration<double, std::ratio<86400>>;
  EXPECT_NEAR(Days(info->notAfter - now).count(), 90, 0.01);
}

INSTANTIATE_TEST_SUITE_P(KeyTypes, X509KeyTypeTest,
                         ::testing::Values(KeyCase{"Ecdsa", KeyType::EcdsaP256, false},
                                           KeyCase{"Rsa", KeyType::Rsa2048, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace placer::certs
