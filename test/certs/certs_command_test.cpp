// `placer certs generate` as an operator runs it, checked with the openssl CLI.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "certs/x509.h"
#include "test/certs/cert_test_support.h"
#include "placer_test_paths.h"

namespace placer::certs {
namespace {

using testing::CommandResult;
using testing::runCommand;
using testing::slurp;
using testing::TempDir;

const std::string kPlacer = PLACER_BINARY;

CommandResult generate(const std::filesystem::path& dir, const std::string& extra = "") {
  return runCommand(kPlacer + " certs generate --service placer --namespace placer-system --out '" + dir.string() +
                    "' " + extra);
}

TEST(CertsGenerateCommand, WritesAVerifiableChainAndKeepsItOnTheNextRun) {
  TempDir tmp;
  CommandResult first = generate(tmp.path());
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("created"), std::string::npos) << first.output;

  const std::string certBefore = slurp(tmp.path() / "tls.crt");
  CommandResult second = generate(tmp.path());
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_NE(second.output.find("kept"), std::string::npos) << second.output;
  EXPECT_EQ(slurp(tmp.path() / "tls.crt"), certBefore);

  for (const char* key : {"ca.key", "tls.key"}) {
    struct stat st {};
    ASSERT_EQ(::stat((tmp.path() / key).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << key;
  }

  if (!testing::haveCommand("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  const std::string ca = (tmp.path() / "ca.crt").string();
  const std::string leaf = (tmp.path() / "tls.crt").string();
  CommandResult verify = runCommand("openssl verify -CAfile '" + ca + "' -purpose sslserver -verify_hostname "
                                    "placer.placer-system.svc '" + leaf + "'");
  EXPECT_EQ(verify.status, 0) << verify.output;
  CommandResult text = runCommand("openssl x509 -noout -text -in '" + leaf + "'");
  ASSERT_EQ(text.status, 0) << text.output;
  for (const char* expected :
       {"DNS:placer, DNS:placer.placer-system, DNS:placer.placer-system.svc, DNS:placer.placer-system.svc.cluster.local",
        "TLS Web Server Authentication", "CA:FALSE", "Digital Signature", "X509v3 Authority Key Identifier",
        "X509v3 Subject Key Identifier", "ASN1 OID: prime256v1"}) {
    EXPECT_NE(text.output.find(expected), std::string::npos) << expected;
  }
  // Valid for the default year, and not for 366 days.
  EXPECT_EQ(runCommand("openssl x509 -noout -checkend " + std::to_string(364 * 86400) + " -in '" + leaf + "'").status, 0);
  EXPECT_NE(runCommand("openssl x509 -noout -checkend " + std::to_string(366 * 86400) + " -in '" + leaf + "'").status, 0);
  CommandResult caText = runCommand("openssl x509 -noout -text -in '" + ca + "'");
  EXPECT_NE(caText.output.find("CA:TRUE"), std::string::npos);
  EXPECT_NE(caText.output.find("Certificate Sign"), std::string::npos);
}

TEST(CertsGenerateCommand, RsaLeafAllowsKeyEncipherment) {
  if (!testing::haveCommand("openssl")) GTEST_SKIP() << "openssl CLI not installed";
  TempDir tmp;
  CommandResult r = generate(tmp.path(), "--key-type rsa --days 30 --dns placer.example.com --ip 10.0.0.7");
  ASSERT_EQ(r.status, 0) << r.output;
  CommandResult text = runCommand("openssl x509 -noout -text -in '" + (tmp.path() / "tls.crt").string() + "'");
  EXPECT_NE(text.output.find("Digital Signature, Key Encipherment"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("Public-Key: (2048 bit)"), std::string::npos);
  EXPECT_NE(text.output.find("DNS:placer.example.com, IP Address:10.0.0.7"), std::string::npos);
}

TEST(CertsGenerateCommand, ChangedNamesRenewTheLeafButKeepTheCa) {
  TempDir tmp;
  ASSERT_EQ(generate(tmp.path()).status, 0);
  const std::string ca = slurp(tmp.path() / "ca.crt");
  CommandResult r = generate(tmp.path(), "--dns placer.example.com");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("reissued"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(tmp.path() / "ca.crt"), ca);
  EXPECT_TRUE(verifyServingChain(slurp(tmp.path() / "tls.crt"), ca, "placer.example.com"));
}

TEST(CertsGenerateCommand, BadArgumentsExitWithUsageNamingTheFlag) {
  struct Case {
    const char* name;
    const char* args;
    const char* mentions;
  };
  const Case cases[] = {
      {"NoService", "generate --namespace ns --out /tmp/x", "--service"},
      {"NoOut", "generate --service s --namespace ns", "--out"},
      {"DaysNotANumber", "generate --service s --namespace ns --out /tmp/x --days soon", "--days"},
      {"UnknownKeyType", "generate --service s --namespace ns --out /tmp/x --key-type dsa", "--key-type"},
      {"NamespaceNotADnsLabel", "generate --service s --namespace Bad_NS --out /tmp/x", "--namespace"},
      {"UnknownFlag", "generate --service s --namespace ns --out /tmp/x --colour blue", "--colour"},
      {"UnknownSubcommand", "rotate --service s --namespace ns", "rotate"},
  };
  for (const Case& c : cases) {
    CommandResult r = runCommand(kPlacer + " certs " + c.args);
    EXPECT_EQ(r.status, 2) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.mentions), std::string::npos) << c.name << ": " << r.output;
  }
  EXPECT_EQ(runCommand(kPlacer + " certs --help").status, 0);
}

}  // namespace
}  // namespace placer::certs
