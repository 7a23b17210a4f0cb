// deploy/monitoring: the alerts pass `promtool check rules`, their unit tests
// (`promtool test rules`) make every alert fire and then resolve, and the
// Grafana dashboard is a dashboard whose every panel queries something. That
// every placer metric the rules and the dashboard name exists in a running
// placer is metrics_names_test.cpp's.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test/integration/deploy_support.h"

namespace placer {
namespace {

using namespace deploytest;

json prometheusRule() {
  std::ifstream in(kMonitoring / "prometheusrule.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto docs = yamlDocuments(text);
  return docs.size() == 1 ? docs[0] : json();
}

// A directory with the rule groups as a plain rule file (placer-rules.yaml,
// the PrometheusRule's spec) beside a copy of the unit tests, as
// prometheusrule_test.yaml expects.
fs::path promtoolDirectory() {
  const fs::path dir = fs::path(::testing::TempDir()) / ("placer-promtool-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "placer-rules.yaml") << prometheusRule()["spec"].dump(2);  // JSON is YAML
  fs::copy_file(kMonitoring / "prometheusrule_test.yaml", dir / "prometheusrule_test.yaml",
                fs::copy_options::overwrite_existing);
  return dir;
}

std::vector<std::string> alertNames() {
  std::vector<std::string> names;
  const json rule = prometheusRule();
  for (const json& group : rule["spec"]["groups"])
    for (const json& r : group["rules"])
      if (r.contains("alert")) names.push_back(r["alert"]);
  return names;
}

TEST(MonitoringTest, RulesPassPromtoolCheck) {
  const json rule = prometheusRule();
  ASSERT_EQ(rule["kind"], "PrometheusRule");
  ASSERT_FALSE(alertNames().empty());
  if (!haveTool("promtool")) return;
  const fs::path dir = promtoolDirectory();
  Command check = run("promtool check rules " + quoted(dir / "placer-rules.yaml"));
  EXPECT_EQ(check.status, 0) << check.out;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out;
  fs::remove_all(dir);
}

TEST(MonitoringTest, EveryAlertFiresAndResolvesInPromtoolUnitTests) {
  // Each alert has an evaluation where it fires and a later one where it is
  // gone again.
  std::ifstream in(kMonitoring / "prometheusrule_test.yaml");
  auto tests = yamlDocuments(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  ASSERT_EQ(tests.size(), 1u);
  std::map<std::string, double> firesAt;  // earliest firing evaluation, in minutes
  std::map<std::string, bool> resolvesAfter;
  auto minutes = [](const std::string& duration) { return std::stod(duration) * (duration.back() == 'h' ? 60 : 1); };
  std::vector<std::pair<std::string, std::pair<double, bool>>> evaluations;  // alert, (minute, firing)
  for (const json& test : tests[0]["tests"])
    for (const json& eval : test["alert_rule_test"])
      evaluations.push_back({eval["alertname"], {minutes(eval["eval_time"]), !eval["exp_alerts"].empty()}});
  for (const auto& [alert, at] : evaluations)
    if (at.second && (!firesAt.count(alert) || at.first < firesAt[alert])) firesAt[alert] = at.first;
  for (const auto& [alert, at] : evaluations)
    if (!at.second && firesAt.count(alert) && at.first > firesAt[alert]) resolvesAfter[alert] = true;
  const std::vector<std::string> alerts = alertNames();
  ASSERT_FALSE(alerts.empty());
  for (const std::string& alert : alerts) {
    EXPECT_TRUE(firesAt.count(alert)) << alert << " never fires in prometheusrule_test.yaml";
    EXPECT_TRUE(resolvesAfter[alert]) << alert << " never resolves after firing in prometheusrule_test.yaml";
  }

  if (!haveTool("promtool")) return;
  const fs::path dir = promtoolDirectory();
  Command test = run("cd " + quoted(dir) + " && promtool test rules prometheusrule_test.yaml");
  EXPECT_EQ(test.status, 0) << test.out;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out;
  fs::remove_all(dir);
}

TEST(MonitoringTest, DashboardPanelsEachQueryPrometheus) {
  std::ifstream in(kMonitoring / "placer-dashboard.json");
  json dashboard = json::parse(in, nullptr, false);
  ASSERT_FALSE(dashboard.is_discarded()) << "placer-dashboard.json is not JSON";
  EXPECT_EQ(dashboard["uid"], "placer");
  bool datasourceVariable = false;
  for (const json& v : dashboard["templating"]["list"]) datasourceVariable |= v["name"] == "datasource";
  EXPECT_TRUE(datasourceVariable) << "the dashboard must not be tied to one data source";
  std::set<int> ids;
  int panels = 0;
  for (const json& panel : dashboard["panels"]) {
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "duplicate panel id " << panel["id"];
    if (panel["type"] == "row") continue;
    ++panels;
    SCOPED_TRACE(panel["title"].get<std::string>());
    ASSERT_FALSE(panel["targets"].empty());
    for (const json& target : panel["targets"]) EXPECT_FALSE(target.value("expr", "").empty());
    EXPECT_EQ(panel["datasource"]["uid"], "${datasource}");
  }
  EXPECT_GE(panels, 10);
}

}  // namespace
}  // namespace placer
