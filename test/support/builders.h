#pragma once
// Small fluent builders for model objects in tests, in the spirit of
// kube-scheduler's st.MakePod() / st.MakeNode(). They fill the plain structs
// of scoring/model.h directly (no JSON decoding), so plugin tests do not
// depend on the decoder. Header-only.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scoring/cluster_state.h"
#include "scoring/model.h"

namespace placer::test {

inline void setLabel(Labels& labels, std::string key, std::string value) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& e, const std::string& k) { return e.first < k; });
  if (it != labels.end() && it->first == key)
    it->second = std::move(value);
  else
    labels.emplace(it, std::move(key), std::move(value));
}

inline SelectorRequirement req(std::string key, SelectorOperator op, std::vector<std::string> values = {}) {
  return SelectorRequirement{std::move(key), op, std::move(values), {}};
}

inline NodeSelectorTerm matchExpressions(std::vector<SelectorRequirement> exprs) {
  NodeSelectorTerm t;
  t.matchExpressions = std::move(exprs);
  return t;
}

inline NodeSelectorTerm matchFields(std::vector<SelectorRequirement> fields) {
  NodeSelectorTerm t;
  t.matchFields = std::move(fields);
  return t;
}

// "protocol/ip/port", as upstream's nodeports test writes them ("UDP/127.0.0.1/8080").
inline HostPort hostPort(const std::string& spec) {
  size_t a = spec.find('/');
  size_t b = spec.find('/', a + 1);
  HostPort p;
  p.protocol = spec.substr(0, a);
  p.ip = spec.substr(a + 1, b - a - 1);
  p.port = std::stoi(spec.substr(b + 1));
  return p;
}

inline NodeInfo nodeInfo(Node node) {
  NodeInfo n;
  n.node = std::move(node);
  return n;
}

class PodBuilder {
 public:
  explicit PodBuilder(std::string name = "pod", std::string ns = "default") {
    pod_.name = std::move(name);
    pod_.namespace_ = std::move(ns);
    pod_.uid = pod_.namespace_ + "-" + pod_.name + "-uid";
    pod_.schedulerName = "default-scheduler";
  }

  PodBuilder& nodeName(std::string n) { pod_.nodeName = std::move(n); return *this; }
  PodBuilder& label(std::string k, std::string v) { setLabel(pod_.labels, std::move(k), std::move(v)); return *this; }
  PodBuilder& nodeSelector(std::initializer_list<std::pair<std::string, std::string>> selector) {
    for (const auto& [k, v] : selector) setLabel(pod_.nodeSelector, k, v);
    return *this;
  }
  PodBuilder& toleration(Toleration t) { pod_.tolerations.push_back(std::move(t)); return *this; }
  PodBuilder& toleration(std::string key, TolerationOperator op, std::string value, TaintEffect effect) {
    return toleration(Toleration{std::move(key), op, std::move(value), effect, std::nullopt});
  }
  // Required node affinity: the terms are ORed. Calling it with no terms sets an empty selector.
  PodBuilder& requiredTerms(std::vector<NodeSelectorTerm> terms) {
    affinity().required = NodeSelector{std::move(terms)};
    return *this;
  }
  PodBuilder& preferredTerm(int32_t weight, NodeSelectorTerm term) {
    affinity().preferred.push_back(PreferredSchedulingTerm{weight, std::move(term)});
    return *this;
  }
  // Adds a container; host ports as "protocol/ip/port".
  PodBuilder& container(std::string image, std::vector<std::string> ports = {}) {
    pod_.containers.push_back(makeContainer(std::move(image), ports, false));
    computePorts();
    return *this;
  }
  PodBuilder& initContainer(std::string image, std::vector<std::string> ports = {}, bool restartable = false) {
    pod_.initContainers.push_back(makeContainer(std::move(image), ports, restartable));
    computePorts();
    return *this;
  }
  PodBuilder& requests(int64_t milliCpu, int64_t memory) {
    if (pod_.containers.empty()) container("registry.k8s.io/pause:3.9");
    pod_.containers.back().requests.milliCpu = milliCpu;
    pod_.containers.back().requests.memory = memory;
    pod_.containers.back().hasCpuRequest = milliCpu > 0;
    pod_.containers.back().hasMemoryRequest = memory > 0;
    pod_.requests.milliCpu += milliCpu;
    pod_.requests.memory += memory;
    return *this;
  }

  const Pod& obj() const { return pod_; }
  operator const Pod&() const { return pod_; }

 private:
  NodeAffinity& affinity() {
    if (!pod_.nodeAffinity) pod_.nodeAffinity.emplace();
    return *pod_.nodeAffinity;
  }
  static Container makeContainer(std::string image, const std::vector<std::string>& ports, bool restartable) {
    Container c;
    c.name = "c";
    c.image = std::move(image);
    c.restartableInit = restartable;
    for (const std::string& p : ports) {
      HostPort hp = hostPort(p);
      if (hp.port > 0) c.hostPorts.push_back(std::move(hp));
    }
    return c;
  }
  // Mirrors the decoder: containers and restartable init containers contribute host ports.
  void computePorts() {
    pod_.hostPorts.clear();
    for (const Container& c : pod_.initContainers)
      if (c.restartableInit) pod_.hostPorts.insert(pod_.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
    for (const Container& c : pod_.containers)
      pod_.hostPorts.insert(pod_.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
  }

  Pod pod_;
};

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name = "node") {
    node_.name = std::move(name);
    node_.uid = node_.name + "-uid";
  }
  NodeBuilder& label(std::string k, std::string v) { setLabel(node_.labels, std::move(k), std::move(v)); return *this; }
  NodeBuilder& labels(std::initializer_list<std::pair<std::string, std::string>> labels) {
    for (const auto& [k, v] : labels) setLabel(node_.labels, k, v);
    return *this;
  }
  NodeBuilder& taint(std::string key, std::string value, TaintEffect effect) {
    node_.taints.push_back(Taint{std::move(key), std::move(value), effect});
    return *this;
  }
  NodeBuilder& unschedulable(bool u = true) { node_.unschedulable = u; return *this; }
  // Image names as the kubelet reports them (already tagged).
  NodeBuilder& image(std::vector<std::string> names, int64_t sizeBytes) {
    node_.images.add(names, sizeBytes);
    return *this;
  }
  NodeBuilder& allocatable(int64_t milliCpu, int64_t memory, int64_t pods = 110) {
    node_.allocatable.milliCpu = milliCpu;
    node_.allocatable.memory = memory;
    node_.allocatable.pods = pods;
    return *this;
  }

  const Node& obj() const { return node_; }
  operator const Node&() const { return node_; }
  // A NodeInfo with nothing running on it.
  NodeInfo info() const {
    NodeInfo n;
    n.node = node_;
    return n;
  }

 private:
  Node node_;
};

}  // namespace placer::test
