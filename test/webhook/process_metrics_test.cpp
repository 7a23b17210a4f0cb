// The process_* metrics, placer_build_info and the certificate's expiry, as a
// scrape shows them.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "test/webhook/webhook_fixture.h"
#include "webhook/process_metrics.h"

namespace placer::testing {
namespace {

double value(const std::string& text, const std::string& series) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("(^|\n)" + series + " ([^\n]+)"))) return -1;
  return std::stod(m[2]);
}

double nowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(ProcessMetricsTest, DescribeThisProcess) {
  MetricsRegistry registry;
  registerProcessMetrics(registry);
  std::string first = registry.render();
  EXPECT_NE(first.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos) << first;
  EXPECT_GT(value(first, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(value(first, "process_virtual_memory_bytes"), value(first, "process_resident_memory_bytes"));
  EXPECT_GT(value(first, "process_max_fds"), 0);
  // Started before now, and not long ago (this test binary).
  const double start = value(first, "process_start_time_seconds");
  EXPECT_LE(start, nowSeconds() + 1);
  EXPECT_GT(start, nowSeconds() - 3600);

  // Three more open files are three more descriptors.
  const double fds = value(first, "process_open_fds");
  int opened[3];
  for (int& fd : opened) fd = open("/dev/null", O_RDONLY);
  EXPECT_EQ(value(registry.render(), "process_open_fds"), fds + 3);
  for (int fd : opened) close(fd);

  // CPU time grows with work done.
  const double cpu = value(first, "process_cpu_seconds_total");
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  volatile uint64_t spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  EXPECT_GT(value(registry.render(), "process_cpu_seconds_total"), cpu);
}

TEST(ProcessMetricsTest, BuildInfoCarriesVersionAndRevision) {
  MetricsRegistry registry;
  registerBuildInfo(registry);
  EXPECT_EQ(value(registry.render(),
                  "placer_build_info\\{version=\"" + buildVersion() + "\",revision=\"" + buildRevision() + "\"\\}"),
            1);
  EXPECT_FALSE(buildRevision().empty());
}

TEST(ProcessMetricsTest, CertificateExpiryIsTheServedCertificatesNotAfter) {
  auto cert = ServingCertificate::fromPem(testPki().serving.certificatePem, testPki().serving.privateKeyPem);
  ASSERT_TRUE(cert.ok());
  auto info = certs::inspectCertificate(testPki().serving.certificatePem);
  ASSERT_TRUE(info.ok());
  MetricsRegistry registry;
  registerCertificateExpiry(registry, **cert, "webhook");
  const double expected =
      double(std::chrono::duration_cast<std::chrono::seconds>(info->notAfter.time_since_epoch()).count());
  EXPECT_EQ(value(registry.render(), "placer_serving_certificate_expiry_seconds\\{listener=\"webhook\"\\}"), expected);
}

}  // namespace
}  // namespace placer::testing
