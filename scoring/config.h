#pragma once
// placer's configuration file (YAML or JSON). Either
//  - a KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1):
//    its first profile is used, placer's settings keep their defaults; or
//  - a PlacerConfiguration (apiVersion placer.io/v1alpha1, kind PlacerConfiguration):
//    placer's settings beside a "profile" written like a KubeSchedulerConfiguration profile.
// Unknown keys in placer's own settings are refused, so typos fail at start-up.
//
// PlacerConfiguration keys (README "Configuration" has a full example):
//   schedulerNames: [string]          fallbackSchedulerName: string
//   reservationTTL: Go duration ("30s", "1m30s")
//   excludedNamespaces: [string]      ownNamespace: string
//   placePodsWithBoundVolumes: bool
//   webhook:  {listen, tlsCertFile, tlsKeyFile, maxRequestBytes, workerThreads, maxConnections, maxQueuedRequests}
//   extender: {listen, tlsCertFile, tlsKeyFile, tokenFile}
//   metrics:  {listen}
//   profile:  one KubeSchedulerConfiguration profile (or profiles: [...], the first is used)

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scoring/profile.h"
#include "scoring/result.h"

namespace placer {

// Several replicas: a coordination.k8s.io/v1 Lease decides which one assigns
// (client-go's leader election: leaseDuration > renewDeadline > 1.2 x
// retryPeriod); the others forward each review to it.
struct LeaderElectionSettings {
  bool leaderElect = true;  // only with a live API feed (not --demo, --cluster-file)
  std::string resourceName = "placer";  // the Lease, in ownNamespace
  std::chrono::milliseconds leaseDuration{15000};
  std::chrono::milliseconds renewDeadline{10000};
  std::chrono::milliseconds retryPeriod{2000};
  // The name the leader's serving certificate carries, verified when a
  // follower forwards to it (empty: the <service>.<namespace>.svc name in this
  // replica's own serving certificate, which every replica shares).
  std::string forwardServerName;
  // The CA that signed the leader's certificate (empty: ca.crt beside
  // webhook.tlsCertFile, as `placer certs ensure` writes it).
  std::string forwardCAFile;
  // Bound on one forwarded review (connect, send, answer), well inside the
  // webhook's timeoutSeconds.
  std::chrono::milliseconds forwardTimeout{500};
};

struct PlacerSettings {
  // Pods whose spec.schedulerName is one of these are placed (an absent
  // schedulerName is "default-scheduler").
  std::vector<std::string> schedulerNames{"default-scheduler"};
  // When no node is feasible, spec.schedulerName is set to this (empty: left as is).
  std::string fallbackSchedulerName;
  std::chrono::milliseconds reservationTtl{30000};
  std::vector<std::string> excludedNamespaces{"kube-system", "kube-public", "kube-node-lease"};
  // Placer's own namespace is always excluded too (from POD_NAMESPACE when unset).
  std::string ownNamespace;
  // Pods with volumes that need binding (PVC, generic ephemeral) are left to kube-scheduler unless true.
  bool placePodsWithBoundVolumes = false;
  std::string webhookListen = "0.0.0.0:8443";
  // The scheduler-extender listener (kube-scheduler's fallback profile calls it).
  bool extenderEnabled = false;
  std::string extenderListen = "127.0.0.1:8888";
  std::string tlsCertFile;
  std::string tlsKeyFile;
  std::string extenderTlsCertFile;
  std::string extenderTlsKeyFile;
  std::string extenderTokenFile;  // bearer token required on a non-loopback extender listener
  size_t maxRequestBytes = 3 * 1024 * 1024;
  int workerThreads = 8;
  // A plain-HTTP listener serving only GET /metrics (empty: none; the
  // webhook's TLS listener serves /metrics either way).
  std::string metricsListen;
  // Per listener (webhook and extender): open connections beyond this are
  // closed at accept; fully received requests waiting for a worker beyond
  // maxQueuedRequests are answered at once (allowed unchanged on /mutate).
  int maxConnections = 4096;
  int maxQueuedRequests = 256;
  LeaderElectionSettings leaderElection;
};

struct PlacerConfiguration {
  PlacerSettings settings;
  std::shared_ptr<const Profile> profile;
};

// Accepts a parsed document (JSON value) of either kind, or null for all defaults.
Result<PlacerConfiguration> configurationFromJson(const nlohmann::json& document);
// Parses YAML or JSON text (JSON is YAML's subset; a leading '{' takes the JSON path).
Result<PlacerConfiguration> parseConfiguration(std::string_view text);
// Reads and parses a file; errors name the file.
Result<PlacerConfiguration> loadConfigurationFile(const std::string& path);

// Go's time.ParseDuration ("300ms", "1.5h", "2h45m", "-1s"; units ns us µs ms s m h).
Result<std::chrono::nanoseconds> parseGoDuration(std::string_view text);

}  // namespace placer
