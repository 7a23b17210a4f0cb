#include "webhook/extender.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "webhook/kube/json_stream.h"
#include "webhook/log.h"

namespace placer {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Raw JSON scanning. A full NodeList of 5,000 nodes is tens of MB: the members
// and items are located without building a DOM, each node is then parsed with
// only the fields decodeNode reads, and passing nodes are echoed byte for byte.

size_t skipWhitespace(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

// End of the string starting at s[i] == '"' (one past the closing quote), or npos.
size_t skipString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// End of the value starting at s[i] (one past it), or npos when it does not end.
// Only the structure is checked; the value's own parse validates the rest.
size_t skipValue(std::string_view s, size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  char c = s[i];
  if (c == '"') return skipString(s, i);
  if (c == '{' || c == '[') {
    int depth = 0;
    while (i < s.size()) {
      char d = s[i];
      if (d == '"') {
        i = skipString(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (d == '{' || d == '[') ++depth;
      if (d == '}' || d == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  // A scalar: up to the next delimiter.
  size_t start = i;
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\r' && s[i] != '\t')
    ++i;
  return i == start ? std::string_view::npos : i;
}

struct RawMember {
  std::string key;
  std::string_view value;
};

Result<std::string> decodeKey(std::string_view quoted) {
  std::string_view inner = quoted.substr(1, quoted.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return std::string(inner);
  try {
    return json::parse(quoted).get<std::string>();
  } catch (const json::exception& e) {
    return Error{std::string("bad object key: ") + e.what()};
  }
}

// The members of one JSON object, in order.
Result<std::vector<RawMember>> objectMembers(std::string_view text, std::string_view what) {
  std::vector<RawMember> members;
  size_t i = skipWhitespace(text, 0);
  if (i >= text.size() || text[i] != '{') return Error{std::string(what) + ": expected a JSON object"};
  i = skipWhitespace(text, i + 1);
  if (i < text.size() && text[i] == '}') return members;
  while (true) {
    if (i >= text.size() || text[i] != '"') return Error{std::string(what) + ": malformed JSON object"};
    size_t keyEnd = skipString(text, i);
    if (keyEnd == std::string_view::npos) return Error{std::string(what) + ": unterminated string"};
    auto key = decodeKey(text.substr(i, keyEnd - i));
    if (!key) return Error{std::string(what) + ": " + key.error().message};
    i = skipWhitespace(text, keyEnd);
    if (i >= text.size() || text[i] != ':') return Error{std::string(what) + ": malformed JSON object"};
    i = skipWhitespace(text, i + 1);
    size_t valueEnd = skipValue(text, i);
    if (valueEnd == std::string_view::npos) return Error{std::string(what) + ": truncated JSON"};
    members.push_back(RawMember{std::move(*key), text.substr(i, valueEnd - i)});
    i = skipWhitespace(text, valueEnd);
    if (i < text.size() && text[i] == ',') {
      i = skipWhitespace(text, i + 1);
      continue;
    }
    if (i < text.size() && text[i] == '}') break;
    return Error{std::string(what) + ": malformed JSON object"};
  }
  if (skipWhitespace(text, i + 1) != text.size()) return Error{std::string(what) + ": trailing data after JSON"};
  return members;
}

Result<std::vector<std::string_view>> arrayElements(std::string_view text, std::string_view what) {
  std::vector<std::string_view> items;
  size_t i = skipWhitespace(text, 0);
  if (i >= text.size() || text[i] != '[') return Error{std::string(what) + ": expected an array"};
  i = skipWhitespace(text, i + 1);
  if (i < text.size() && text[i] == ']') return items;
  while (true) {
    size_t end = skipValue(text, i);
    if (end == std::string_view::npos) return Error{std::string(what) + ": truncated JSON"};
    items.push_back(text.substr(i, end - i));
    i = skipWhitespace(text, end);
    if (i < text.size() && text[i] == ',') {
      i = skipWhitespace(text, i + 1);
      continue;
    }
    if (i < text.size() && text[i] == ']') return items;
    return Error{std::string(what) + ": malformed array"};
  }
}

bool equalFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Go's encoding/json: the exact key if present, else a case-insensitive match.
// Null is reported as absent (Go leaves the field nil).
std::optional<std::string_view> member(const std::vector<RawMember>& members, std::string_view goName) {
  const RawMember* folded = nullptr;
  const RawMember* exact = nullptr;
  for (const RawMember& m : members) {
    if (m.key == goName) exact = &m;
    else if (!folded && equalFold(m.key, goName)) folded = &m;
  }
  const RawMember* found = exact ? exact : folded;
  if (!found || found->value == "null") return std::nullopt;
  return found->value;
}

const json* jsonMember(const json& object, std::string_view goName) {
  if (!object.is_object()) return nullptr;
  const json* folded = nullptr;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == goName) return it->is_null() ? nullptr : &*it;
    if (!folded && equalFold(it.key(), goName)) folded = &*it;
  }
  return folded && !folded->is_null() ? folded : nullptr;
}

Result<Pod> decodePodBytes(std::string_view bytes, std::string_view field) {
  auto parsed = kube::parseFiltered(bytes, kube::podFilter());
  if (!parsed) return fieldError(field, parsed.error().message);
  auto pod = decodePod(*parsed);
  if (!pod) return fieldError(field, pod.error().message);
  return pod;
}

HttpResponse badRequest(std::string message) { return HttpResponse::text(400, std::move(message) + "\n"); }

// ---------------------------------------------------------------------------
// ExtenderArgs

struct ExtenderArgs {
  Pod pod;
  bool cacheCapable = false;             // NodeNames given
  std::vector<std::string> nodeNames;    // NodeNames
  std::vector<Node> nodes;               // Nodes.items, decoded
  std::vector<std::string_view> nodeBytes;  // Nodes.items as sent, for the echo
};

Result<ExtenderArgs> decodeArgs(std::string_view body) {
  auto members = objectMembers(body, "ExtenderArgs");
  if (!members) return members.error();
  ExtenderArgs args;
  auto pod = member(*members, "Pod");
  if (!pod) return Error{"ExtenderArgs.Pod: required"};
  auto decoded = decodePodBytes(*pod, "ExtenderArgs.Pod");
  if (!decoded) return decoded.error();
  args.pod = std::move(*decoded);

  if (auto names = member(*members, "NodeNames")) {
    args.cacheCapable = true;
    try {
      json list = json::parse(*names);
      if (!list.is_array()) return Error{"ExtenderArgs.NodeNames: expected an array of strings"};
      args.nodeNames.reserve(list.size());
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string())
          return Error{"ExtenderArgs.NodeNames[" + std::to_string(i) + "]: expected a string"};
        args.nodeNames.push_back(list[i].get<std::string>());
      }
    } catch (const json::exception& e) {
      return Error{std::string("ExtenderArgs.NodeNames: ") + e.what()};
    }
    return args;
  }
  auto nodes = member(*members, "Nodes");
  if (!nodes) return Error{"ExtenderArgs: neither NodeNames nor Nodes is given"};
  auto listMembers = objectMembers(*nodes, "ExtenderArgs.Nodes");
  if (!listMembers) return listMembers.error();
  auto items = member(*listMembers, "items");
  if (!items) return args;  // an empty NodeList
  auto elements = arrayElements(*items, "ExtenderArgs.Nodes.items");
  if (!elements) return elements.error();
  args.nodes.reserve(elements->size());
  args.nodeBytes = std::move(*elements);
  for (size_t i = 0; i < args.nodeBytes.size(); ++i) {
    std::string field = "ExtenderArgs.Nodes.items[" + std::to_string(i) + "]";
    auto parsed = kube::parseFiltered(args.nodeBytes[i], kube::nodeFilter());
    if (!parsed) return fieldError(field, parsed.error().message);
    auto node = decodeNode(*parsed);
    if (!node) return fieldError(field, node.error().message);
    args.nodes.push_back(std::move(*node));
  }
  return args;
}

// The candidates of a request: NodeInfos from the view (NodeNames), or built
// from the request's nodes with the view's accounting for a node of that name.
struct Candidates {
  std::vector<const NodeInfo*> infos;
  std::vector<size_t> requestIndex;       // candidate -> index in the request's list
  std::vector<NodeInfo> owned;            // full-Nodes mode
  std::map<std::string, std::string> unknown;  // NodeNames placer does not know -> reason
};

constexpr std::string_view kUnknownNode = "node(s) were not found in placer's cluster view";

Candidates resolveCandidates(ExtenderArgs& args, const ClusterView& view) {
  Candidates c;
  if (args.cacheCapable) {
    c.infos.reserve(args.nodeNames.size());
    for (size_t i = 0; i < args.nodeNames.size(); ++i) {
      if (const NodeInfo* info = view.findNode(args.nodeNames[i])) {
        c.infos.push_back(info);
        c.requestIndex.push_back(i);
      } else {
        c.unknown.emplace(args.nodeNames[i], std::string(kUnknownNode));
      }
    }
    return c;
  }
  c.owned.reserve(args.nodes.size());
  for (size_t i = 0; i < args.nodes.size(); ++i) {
    Node& node = args.nodes[i];
    NodeInfo info;
    if (const NodeInfo* known = view.findNode(node.name)) info = *known;
    // The request's node object is authoritative for the node's own fields;
    // the usage by pods and reservations comes from placer's view.
    info.imageSizes.clear();
    for (const NodeImage& image : node.images)
      for (const std::string& name : image.names)
        if (uint32_t id = view.imageId(name); id != StringTable::kNone) info.imageSizes.emplace_back(id, image.sizeBytes);
    std::sort(info.imageSizes.begin(), info.imageSizes.end());
    info.imageSizes.erase(std::unique(info.imageSizes.begin(), info.imageSizes.end(),
                                      [](const auto& a, const auto& b) { return a.first == b.first; }),
                          info.imageSizes.end());
    info.node = std::move(node);
    c.owned.push_back(std::move(info));
    c.requestIndex.push_back(i);
  }
  for (const NodeInfo& info : c.owned) c.infos.push_back(&info);
  return c;
}

std::string joinReasons(const std::vector<std::string>& reasons) {
  std::string out;
  for (const std::string& r : reasons) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

bool viewSynced(const ExtenderContext& context) { return !context.feed || context.feed->synced(); }

std::string filterResult(const std::optional<std::vector<std::string_view>>& echoedNodes,
                         const std::optional<std::vector<std::string>>& nodeNames, const json& failed,
                         const json& unresolvable, std::string_view error) {
  std::string out = "{\"Nodes\":";
  if (echoedNodes) {
    out += "{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < echoedNodes->size(); ++i) {
      if (i) out += ',';
      out += (*echoedNodes)[i];
    }
    out += "]}";
  } else {
    out += "null";
  }
  out += ",\"NodeNames\":";
  out += nodeNames ? json(*nodeNames).dump() : "null";
  out += ",\"FailedNodes\":";
  out += failed.dump();
  out += ",\"FailedAndUnresolvableNodes\":";
  out += unresolvable.dump();
  out += ",\"Error\":";
  out += json(std::string(error)).dump();
  out += '}';
  return out;
}

HttpResponse filterError(std::string_view message) {
  return HttpResponse::json(200, filterResult(std::nullopt, std::nullopt, json::object(), json::object(), message));
}

}  // namespace

// ---------------------------------------------------------------------------

HttpResponse extenderFilter(const ExtenderContext& context, std::string_view body, bool onlyOne) {
  auto args = decodeArgs(body);
  if (!args) return badRequest(args.error().message);
  if (!viewSynced(context)) return filterError("placer: the cluster view is not synced yet");

  return context.state->read([&](const ClusterView& view) {
    Candidates c = resolveCandidates(*args, view);
    Decision d = context.engine->evaluate(args->pod, view, c.infos, Detail::Full);
    if (d.failure) return filterError(d.unschedulableMessage());

    json failed = json::object();
    json unresolvable = json::object();
    for (auto& [name, reason] : c.unknown) unresolvable[name] = reason;
    std::vector<size_t> passing;  // candidate indices
    for (size_t i = 0; i < d.nodes.size(); ++i) {
      const NodeOutcome& o = d.nodes[i];
      if (o.code == Code::Success) {
        if (onlyOne && o.node != d.selected) {
          failed[o.node->name()] = "node(s) were not placer's choice (" + d.selected->name() + ")";
          continue;
        }
        passing.push_back(i);
      } else if (o.code == Code::UnschedulableAndUnresolvable) {
        unresolvable[o.node->name()] = joinReasons(o.reasons);
      } else {
        failed[o.node->name()] = joinReasons(o.reasons);
      }
    }
    // Engine outcomes follow the candidate order; answer in the request's order.
    if (args->cacheCapable) {
      std::vector<std::string> names;
      names.reserve(passing.size());
      for (size_t i : passing) names.push_back(args->nodeNames[c.requestIndex[i]]);
      return HttpResponse::json(200, filterResult(std::nullopt, names, failed, unresolvable, ""));
    }
    std::vector<std::string_view> echoed;
    echoed.reserve(passing.size());
    for (size_t i : passing) echoed.push_back(args->nodeBytes[c.requestIndex[i]]);
    return HttpResponse::json(200, filterResult(echoed, std::nullopt, failed, unresolvable, ""));
  });
}

HttpResponse extenderPrioritize(const ExtenderContext& context, std::string_view body) {
  auto args = decodeArgs(body);
  if (!args) return badRequest(args.error().message);
  if (!viewSynced(context)) return HttpResponse::text(503, "placer: the cluster view is not synced yet\n");

  return context.state->read([&](const ClusterView& view) {
    Candidates c = resolveCandidates(*args, view);
    Decision d = context.engine->evaluate(args->pod, view, c.infos, Detail::Full);
    std::vector<std::string_view> hosts;
    if (args->cacheCapable) {
      for (const std::string& n : args->nodeNames) hosts.push_back(n);
    } else {
      for (const Node& n : args->nodes) hosts.push_back(n.name);
    }
    std::vector<int64_t> scores(hosts.size(), 0);
    if (!d.failure) {
      int64_t best = 0;
      for (const NodeOutcome& o : d.nodes)
        if (o.code == Code::Success) best = std::max(best, o.total);
      for (size_t i = 0; i < d.nodes.size(); ++i) {
        const NodeOutcome& o = d.nodes[i];
        if (o.code == Code::Success && best > 0) scores[c.requestIndex[i]] = o.total * 10 / best;
      }
    }
    json list = json::array();
    for (size_t i = 0; i < hosts.size(); ++i) list.push_back({{"Host", hosts[i]}, {"Score", scores[i]}});
    return HttpResponse::json(200, list.dump());
  });
}

HttpResponse extenderBind(const ExtenderContext& context, std::string_view body) {
  json args;
  try {
    args = json::parse(body);
  } catch (const json::exception& e) {
    return badRequest(std::string("ExtenderBindingArgs: ") + e.what());
  }
  if (!args.is_object()) return badRequest("ExtenderBindingArgs: expected a JSON object");
  auto field = [&](std::string_view name) -> Result<std::string> {
    const json* v = jsonMember(args, name);
    if (!v) return std::string();
    if (!v->is_string()) return Error{"ExtenderBindingArgs." + std::string(name) + ": expected a string"};
    return v->get<std::string>();
  };
  auto name = field("PodName");
  auto ns = field("PodNamespace");
  auto uid = field("PodUID");
  auto node = field("Node");
  for (auto* f : {&name, &ns, &uid, &node})
    if (!*f) return badRequest(f->error().message);
  if (name->empty()) return badRequest("ExtenderBindingArgs.PodName: required");
  if (node->empty()) return badRequest("ExtenderBindingArgs.Node: required");

  std::string error;
  if (!context.binder) {
    error = "placer: binding is not configured (no API server connection)";
  } else if (Outcome bound = context.binder->bind(*ns, *name, *uid, *node); !bound) {
    error = bound.error().message;
  }
  logEvent(error.empty() ? LogLevel::Info : LogLevel::Warning, "extender bind",
           {{"pod", *ns + "/" + *name}, {"node", *node}, {"error", error}});
  return HttpResponse::json(200, json{{"Error", error}}.dump());
}

HttpResponse extenderPreempt(const ExtenderContext& context, std::string_view body) {
  auto members = objectMembers(body, "ExtenderPreemptionArgs");
  if (!members) return badRequest(members.error().message);
  auto podBytes = member(*members, "Pod");
  if (!podBytes) return badRequest("ExtenderPreemptionArgs.Pod: required");
  auto pod = decodePodBytes(*podBytes, "ExtenderPreemptionArgs.Pod");
  if (!pod) return badRequest(pod.error().message);

  // Victims per node, in either shape: uids, and (full pods) their decoded
  // accounting for pods placer's view does not hold.
  struct Victim {
    std::string uid;
    std::optional<Pod> pod;
  };
  struct NodeVictims {
    std::vector<Victim> victims;
    int64_t numPdbViolations = 0;
  };
  std::map<std::string, NodeVictims> proposed;
  try {
    // nodeCacheCapable schedulers send uids only; others whole pods.
    auto mapBytes = member(*members, "NodeNameToMetaVictims");
    const bool meta = mapBytes.has_value();
    if (!meta) mapBytes = member(*members, "NodeNameToVictims");
    const std::string mapName = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
    if (mapBytes) {
      json map = json::parse(*mapBytes);
      if (!map.is_object()) return badRequest("ExtenderPreemptionArgs." + mapName + ": expected an object");
      for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string where = "ExtenderPreemptionArgs." + mapName + "[" + it.key() + "]";
        NodeVictims& nv = proposed[it.key()];
        if (it->is_null()) continue;
        if (!it->is_object()) return badRequest(where + ": expected an object");
        if (const json* n = jsonMember(*it, "NumPDBViolations")) {
          if (!n->is_number_integer()) return badRequest(where + ".NumPDBViolations: expected an integer");
          nv.numPdbViolations = n->get<int64_t>();
        }
        const json* pods = jsonMember(*it, "Pods");
        if (!pods) continue;
        if (!pods->is_array()) return badRequest(where + ".Pods: expected an array");
        for (size_t i = 0; i < pods->size(); ++i) {
          const json& p = (*pods)[i];
          const std::string at = where + ".Pods[" + std::to_string(i) + "]";
          Victim v;
          if (meta) {
            const json* uid = jsonMember(p, "UID");
            if (!uid || !uid->is_string()) return badRequest(at + ".UID: expected a string");
            v.uid = uid->get<std::string>();
          } else {
            auto decoded = decodePod(p);
            if (!decoded) return badRequest(at + ": " + decoded.error().message);
            v.uid = decoded->uid;
            if (v.uid.empty()) return badRequest(at + ".metadata.uid: required");
            v.pod = std::move(*decoded);
          }
          nv.victims.push_back(std::move(v));
        }
      }
    }
  } catch (const json::exception& e) {
    return badRequest(std::string("ExtenderPreemptionArgs: ") + e.what());
  }
  if (!viewSynced(context)) return HttpResponse::text(503, "placer: the cluster view is not synced yet\n");

  return context.state->read([&](const ClusterView& view) {
    json result = json::object();
    for (const auto& [nodeName, nv] : proposed) {
      const NodeInfo* known = view.findNode(nodeName);
      if (!known) continue;
      NodeInfo trial = *known;
      for (const Victim& v : nv.victims) {
        const PodRecord* record = view.findPod(v.uid);
        if (record && record->attached && view.text(record->nodeNameId) == nodeName) {
          Resources nonZero;
          nonZero.milliCpu = record->nonZeroMilliCpu;
          nonZero.memory = record->nonZeroMemory;
          trial.removeUsage(record->requests, nonZero, record->hostPorts);
        } else if (v.pod && v.pod->nodeName == nodeName && !record) {
          trial.removeUsage(v.pod->requests, v.pod->nonZeroRequests, v.pod->hostPorts);
        }
      }
      const NodeInfo* candidate = &trial;
      Decision d = context.engine->evaluate(*pod, view, std::span<const NodeInfo* const>(&candidate, 1), Detail::Summary);
      if (d.feasibleCount != 1 || d.failure) continue;
      json uids = json::array();
      for (const Victim& v : nv.victims) uids.push_back({{"UID", v.uid}});
      result[nodeName] = {{"Pods", uids}, {"NumPDBViolations", nv.numPdbViolations}};
    }
    return HttpResponse::json(200, json{{"NodeNameToMetaVictims", result}}.dump());
  });
}

std::vector<Route> extenderRoutes(const ExtenderContext& context) {
  MetricsRegistry& metrics = *context.metrics;
  struct Verb {
    const char* path;
    const char* name;
    std::function<HttpResponse(std::string_view)> handle;
  };
  const ExtenderContext ctx = context;
  std::vector<Verb> verbs = {
      {"/filter", "filter", [ctx](std::string_view b) { return extenderFilter(ctx, b, false); }},
      {"/filter_onlyone", "filter_onlyone", [ctx](std::string_view b) { return extenderFilter(ctx, b, true); }},
      {"/prioritize", "prioritize", [ctx](std::string_view b) { return extenderPrioritize(ctx, b); }},
      {"/bind", "bind", [ctx](std::string_view b) { return extenderBind(ctx, b); }},
      {"/preempt", "preempt", [ctx](std::string_view b) { return extenderPreempt(ctx, b); }},
  };
  std::vector<Route> routes;
  for (Verb& verb : verbs) {
    Histogram& latency = metrics.histogram("placer_extender_request_duration_seconds",
                                           "Extender request handling time by verb.", latencyBuckets(),
                                           {{"verb", verb.name}});
    Counter& ok = metrics.counter("placer_extender_requests_total", "Extender requests by verb and HTTP code.",
                                  {{"verb", verb.name}, {"code", "200"}});
    Counter& bad = metrics.counter("placer_extender_requests_total", "Extender requests by verb and HTTP code.",
                                   {{"verb", verb.name}, {"code", "400"}});
    Counter& unavailable = metrics.counter("placer_extender_requests_total",
                                           "Extender requests by verb and HTTP code.",
                                           {{"verb", verb.name}, {"code", "503"}});
    routes.push_back(Route{"POST", verb.path,
                           [handle = std::move(verb.handle), &latency, &ok, &bad, &unavailable,
                            name = std::string(verb.name)](const HttpRequest& request) {
                             auto start = std::chrono::steady_clock::now();
                             HttpResponse response = handle(request.body);
                             latency.observe(
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                             (response.status == 200 ? ok : response.status == 400 ? bad : unavailable).inc();
                             if (response.status == 400)
                               logEvent(LogLevel::Warning, "extender: bad request",
                                        {{"verb", name}, {"error", response.body}});
                             return response;
                           }});
  }
  return routes;
}

bool isLoopbackAddress(std::string_view address) {
  auto hp = splitHostPort(address);
  if (!hp) return false;
  const std::string& host = hp->first;
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace placer
