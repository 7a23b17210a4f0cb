#include "webhook/metrics.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace placer {
namespace {

std::string formatNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

void appendEscaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="1",b="2"}`, or "" without labels; `extra` is appended last (le="...").
std::string renderLabels(const MetricLabels& labels, std::string_view extraKey = {},
                         std::string_view extraValue = {}) {
  if (labels.empty() && extraKey.empty()) return {};
  std::string out = "{";
  bool first = true;
  auto one = [&](std::string_view k, std::string_view v) {
    if (!first) out += ',';
    first = false;
    out.append(k).append("=\"");
    appendEscaped(out, v, true);
    out += '"';
  };
  for (const auto& [k, v] : labels) one(k, v);
  if (!extraKey.empty()) one(extraKey, extraValue);
  out += '}';
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulativeCounts.push_back(running);
  }
  // Rendered from the buckets so that count equals the +Inf bucket even while
  // observations race with the scrape.
  s.count = running;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

std::vector<double> latencyBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

MetricsRegistry::Family& MetricsRegistry::family(std::string_view name, std::string_view help, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{type, std::string(help), {}, {}, {}, {}}).first;
  } else if (it->second.type != type) {
    std::fprintf(stderr, "metrics: %.*s registered with two types\n", int(name.size()), name.data());
    std::abort();
  }
  return it->second;
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help, const MetricLabels& labels) {
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, Type::Counter);
  std::string key = renderLabels(labels);
  auto& slot = f.counters[key];
  if (!slot) {
    slot = std::make_unique<Counter>();
    f.labels[key] = labels;
  }
  return *slot;
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help, const MetricLabels& labels) {
  return gaugeOfType(name, help, labels, Type::Gauge);
}

Gauge& MetricsRegistry::fractionalCounter(std::string_view name, std::string_view help, const MetricLabels& labels) {
  return gaugeOfType(name, help, labels, Type::FractionalCounter);
}

Gauge& MetricsRegistry::gaugeOfType(std::string_view name, std::string_view help, const MetricLabels& labels,
                                    Type type) {
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, type);
  std::string key = renderLabels(labels);
  auto& slot = f.gauges[key];
  if (!slot) {
    slot = std::make_unique<Gauge>();
    f.labels[key] = labels;
  }
  return *slot;
}

Histogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                      const std::vector<double>& bounds, const MetricLabels& labels) {
  std::lock_guard lock(mutex_);
  Family& f = family(name, help, Type::Histogram);
  std::string key = renderLabels(labels);
  auto& slot = f.histograms[key];
  if (!slot) {
    slot = std::make_unique<Histogram>(bounds);
    f.labels[key] = labels;
  }
  return *slot;
}

void MetricsRegistry::addCollector(std::function<void()> collector) {
  std::lock_guard lock(mutex_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::render() const {
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard lock(mutex_);
    collectors = collectors_;
  }
  for (const auto& c : collectors) c();

  std::lock_guard lock(mutex_);
  std::string out;
  out.reserve(4096);
  for (const auto& [name, f] : families_) {
    out.append("# HELP ").append(name).append(" ");
    appendEscaped(out, f.help, false);
    out.append("\n# TYPE ").append(name);
    switch (f.type) {
      case Type::Counter:
        out.append(" counter\n");
        for (const auto& [key, c] : f.counters)
          out.append(name).append(key).append(" ").append(std::to_string(c->value())).append("\n");
        break;
      case Type::FractionalCounter:
      case Type::Gauge:
        out.append(f.type == Type::Gauge ? " gauge\n" : " counter\n");
        for (const auto& [key, g] : f.gauges)
          out.append(name).append(key).append(" ").append(formatNumber(g->value())).append("\n");
        break;
      case Type::Histogram:
        out.append(" histogram\n");
        for (const auto& [key, h] : f.histograms) {
          const MetricLabels& labels = f.labels.at(key);
          Histogram::Snapshot s = h->snapshot();
          for (size_t i = 0; i < s.cumulativeCounts.size(); ++i) {
            std::string le = i < s.bounds.size() ? formatNumber(s.bounds[i]) : "+Inf";
            out.append(name).append("_bucket").append(renderLabels(labels, "le", le)).append(" ");
            out.append(std::to_string(s.cumulativeCounts[i])).append("\n");
          }
          out.append(name).append("_sum").append(key).append(" ").append(formatNumber(s.sum)).append("\n");
          out.append(name).append("_count").append(key).append(" ").append(std::to_string(s.count)).append("\n");
        }
        break;
    }
  }
  return out;
}

}  // namespace placer
