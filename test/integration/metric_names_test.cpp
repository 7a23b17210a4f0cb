// Every placer metric the alerts (deploy/monitoring/prometheusrule.yaml) and
// the dashboard (deploy/monitoring/placer-dashboard.json) query exists in a
// running placer's /metrics: `placer serve` against the fake API server, its
// webhook and extender each asked once, scraped on its plain-HTTP listener.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "test/integration/live_placer.h"
#include "placer_test_paths.h"

namespace placer::integration {
namespace {

// The series names a scrape can show: each family, and a histogram's
// _bucket, _sum and _count.
std::set<std::string> exposedNames(const std::string& metrics) {
  std::set<std::string> names;
  std::regex type(R"(# TYPE (\S+) (\S+))");
  for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), type); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    names.insert(name);
    if ((*it)[2] == "histogram")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) names.insert(name + suffix);
  }
  return names;
}

std::set<std::string> namesIn(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::set<std::string> names;
  std::regex name(R"(\b((placer|process)_[a-z0-9_]+)\b)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), name); it != std::sregex_iterator(); ++it)
    names.insert((*it)[1]);
  return names;
}

TEST(MetricNamesTest, EveryMetricTheAlertsAndTheDashboardQueryExists) {
  LiveCluster cluster;
  GeneratorParams params;
  params.nodes = 20;
  params.podsPerNode = 3;
  ASSERT_TRUE(cluster.start(params));

  // One admission and one extender call, so every labelled series is there.
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "probe"}, {"namespace", "default"}}},
                        {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  EXPECT_FALSE(cluster.serveDecision(pod).first.empty());
  nlohmann::json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nlohmann::json::array()}};
  EXPECT_NE(cluster.plainPost(cluster.extenderPort, "/filter", args.dump()), "");

  const std::string metrics = cluster.plainGet(cluster.metricsPort, "/metrics");
  ASSERT_FALSE(metrics.empty());
  const std::set<std::string> exposed = exposedNames(metrics);
  const std::string monitoring = std::string(PLACER_SOURCE_DIR) + "/deploy/monitoring/";
  for (const char* file : {"prometheusrule.yaml", "placer-dashboard.json"}) {
    const std::set<std::string> named = namesIn(monitoring + file);
    EXPECT_GE(named.size(), 3u) << file;
    for (const std::string& name : named) EXPECT_TRUE(exposed.count(name)) << file << " queries " << name
                                                                             << ", which placer does not export";
  }
  EXPECT_EQ(cluster.serve->stop(), 0);
}

}  // namespace
}  // namespace placer::integration
