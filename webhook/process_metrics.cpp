#include "webhook/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "webhook/serving_certificate.h"
// PLACER_REVISION, written at build time (webhook/revision.cmake).
#include "placer_revision.h"

namespace placer {
namespace {

std::string readWhole(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fields of /proc/self/stat after the command name (which may hold
// spaces and parentheses: it ends at the last ')'). fields[0] is field 3 (state).
std::vector<std::string> statFields() {
  std::string stat = readWhole("/proc/self/stat");
  size_t close = stat.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(stat.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

double bootTimeSeconds() {
  std::istringstream in(readWhole("/proc/stat"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  return 0;
}

double openFds() {
  std::error_code ec;
  double n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n - 1;  // the directory iterator's own descriptor
}

}  // namespace

std::string buildVersion() { return PLACER_VERSION; }
std::string buildRevision() { return PLACER_REVISION; }

void registerBuildInfo(MetricsRegistry& registry) {
  registry
      .gauge("placer_build_info", "placer's version and the source revision it was built from; always 1.",
             {{"version", buildVersion()}, {"revision", buildRevision()}})
      .set(1);
}

void registerProcessMetrics(MetricsRegistry& registry) {
  Gauge& cpu = registry.fractionalCounter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
  Gauge& resident = registry.gauge("process_resident_memory_bytes", "Resident memory size in bytes.");
  Gauge& virtualMemory = registry.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  Gauge& fds = registry.gauge("process_open_fds", "Number of open file descriptors.");
  Gauge& maxFds = registry.gauge("process_max_fds", "Maximum number of open file descriptors.");
  Gauge& start = registry.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.");

  const double ticks = double(sysconf(_SC_CLK_TCK));
  const double pageSize = double(sysconf(_SC_PAGESIZE));
  // Fields 14-15 (utime, stime) and 22 (starttime) in clock ticks, 23 vsize
  // in bytes, 24 rss in pages: proc(5).
  std::vector<std::string> at = statFields();
  if (at.size() > 19) start.set(bootTimeSeconds() + std::stod(at[19]) / ticks);

  registry.addCollector([&cpu, &resident, &virtualMemory, &fds, &maxFds, ticks, pageSize] {
    std::vector<std::string> f = statFields();
    if (f.size() > 21) {
      cpu.set((std::stod(f[11]) + std::stod(f[12])) / ticks);
      resident.set(std::stod(f[21]) * pageSize);
      virtualMemory.set(std::stod(f[20]));
    }
    fds.set(openFds());
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) maxFds.set(double(limit.rlim_cur));
  });
}

void registerCertificateExpiry(MetricsRegistry& registry, const ServingCertificate& certificate,
                               const std::string& listener) {
  Gauge& expiry = registry.gauge("placer_serving_certificate_expiry_seconds",
                                 "When the serving certificate expires (its notAfter), in Unix seconds.",
                                 {{"listener", listener}});
  registry.addCollector([&expiry, &certificate] {
    auto notAfter = certificate.notAfter();
    expiry.set(double(std::chrono::duration_cast<std::chrono::seconds>(notAfter.time_since_epoch()).count()));
  });
}

}  // namespace placer
