// Kubeconfig and in-cluster configuration, as kubectl / client-go read them.
#include "webhook/kube/kube_config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace placer::kube {
namespace {

using ::testing::HasSubstr;

// "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n" in base64.
constexpr const char* kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr const char* kCaBase64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/placer-kubeconfig-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::string path_;
};

std::string kubeconfig(const std::string& cluster, const std::string& user, const std::string& current = "test") {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "current-context: " + current + "\n"
         "contexts:\n"
         "- name: other\n"
         "  context: {cluster: nowhere, user: nobody}\n"
         "- name: test\n"
         "  context:\n"
         "    cluster: c1\n"
         "    user: u1\n"
         "    namespace: team-a\n"
         "clusters:\n"
         "- name: c1\n"
         "  cluster:\n" + cluster +
         "users:\n"
         "- name: u1\n"
         "  user:\n" + user;
}

TEST(KubeconfigTest, ReadsTheCurrentContext) {
  auto config = parseKubeconfig(kubeconfig("    server: https://api.example.com:6443/\n"
                                           "    certificate-authority-data: " + std::string(kCaBase64) + "\n",
                                           "    token: abc123\n"),
                                "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://api.example.com:6443");
  EXPECT_EQ(config->caPem, kCaPem);
  EXPECT_EQ(config->token, "abc123");
  EXPECT_EQ(config->namespace_, "team-a");
  EXPECT_FALSE(config->insecureSkipTlsVerify);
}

TEST(KubeconfigTest, ResolvesRelativeFilesAgainstTheKubeconfigDirectory) {
  TempDir dir;
  dir.write("ca.crt", kCaPem);
  dir.write("client.crt", "CERT");
  dir.write("client.key", "KEY");
  dir.write("token", "from-file\n");
  std::string path = dir.write("config", kubeconfig("    server: https://10.0.0.1\n"
                                                    "    certificate-authority: ca.crt\n",
                                                    "    client-certificate: client.crt\n"
                                                    "    client-key: " + dir.path() + "/client.key\n"
                                                    "    tokenFile: token\n"));
  auto config = loadKubeconfigFile(path);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->caPem, kCaPem);
  EXPECT_EQ(config->clientCertPem, "CERT");
  EXPECT_EQ(config->clientKeyPem, "KEY");
  EXPECT_EQ(config->tokenFile, dir.path() + "/token");
  EXPECT_THAT(config->source, HasSubstr(path));
}

TEST(KubeconfigTest, DataWinsOverFileAndInsecureIsRead) {
  auto config = parseKubeconfig(kubeconfig("    server: https://h\n"
                                           "    insecure-skip-tls-verify: true\n"
                                           "    tls-server-name: kubernetes.default\n",
                                           "    client-certificate-data: Q0VSVA==\n"   // CERT
                                           "    client-certificate: /does/not/exist\n"
                                           "    client-key-data: S0VZ\n"),              // KEY
                                "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->insecureSkipTlsVerify);
  EXPECT_EQ(config->tlsServerName, "kubernetes.default");
  EXPECT_EQ(config->clientCertPem, "CERT");
  EXPECT_EQ(config->clientKeyPem, "KEY");
}

TEST(KubeconfigTest, AcceptsJson) {
  auto config = parseKubeconfig(
      R"({"current-context":"x","contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],
          "clusters":[{"name":"c","cluster":{"server":"http://127.0.0.1:8080"}}],
          "users":[{"name":"u","user":{"token":"t"}}]})",
      "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "http://127.0.0.1:8080");
  EXPECT_EQ(config->namespace_, "default");
}

struct BadCase {
  const char* name;
  std::string text;
  const char* error;
};

class KubeconfigErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(KubeconfigErrorTest, NamesTheField) {
  auto config = parseKubeconfig(GetParam().text, "/nonexistent");
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KubeconfigErrorTest,
    ::testing::Values(
        BadCase{"NoCurrentContext", kubeconfig("    server: https://h\n", "    token: t\n", "\"\""), "current-context: not set"},
        BadCase{"UnknownContext", kubeconfig("    server: https://h\n", "    token: t\n", "missing"),
                "contexts: no entry named \"missing\""},
        BadCase{"UnknownCluster", kubeconfig("    server: https://h\n", "    token: t\n", "other"),
                "clusters: no entry named \"nowhere\""},
        BadCase{"NoServer", kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"),
                "clusters[0].cluster.server: not set"},
        BadCase{"ServerWithoutScheme", kubeconfig("    server: api.example.com\n", "    token: t\n"),
                "clusters[0].cluster.server: must start with https://"},
        BadCase{"BadBase64", kubeconfig("    server: https://h\n", "    client-certificate-data: Q0VSVA==\n    client-key-data: '!!'\n"),
                "users[0].user.client-key-data: invalid base64"},
        BadCase{"CertWithoutKey", kubeconfig("    server: https://h\n", "    client-certificate-data: Q0VSVA==\n"),
                "client certificate and client key must be given together"},
        BadCase{"MissingCaFile", kubeconfig("    server: https://h\n    certificate-authority: ca.pem\n", "    token: t\n"),
                "clusters[0].cluster.certificate-authority: /nonexistent/ca.pem: cannot open"},
        BadCase{"ExecPlugin", kubeconfig("    server: https://h\n", "    exec: {command: aws}\n"),
                "users[0].user.exec: credential plugins are not supported"},
        BadCase{"InsecureNotBool", kubeconfig("    server: https://h\n    insecure-skip-tls-verify: [1]\n", "    token: t\n"),
                "insecure-skip-tls-verify: must be a boolean"},
        BadCase{"NotYaml", "{unclosed", "kubeconfig:"}),
    [](const auto& info) { return info.param.name; });

TEST(InClusterConfigTest, UsesTheServiceAccountFiles) {
  TempDir dir;
  InClusterPaths paths{dir.write("token", "sa-token\n"), dir.write("ca.crt", kCaPem), dir.write("namespace", "placer\n")};
  auto config = inClusterConfig("10.96.0.1", "443", paths);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->tokenFile, paths.tokenFile);
  EXPECT_EQ(config->caPem, kCaPem);
  EXPECT_EQ(config->namespace_, "placer");
}

TEST(InClusterConfigTest, BracketsAnIpv6Host) {
  TempDir dir;
  InClusterPaths paths{dir.write("token", "t"), dir.write("ca.crt", kCaPem), dir.path() + "/none"};
  auto config = inClusterConfig("fd00::1", "6443", paths);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://[fd00::1]:6443");
}

TEST(InClusterConfigTest, ExplainsWhatIsMissing) {
  TempDir dir;
  InClusterPaths paths{dir.path() + "/token", dir.write("ca.crt", kCaPem), dir.path() + "/namespace"};
  auto noEnv = inClusterConfig("", "", paths);
  ASSERT_FALSE(noEnv);
  EXPECT_THAT(noEnv.error().message, HasSubstr("KUBERNETES_SERVICE_HOST"));
  auto noToken = inClusterConfig("10.96.0.1", "443", paths);
  ASSERT_FALSE(noToken);
  EXPECT_THAT(noToken.error().message, HasSubstr("in-cluster token: " + dir.path() + "/token: cannot open"));
}

}  // namespace
}  // namespace placer::kube
