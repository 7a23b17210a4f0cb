// `placer serve`: the admission webhook over TLS, fed by the API server, a
// snapshot file or the built-in demo cluster.
#include <algorithm>
#include <csignal>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <pthread.h>
#include <sys/resource.h>
#include <random>
#include <limits>
#include <string>
#include <string_view>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "certs/x509.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "webhook/cli.h"
#include "webhook/cluster_feed.h"
#include "webhook/demo_cluster.h"
#include "webhook/extender.h"
#include "webhook/kube/event_recorder.h"
#include "webhook/http_server.h"
#include "webhook/kube/kube_config.h"
#include "webhook/kube/kube_feed.h"
#include "webhook/leader_election.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/process_metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/sync_progress.h"
#include "webhook/webhook_routes.h"

namespace placer {
namespace {

constexpr const char* kServeUsage =
    "usage: placer serve [--config FILE] [--kubeconfig FILE] [--cluster-file SNAPSHOT] [--demo]\n"
    "                    [--listen ADDR] [--tls-cert-file FILE --tls-key-file FILE]\n"
    "\n"
    "  --config FILE          PlacerConfiguration or KubeSchedulerConfiguration (YAML or JSON)\n"
    "  --kubeconfig FILE      API server credentials (default: in-cluster)\n"
    "  --cluster-file FILE    serve from a snapshot file instead of an API server\n"
    "  --demo                 serve a built-in example cluster with a generated self-signed certificate\n"
    "  --listen ADDR          webhook address (default 0.0.0.0:8443; 127.0.0.1:8443 with --demo)\n"
    "  --tls-cert-file FILE   serving certificate (PEM, reloaded when it changes)\n"
    "  --tls-key-file FILE    its private key\n"
    "  --extender-listen ADDR also serve the scheduler-extender endpoints there (e.g. 127.0.0.1:8888;\n"
    "                         with --demo, 127.0.0.1:8888 unless given)\n"
    "  --metrics-listen ADDR  also serve GET /metrics over plain HTTP there (e.g. 0.0.0.0:9090)\n"
    "  --leader-elect BOOL    take part in the election of the assigning replica (default: the\n"
    "                         configuration's leaderElection.leaderElect, true)\n"
    "  --log-level LEVEL, -v  debug, info (default), warning or error\n"
    "  --log-format FORMAT    json (default) or text\n";

constexpr auto kShutdownBound = std::chrono::seconds(20);

struct ServeArgs {
  std::string configFile;
  std::string kubeconfig;
  std::string clusterFile;
  std::string listen;
  std::string tlsCertFile;
  std::string tlsKeyFile;
  std::string extenderListen;
  std::string metricsListen;
  std::string leaderElect;  // "", "true" or "false"
  bool demo = false;
};

Result<ServeArgs> parseArgs(int argc, char** argv) {
  ServeArgs args;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string& out) -> Outcome {
      std::string_view flag = a;
      if (size_t eq = a.find('='); eq != std::string_view::npos) {
        out = std::string(a.substr(eq + 1));
        return {};
      }
      if (i + 1 >= argc) return Error{std::string(flag) + ": needs a value"};
      out = argv[++i];
      return {};
    };
    auto is = [&](std::string_view flag) { return a == flag || a.substr(0, flag.size() + 1) == std::string(flag) + "="; };
    Outcome o;
    if (is("--config")) {
      o = value(args.configFile);
    } else if (is("--kubeconfig")) {
      o = value(args.kubeconfig);
    } else if (is("--cluster-file")) {
      o = value(args.clusterFile);
    } else if (is("--listen")) {
      o = value(args.listen);
    } else if (is("--tls-cert-file")) {
      o = value(args.tlsCertFile);
    } else if (is("--tls-key-file")) {
      o = value(args.tlsKeyFile);
    } else if (is("--extender-listen")) {
      o = value(args.extenderListen);
    } else if (is("--metrics-listen")) {
      o = value(args.metricsListen);
    } else if (is("--leader-elect")) {
      o = value(args.leaderElect);
      if (o && args.leaderElect != "true" && args.leaderElect != "false")
        o = Error{"--leader-elect: must be true or false"};
    } else if (a == "--demo") {
      args.demo = true;
    } else {
      return Error{"unknown argument " + std::string(a)};
    }
    if (!o) return o.error();
  }
  if (args.demo && !args.clusterFile.empty()) return Error{"--demo and --cluster-file exclude each other"};
  return args;
}

bool writeFile(const std::filesystem::path& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), std::streamsize(content.size()));
  return bool(out);
}

// Demo: a fresh CA and a serving certificate for localhost, and the files the
// printed curl command uses.
struct DemoFiles {
  std::filesystem::path dir;
  std::filesystem::path caFile;
  std::filesystem::path reviewFile;
  std::filesystem::path extenderArgsFile;
  std::string certPem;
  std::string keyPem;
};

Result<DemoFiles> prepareDemo() {
  auto ca = certs::generateCa("placer-demo-ca", 7, certs::KeyType::EcdsaP256);
  if (!ca) return Error{"demo CA: " + ca.error().message};
  auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1", "::1"}, 7, certs::KeyType::EcdsaP256);
  if (!serving) return Error{"demo certificate: " + serving.error().message};
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "placer-demo-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return Error{"demo: cannot create a directory under " + base.string()};
  DemoFiles files;
  files.dir = pattern;
  files.caFile = files.dir / "ca.crt";
  files.reviewFile = files.dir / "admission-review.json";
  files.extenderArgsFile = files.dir / "extender-args.json";
  files.certPem = serving->certificatePem;
  files.keyPem = serving->privateKeyPem;
  if (!writeFile(files.caFile, ca->certificatePem) || !writeFile(files.reviewFile, demoAdmissionReview().dump(2)) ||
      !writeFile(files.extenderArgsFile, demoExtenderArgs().dump(2)))
    return Error{"demo: cannot write files in " + files.dir.string()};
  return files;
}

Result<std::string> readTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"extender token file " + path + ": cannot be read"};
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) return Error{"extender token file " + path + ": empty"};
  return token;
}

Result<std::unique_ptr<HttpServer>> startExtender(const PlacerSettings& settings, const std::string& kubeconfig,
                                                  bool staticView, const WebhookContext& webhook,
                                                  std::unique_ptr<ServingCertificate>& certificate,
                                                  std::unique_ptr<PodBinder>& binder) {
  ListenerOptions options;
  options.name = "extender";
  options.address = settings.extenderListen;
  options.maxBodyBytes = std::max<size_t>(settings.maxRequestBytes, 256u * 1024 * 1024);  // full NodeLists
  options.workerThreads = settings.workerThreads;
  // Its bodies are large by nature (whole NodeLists without nodeCacheCapable)
  // and it serves no admission: every request goes to its own workers.
  options.largeBodyBytes = std::numeric_limits<size_t>::max();
  options.maxConnections = settings.maxConnections;
  options.maxQueuedRequests = settings.maxQueuedRequests;
  options.metrics = webhook.metrics;
  const bool loopback = isLoopbackAddress(settings.extenderListen);
  if (!settings.extenderTlsCertFile.empty()) {
    auto cert = ServingCertificate::fromFiles(settings.extenderTlsCertFile, settings.extenderTlsKeyFile);
    if (!cert) return Error{"extender: " + cert.error().message};
    certificate = std::move(*cert);
    certificate->startPolling(std::chrono::seconds(2));
    registerCertificateExpiry(*webhook.metrics, *certificate, "extender");
    options.certificate =
        std::shared_ptr<const ServingCertificate>(certificate.get(), [](const ServingCertificate*) {});
  }
  if (!settings.extenderTokenFile.empty()) {
    auto token = readTokenFile(settings.extenderTokenFile);
    if (!token) return token.error();
    options.bearerToken = std::move(*token);
  }
  if (!loopback && (!options.certificate || options.bearerToken.empty()))
    return Error{"extender: listening on " + settings.extenderListen +
                 " (not loopback) needs extender.tlsCertFile, extender.tlsKeyFile and extender.tokenFile:"
                 " /bind can place any pod on any node"};
  if (!staticView) {
    auto made = makeApiBinder(kubeconfig);
    if (!made) return Error{"extender: " + made.error().message};
    binder = std::move(*made);
  }
  ExtenderContext context;
  context.engine = webhook.engine;
  context.state = webhook.state;
  context.feed = webhook.feed;
  context.metrics = webhook.metrics;
  context.binder = binder.get();
  context.reservationTtl = settings.reservationTtl;
  options.routes = extenderRoutes(context);
  auto server = HttpServer::start(std::move(options));
  if (!server) return Error{"extender: " + server.error().message};
  return server;
}

ListenerOptions metricsListenerOptions(const std::string& address, const MetricsRegistry& metrics) {
  ListenerOptions options;
  options.name = "metrics";
  options.address = address;
  options.maxBodyBytes = 4096;
  options.workerThreads = 2;
  options.routes = {Route{"GET", "/metrics", [&metrics](const HttpRequest&) {
                            return HttpResponse{200, std::string(kPrometheusContentType), metrics.render(), {}};
                          }}};
  return options;
}

// What the demo prints: ready-to-paste curl commands for the webhook and the
// extender, each of which works as printed.
void printDemo(const DemoFiles& demo, const std::string& listen, uint16_t port, uint16_t extenderPort,
               const std::string& source) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  const std::string url = "https://" + host + ":" + std::to_string(port);
  const std::string ca = demo.caFile.string();
  const std::string mutate =
      "curl -s --cacert " + ca + " -H 'Content-Type: application/json' --data @" + demo.reviewFile.string() + " " +
      url + "/mutate";
  std::string out = "placer demo: " + source + ", serving " + url + "\n";
  out += "Try the webhook (the answer's base64 \"patch\" assigns the pod to a node):\n\n";
  out += "  " + mutate + "\n\n";
  out += "Decode the patch:\n\n";
  out += "  " + mutate +
         " | python3 -c 'import json,sys,base64; print(base64.b64decode(json.load(sys.stdin)[\"response\"][\"patch\"]).decode())'\n\n";
  if (extenderPort != 0) {
    const std::string extender = "http://127.0.0.1:" + std::to_string(extenderPort);
    const std::string body = " -H 'Content-Type: application/json' --data @" + demo.extenderArgsFile.string() + " ";
    out += "Try the scheduler extender (what kube-scheduler asks for a pod left to it):\n\n";
    out += "  curl -s" + body + extender + "/filter\n";
    out += "  curl -s" + body + extender + "/prioritize\n\n";
  }
  out += "Metrics: curl -s --cacert " + ca + " " + url + "/metrics\n";
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

// The Events' reportingInstance: the placer pod's name (POD_NAME, from the
// downward API), else the host name, which is the pod's name in a cluster.
std::string reportingInstance() {
  if (const char* name = std::getenv("POD_NAME"); name != nullptr && *name != '\0') return name;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') return host;
  return "placer";
}

// Several replicas: the Lease, who this replica is, where followers reach it.
struct Replicas {
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<LeaderElector> elector;
  std::optional<RelayOptions> forwarding;  // how followers reach the leader
};

// client-go's identity is hostname_uuid: unique per process, so a restarted
// container is a new candidate and never inherits its predecessor's lease.
std::string replicaIdentity() {
  std::string name;
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') {
    name = pod;
  } else {
    char host[256] = {};
    name = gethostname(host, sizeof host - 1) == 0 ? host : "placer";
  }
  std::random_device random;
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
  return name + "_" + suffix;
}

// The pod watch has delivered every event up to `rv` (etcd revisions are
// one counter over every kind, so the Lease's write orders against pods).
bool podWatchReached(const ClusterFeed* feed, uint64_t rv) {
  const auto* live = dynamic_cast<const kube::KubeClusterFeed*>(feed);
  if (live == nullptr || live->podWatcher() == nullptr) return false;
  try {
    return std::stoull(live->podWatcher()->resourceVersion()) >= rv;
  } catch (const std::exception&) {
    return false;
  }
}

// Every replica serves the same certificate, for the Service's names: the
// follower verifies the leader for the <service>.<namespace>.svc name it
// carries (the name the API server uses too).
std::string serviceNameOf(const std::string& certFile, const std::string& ns) {
  auto pem = kube::readFileText(certFile);
  auto info = pem ? certs::inspectCertificate(*pem) : Result<certs::CertificateInfo>(Error{"unreadable"});
  if (info) {
    for (const std::string& name : info->dnsNames)
      if (name.size() > 4 && name.ends_with(".svc")) return name;
    if (!info->dnsNames.empty()) return info->dnsNames.front();
  }
  return "placer." + ns + ".svc";
}

Result<Replicas> prepareReplicas(const PlacerSettings& settings, const std::string& kubeconfig,
                                 const ClusterFeed* feed, MetricsRegistry& metrics) {
  const LeaderElectionSettings& le = settings.leaderElection;
  auto config = kubeconfig.empty() ? kube::loadInClusterConfig() : kube::loadKubeconfigFile(kubeconfig);
  if (!config) return Error{"leader election: " + config.error().message};
  kube::ApiClientOptions clientOptions;
  clientOptions.connectTimeout = le.retryPeriod;
  auto client = kube::ApiClient::create(*config, clientOptions);
  if (!client) return Error{"leader election: " + client.error().message};
  std::string ns = settings.ownNamespace;
  if (ns.empty()) ns = config->namespace_.empty() ? "default" : config->namespace_;
  Replicas out;
  out.client = std::move(*client);
  LeaderElectorOptions options;
  options.leaseNamespace = ns;
  options.leaseName = le.resourceName;
  options.identity = replicaIdentity();
  options.leaseDuration = le.leaseDuration;
  options.renewDeadline = le.renewDeadline;
  options.retryPeriod = le.retryPeriod;
  options.readyToLead = [feed] { return feed->synced(); };
  options.viewReached = [feed](uint64_t rv) { return podWatchReached(feed, rv); };
  options.metrics = &metrics;
  out.elector = std::make_unique<LeaderElector>(*out.client, std::move(options));

  std::string caFile = le.forwardCAFile;
  if (caFile.empty()) caFile = (std::filesystem::path(settings.tlsCertFile).parent_path() / "ca.crt").string();
  auto ca = kube::readFileText(caFile);
  if (!ca) {
    logEvent(LogLevel::Warning, "leader election: no CA to verify the leader with; followers will not forward",
             {{"caFile", caFile}, {"error", ca.error().message}});
  } else {
    RelayOptions forwarding;
    forwarding.serverName = le.forwardServerName.empty() ? serviceNameOf(settings.tlsCertFile, ns) : le.forwardServerName;
    forwarding.caPem = std::move(*ca);
    forwarding.timeout = le.forwardTimeout;
    forwarding.userAgent = "placer-forwarder";
    forwarding.headers = {{std::string(kForwardedByHeader), out.elector->identity()}};
    out.forwarding = std::move(forwarding);
  }
  logEvent(LogLevel::Info, "leader election",
           {{"lease", ns + "/" + le.resourceName}, {"identity", out.elector->identity()}});
  return out;
}

// host:port followers forward to: the pod's IP (downward API) and the port
// the webhook listens on.
std::string advertisedAddress(const std::string& listen, uint16_t port) {
  std::string host;
  if (const char* ip = std::getenv("POD_IP"); ip != nullptr && *ip != '\0') host = ip;
  if (host.empty()) host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return host + ":" + std::to_string(port);
}

int fail(std::string_view what) {
  std::fprintf(stderr, "placer serve: %.*s\n", int(what.size()), what.data());
  return 2;
}

}  // namespace

int runServe(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::fputs(kServeUsage, stdout);
      return 0;
    }
  auto args = parseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr, "placer serve: %s\n%s", args.error().message.c_str(), kServeUsage);
    return 2;
  }
  auto config = args->configFile.empty() ? configurationFromJson(nlohmann::json()) : loadConfigurationFile(args->configFile);
  if (!config) return fail(config.error().message);
  PlacerSettings settings = config->settings;
  if (settings.ownNamespace.empty())
    if (const char* ns = std::getenv("POD_NAMESPACE")) settings.ownNamespace = ns;
  std::string listen = !args->listen.empty() ? args->listen : args->demo ? "127.0.0.1:8443" : settings.webhookListen;
  if (!args->extenderListen.empty()) {
    settings.extenderEnabled = true;
    settings.extenderListen = args->extenderListen;
  } else if (args->demo) {
    // The demo shows both paths: the webhook and the extender (on loopback).
    settings.extenderEnabled = true;
    settings.extenderListen = "127.0.0.1:8888";
  }
  if (!args->metricsListen.empty()) settings.metricsListen = args->metricsListen;
  if (!args->leaderElect.empty()) settings.leaderElection.leaderElect = args->leaderElect == "true";
  if (!args->tlsCertFile.empty() || !args->tlsKeyFile.empty()) {
    settings.tlsCertFile = args->tlsCertFile;
    settings.tlsKeyFile = args->tlsKeyFile;
  }

  // Signals are taken by sigwait() below; every thread started from here on inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // Every connection is a descriptor: lift the soft limit (often 1,024) to
  // the hard one, so maxConnections is what bounds them.
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  MetricsRegistry metrics;
  registerProcessMetrics(metrics);
  registerBuildInfo(metrics);

  // The serving certificate.
  std::unique_ptr<ServingCertificate> certificate;
  std::optional<DemoFiles> demo;
  if (args->demo && settings.tlsCertFile.empty()) {
    auto files = prepareDemo();
    if (!files) return fail(files.error().message);
    auto cert = ServingCertificate::fromPem(files->certPem, files->keyPem);
    if (!cert) return fail(cert.error().message);
    certificate = std::move(*cert);
    demo = std::move(*files);
  } else {
    if (settings.tlsCertFile.empty() || settings.tlsKeyFile.empty())
      return fail("a serving certificate is required: --tls-cert-file and --tls-key-file (or tlsCertFile/tlsKeyFile in --config)");
    auto cert = ServingCertificate::fromFiles(settings.tlsCertFile, settings.tlsKeyFile);
    if (!cert) return fail(cert.error().message);
    certificate = std::move(*cert);
    certificate->startPolling(std::chrono::seconds(2));
  }
  registerCertificateExpiry(metrics, *certificate, "webhook");

  // The cluster view and where it comes from.
  // On a live cluster, what becomes of placed pods is followed through the
  // pod watch: kubelet rejections, and the Events that tell about decisions.
  std::unique_ptr<kube::ApiEventRecorder> events;
  std::unique_ptr<PlacedPods> placed;
  std::unique_ptr<ClusterFeed> feed;
  if (args->demo) {
    feed = makeDemoFeed();
  } else if (!args->clusterFile.empty()) {
    feed = makeSnapshotFeed(args->clusterFile);
  } else {
    auto recorder = kube::makeApiEventRecorder(args->kubeconfig, metrics, {.reportingInstance = reportingInstance()});
    if (!recorder) return fail(recorder.error().message);
    events = std::move(*recorder);
    placed = std::make_unique<PlacedPods>(metrics, events.get());
    auto api = makeApiFeed(ApiFeedOptions{args->kubeconfig, &metrics, placed.get()});
    if (!api) return fail(api.error().message);
    feed = std::move(*api);
  }
  ClusterState state;
  if (Outcome started = feed->start(state); !started) return fail(started.error().message);
  SyncProgressLog syncProgress(*feed, std::chrono::seconds(5));

  WebhookContext context;
  context.engine = std::make_shared<const Engine>(config->profile);
  context.state = &state;
  context.settings = settings;
  context.feed = feed.get();
  context.metrics = &metrics;
  context.placed = placed.get();

  Replicas replicas;
  if (settings.leaderElection.leaderElect && !args->demo && args->clusterFile.empty()) {
    auto prepared = prepareReplicas(settings, args->kubeconfig, feed.get(), metrics);
    if (!prepared) {
      feed->stop();
      return fail(prepared.error().message);
    }
    replicas = std::move(*prepared);
    context.leader = replicas.elector.get();
    context.forwarding = replicas.forwarding;
  }

  ReservationSweeper sweeper(state, metrics, context.clock);
  sweeper.start(std::chrono::seconds(1));

  ListenerOptions options;
  options.name = "webhook";
  options.address = listen;
  options.certificate = std::shared_ptr<const ServingCertificate>(certificate.get(), [](const ServingCertificate*) {});
  options.routes = webhookRoutes(context);
  options.maxBodyBytes = settings.maxRequestBytes;
  options.workerThreads = settings.workerThreads;
  options.maxConnections = settings.maxConnections;
  options.maxQueuedRequests = settings.maxQueuedRequests;
  options.metrics = &metrics;
  auto server = HttpServer::start(std::move(options));
  if (!server) {
    feed->stop();
    return fail(server.error().message);
  }

  // The extender listener: loopback by default (a sidecar of kube-scheduler);
  // anywhere else only with TLS and a bearer token, since /bind places any pod.
  std::unique_ptr<ServingCertificate> extenderCertificate;
  std::unique_ptr<PodBinder> binder;
  std::unique_ptr<HttpServer> extender;
  if (settings.extenderEnabled) {
    auto started = startExtender(settings, args->kubeconfig, args->demo || !args->clusterFile.empty(), context,
                                 extenderCertificate, binder);
    if (!started) {
      (*server)->stop(kShutdownBound);
      sweeper.stop();
      feed->stop();
      return fail(started.error().message);
    }
    extender = std::move(*started);
  }

  // The plain-HTTP metrics listener, for Prometheus inside the cluster.
  std::unique_ptr<HttpServer> metricsServer;
  if (!settings.metricsListen.empty()) {
    auto started = HttpServer::start(metricsListenerOptions(settings.metricsListen, metrics));
    if (!started) {
      if (extender) extender->stop(kShutdownBound);
      (*server)->stop(kShutdownBound);
      sweeper.stop();
      feed->stop();
      return fail("metrics: " + started.error().message);
    }
    metricsServer = std::move(*started);
  }

  if (demo) printDemo(*demo, listen, (*server)->port(), extender ? extender->port() : 0, feed->describe());
  if (replicas.elector) {
    replicas.elector->setAddress(advertisedAddress(listen, (*server)->port()));
    replicas.elector->start();
  }

  int signal = 0;
  sigwait(&signals, &signal);
  logEvent(LogLevel::Info, "shutting down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
  bool clean = (*server)->stop(kShutdownBound);
  // Every answer is written: hand the lease over now.
  if (replicas.elector) replicas.elector->stop(true);
  if (extender) clean = extender->stop(kShutdownBound) && clean;
  if (metricsServer) clean = metricsServer->stop(kShutdownBound) && clean;
  if (extenderCertificate) extenderCertificate->stopPolling();
  sweeper.stop();
  feed->stop();
  if (events) events->stop();
  certificate->stopPolling();
  if (demo) {
    // The printed commands' files go with the server they talk to.
    std::error_code ec;
    std::filesystem::remove_all(demo->dir, ec);
  }
  logEvent(LogLevel::Info, "stopped", {{"clean", clean}});
  if (!clean) {
    // Requests still running past the bound: leave them to the process exit.
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace placer
