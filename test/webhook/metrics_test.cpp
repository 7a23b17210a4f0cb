#include "webhook/metrics.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace placer {
namespace {

TEST(MetricsTest, RendersCountersAndGaugesInTextFormat004) {
  MetricsRegistry m;
  m.counter("placer_admissions_total", "Admission reviews answered, by outcome.", {{"outcome", "assigned"}}).inc(3);
  m.counter("placer_admissions_total", "ignored: the first help wins", {{"outcome", "error"}}).inc();
  m.gauge("placer_nodes_in_view", "Nodes in view.").set(5000);
  EXPECT_EQ(m.render(),
            "# HELP placer_admissions_total Admission reviews answered, by outcome.\n"
            "# TYPE placer_admissions_total counter\n"
            "placer_admissions_total{outcome=\"assigned\"} 3\n"
            "placer_admissions_total{outcome=\"error\"} 1\n"
            "# HELP placer_nodes_in_view Nodes in view.\n"
            "# TYPE placer_nodes_in_view gauge\n"
            "placer_nodes_in_view 5000\n");
}

TEST(MetricsTest, TheSameSeriesIsReturnedForTheSameLabels) {
  MetricsRegistry m;
  Counter& a = m.counter("c_total", "h", {{"k", "v"}});
  Counter& b = m.counter("c_total", "h", {{"k", "v"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &m.counter("c_total", "h", {{"k", "w"}}));
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry m;
  Histogram& h = m.histogram("d_seconds", "Latency.", {1, 2}, {{"route", "/mutate"}});
  h.observe(0.5);
  h.observe(1.5);
  h.observe(1.5);
  h.observe(4);
  EXPECT_EQ(m.render(),
            "# HELP d_seconds Latency.\n"
            "# TYPE d_seconds histogram\n"
            "d_seconds_bucket{route=\"/mutate\",le=\"1\"} 1\n"
            "d_seconds_bucket{route=\"/mutate\",le=\"2\"} 3\n"
            "d_seconds_bucket{route=\"/mutate\",le=\"+Inf\"} 4\n"
            "d_seconds_sum{route=\"/mutate\"} 7.5\n"
            "d_seconds_count{route=\"/mutate\"} 4\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  MetricsRegistry m;
  m.gauge("g", "line one\nback\\slash", {{"path", "a\"b\\c\nd"}}).set(1.5);
  EXPECT_EQ(m.render(),
            "# HELP g line one\\nback\\\\slash\n"
            "# TYPE g gauge\n"
            "g{path=\"a\\\"b\\\\c\\nd\"} 1.5\n");
}

TEST(MetricsTest, CollectorsRunAtRenderTime) {
  MetricsRegistry m;
  Gauge& g = m.gauge("pods", "Pods.");
  int calls = 0;
  m.addCollector([&] { g.set(++calls * 10); });
  EXPECT_NE(m.render().find("pods 10\n"), std::string::npos);
  EXPECT_NE(m.render().find("pods 20\n"), std::string::npos);
}

TEST(MetricsTest, ConcurrentIncrementsAreAllCounted) {
  MetricsRegistry m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        m.counter("n_total", "n", {{"outcome", "assigned"}}).inc();
        m.histogram("h", "h", latencyBuckets()).observe(0.0001);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.counter("n_total", "n", {{"outcome", "assigned"}}).value(), 40000u);
  EXPECT_EQ(m.histogram("h", "h", latencyBuckets()).snapshot().count, 40000u);
}

}  // namespace
}  // namespace placer
