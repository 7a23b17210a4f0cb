#include "scoring/config.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "placer_test_paths.h"

namespace placer {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

struct DurationCase {
  std::string text;
  std::chrono::nanoseconds expected;
};

class GoDurations : public ::testing::TestWithParam<DurationCase> {};

TEST_P(GoDurations, ParseAsGoDoes) {
  auto d = parseGoDuration(GetParam().text);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->count(), GetParam().expected.count());
}

INSTANTIATE_TEST_SUITE_P(, GoDurations,
                         ::testing::Values(DurationCase{"30s", 30s}, DurationCase{"1m30s", 90s},
                                           DurationCase{"1.5h", 90min}, DurationCase{"300ms", 300ms},
                                           DurationCase{"2h45m", 165min}, DurationCase{"0", 0s},
                                           DurationCase{"-1.5s", -1500ms}, DurationCase{"1us", 1us},
                                           DurationCase{"1\xC2\xB5s", 1us}, DurationCase{".5s", 500ms},
                                           DurationCase{"1.s", 1s}, DurationCase{"10ns", 10ns}));

TEST(GoDurationErrors, RefuseWhatGoRefuses) {
  for (std::string bad : {"", "30", "1x", "s", ".s", "1m30", "--1s", "1.5.5s", "99999999999999999999s", "3000000h"}) {
    auto d = parseGoDuration(bad);
    EXPECT_FALSE(d.ok()) << "\"" << bad << "\"";
  }
}

TEST(Configuration, NothingMeansAllDefaults) {
  auto config = configurationFromJson(json(nullptr));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->settings.schedulerNames, std::vector<std::string>{"default-scheduler"});
  EXPECT_EQ(config->settings.reservationTtl, 30s);
  EXPECT_EQ(config->profile->scorePlugins().size(), 7u);
}

constexpr const char* kPlacerYaml = R"(apiVersion: placer.io/v1alpha1
kind: PlacerConfiguration
schedulerNames: [default-scheduler, placer]
fallbackSchedulerName: default-scheduler
reservationTTL: 1m30s
excludedNamespaces:
  - kube-system
  - monitoring
ownNamespace: placer-system
placePodsWithBoundVolumes: true
webhook:
  listen: 0.0.0.0:9443
  tlsCertFile: /etc/placer/tls/tls.crt
  tlsKeyFile: /etc/placer/tls/tls.key
  maxRequestBytes: 1048576
  workerThreads: 4
  maxConnections: 2048
  maxQueuedRequests: 32
extender:
  listen: 127.0.0.1:8889
  tokenFile: /var/run/secrets/placer/token
metrics:
  listen: 0.0.0.0:9090
leaderElection:
  leaderElect: true
  resourceName: placer-a
  leaseDuration: 20s
  renewDeadline: 12s
  retryPeriod: 3s
  forwardServerName: placer.placer-system.svc
  forwardCAFile: /certs/ca.crt
  forwardTimeout: 300ms
profile:
  plugins:
    score:
      enabled:
        - name: NodeResourcesFit
          weight: 5
  pluginConfig:
    - name: NodeResourcesFit
      args:
        scoringStrategy:
          type: MostAllocated
)";

TEST(Configuration, PlacerConfigurationInYaml) {
  auto config = parseConfiguration(kPlacerYaml);
  ASSERT_TRUE(config.ok()) << config.error().message;
  const PlacerSettings& s = config->settings;
  EXPECT_EQ(s.schedulerNames, (std::vector<std::string>{"default-scheduler", "placer"}));
  EXPECT_EQ(s.fallbackSchedulerName, "default-scheduler");
  EXPECT_EQ(s.reservationTtl, 90s);
  EXPECT_EQ(s.excludedNamespaces, (std::vector<std::string>{"kube-system", "monitoring"}));
  EXPECT_EQ(s.ownNamespace, "placer-system");
  EXPECT_TRUE(s.placePodsWithBoundVolumes);
  EXPECT_EQ(s.webhookListen, "0.0.0.0:9443");
  EXPECT_EQ(s.tlsCertFile, "/etc/placer/tls/tls.crt");
  EXPECT_EQ(s.tlsKeyFile, "/etc/placer/tls/tls.key");
  EXPECT_EQ(s.maxRequestBytes, 1048576u);
  EXPECT_EQ(s.workerThreads, 4);
  EXPECT_EQ(s.maxConnections, 2048);
  EXPECT_EQ(s.maxQueuedRequests, 32);
  EXPECT_EQ(s.extenderListen, "127.0.0.1:8889");
  EXPECT_EQ(s.extenderTokenFile, "/var/run/secrets/placer/token");
  EXPECT_EQ(s.metricsListen, "0.0.0.0:9090");
  EXPECT_TRUE(s.leaderElection.leaderElect);
  EXPECT_EQ(s.leaderElection.resourceName, "placer-a");
  EXPECT_EQ(s.leaderElection.leaseDuration, 20s);
  EXPECT_EQ(s.leaderElection.renewDeadline, 12s);
  EXPECT_EQ(s.leaderElection.retryPeriod, 3s);
  EXPECT_EQ(s.leaderElection.forwardServerName, "placer.placer-system.svc");
  EXPECT_EQ(s.leaderElection.forwardCAFile, "/certs/ca.crt");
  EXPECT_EQ(s.leaderElection.forwardTimeout, 300ms);
  ASSERT_FALSE(config->profile->scorePlugins().empty());
  EXPECT_EQ(config->profile->scorePlugins()[0].plugin->name(), "NodeResourcesFit");
  EXPECT_EQ(config->profile->scorePlugins()[0].weight, 5);
}

TEST(Configuration, KubeSchedulerConfigurationUsesItsFirstProfile) {
  auto config = parseConfiguration(R"({
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "profiles": [
      {"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}},
      {"schedulerName": "other"}
    ]})");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->profile->scorePlugins().empty());
  EXPECT_EQ(config->settings.schedulerNames, std::vector<std::string>{"default-scheduler"});
}

TEST(Configuration, TheExampleFileLoads) {
  auto config = loadConfigurationFile(PLACER_SOURCE_DIR "/deploy/examples/placer-config.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->profile->warnings().empty());
}

struct ErrorCase {
  std::string name;
  std::string text;
  std::string error;  // substring
};

class ConfigurationErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ConfigurationErrors, AreRefusedNamingTheField) {
  auto config = parseConfiguration(GetParam().text);
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(config.error().message, HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    , ConfigurationErrors,
    ::testing::Values(
        ErrorCase{"typo_in_a_setting", "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nreservationTtl: 30s\n",
                  "reservationTtl: unknown field"},
        ErrorCase{"bad_duration", "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nreservationTTL: 30\n",
                  "reservationTTL: must be a duration string"},
        ErrorCase{"duration_without_unit",
                  "{\"apiVersion\": \"placer.io/v1alpha1\", \"kind\": \"PlacerConfiguration\", \"reservationTTL\": \"30\"}",
                  "reservationTTL: missing unit in duration \"30\""},
        ErrorCase{"negative_ttl", "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nreservationTTL: -5s\n",
                  "reservationTTL: must be positive"},
        ErrorCase{"listen_without_port",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nwebhook:\n  listen: localhost\n",
                  "webhook.listen: must be host:port"},
        ErrorCase{"metrics_listen_without_port",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nmetrics:\n  listen: \":x\"\n",
                  "metrics.listen: must be host:port"},
        ErrorCase{"metrics_unknown_field",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nmetrics:\n  port: 9090\n",
                  "metrics.port: unknown field"},
        ErrorCase{"worker_threads_zero",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nwebhook:\n  workerThreads: 0\n",
                  "webhook.workerThreads: must be between 1 and 1024"},
        ErrorCase{"scheduler_names_not_a_list",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nschedulerNames: default-scheduler\n",
                  "schedulerNames: must be a list of strings"},
        ErrorCase{"unknown_plugin_in_the_profile",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nprofile:\n  plugins:\n    filter:\n"
                  "      enabled:\n        - name: Foo\n",
                  "profile.plugins.filter.enabled[0].name: unknown plugin \"Foo\""},
        ErrorCase{"unknown_plugin_in_a_scheduler_profile",
                  "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"kind\": \"KubeSchedulerConfiguration\","
                  " \"profiles\": [{\"plugins\": {\"score\": {\"enabled\": [{\"name\": \"A\"}, {\"name\": \"B\"},"
                  " {\"name\": \"Foo\"}]}}}]}",
                  "profiles[0].plugins.score.enabled[0].name: unknown plugin \"A\""},
        ErrorCase{"lease_not_longer_than_renew_deadline",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nleaderElection:\n  leaseDuration: 10s\n",
                  "leaderElection.leaseDuration: must be greater than renewDeadline"},
        ErrorCase{"renew_deadline_within_jittered_retry",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nleaderElection:\n  retryPeriod: 9s\n",
                  "leaderElection.renewDeadline: must be greater than 1.2 x retryPeriod"},
        ErrorCase{"leader_election_unknown_field",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nleaderElection:\n  resourceLock: leases\n",
                  "leaderElection.resourceLock: unknown field"},
        ErrorCase{"leader_election_bad_duration",
                  "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nleaderElection:\n  retryPeriod: 2\n",
                  "leaderElection.retryPeriod: must be a duration string"},
        ErrorCase{"missing_kind", "apiVersion: placer.io/v1alpha1\n", "kind: Required value"},
        ErrorCase{"wrong_api_version", "apiVersion: placer.io/v2\nkind: PlacerConfiguration\n",
                  "apiVersion: \"placer.io/v2\" is not supported"},
        ErrorCase{"broken_json", "{\"kind\": ", "invalid JSON"},
        ErrorCase{"not_an_object", "[1, 2]", "must be an object"}),
    [](const auto& info) { return info.param.name; });

TEST(Configuration, FileErrorsNameTheFile) {
  auto missing = loadConfigurationFile("/nonexistent/placer.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/placer.yaml: cannot read"));

  std::string path = ::testing::TempDir() + "/placer-config-test.yaml";
  std::ofstream(path) << "apiVersion: placer.io/v1alpha1\nkind: PlacerConfiguration\nbogus: 1\n";
  auto bad = loadConfigurationFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, path + ": bogus: unknown field");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace placer
