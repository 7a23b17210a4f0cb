// Certificate rotation without restart, over real TLS handshakes.
#include "webhook/serving_certificate.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>

#include "test/webhook/webhook_fixture.h"

namespace placer::testing {
namespace {

namespace fs = std::filesystem;

void writeFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

certs::PemPair servingPair() {
  auto p = certs::generateServingCert(testPki().ca, {"localhost"}, {"127.0.0.1"}, 2, certs::KeyType::EcdsaP256);
  if (!p) throw std::runtime_error(p.error().message);
  return *p;
}

std::string serialOf(const std::string& pem) {
  auto info = certs::inspectCertificate(pem);
  return info ? info->serialHex : "unreadable";
}

// The layout the kubelet gives a mounted Secret: tls.crt -> ..data/tls.crt,
// ..data -> ..<timestamp>/, and a rotation swaps the ..data symlink at once.
class MountedSecret {
 public:
  MountedSecret() {
    dir_ = fs::temp_directory_path() / ("placer-cert-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter_++));
    fs::create_directories(dir_);
  }
  ~MountedSecret() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void publish(const std::string& cert, const std::string& key) {
    fs::path version = dir_ / ("..v" + std::to_string(version_++));
    fs::create_directories(version);
    writeFile(version / "tls.crt", cert);
    writeFile(version / "tls.key", key);
    fs::path tmp = dir_ / "..data_tmp";
    fs::remove(tmp);
    fs::create_directory_symlink(version.filename(), tmp);
    fs::rename(tmp, dir_ / "..data");  // atomic swap, as the kubelet does
    if (!fs::exists(fs::symlink_status(dir_ / "tls.crt"))) {
      fs::create_symlink("..data/tls.crt", dir_ / "tls.crt");
      fs::create_symlink("..data/tls.key", dir_ / "tls.key");
    }
  }
  std::string certFile() const { return (dir_ / "tls.crt").string(); }
  std::string keyFile() const { return (dir_ / "tls.key").string(); }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
  int version_ = 0;
};

class RotationTest : public ::testing::Test {
 protected:
  void startServer(std::shared_ptr<ServingCertificate> cert) {
    setLogOutput(nullptr);
    cert_ = cert;
    ListenerOptions o;
    o.address = "127.0.0.1:0";
    o.certificate = cert;
    o.routes = {Route{"GET", "/healthz", [](const HttpRequest&) { return HttpResponse::text(200, "ok\n"); }}};
    auto s = HttpServer::start(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(*s);
  }
  // The certificate a new connection is served, or "" when the handshake fails.
  std::string handshakeSerial() {
    ClientOptions o;
    o.port = server_->port();
    o.caPem = testPki().ca.certificatePem;
    auto c = HttpTestClient::connect(o);
    if (!c) return "";
    if ((*c)->request("GET", "/healthz")->status != 200) return "";
    return serialOf((*c)->peerCertificatePem());
  }

  std::shared_ptr<ServingCertificate> cert_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(RotationTest, TheNextHandshakeServesARotatedCertificateWithoutRestart) {
  MountedSecret secret;
  certs::PemPair first = servingPair();
  secret.publish(first.certificatePem, first.privateKeyPem);
  auto loaded = ServingCertificate::fromFiles(secret.certFile(), secret.keyFile());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::shared_ptr<ServingCertificate> cert = std::move(*loaded);
  startServer(cert);
  EXPECT_EQ(handshakeSerial(), serialOf(first.certificatePem));

  // A connection opened before the rotation keeps working.
  ClientOptions o;
  o.port = server_->port();
  o.caPem = testPki().ca.certificatePem;
  auto early = HttpTestClient::connect(o);
  ASSERT_TRUE(early.ok());

  certs::PemPair second = servingPair();
  secret.publish(second.certificatePem, second.privateKeyPem);
  cert->startPolling(std::chrono::milliseconds(20));
  std::string served;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((served = handshakeSerial()) != serialOf(second.certificatePem) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_EQ(served, serialOf(second.certificatePem));
  cert->stopPolling();
  EXPECT_EQ(cert->generation(), 2u);
  EXPECT_EQ((*early)->request("GET", "/healthz")->status, 200);
  EXPECT_EQ(serialOf((*early)->peerCertificatePem()), serialOf(first.certificatePem));
}

TEST_F(RotationTest, AHalfWrittenOrMismatchedPairIsRefusedAndTheOldOneKeepsServing) {
  MountedSecret secret;
  certs::PemPair first = servingPair();
  secret.publish(first.certificatePem, first.privateKeyPem);
  auto loaded = ServingCertificate::fromFiles(secret.certFile(), secret.keyFile());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  std::shared_ptr<ServingCertificate> cert = std::move(*loaded);
  startServer(cert);

  certs::PemPair second = servingPair();
  struct Case {
    std::string name, cert, key, error;
  };
  std::vector<Case> cases = {
      {"new certificate with the old key", second.certificatePem, first.privateKeyPem, "does not match"},
      {"certificate cut in half", second.certificatePem.substr(0, second.certificatePem.size() / 2),
       second.privateKeyPem, "certificate"},
      {"empty key", second.certificatePem, "", "key"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    secret.publish(c.cert, c.key);
    auto r = cert->reload();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
    EXPECT_EQ(handshakeSerial(), serialOf(first.certificatePem));
  }
  // Unchanged content is not reloaded; the completed rotation is.
  secret.publish(second.certificatePem, second.privateKeyPem);
  auto r = cert->reload();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
  EXPECT_FALSE(*cert->reload());
  EXPECT_EQ(handshakeSerial(), serialOf(second.certificatePem));
}

TEST(ServingCertificateTest, UnusableFilesAreAnErrorNamingTheFile) {
  auto missing = ServingCertificate::fromFiles("/nonexistent/tls.crt", "/nonexistent/tls.key");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/tls.crt"), std::string::npos);
  EXPECT_FALSE(ServingCertificate::fromPem("not a certificate", "nor a key").ok());
}

}  // namespace
}  // namespace placer::testing
