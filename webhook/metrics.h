#pragma once
// A small Prometheus registry: counters, gauges and histograms with labels,
// rendered in the text exposition format 0.0.4 for GET /metrics.
//
// Usage: look a series up once (at start-up, or per request when its labels
// vary) and keep the reference; updating it is a lock-free atomic operation.
//
//   Counter& assigned = registry.counter("placer_admissions_total",
//       "Admission requests by outcome.", {{"outcome", "assigned"}});
//   assigned.inc();
//
// Thread-safety: every method of MetricsRegistry and of the series may be
// called from any thread. References to series stay valid for the registry's
// lifetime. A family's type and help are fixed by its first registration;
// asking for the same name with another type is a programming error (aborts).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace placer {

// Label pairs in the order they are rendered.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void inc(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double by) { value_.fetch_add(by, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // Upper bounds, strictly increasing; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulativeCounts;  // one per bound, then +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

// Latency buckets in seconds, from 50 µs to 10 s.
std::vector<double> latencyBuckets();

class MetricsRegistry {
 public:
  Counter& counter(std::string_view name, std::string_view help, const MetricLabels& labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, const MetricLabels& labels = {});
  Histogram& histogram(std::string_view name, std::string_view help, const std::vector<double>& bounds,
                       const MetricLabels& labels = {});
  // A counter whose value is not a whole number (CPU seconds), kept current by
  // a collector: a Gauge rendered with type counter. Only set() it upwards.
  Gauge& fractionalCounter(std::string_view name, std::string_view help, const MetricLabels& labels = {});

  // Called at the start of every render(), for values that are cheaper to read
  // when scraped than to keep current (nodes and pods in view). Collectors run
  // on the scraping thread and must not call render().
  void addCollector(std::function<void()> collector);

  // The whole registry in text format 0.0.4, families sorted by name.
  std::string render() const;

 private:
  enum class Type { Counter, FractionalCounter, Gauge, Histogram };
  struct Family {
    Type type;
    std::string help;
    // Keyed by the rendered label set, so the output order is stable.
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
    std::map<std::string, MetricLabels> labels;
  };
  Family& family(std::string_view name, std::string_view help, Type type);
  Gauge& gaugeOfType(std::string_view name, std::string_view help, const MetricLabels& labels, Type type);

  mutable std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;
  std::vector<std::function<void()>> collectors_;
};

// The content type of render()'s output.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace placer
