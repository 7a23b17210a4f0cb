// placer explain --snapshot FILE [--format json|table]
// placer explain --kubeconfig FILE (--pod-file FILE | --pod NS/NAME) [--config FILE]
//                [--format json|table] [--timeout DURATION]
//
// Replays one decision and prints why each node was or was not chosen. With a
// snapshot it runs offline on the snapshot's nodes, pods and config. With a
// kubeconfig it lists the live cluster through the same feed and view as
// `placer serve` (webhook/api_feed_factory.cpp), so it sees exactly what serve
// sees, with a progress line on stderr while it lists; the profile is the one
// of --config (serve's file), or the defaults. Exit codes: 0 with a decision
// (also when no node is feasible), 2 for bad flags, an unreadable or invalid
// input, a pod that cannot be fetched or a view that does not sync in time
// (message on stderr).
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/explain.h"
#include "scoring/snapshot.h"
#include "scoring/yaml.h"
#include "webhook/admission.h"
#include "webhook/cli.h"
#include "webhook/cluster_feed.h"
#include "webhook/kube/api_client.h"
#include "webhook/kube/kube_config.h"
#include "webhook/log.h"
#include "webhook/sync_progress.h"

namespace placer {
namespace {

constexpr const char* kExplainUsage =
    "usage: placer explain --snapshot FILE [--format json|table]\n"
    "       placer explain --kubeconfig FILE (--pod-file FILE | --pod NS/NAME) [--config FILE]\n"
    "                      [--format json|table] [--timeout DURATION]\n"
    "\n"
    "Runs the engine once and prints the decision: feasible nodes, the reasons of the\n"
    "others, every plugin's score and the selected node.\n"
    "\n"
    "  --snapshot FILE    offline, on a snapshot ({\"nodes\": [...], \"pods\": [...], \"pod\": {...},\n"
    "                     \"config\": {...}}); \"-\" reads standard input\n"
    "  --kubeconfig FILE  on the live cluster, listed as `placer serve` lists it\n"
    "  --pod-file FILE    the pod to place, YAML or JSON (as `kubectl get pod -o yaml` prints it)\n"
    "  --pod NS/NAME      the pod to place, fetched from the cluster (a pending pod)\n"
    "  --config FILE      placer's configuration, as given to `placer serve` (default: the defaults)\n"
    "  --timeout D        how long the cluster may take to list (Go duration, default 5m)\n";

int fail(const std::string& message) {
  std::fprintf(stderr, "placer explain: %s\n", message.c_str());
  return 2;
}

struct ExplainArgs {
  std::string snapshot;
  std::string kubeconfig;
  std::string podFile;
  std::string pod;
  std::string config;
  std::string format = "json";
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

Result<ExplainArgs> parseArgs(int argc, char** argv) {
  ExplainArgs args;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string* out = nullptr;
    std::string timeout;
    std::string_view flag = arg.substr(0, arg.find('='));
    if (flag == "--snapshot") out = &args.snapshot;
    else if (flag == "--kubeconfig") out = &args.kubeconfig;
    else if (flag == "--pod-file") out = &args.podFile;
    else if (flag == "--pod") out = &args.pod;
    else if (flag == "--config") out = &args.config;
    else if (flag == "--format") out = &args.format;
    else if (flag == "--timeout") out = &timeout;
    else return Error{"unknown argument \"" + std::string(arg) + "\""};
    if (flag.size() < arg.size()) {
      *out = std::string(arg.substr(flag.size() + 1));
    } else {
      if (i + 1 >= argc) return Error{std::string(flag) + " needs a value"};
      *out = argv[++i];
    }
    if (out->empty()) return Error{std::string(flag) + " needs a value"};
    if (out == &timeout) {
      auto d = parseGoDuration(timeout);
      if (!d || d->count() <= 0) return Error{"--timeout must be a positive duration such as 2m, not \"" + timeout + "\""};
      args.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    }
  }
  if (args.format != "json" && args.format != "table")
    return Error{"--format must be json or table, not \"" + args.format + "\""};
  if (args.snapshot.empty() == args.kubeconfig.empty())
    return Error{"give either --snapshot FILE or --kubeconfig FILE"};
  if (!args.snapshot.empty() && (!args.podFile.empty() || !args.pod.empty() || !args.config.empty()))
    return Error{"--snapshot carries its pod and config: --pod-file, --pod and --config go with --kubeconfig"};
  if (!args.kubeconfig.empty() && args.podFile.empty() == args.pod.empty())
    return Error{"--kubeconfig needs the pod to place: --pod-file FILE or --pod NAMESPACE/NAME"};
  return args;
}

int print(const Pod& pod, const Decision& decision, const std::string& format) {
  if (format == "json")
    std::cout << explainJson(pod, decision).dump(2) << "\n";
  else
    std::cout << explainTable(pod, decision);
  std::cout.flush();
  return std::cout ? 0 : 2;
}

int explainSnapshot(const ExplainArgs& args) {
  // The snapshot's objects stream straight into the view; what is left is the question.
  MutableClusterView view;
  auto query = loadSnapshotFile(args.snapshot, view);
  if (!query) return fail(query.error().message);
  if (!query->pod) return fail(args.snapshot + ": \"pod\" is required: the pod to place");
  auto config = configurationFromJson(query->config);
  if (!config) return fail(args.snapshot + ": config." + config.error().message);
  for (const std::string& warning : config->profile->warnings())
    std::fprintf(stderr, "placer explain: warning: config.%s\n", warning.c_str());

  Engine engine(config->profile);
  return print(*query->pod, engine.place(*query->pod, view, Detail::Full), args.format);
}

// The pod object from --pod-file (YAML or JSON) or from the API server (--pod).
Result<nlohmann::json> loadPod(const ExplainArgs& args) {
  if (!args.podFile.empty()) {
    auto text = kube::readFileText(args.podFile);
    if (!text) return text.error();
    size_t first = text->find_first_not_of(" \t\r\n");
    Result<nlohmann::json> pod = first != std::string::npos && (*text)[first] == '{'
                                     ? Result<nlohmann::json>(nlohmann::json::parse(*text, nullptr, false))
                                     : parseYaml(*text);
    if (!pod || pod->is_discarded()) return Error{args.podFile + ": neither YAML nor JSON"};
    if (!pod->is_object() || pod->value("kind", "Pod") != "Pod")
      return Error{args.podFile + ": expected a Pod (as `kubectl get pod NAME -o yaml` prints it)"};
    return pod;
  }
  size_t slash = args.pod.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == args.pod.size() ||
      args.pod.find('/', slash + 1) != std::string::npos)
    return Error{"--pod must be NAMESPACE/NAME, not \"" + args.pod + "\""};
  auto config = kube::loadKubeconfigFile(args.kubeconfig);
  if (!config) return config.error();
  auto client = kube::ApiClient::create(*config);
  if (!client) return client.error();
  kube::Connection connection(**client);
  const std::string ns = args.pod.substr(0, slash), name = args.pod.substr(slash + 1);
  auto response = connection.send("GET", "/api/v1/namespaces/" + kube::urlEncode(ns) + "/pods/" + kube::urlEncode(name),
                                  "", "", std::chrono::seconds(30));
  if (!response) return Error{"get pod " + args.pod + ": " + response.error().message};
  if (response->status == 404) return Error{"pod " + args.pod + " not found"};
  if (response->status != 200) {
    auto status = nlohmann::json::parse(response->body, nullptr, false);
    std::string message = status.is_object() ? status.value("message", "") : "";
    return Error{"get pod " + args.pod + ": HTTP " + std::to_string(response->status) +
                 (message.empty() ? "" : ": " + message)};
  }
  auto pod = nlohmann::json::parse(response->body, nullptr, false);
  if (!pod.is_object()) return Error{"get pod " + args.pod + ": the answer is not JSON"};
  return pod;
}

int explainLive(const ExplainArgs& args) {
  auto config = args.config.empty() ? configurationFromJson(nlohmann::json()) : loadConfigurationFile(args.config);
  if (!config) return fail(config.error().message);
  for (const std::string& warning : config->profile->warnings())
    std::fprintf(stderr, "placer explain: warning: %s\n", warning.c_str());
  auto object = loadPod(args);
  if (!object) return fail(object.error().message);
  auto pod = decodePod(*object);
  if (!pod) return fail("the pod: " + pod.error().message);
  if (pod->namespace_.empty()) pod->namespace_ = "default";
  if (std::string why = whyLeftAlone(*pod, config->settings); !why.empty())
    std::fprintf(stderr, "placer explain: note: placer serve leaves this pod alone (%s); the engine's decision follows\n",
                 why.c_str());

  auto feed = makeApiFeed(ApiFeedOptions{args.kubeconfig, nullptr});
  if (!feed) return fail(feed.error().message);
  ClusterState state;
  if (Outcome started = (*feed)->start(state); !started) return fail(started.error().message);
  bool synced = false;
  {
    SyncProgressLog progress(**feed, std::chrono::seconds(1));
    synced = progress.waitSynced(args.timeout);
  }
  if (!synced) {
    (*feed)->stop();
    return fail("the cluster view did not sync within the timeout (" + (*feed)->describe() + ")");
  }
  (*feed)->stop();  // a decision on the view as listed

  // A pod already in the view (bound, or counted while it runs) is taken out
  // first: the question is where it would go, not where it stands.
  if (!pod->nodeName.empty()) {
    state.removePod(podKey(*pod));
    std::fprintf(stderr, "placer explain: note: %s is bound to %s; deciding as if it were not\n", pod->key().c_str(),
                 pod->nodeName.c_str());
  }
  Engine engine(config->profile);
  Decision decision =
      state.readForDecision([&](const ClusterView& view) { return engine.place(*pod, view, Detail::Full); });
  return print(*pod, decision, args.format);
}

}  // namespace

int runExplain(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "-h" || std::string_view(argv[i]) == "--help") {
      std::fputs(kExplainUsage, stdout);
      return 0;
    }
  auto args = parseArgs(argc, argv);
  if (!args) {
    std::fputs(kExplainUsage, stderr);
    return fail(args.error().message);
  }
  try {
    return args->snapshot.empty() ? explainLive(*args) : explainSnapshot(*args);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}

}  // namespace placer
