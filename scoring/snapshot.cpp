#include "scoring/snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "scoring/json_stream_scanner.h"
#include "scoring/json_value.h"

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

// The arrays of a snapshot, split element by element.
enum class List : uint8_t { Nodes, Pods, Namespaces, Services, ReplicationControllers, ReplicaSets, StatefulSets };
struct ListSpec {
  List list;
  std::string_view key;
  std::string_view notAnArray;  // the message when the value is neither an array nor null
};
constexpr ListSpec kLists[] = {
    {List::Nodes, "nodes", "expected an array of v1.Node"},
    {List::Pods, "pods", "expected an array of v1.Pod"},
    {List::Namespaces, "namespaces", "expected an array of v1.Namespace"},
    {List::Services, "services", "expected an array"},
    {List::ReplicationControllers, "replicationcontrollers", "expected an array"},
    {List::ReplicaSets, "replicasets", "expected an array"},
    {List::StatefulSets, "statefulsets", "expected an array"},
};
constexpr size_t kListCount = std::size(kLists);

const ListSpec* findList(std::string_view key) {
  for (const ListSpec& spec : kLists)
    if (spec.key == key) return &spec;
  return nullptr;
}

WorkloadKind workloadKindOf(List list) {
  switch (list) {
    case List::Services: return WorkloadKind::Service;
    case List::ReplicationControllers: return WorkloadKind::ReplicationController;
    case List::ReplicaSets: return WorkloadKind::ReplicaSet;
    default: return WorkloadKind::StatefulSet;
  }
}

// Where the decoded and checked objects go, one at a time.
class ObjectSink {
 public:
  virtual ~ObjectSink() = default;
  virtual void node(Node node) = 0;
  virtual void pod(Pod pod) = 0;
  virtual void namespace_(Namespace ns) = 0;
  virtual void workload(WorkloadSelector workload) = 0;
};

// Into a Snapshot's vectors.
class CollectingSink : public ObjectSink {
 public:
  explicit CollectingSink(Snapshot& snapshot) : snapshot_(snapshot) {}
  void node(Node node) override { snapshot_.nodes.push_back(std::move(node)); }
  void pod(Pod pod) override { snapshot_.pods.push_back(std::move(pod)); }
  void namespace_(Namespace ns) override { snapshot_.namespaces.push_back(std::move(ns)); }
  void workload(WorkloadSelector workload) override { snapshot_.workloads.push_back(std::move(workload)); }

 private:
  Snapshot& snapshot_;
};

// Into a view, through apply(change), which runs change(MutableClusterView&).
template <class Apply>
class ViewSink : public ObjectSink {
 public:
  explicit ViewSink(Apply apply) : apply_(std::move(apply)) {}
  void node(Node node) override {
    apply_([&](MutableClusterView& v) { v.upsertNode(std::move(node)); });
  }
  void pod(Pod pod) override {
    apply_([&](MutableClusterView& v) { v.upsertPod(pod); });
  }
  void namespace_(Namespace ns) override {
    apply_([&](MutableClusterView& v) { v.upsertNamespace(std::move(ns)); });
  }
  void workload(WorkloadSelector workload) override {
    apply_([&](MutableClusterView& v) { v.upsertWorkload(std::move(workload)); });
  }

 private:
  Apply apply_;
};

constexpr const char* kNotAnObject = "snapshot: expected a JSON object with \"nodes\" and \"pods\"";

// Decodes a snapshot fed in pieces: the scanner splits the members and the
// arrays' elements, each is parsed on its own and checked, and every object
// goes to the sink as soon as it is. Holds one element's bytes and DOM at a
// time, plus what the checks need (node names, pod keys, per-node totals).
class SnapshotDecoder {
 public:
  explicit SnapshotDecoder(ObjectSink& sink)
      : sink_(sink),
        scanner_(
            listKeys(), [this](std::string_view key, std::string_view bytes) { return kept(member(key, bytes)); },
            [this](std::string_view key, std::string_view bytes) { return kept(element(key, bytes)); }) {}

  Outcome feed(std::string_view piece) {
    if (!started_) {
      size_t first = 0;
      while (first < piece.size() && json_bytes::isSpace(piece[first])) ++first;
      if (first < piece.size()) {
        if (piece[first] != '{') return Error{kNotAnObject};
        started_ = true;
      }
    }
    return scanned(scanner_.feed(piece));
  }

  Result<SnapshotQuery> finish() {
    if (Outcome done = scanned(scanner_.finish()); !done) return done.error();
    return std::move(query_);
  }

 private:
  static std::vector<std::string> listKeys() {
    std::vector<std::string> keys;
    for (const ListSpec& spec : kLists) keys.emplace_back(spec.key);
    return keys;
  }

  // A decoding error is the snapshot's message as is; anything else the
  // scanner found is malformed JSON.
  Outcome scanned(Outcome r) {
    if (r) return r;
    if (decodeError_) return *decodeError_;
    return Error{"invalid JSON: " + r.error().message};
  }
  Outcome kept(Outcome r) {
    if (!r && !decodeError_) decodeError_ = r.error();
    return r;
  }

  // The key as JSON means it (keys are sent unescaped in practice).
  static std::string unescaped(std::string_view raw) {
    if (raw.find('\\') == std::string_view::npos) return std::string(raw);
    std::string quoted = "\"" + std::string(raw) + "\"";
    json key = json::parse(quoted, nullptr, false);
    return key.is_string() ? key.get<std::string>() : std::string(raw);
  }

  Result<JsonValue> parse(std::string_view bytes, const std::string& where) {
    auto value = parser_.parse(bytes);
    if (!value) return fieldError(where, value.error().message);
    return value;
  }

  // A member handed out whole: "pod", "config", or a list that is not an array.
  Outcome member(std::string_view rawKey, std::string_view bytes) {
    const std::string key = unescaped(rawKey);
    if (const ListSpec* list = findList(key)) {
      if (bytes == "null") return {};
      return fieldError(key, list->notAnArray);
    }
    if (key == "pod") {
      if (bytes == "null") return {};
      auto value = parse(bytes, key);
      if (!value) return value.error();
      auto pod = decodePod(*value);
      if (!pod) return prefixed("pod", pod.error());
      if (auto o = checkAmounts(pod->requests, "pod.spec (total requests)"); !o) return o.error();
      query_.pod = std::move(*pod);
      return {};
    }
    if (key == "config") {
      try {
        query_.config = json::parse(bytes);
      } catch (const json::exception& e) {
        return fieldError(key, std::string("invalid JSON: ") + e.what());
      }
      return {};
    }
    return fieldError(key, "unknown field (a snapshot has nodes, pods, pod, config, namespaces, services, "
                           "replicationcontrollers, replicasets and statefulsets)");
  }

  Outcome element(std::string_view rawKey, std::string_view bytes) {
    const ListSpec* list = findList(unescaped(rawKey));
    if (list == nullptr) return Error{"snapshot: an element of an unknown list"};  // the scanner splits only kLists
    const std::string where = indexedField(list->key, counts_[static_cast<size_t>(list->list)]++);
    auto value = parse(bytes, where);
    if (!value) return value.error();
    switch (list->list) {
      case List::Nodes: return node(*value, where);
      case List::Pods: return pod(*value, where);
      case List::Namespaces: {
        auto ns = decodeNamespace(*value);
        if (!ns) return prefixed(where, ns.error());
        sink_.namespace_(std::move(*ns));
        return {};
      }
      default: {
        auto workload = decodeWorkloadSelector(workloadKindOf(list->list), *value);
        if (!workload) return prefixed(where, workload.error());
        sink_.workload(std::move(*workload));
        return {};
      }
    }
  }

  Outcome node(const JsonValue& value, const std::string& where) {
    auto node = decodeNode(value);
    if (!node) return prefixed(where, node.error());
    if (node->name.empty()) return fieldError(where + ".metadata.name", "Required value");
    if (!nodeNames_.insert(node->name).second)
      return fieldError(where + ".metadata.name", "Duplicate value: \"" + node->name + "\"");
    if (auto o = checkAmounts(node->allocatable, where + ".status.allocatable"); !o) return o.error();
    sink_.node(std::move(*node));
    return {};
  }

  Outcome pod(const JsonValue& value, const std::string& where) {
    auto pod = decodePod(value);
    if (!pod) return prefixed(where, pod.error());
    if (pod->name.empty() && pod->uid.empty()) return fieldError(where + ".metadata.name", "Required value");
    if (!podKeys_.insert(podKey(*pod)).second)
      return fieldError(where + ".metadata", "Duplicate pod \"" + podKey(*pod) + "\"");
    if (auto o = checkAmounts(pod->requests, where + ".spec (total requests)"); !o) return o.error();
    // Bound pods and nominated ones (which count on their node too): per-node
    // totals, so that accounting never overflows.
    const std::string& counted = isNominated(*pod) ? pod->nominatedNodeName : pod->nodeName;
    if (!counted.empty() && !pod->isTerminal()) {
      Resources& total = totals_[counted];
      bool ok = addChecked(total.milliCpu, pod->requests.milliCpu) && addChecked(total.memory, pod->requests.memory) &&
                addChecked(total.ephemeralStorage, pod->requests.ephemeralStorage);
      for (const auto& [name, v] : pod->requests.scalars) {
        int64_t sum = total.scalar(name);
        ok = ok && addChecked(sum, v);
        if (ok) total.setScalar(name, sum);
      }
      if (!ok)
        return fieldError(where + ".spec", "the requests of the pods on node \"" + counted + "\" add up beyond 2^53");
    }
    sink_.pod(std::move(*pod));
    return {};
  }

  ObjectSink& sink_;
  JsonStreamScanner scanner_;
  JsonParser parser_;
  bool started_ = false;
  std::optional<Error> decodeError_;
  size_t counts_[kListCount] = {};
  std::unordered_set<std::string> nodeNames_;
  std::unordered_set<std::string> podKeys_;
  std::unordered_map<std::string, Resources> totals_;
  SnapshotQuery query_;
};

Result<SnapshotQuery> decodeText(std::string_view text, ObjectSink& sink) {
  try {
    SnapshotDecoder decoder(sink);
    if (Outcome fed = decoder.feed(text); !fed) return fed.error();
    return decoder.finish();
  } catch (const std::exception& e) {
    return Error{std::string("snapshot: ") + e.what()};
  }
}

// Pieces of this size are read and split; an element that spans two is
// copied once into the scanner's buffer.
constexpr size_t kReadPiece = size_t{1} << 20;

Result<SnapshotQuery> decodeFile(const std::string& path, ObjectSink& sink) {
  const std::string name = path == "-" ? std::string("stdin") : path;
  try {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
      file.open(path, std::ios::binary);
      if (!file) return Error{path + ": cannot read: " + std::strerror(errno)};
      in = &file;
    }
    SnapshotDecoder decoder(sink);
    std::vector<char> piece(kReadPiece);
    while (*in) {
      in->read(piece.data(), static_cast<std::streamsize>(piece.size()));
      const auto got = static_cast<size_t>(in->gcount());
      if (got == 0) continue;
      if (Outcome fed = decoder.feed(std::string_view(piece.data(), got)); !fed) return Error{name + ": " + fed.error().message};
    }
    if (in->bad()) return Error{name + ": cannot read"};
    auto query = decoder.finish();
    if (!query) return Error{name + ": " + query.error().message};
    return query;
  } catch (const std::exception& e) {
    return Error{name + ": snapshot: " + e.what()};
  }
}

}  // namespace

Result<Snapshot> parseSnapshot(std::string_view text) {
  Snapshot snapshot;
  CollectingSink sink(snapshot);
  auto query = decodeText(text, sink);
  if (!query) return query.error();
  snapshot.pod = std::move(query->pod);
  snapshot.config = std::move(query->config);
  return snapshot;
}

Result<Snapshot> decodeSnapshot(const json& document) {
  if (!document.is_object()) return Error{kNotAnObject};
  std::string text;
  try {
    text = document.dump();
  } catch (const json::exception& e) {
    return Error{std::string("snapshot: ") + e.what()};
  }
  return parseSnapshot(text);
}

Result<SnapshotQuery> loadSnapshotFile(const std::string& path, MutableClusterView& view) {
  ViewSink sink([&](const auto& change) { change(view); });
  return decodeFile(path, sink);
}

Result<SnapshotQuery> loadSnapshotFile(const std::string& path, ClusterState& state) {
  ViewSink sink([&](const auto& change) { state.update(change); });
  return decodeFile(path, sink);
}

void fillView(MutableClusterView& view, const Snapshot& snapshot) {
  for (const Namespace& ns : snapshot.namespaces) view.upsertNamespace(ns);
  for (const WorkloadSelector& w : snapshot.workloads) view.upsertWorkload(w);
  for (const Node& node : snapshot.nodes) view.upsertNode(node);
  for (const Pod& pod : snapshot.pods) view.upsertPod(pod);
}

}  // namespace placer
