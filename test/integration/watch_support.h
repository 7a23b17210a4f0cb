#pragma once
// Helpers of the watch integration tests: the fake API server's truth as the
// view should account it, a node-by-node comparison, and bounded waits.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/model.h"
#include "test/fakeapi/fake_apiserver.h"
#include "test/support/cluster_generator.h"

namespace placer::watchtest {

// Polls `condition` until it holds or `timeout` passes (a bounded wait on a
// condition, not a sleep for time to pass).
inline bool waitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

struct NodeTotals {
  Resources requested;
  int32_t pods = 0;
  std::vector<HostPort> ports;
};

// Zero-valued scalars left behind by subtraction compare equal to absent ones.
inline Resources normalized(Resources r) {
  std::erase_if(r.scalars, [](const auto& s) { return s.second == 0; });
  r.pods = 0;
  return r;
}

inline std::string describe(const Resources& r) {
  std::ostringstream out;
  out << "cpu=" << r.milliCpu << "m mem=" << r.memory << " eph=" << r.ephemeralStorage;
  for (const auto& [n, v] : r.scalars) out << " " << n << "=" << v;
  return out.str();
}

inline std::vector<HostPort> sortedPorts(std::vector<HostPort> ports) {
  std::sort(ports.begin(), ports.end(), [](const HostPort& a, const HostPort& b) {
    return std::tie(a.ip, a.protocol, a.port) < std::tie(b.ip, b.protocol, b.port);
  });
  return ports;
}

struct Truth {
  std::map<std::string, NodeTotals> nodes;
  size_t pods = 0;  // bound, non-terminal, decodable pods (also on nodes that do not exist)
};

// What the server holds, accounted as kube-scheduler's cache would.
inline Truth serverTruth(const fakeapi::FakeApiServer& server) {
  Truth truth;
  server.forEachText(fakeapi::Kind::Node, [&](std::string_view text) {
    auto node = decodeNode(nlohmann::json::parse(text));
    if (node) truth.nodes[node->name];
  });
  server.forEachText(fakeapi::Kind::Pod, [&](std::string_view text) {
    auto pod = decodePod(nlohmann::json::parse(text));
    if (!pod || pod->nodeName.empty() || pod->isTerminal()) return;
    ++truth.pods;
    auto it = truth.nodes.find(pod->nodeName);
    if (it == truth.nodes.end()) return;
    it->second.requested.add(pod->requests);
    ++it->second.pods;
    it->second.ports.insert(it->second.ports.end(), pod->hostPorts.begin(), pod->hostPorts.end());
  });
  return truth;
}

// "" when the view equals the server's truth node by node (requested totals,
// pod counts, host ports, the set of nodes, the number of pods); otherwise
// the first differences.
inline std::string compareWithServer(const ClusterState& state, const fakeapi::FakeApiServer& server) {
  Truth truth = serverTruth(server);
  return state.read([&](const ClusterView& view) {
    std::ostringstream diff;
    int shown = 0;
    auto note = [&](const std::string& line) {
      if (shown++ < 8) diff << line << "\n";
    };
    if (view.nodes().size() != truth.nodes.size())
      note("nodes: view " + std::to_string(view.nodes().size()) + ", server " + std::to_string(truth.nodes.size()));
    if (view.podCount() != truth.pods)
      note("pods: view " + std::to_string(view.podCount()) + ", server " + std::to_string(truth.pods));
    for (const auto& [name, want] : truth.nodes) {
      const NodeInfo* node = view.findNode(name);
      if (!node) {
        note("node " + name + ": missing from the view");
        continue;
      }
      if (node->podCount != want.pods)
        note("node " + name + ": pods view " + std::to_string(node->podCount) + ", server " + std::to_string(want.pods));
      if (normalized(node->requested) != normalized(want.requested))
        note("node " + name + ": requested view {" + describe(node->requested) + "}, server {" +
             describe(want.requested) + "}");
      if (sortedPorts(node->usedPorts) != sortedPorts(want.ports)) note("node " + name + ": host ports differ");
    }
    return diff.str();
  });
}

// Waits (bounded) until the view equals the server's truth; returns the last difference.
inline std::string waitConverged(const ClusterState& state, const fakeapi::FakeApiServer& server,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
  std::string diff;
  waitFor([&] { return (diff = compareWithServer(state, server)).empty(); }, timeout);
  return diff;
}

// Loads a generated cluster. The generator may repeat a pod name (names are
// drawn, not numbered); a repeat is renamed, as the standalone fake does.
inline bool loadGeneratedCluster(fakeapi::FakeApiServer& server, const GeneratorParams& params) {
  for (int n = 0; n < params.nodes; ++n)
    if (!server.load(fakeapi::Kind::Node, generateNode(params, n))) return false;
  for (int64_t p = 0; p < generatedPodCount(params); ++p) {
    nlohmann::json pod = generatePod(params, p);
    if (server.load(fakeapi::Kind::Pod, pod)) continue;
    pod["metadata"]["name"] = pod["metadata"]["name"].get<std::string>() + "-" + std::to_string(p);
    if (!server.load(fakeapi::Kind::Pod, pod)) return false;
  }
  return true;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/placer-watch-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file + ".tmp") << text;
    std::filesystem::rename(file + ".tmp", file);  // atomic, as the kubelet rotates tokens
    return file;
  }

 private:
  std::string path_;
};

// A kubeconfig for the fake server whose token is read from `tokenFile`.
inline std::string kubeconfigWithTokenFile(const fakeapi::FakeApiServer& server, const std::string& tokenFile) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
         "clusters:\n- name: fake\n  cluster:\n    server: " + server.url() + "\n"
         "    certificate-authority: " + server.caFile() + "\n"
         "users:\n- name: fake\n  user:\n    tokenFile: " + tokenFile + "\n"
         "contexts:\n- name: fake\n  context: {cluster: fake, user: fake}\n";
}

// One series of a Prometheus text exposition, or -1 when absent.
inline double metricValue(const std::string& text, const std::string& series) {
  size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return std::atof(text.c_str() + at + series.size() + 1);
    at += series.size();
  }
  return -1;
}

}  // namespace placer::watchtest
