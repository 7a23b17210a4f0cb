#include "certs/renewal.h"

#include <gtest/gtest.h>

namespace placer::certs {
namespace {

using std::chrono::hours;

CertificateSpec spec(int days = 365, int caDays = 3650) {
  CertificateSpec s;
  s.service = "placer";
  s.ns = "placer-system";
  s.days = days;
  s.caDays = caDays;
  return s;
}

CertificateMaterial fresh(const CertificateSpec& s) {
  auto r = renew(std::nullopt, s, Clock::now());
  EXPECT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Created);
  return r->material;
}

Clock::time_point notAfter(const std::string& pem) { return inspectCertificate(pem)->notAfter; }

hours days(int n) { return hours(24 * n); }

TEST(Renewal, FreshMaterialIsKeptAsIs) {
  const CertificateSpec s = spec();
  const CertificateMaterial m = fresh(s);
  auto r = renew(m, s, Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Kept);
  EXPECT_EQ(r->material.serving.certificatePem, m.serving.certificatePem);
  EXPECT_EQ(r->material.caBundle, m.caBundle);
  EXPECT_EQ(r->material.caBundle, m.ca.certificatePem);
}

struct LeafCase {
  const char* name;
  int days;               // leaf lifetime
  int remainingDays;      // left at "now"
  RenewalAction expected;
};

class LeafRenewalTest : public ::testing::TestWithParam<LeafCase> {};

TEST_P(LeafRenewalTest, RenewsOnlyInsideTheMargin) {
  const LeafCase& c = GetParam();
  const CertificateSpec s = spec(c.days);
  const CertificateMaterial m = fresh(s);
  const Clock::time_point now = notAfter(m.serving.certificatePem) - days(c.remainingDays) + hours(1);
  auto r = renew(m, s, now);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, c.expected) << r->reason;
  if (c.expected == RenewalAction::ReissuedLeaf) {
    EXPECT_EQ(r->material.ca.certificatePem, m.ca.certificatePem) << "the CA is kept";
    EXPECT_NE(r->material.serving.certificatePem, m.serving.certificatePem);
    EXPECT_TRUE(verifyServingChain(r->material.serving.certificatePem, m.caBundle, "placer.placer-system.svc", now));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LeafRenewalTest,
    ::testing::Values(LeafCase{"YearLeafWith31DaysLeftIsKept", 365, 31, RenewalAction::Kept},
                      LeafCase{"YearLeafWith29DaysLeftIsReissued", 365, 29, RenewalAction::ReissuedLeaf},
                      LeafCase{"YearLeafAfterExpiryIsReissued", 365, -2, RenewalAction::ReissuedLeaf},
                      LeafCase{"TenDayLeafWith4DaysLeftIsKept", 10, 4, RenewalAction::Kept},
                      LeafCase{"TenDayLeafWith3DaysLeftIsReissued", 10, 3, RenewalAction::ReissuedLeaf}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Renewal, ChangedNamesReissueTheLeaf) {
  CertificateSpec s = spec();
  const CertificateMaterial m = fresh(s);
  s.extraDnsNames = {"placer.example.com"};
  auto r = renew(m, s, Clock::now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->action, RenewalAction::ReissuedLeaf);
  EXPECT_EQ(inspectCertificate(r->material.serving.certificatePem)->dnsNames.back(), "placer.example.com");

  CertificateSpec other = spec();
  other.ns = "elsewhere";
  r = renew(m, other, Clock::now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->action, RenewalAction::ReissuedLeaf);
  EXPECT_TRUE(verifyServingChain(r->material.serving.certificatePem, r->material.caBundle, "placer.elsewhere.svc"));
}

TEST(Renewal, ChangedKeyTypeReissuesTheLeaf) {
  CertificateSpec s = spec();
  const CertificateMaterial m = fresh(s);
  s.keyType = KeyType::Rsa2048;
  auto r = renew(m, s, Clock::now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->action, RenewalAction::ReissuedLeaf);
  EXPECT_EQ(inspectCertificate(r->material.serving.certificatePem)->keyType, KeyType::Rsa2048);
}

TEST(Renewal, CaRotationTrustsTheNewCaBeforeAnyLeafItSigns) {
  // A yearly CA signing 30-day leaves is rotated when fewer than 60 days (a
  // leaf's lifetime + 30) are left. Two days before, the leaf was reissued.
  const CertificateSpec s = spec(30, 365);
  const CertificateMaterial first = fresh(s);
  const Clock::time_point caEnd = notAfter(first.ca.certificatePem);
  auto reissued = renew(first, s, caEnd - days(61));
  ASSERT_TRUE(reissued.ok());
  ASSERT_EQ(reissued->action, RenewalAction::ReissuedLeaf) << reissued->reason;
  const CertificateMaterial m = reissued->material;
  const std::string host = "placer.placer-system.svc";
  const Clock::time_point now = caEnd - days(59);
  auto rotated = renew(m, s, now);
  ASSERT_TRUE(rotated.ok()) << rotated.error().message;
  EXPECT_EQ(rotated->action, RenewalAction::RotatedCa) << rotated->reason;
  EXPECT_NE(rotated->material.ca.certificatePem, m.ca.certificatePem);
  auto bundle = splitCertificates(rotated->material.caBundle);
  ASSERT_TRUE(bundle.ok());
  ASSERT_EQ(bundle->size(), 2u);
  EXPECT_EQ((*bundle)[0], rotated->material.ca.certificatePem) << "the new CA comes first";
  EXPECT_EQ((*bundle)[1], m.ca.certificatePem) << "the old CA stays trusted";
  EXPECT_EQ(rotated->material.serving.certificatePem, m.serving.certificatePem) << "the served leaf stays for now";
  EXPECT_TRUE(verifyServingChain(m.serving.certificatePem, rotated->material.caBundle, host, now));

  // A pass right after (the sidecar after the init container) still waits.
  auto soon = renew(rotated->material, s, now + std::chrono::minutes(1));
  ASSERT_TRUE(soon.ok());
  EXPECT_EQ(soon->action, RenewalAction::Kept) << soon->reason;
  EXPECT_EQ(soon->material.serving.certificatePem, m.serving.certificatePem);

  // Once the new CA has propagated, the leaf moves to it; the bundle stays.
  const Clock::time_point later = now + s.trustPropagation + std::chrono::minutes(1);
  auto moved = renew(soon->material, s, later);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->action, RenewalAction::ReissuedLeaf) << moved->reason;
  EXPECT_EQ(moved->material.caBundle, rotated->material.caBundle);
  EXPECT_TRUE(verifyServingChain(moved->material.serving.certificatePem, rotated->material.ca.certificatePem, host, later));
  // The old bundle (what a client that missed the rotation holds) would not verify it: hence the overlap.
  EXPECT_FALSE(verifyServingChain(moved->material.serving.certificatePem, m.caBundle, host, later));

  // After the old CA has expired it leaves the bundle.
  const Clock::time_point afterExpiry = caEnd + hours(1);
  auto pruned = renew(moved->material, s, afterExpiry);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->material.caBundle, rotated->material.ca.certificatePem);
}

TEST(Renewal, WithoutPropagationDelayTheLeafMovesAtOnce) {
  CertificateSpec s = spec(30, 365);
  s.trustPropagation = std::chrono::seconds(0);
  const CertificateMaterial m = fresh(s);
  const Clock::time_point now = notAfter(m.ca.certificatePem) - days(59);
  auto r = renew(m, s, now);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->action, RenewalAction::RotatedCa);
  EXPECT_TRUE(verifyServingChain(r->material.serving.certificatePem, r->material.ca.certificatePem, "placer", now));
}

struct DamageCase {
  const char* name;
  void (*damage)(CertificateMaterial&);
  RenewalAction expected;
};

class DamagedMaterialTest : public ::testing::TestWithParam<DamageCase> {};

TEST_P(DamagedMaterialTest, IsReplacedNotReported) {
  const CertificateSpec s = spec();
  CertificateMaterial m = fresh(s);
  GetParam().damage(m);
  auto r = renew(m, s, Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, GetParam().expected) << r->reason;
  EXPECT_TRUE(verifyServingChain(r->material.serving.certificatePem, r->material.caBundle, "placer"));
  EXPECT_TRUE(checkKeyMatchesCertificate(r->material.serving.certificatePem, r->material.serving.privateKeyPem));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DamagedMaterialTest,
    ::testing::Values(
        DamageCase{"EmptyServingCert", [](CertificateMaterial& m) { m.serving.certificatePem.clear(); },
                   RenewalAction::ReissuedLeaf},
        DamageCase{"ServingKeyFromAnotherPair",
                   [](CertificateMaterial& m) { m.serving.privateKeyPem = m.ca.privateKeyPem; },
                   RenewalAction::ReissuedLeaf},
        DamageCase{"GarbageCaKey", [](CertificateMaterial& m) { m.ca.privateKeyPem = "not a key"; },
                   RenewalAction::Created},
        DamageCase{"CaIsTheLeaf", [](CertificateMaterial& m) { m.ca = m.serving; }, RenewalAction::Created}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Renewal, InvalidSpecIsAnErrorNamingTheField) {
  struct Case {
    const char* name;
    CertificateSpec spec;
    const char* field;
  };
  CertificateSpec upper = spec();
  upper.service = "Placer";
  CertificateSpec noNs = spec();
  noNs.ns = "";
  const Case cases[] = {{"UppercaseService", upper, "service"},
                        {"EmptyNamespace", noNs, "namespace"},
                        {"ZeroDays", spec(0), "days"},
                        {"CaShorterThanLeaf", spec(365, 30), "ca-days"}};
  for (const Case& c : cases) {
    auto r = renew(std::nullopt, c.spec, Clock::now());
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().message.rfind(c.field, 0), 0u) << c.name << ": " << r.error().message;
  }
}

}  // namespace
}  // namespace placer::certs
