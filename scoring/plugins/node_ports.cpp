#include "scoring/plugins/node_ports.h"

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

constexpr std::string_view kBindAllHostIp = "0.0.0.0";
constexpr std::string_view kProtocolTcp = "TCP";

std::string_view ipOf(const HostPort& p) { return p.ip.empty() ? kBindAllHostIp : std::string_view(p.ip); }
std::string_view protocolOf(const HostPort& p) {
  return p.protocol.empty() ? kProtocolTcp : std::string_view(p.protocol);
}

struct WantedPorts final : StateData {
  std::vector<HostPort> ports;
  std::vector<const HostPort*> byPort;  // into ports, sorted by port number
};

// Past this many wanted ports, a node's used ports are looked up among the
// wanted ones (O(used log wanted)) instead of each wanted port scanning the
// used ones (O(wanted x used)): a pod may declare tens of thousands.
constexpr size_t kIndexedPorts = 8;

constexpr std::string_view kStateKey = "PreFilterNodePorts";

// util.GetHostPorts: restartable init containers (they run for the pod's whole
// life) first, then the regular containers; only hostPort > 0.
std::vector<HostPort> wantedHostPorts(const Pod& pod) {
  std::vector<HostPort> ports;
  auto collect = [&ports](const Container& c) {
    for (const HostPort& p : c.hostPorts)
      if (p.port > 0) ports.push_back(p);
  };
  for (const Container& c : pod.initContainers)
    if (c.restartableInit) collect(c);
  for (const Container& c : pod.containers) collect(c);
  if (ports.empty()) {
    // A pod built without per-container ports (only the derived list) still counts.
    for (const HostPort& p : pod.hostPorts)
      if (p.port > 0) ports.push_back(p);
  }
  return ports;
}

class NodePorts final : public PreFilterPlugin, public FilterPlugin {
 public:
  std::string_view name() const override { return names::kNodePorts; }
  bool resultsReusable() const override { return true; }  // see Plugin

  Status preFilter(CycleState& state, const Pod& pod, const ClusterView&) const override {
    std::vector<HostPort> ports = wantedHostPorts(pod);
    if (ports.empty()) return Status::skip();
    auto data = std::make_unique<WantedPorts>();
    data->ports = std::move(ports);
    if (data->ports.size() > kIndexedPorts) {
      for (const HostPort& p : data->ports) data->byPort.push_back(&p);
      std::sort(data->byPort.begin(), data->byPort.end(),
                [](const HostPort* a, const HostPort* b) { return a->port < b->port; });
    }
    state.write(kStateKey, std::move(data));
    return Status::success();
  }

  Status filter(const CycleState& state, const Pod& pod, const NodeInfo& node) const override {
    const WantedPorts* wanted = state.read<WantedPorts>(kStateKey);
    if (wanted == nullptr) {
      // PreFilter skipped (no host ports) or not run: same answer computed here.
      std::vector<HostPort> ports = wantedHostPorts(pod);
      return fits(ports, node) ? Status::success() : rejected();
    }
    if (!wanted->byPort.empty()) return fitsIndexed(wanted->byPort, node) ? Status::success() : rejected();
    return fits(wanted->ports, node) ? Status::success() : rejected();
  }

 private:
  static bool fits(std::span<const HostPort> wanted, const NodeInfo& node) {
    if (node.usedPorts.empty()) return true;
    for (const HostPort& p : wanted)
      if (hostPortConflicts(p, node.usedPorts)) return false;
    return true;
  }
  // The same verdict as fits(): a conflict is symmetric (same port and
  // protocol, and either IP 0.0.0.0 or both equal).
  static bool fitsIndexed(std::span<const HostPort* const> byPort, const NodeInfo& node) {
    for (const HostPort& u : node.usedPorts) {
      auto it = std::lower_bound(byPort.begin(), byPort.end(), u.port,
                                 [](const HostPort* p, int32_t port) { return p->port < port; });
      for (; it != byPort.end() && (*it)->port == u.port; ++it)
        if (hostPortConflicts(**it, std::span<const HostPort>(&u, 1))) return false;
    }
    return true;
  }
  static Status rejected() { return Status(Code::Unschedulable, std::string(kErrReasonNodePorts)); }
};

}  // namespace

bool hostPortConflicts(const HostPort& wanted, std::span<const HostPort> used) {
  if (wanted.port <= 0) return false;
  const std::string_view ip = ipOf(wanted);
  const std::string_view protocol = protocolOf(wanted);
  const bool wantsAll = ip == kBindAllHostIp;
  for (const HostPort& u : used) {
    if (u.port != wanted.port || protocolOf(u) != protocol) continue;
    // 0.0.0.0 conflicts with every IP; otherwise only the same IP or 0.0.0.0 in use.
    if (wantsAll) return true;
    const std::string_view usedIp = ipOf(u);
    if (usedIp == kBindAllHostIp || usedIp == ip) return true;
  }
  return false;
}

Result<std::unique_ptr<Plugin>> newNodePorts(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "NodePortsArgs", {}); !ok) return ok.error();
  return std::unique_ptr<Plugin>(std::make_unique<NodePorts>());
}

}  // namespace placer
