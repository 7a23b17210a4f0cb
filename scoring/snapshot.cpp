#include "scoring/snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace placer {

using nlohmann::json;

namespace {

Error prefixed(const std::string& prefix, const Error& error) { return Error{prefix + "." + error.message}; }

// Every amount non-negative and below kMaxSnapshotAmount.
Outcome checkAmounts(const Resources& r, const std::string& where) {
  auto check = [&](std::string_view name, int64_t v) -> Outcome {
    if (v < 0) return fieldError(where + "." + std::string(name), "must not be negative, got " + std::to_string(v));
    if (v > kMaxSnapshotAmount)
      return fieldError(where + "." + std::string(name),
                        "absurdly large (" + std::to_string(v) + " is beyond 2^53 in its unit)");
    return {};
  };
  if (auto o = check("cpu", r.milliCpu); !o) return o;
  if (auto o = check("memory", r.memory); !o) return o;
  if (auto o = check("ephemeral-storage", r.ephemeralStorage); !o) return o;
  if (auto o = check("pods", r.pods); !o) return o;
  for (const auto& [name, v] : r.scalars)
    if (auto o = check(name, v); !o) return o;
  return {};
}

// Adds unless the total would pass kMaxSnapshotAmount (so later arithmetic cannot overflow).
bool addChecked(int64_t& total, int64_t v) {
  return !__builtin_add_overflow(total, v, &total) && total <= kMaxSnapshotAmount;
}

}  // namespace

Result<Snapshot> decodeSnapshot(const json& document) {
  try {
    if (!document.is_object()) return Error{"snapshot: expected a JSON object with \"nodes\" and \"pods\""};
    static constexpr std::pair<std::string_view, WorkloadKind> kWorkloads[] = {
        {"services", WorkloadKind::Service},
        {"replicationcontrollers", WorkloadKind::ReplicationController},
        {"replicasets", WorkloadKind::ReplicaSet},
        {"statefulsets", WorkloadKind::StatefulSet},
    };
    for (const auto& [key, value] : document.items()) {
      const bool workload = std::any_of(std::begin(kWorkloads), std::end(kWorkloads),
                                        [&, &k = key](const auto& w) { return w.first == k; });
      if (key != "nodes" && key != "pods" && key != "pod" && key != "config" && key != "namespaces" && !workload)
        return fieldError(key, "unknown field (a snapshot has nodes, pods, pod, config, namespaces, services, "
                               "replicationcontrollers, replicasets and statefulsets)");
    }
    Snapshot snapshot;

    if (auto namespaces = document.find("namespaces"); namespaces != document.end() && !namespaces->is_null()) {
      if (!namespaces->is_array()) return fieldError("namespaces", "expected an array of v1.Namespace");
      for (size_t i = 0; i < namespaces->size(); ++i) {
        auto ns = decodeNamespace((*namespaces)[i]);
        if (!ns) return prefixed(indexedField("namespaces", i), ns.error());
        snapshot.namespaces.push_back(std::move(*ns));
      }
    }
    for (const auto& [key, kind] : kWorkloads) {
      auto list = document.find(key);
      if (list == document.end() || list->is_null()) continue;
      if (!list->is_array()) return fieldError(key, "expected an array");
      for (size_t i = 0; i < list->size(); ++i) {
        auto workload = decodeWorkloadSelector(kind, (*list)[i]);
        if (!workload) return prefixed(indexedField(key, i), workload.error());
        snapshot.workloads.push_back(std::move(*workload));
      }
    }

    auto nodes = document.find("nodes");
    if (nodes != document.end() && !nodes->is_null()) {
      if (!nodes->is_array()) return fieldError("nodes", "expected an array of v1.Node");
      std::unordered_set<std::string> names;
      snapshot.nodes.reserve(nodes->size());
      for (size_t i = 0; i < nodes->size(); ++i) {
        std::string where = indexedField("nodes", i);
        auto node = decodeNode((*nodes)[i]);
        if (!node) return prefixed(where, node.error());
        if (node->name.empty()) return fieldError(where + ".metadata.name", "Required value");
        if (!names.insert(node->name).second)
          return fieldError(where + ".metadata.name", "Duplicate value: \"" + node->name + "\"");
        if (auto o = checkAmounts(node->allocatable, where + ".status.allocatable"); !o) return o.error();
        snapshot.nodes.push_back(std::move(*node));
      }
    }

    // Per-node totals, so that accounting never overflows.
    std::unordered_map<std::string, Resources> totals;
    auto pods = document.find("pods");
    if (pods != document.end() && !pods->is_null()) {
      if (!pods->is_array()) return fieldError("pods", "expected an array of v1.Pod");
      std::unordered_set<std::string> keys;
      snapshot.pods.reserve(pods->size());
      for (size_t i = 0; i < pods->size(); ++i) {
        std::string where = indexedField("pods", i);
        auto pod = decodePod((*pods)[i]);
        if (!pod) return prefixed(where, pod.error());
        if (pod->name.empty() && pod->uid.empty()) return fieldError(where + ".metadata.name", "Required value");
        if (!keys.insert(podKey(*pod)).second)
          return fieldError(where + ".metadata", "Duplicate pod \"" + podKey(*pod) + "\"");
        if (auto o = checkAmounts(pod->requests, where + ".spec (total requests)"); !o) return o.error();
        // Bound pods and nominated ones (which count on their node too).
        const std::string& counted = isNominated(*pod) ? pod->nominatedNodeName : pod->nodeName;
        if (!counted.empty() && !pod->isTerminal()) {
          Resources& total = totals[counted];
          bool ok = addChecked(total.milliCpu, pod->requests.milliCpu) &&
                    addChecked(total.memory, pod->requests.memory) &&
                    addChecked(total.ephemeralStorage, pod->requests.ephemeralStorage);
          for (const auto& [name, v] : pod->requests.scalars) {
            int64_t sum = total.scalar(name);
            ok = ok && addChecked(sum, v);
            if (ok) total.setScalar(name, sum);
          }
          if (!ok)
            return fieldError(where + ".spec",
                              "the requests of the pods on node \"" + counted + "\" add up beyond 2^53");
        }
        snapshot.pods.push_back(std::move(*pod));
      }
    }

    auto pod = document.find("pod");
    if (pod != document.end() && !pod->is_null()) {
      auto decoded = decodePod(*pod);
      if (!decoded) return prefixed("pod", decoded.error());
      if (auto o = checkAmounts(decoded->requests, "pod.spec (total requests)"); !o) return o.error();
      snapshot.pod = std::move(*decoded);
    }

    if (auto config = document.find("config"); config != document.end()) snapshot.config = *config;
    return snapshot;
  } catch (const std::exception& e) {
    return Error{std::string("snapshot: ") + e.what()};
  }
}

Result<Snapshot> parseSnapshot(std::string_view text) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    return Error{std::string("invalid JSON: ") + e.what()};
  }
  return decodeSnapshot(document);
}

Result<Snapshot> loadSnapshotFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot read: " + std::strerror(errno)};
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return Error{path + ": cannot read"};
    text = std::move(buffer).str();
  }
  auto snapshot = parseSnapshot(text);
  if (!snapshot) return Error{(path == "-" ? std::string("stdin") : path) + ": " + snapshot.error().message};
  return snapshot;
}

void fillView(MutableClusterView& view, const Snapshot& snapshot) {
  for (const Namespace& ns : snapshot.namespaces) view.upsertNamespace(ns);
  for (const WorkloadSelector& w : snapshot.workloads) view.upsertWorkload(w);
  for (const Node& node : snapshot.nodes) view.upsertNode(node);
  for (const Pod& pod : snapshot.pods) view.upsertPod(pod);
}

}  // namespace placer
