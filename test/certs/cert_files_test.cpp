#include "certs/cert_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace placer::certs {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::path(::testing::TempDir()) / "placer-certs-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

CertificateSpec spec() {
  CertificateSpec s;
  s.service = "placer";
  s.ns = "placer-system";
  return s;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

unsigned mode(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST(CertFiles, FirstRunCreatesFourFilesWithPrivateKeysOwnerOnly) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "nested" / "certs";
  auto r = ensureCertificateDir(dir, spec(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Created);

  struct Case {
    const char* file;
    unsigned mode;
  };
  for (const Case& c : {Case{kCaCertFile, 0644}, Case{kCaKeyFile, 0600}, Case{kServingCertFile, 0644},
                        Case{kServingKeyFile, 0600}}) {
    EXPECT_EQ(mode(dir / c.file), c.mode) << c.file;
  }
  EXPECT_TRUE(verifyServingChain(slurp(dir / kServingCertFile), slurp(dir / kCaCertFile),
                                 "placer.placer-system.svc.cluster.local"));
  EXPECT_TRUE(checkKeyMatchesCertificate(slurp(dir / kServingCertFile), slurp(dir / kServingKeyFile)));
  EXPECT_TRUE(checkKeyMatchesCertificate(slurp(dir / kCaCertFile), slurp(dir / kCaKeyFile)));
  // No temporary files are left behind.
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(entries, 4);
}

TEST(CertFiles, SecondRunKeepsValidFilesUntouched) {
  TempDir tmp;
  ASSERT_TRUE(ensureCertificateDir(tmp.path(), spec(), Clock::now()).ok());
  const std::string before = slurp(tmp.path() / kServingCertFile);
  const auto mtime = fs::last_write_time(tmp.path() / kServingCertFile);
  auto r = ensureCertificateDir(tmp.path(), spec(), Clock::now());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::Kept);
  EXPECT_EQ(slurp(tmp.path() / kServingCertFile), before);
  EXPECT_EQ(fs::last_write_time(tmp.path() / kServingCertFile), mtime) << "unchanged files are not rewritten";
}

TEST(CertFiles, RenewsWhenFewerThan30DaysRemain) {
  TempDir tmp;
  ASSERT_TRUE(ensureCertificateDir(tmp.path(), spec(), Clock::now()).ok());
  const std::string oldCa = slurp(tmp.path() / kCaCertFile);
  const std::string oldLeaf = slurp(tmp.path() / kServingCertFile);
  const Clock::time_point now = inspectCertificate(oldLeaf)->notAfter - hours(24 * 29);
  auto r = ensureCertificateDir(tmp.path(), spec(), now);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->action, RenewalAction::ReissuedLeaf);
  EXPECT_NE(slurp(tmp.path() / kServingCertFile), oldLeaf);
  EXPECT_EQ(slurp(tmp.path() / kCaCertFile), oldCa) << "a leaf renewal keeps the CA bundle";
  EXPECT_TRUE(verifyServingChain(slurp(tmp.path() / kServingCertFile), oldCa, "placer", now));
  EXPECT_EQ(mode(tmp.path() / kServingKeyFile), 0600u);
}

TEST(CertFiles, LooseKeyModeIsTightened) {
  TempDir tmp;
  ASSERT_TRUE(ensureCertificateDir(tmp.path(), spec(), Clock::now()).ok());
  ASSERT_EQ(::chmod((tmp.path() / kServingKeyFile).c_str(), 0644), 0);
  auto r = ensureCertificateDir(tmp.path(), spec(), Clock::now());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->action, RenewalAction::Kept);
  EXPECT_EQ(mode(tmp.path() / kServingKeyFile), 0600u);
}

TEST(CertFiles, MissingOrCorruptFilesAreReplaced) {
  struct Case {
    const char* name;
    const char* file;
    bool remove;
    RenewalAction expected;
  };
  const Case cases[] = {{"MissingLeaf", kServingCertFile, true, RenewalAction::ReissuedLeaf},
                        {"CorruptLeafKey", kServingKeyFile, false, RenewalAction::ReissuedLeaf},
                        {"MissingCaKey", kCaKeyFile, true, RenewalAction::Created},
                        {"CorruptCa", kCaCertFile, false, RenewalAction::Created}};
  for (const Case& c : cases) {
    TempDir tmp;
    ASSERT_TRUE(ensureCertificateDir(tmp.path(), spec(), Clock::now()).ok());
    if (c.remove) {
      fs::remove(tmp.path() / c.file);
    } else {
      std::ofstream(tmp.path() / c.file) << "garbage";
    }
    auto r = ensureCertificateDir(tmp.path(), spec(), Clock::now());
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message;
    EXPECT_EQ(r->action, c.expected) << c.name << ": " << r->reason;
    EXPECT_TRUE(verifyServingChain(slurp(tmp.path() / kServingCertFile), slurp(tmp.path() / kCaCertFile), "placer"))
        << c.name;
  }
}

TEST(CertFiles, UnusableDirectoryIsAnErrorNamingThePath) {
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "a file, not a directory";
  const fs::path dir = tmp.path() / "file" / "certs";
  auto r = ensureCertificateDir(dir, spec(), Clock::now());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(dir.string()), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace placer::certs
