#pragma once
// Metrics every Prometheus client library exports about its process, read
// from /proc when scraped (the names and meanings of client_golang's process
// collector), and placer's build:
//   process_cpu_seconds_total        counter  user + system CPU time
//   process_resident_memory_bytes    gauge    resident set size
//   process_virtual_memory_bytes     gauge    virtual memory size
//   process_open_fds                 gauge    open file descriptors
//   process_max_fds                  gauge    the open-files limit
//   process_start_time_seconds       gauge    start time, Unix seconds
//   placer_build_info{version,revision} gauge 1
//
// Thread-safety: as MetricsRegistry; the collector runs on the scraping thread.

#include <string>

#include "webhook/metrics.h"

namespace placer {

class ServingCertificate;

void registerProcessMetrics(MetricsRegistry& registry);
void registerBuildInfo(MetricsRegistry& registry);

// The version and revision placer_build_info reports (`placer version` too).
std::string buildVersion();
std::string buildRevision();

// placer_serving_certificate_expiry_seconds{listener}: the notAfter of the
// certificate `certificate` serves now, as Unix seconds (a reload is seen at
// the next scrape). `certificate` must outlive the registry's scrapes.
void registerCertificateExpiry(MetricsRegistry& registry, const ServingCertificate& certificate,
                               const std::string& listener);

}  // namespace placer
