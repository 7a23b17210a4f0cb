#include "scoring/model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "scoring/quantity.h"

namespace placer {

using json = nlohmann::json;

const std::string* findLabel(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& e, std::string_view k) { return e.first < k; });
  return (it != labels.end() && it->first == key) ? &it->second : nullptr;
}

std::string_view toString(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::NoSchedule: return "NoSchedule";
    case TaintEffect::PreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::NoExecute: return "NoExecute";
    case TaintEffect::All: return "";
  }
  return "";
}

std::string normalizedImageName(std::string_view name) {
  // imagelocality.normalizedImageName: no ':' after the last '/' means no tag.
  const size_t colon = name.rfind(':');
  const size_t slash = name.rfind('/');
  std::string out(name);
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon <= slash)) out += ":latest";
  return out;
}

namespace {

// A JSON path, built on the stack while walking and rendered only for errors:
// "spec.containers[1].resources.requests.cpu".
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  int64_t index = -1;

  Path child(std::string_view k) const { return Path{this, k, -1}; }
  Path at(size_t i) const { return Path{this, {}, static_cast<int64_t>(i)}; }

  void render(std::string& out) const {
    if (parent) parent->render(out);
    if (index >= 0) {
      out += '[';
      out += std::to_string(index);
      out += ']';
    } else if (!key.empty()) {
      if (!out.empty()) out += '.';
      out += key;
    }
  }
  std::string str() const {
    std::string out;
    render(out);
    return out;
  }
};

Error errorAt(const Path& path, std::string_view what) {
  std::string field = path.str();
  if (field.empty()) return Error{std::string(what)};
  return fieldError(field, what);
}

std::string_view typeName(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "a number";
    default: return "null";
  }
}

Error typeError(const Path& path, std::string_view expected, const json& got) {
  std::string m = "expected ";
  m.append(expected).append(", got ").append(typeName(got));
  return errorAt(path, m);
}

// A member of an object, or nullptr when absent or JSON null (Go decodes
// null as the zero value). `object` must be an object.
const json* member(const json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

// Each reader leaves `out` unchanged when the value is absent.
Outcome readString(const json& object, std::string_view key, const Path& path, std::string& out) {
  const json* v = member(object, key);
  if (!v) return {};
  if (!v->is_string()) return typeError(path.child(key), "a string", *v);
  out = v->get_ref<const std::string&>();
  return {};
}

Outcome readBool(const json& object, std::string_view key, const Path& path, bool& out) {
  const json* v = member(object, key);
  if (!v) return {};
  if (!v->is_boolean()) return typeError(path.child(key), "a boolean", *v);
  out = v->get<bool>();
  return {};
}

Outcome toInt64(const json& v, const Path& path, int64_t& out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return errorAt(path, "number out of range");
    out = static_cast<int64_t>(u);
    return {};
  }
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return {};
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= -9.2e18 && d <= 9.2e18) || std::trunc(d) != d) return errorAt(path, "expected an integer");
    out = static_cast<int64_t>(d);
    return {};
  }
  return typeError(path, "an integer", v);
}

Outcome readInt64(const json& object, std::string_view key, const Path& path, int64_t& out) {
  const json* v = member(object, key);
  if (!v) return {};
  return toInt64(*v, path.child(key), out);
}

Outcome readInt32(const json& object, std::string_view key, const Path& path, int32_t& out) {
  const json* v = member(object, key);
  if (!v) return {};
  int64_t wide = 0;
  if (auto r = toInt64(*v, path.child(key), wide); !r) return r;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max())
    return errorAt(path.child(key), "number out of range for int32");
  out = static_cast<int32_t>(wide);
  return {};
}

// An optional object member: nullptr when absent; an error when not an object.
Result<const json*> objectMember(const json& object, std::string_view key, const Path& path) {
  const json* v = member(object, key);
  if (!v) return static_cast<const json*>(nullptr);
  if (!v->is_object()) return typeError(path.child(key), "an object", *v);
  return v;
}

Result<const json*> arrayMember(const json& object, std::string_view key, const Path& path) {
  const json* v = member(object, key);
  if (!v) return static_cast<const json*>(nullptr);
  if (!v->is_array()) return typeError(path.child(key), "an array", *v);
  return v;
}

Outcome readStringList(const json& object, std::string_view key, const Path& path, std::vector<std::string>& out) {
  auto arr = arrayMember(object, key, path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child(key);
  out.reserve((*arr)->size());
  size_t i = 0;
  for (const json& v : **arr) {
    if (!v.is_string()) return typeError(here.at(i), "a string", v);
    out.push_back(v.get_ref<const std::string&>());
    ++i;
  }
  return {};
}

// map[string]string, sorted by key.
Outcome readStringMap(const json& object, std::string_view key, const Path& path, Labels& out) {
  auto obj = objectMember(object, key, path);
  if (!obj) return obj.error();
  if (!*obj) return {};
  const Path here = path.child(key);
  out.reserve((*obj)->size());
  for (auto it = (*obj)->begin(); it != (*obj)->end(); ++it) {
    if (!it->is_string()) return typeError(here.child(it.key()), "a string", *it);
    out.emplace_back(it.key(), it->get_ref<const std::string&>());
  }
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
  return {};
}

// ---- quantities and resource lists ----

Error quantityError(const Path& path, const Error& e) { return errorAt(path, e.message); }

// A quantity as JSON: normally a string ("100m"); Quantity.UnmarshalJSON also
// takes a bare number and trims surrounding spaces.
Result<int64_t> quantityValue(const json& v, const Path& path, bool milli) {
  std::string numberText;
  std::string_view text;
  if (v.is_string()) {
    text = v.get_ref<const std::string&>();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  } else if (v.is_number()) {
    numberText = v.dump();
    text = numberText;
  } else {
    return typeError(path, "a quantity string", v);
  }
  auto q = milli ? parseMilliQuantity(text) : parseQuantity(text);
  if (!q) return quantityError(path, q.error());
  return q;
}

struct ResourceListPresence {
  bool cpu = false;
  bool memory = false;
};

// A v1.ResourceList into Resources the way framework.Resource.Add reads it:
// cpu in millicores, pods as a count, scalar names kept, other names ignored.
Outcome readResourceList(const json& object, std::string_view key, const Path& path, Resources& out,
                         ResourceListPresence* presence = nullptr) {
  auto obj = objectMember(object, key, path);
  if (!obj) return obj.error();
  if (!*obj) return {};
  const Path here = path.child(key);
  for (auto it = (*obj)->begin(); it != (*obj)->end(); ++it) {
    const std::string& name = it.key();
    const Path field = here.child(name);
    const bool isCpu = name == kResourceCpu;
    auto value = quantityValue(*it, field, isCpu);
    if (!value) return value.error();
    if (isCpu) {
      out.milliCpu = *value;
      if (presence) presence->cpu = true;
    } else if (name == kResourceMemory) {
      out.memory = *value;
      if (presence) presence->memory = true;
    } else if (name == kResourceEphemeralStorage) {
      out.ephemeralStorage = *value;
    } else if (name == kResourcePods) {
      out.pods = *value;
    } else if (isScalarResourceName(name)) {
      out.setScalar(name, *value);
    }
  }
  return {};
}

// ---- selectors, taints, tolerations ----

Result<SelectorOperator> selectorOperator(const std::string& op, const Path& path, bool nodeSelector) {
  if (op == "In") return SelectorOperator::In;
  if (op == "NotIn") return SelectorOperator::NotIn;
  if (op == "Exists") return SelectorOperator::Exists;
  if (op == "DoesNotExist") return SelectorOperator::DoesNotExist;
  if (nodeSelector && op == "Gt") return SelectorOperator::Gt;
  if (nodeSelector && op == "Lt") return SelectorOperator::Lt;
  return errorAt(path, "unknown operator \"" + op + "\"");
}

Outcome readRequirements(const json& object, std::string_view key, const Path& path, bool nodeSelector,
                         std::vector<SelectorRequirement>& out) {
  auto arr = arrayMember(object, key, path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child(key);
  out.reserve((*arr)->size());
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    SelectorRequirement r;
    if (auto o = readString(item, "key", p, r.key); !o) return o;
    std::string op;
    if (auto o = readString(item, "operator", p, op); !o) return o;
    auto parsed = selectorOperator(op, p.child("operator"), nodeSelector);
    if (parsed) {
      r.op = *parsed;
    } else if (nodeSelector) {
      return parsed.error();
    } else {
      r.unknownOperator = op.empty() ? std::string("\"\"") : op;  // reported when the selector is compiled
    }
    if (auto o = readStringList(item, "values", p, r.values); !o) return o;
    out.push_back(std::move(r));
  }
  return {};
}

Result<NodeSelectorTerm> decodeNodeSelectorTerm(const json& item, const Path& p) {
  if (!item.is_object()) return typeError(p, "an object", item);
  NodeSelectorTerm term;
  if (auto o = readRequirements(item, "matchExpressions", p, true, term.matchExpressions); !o) return o.error();
  if (auto o = readRequirements(item, "matchFields", p, true, term.matchFields); !o) return o.error();
  return term;
}

Result<std::optional<LabelSelector>> decodeLabelSelector(const json& object, std::string_view key, const Path& path) {
  auto obj = objectMember(object, key, path);
  if (!obj) return obj.error();
  if (!*obj) return std::optional<LabelSelector>{};
  const Path here = path.child(key);
  LabelSelector selector;
  if (auto o = readStringMap(**obj, "matchLabels", here, selector.matchLabels); !o) return o.error();
  if (auto o = readRequirements(**obj, "matchExpressions", here, false, selector.matchExpressions); !o)
    return o.error();
  return std::optional<LabelSelector>(std::move(selector));
}

Result<TaintEffect> taintEffect(const std::string& effect, const Path& path, bool allowEmpty) {
  if (effect == "NoSchedule") return TaintEffect::NoSchedule;
  if (effect == "PreferNoSchedule") return TaintEffect::PreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::NoExecute;
  if (allowEmpty && effect.empty()) return TaintEffect::All;
  return errorAt(path, "unknown taint effect \"" + effect + "\"");
}

Outcome readTaints(const json& spec, const Path& path, std::vector<Taint>& out) {
  auto arr = arrayMember(spec, "taints", path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child("taints");
  out.reserve((*arr)->size());
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    Taint t;
    std::string effect;
    if (auto o = readString(item, "key", p, t.key); !o) return o;
    if (auto o = readString(item, "value", p, t.value); !o) return o;
    if (auto o = readString(item, "effect", p, effect); !o) return o;
    auto e = taintEffect(effect, p.child("effect"), false);
    if (!e) return e.error();
    t.effect = *e;
    out.push_back(std::move(t));
  }
  return {};
}

Outcome readTolerations(const json& spec, const Path& path, std::vector<Toleration>& out) {
  auto arr = arrayMember(spec, "tolerations", path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child("tolerations");
  out.reserve((*arr)->size());
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    Toleration t;
    std::string op, effect;
    if (auto o = readString(item, "key", p, t.key); !o) return o;
    if (auto o = readString(item, "operator", p, op); !o) return o;
    if (auto o = readString(item, "value", p, t.value); !o) return o;
    if (auto o = readString(item, "effect", p, effect); !o) return o;
    if (op.empty() || op == "Equal") {
      t.op = TolerationOperator::Equal;
    } else if (op == "Exists") {
      t.op = TolerationOperator::Exists;
    } else {
      return errorAt(p.child("operator"), "unknown toleration operator \"" + op + "\"");
    }
    auto e = taintEffect(effect, p.child("effect"), true);
    if (!e) return e.error();
    t.effect = *e;
    if (const json* seconds = member(item, "tolerationSeconds")) {
      int64_t s = 0;
      if (auto o = toInt64(*seconds, p.child("tolerationSeconds"), s); !o) return o;
      t.tolerationSeconds = s;
    }
    out.push_back(std::move(t));
  }
  return {};
}

// ---- affinity ----

Result<std::optional<NodeAffinity>> decodeNodeAffinity(const json& affinity, const Path& path) {
  auto obj = objectMember(affinity, "nodeAffinity", path);
  if (!obj) return obj.error();
  if (!*obj) return std::optional<NodeAffinity>{};
  const json& na = **obj;
  const Path here = path.child("nodeAffinity");
  NodeAffinity result;

  auto required = objectMember(na, "requiredDuringSchedulingIgnoredDuringExecution", here);
  if (!required) return required.error();
  if (*required) {
    const Path rp = here.child("requiredDuringSchedulingIgnoredDuringExecution");
    NodeSelector selector;
    auto terms = arrayMember(**required, "nodeSelectorTerms", rp);
    if (!terms) return terms.error();
    if (*terms) {
      const Path tp = rp.child("nodeSelectorTerms");
      size_t i = 0;
      for (const json& item : **terms) {
        auto term = decodeNodeSelectorTerm(item, tp.at(i++));
        if (!term) return term.error();
        selector.terms.push_back(std::move(*term));
      }
    }
    result.required = std::move(selector);
  }

  auto preferred = arrayMember(na, "preferredDuringSchedulingIgnoredDuringExecution", here);
  if (!preferred) return preferred.error();
  if (*preferred) {
    const Path pp = here.child("preferredDuringSchedulingIgnoredDuringExecution");
    size_t i = 0;
    for (const json& item : **preferred) {
      const Path p = pp.at(i++);
      if (!item.is_object()) return typeError(p, "an object", item);
      PreferredSchedulingTerm term;
      if (auto o = readInt32(item, "weight", p, term.weight); !o) return o.error();
      if (const json* pref = member(item, "preference")) {
        auto decoded = decodeNodeSelectorTerm(*pref, p.child("preference"));
        if (!decoded) return decoded.error();
        term.preference = std::move(*decoded);
      }
      result.preferred.push_back(std::move(term));
    }
  }
  return std::optional<NodeAffinity>(std::move(result));
}

Result<PodAffinityTerm> decodePodAffinityTerm(const json& item, const Path& p) {
  if (!item.is_object()) return typeError(p, "an object", item);
  PodAffinityTerm term;
  auto selector = decodeLabelSelector(item, "labelSelector", p);
  if (!selector) return selector.error();
  term.labelSelector = std::move(*selector);
  if (auto o = readStringList(item, "namespaces", p, term.namespaces); !o) return o.error();
  auto nsSelector = decodeLabelSelector(item, "namespaceSelector", p);
  if (!nsSelector) return nsSelector.error();
  term.namespaceSelector = std::move(*nsSelector);
  if (auto o = readString(item, "topologyKey", p, term.topologyKey); !o) return o.error();
  if (auto o = readStringList(item, "matchLabelKeys", p, term.matchLabelKeys); !o) return o.error();
  if (auto o = readStringList(item, "mismatchLabelKeys", p, term.mismatchLabelKeys); !o) return o.error();
  return term;
}

Result<std::optional<PodAffinityRules>> decodePodAffinityRules(const json& affinity, std::string_view key,
                                                               const Path& path) {
  auto obj = objectMember(affinity, key, path);
  if (!obj) return obj.error();
  if (!*obj) return std::optional<PodAffinityRules>{};
  const Path here = path.child(key);
  PodAffinityRules rules;

  auto required = arrayMember(**obj, "requiredDuringSchedulingIgnoredDuringExecution", here);
  if (!required) return required.error();
  if (*required) {
    const Path rp = here.child("requiredDuringSchedulingIgnoredDuringExecution");
    size_t i = 0;
    for (const json& item : **required) {
      auto term = decodePodAffinityTerm(item, rp.at(i++));
      if (!term) return term.error();
      rules.required.push_back(std::move(*term));
    }
  }
  auto preferred = arrayMember(**obj, "preferredDuringSchedulingIgnoredDuringExecution", here);
  if (!preferred) return preferred.error();
  if (*preferred) {
    const Path pp = here.child("preferredDuringSchedulingIgnoredDuringExecution");
    size_t i = 0;
    for (const json& item : **preferred) {
      const Path p = pp.at(i++);
      if (!item.is_object()) return typeError(p, "an object", item);
      WeightedPodAffinityTerm weighted;
      if (auto o = readInt32(item, "weight", p, weighted.weight); !o) return o.error();
      if (const json* t = member(item, "podAffinityTerm")) {
        auto term = decodePodAffinityTerm(*t, p.child("podAffinityTerm"));
        if (!term) return term.error();
        weighted.term = std::move(*term);
      }
      rules.preferred.push_back(std::move(weighted));
    }
  }
  return std::optional<PodAffinityRules>(std::move(rules));
}

Outcome readTopologySpread(const json& spec, const Path& path, std::vector<TopologySpreadConstraint>& out) {
  auto arr = arrayMember(spec, "topologySpreadConstraints", path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child("topologySpreadConstraints");
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    TopologySpreadConstraint c;
    if (auto o = readInt32(item, "maxSkew", p, c.maxSkew); !o) return o;
    if (auto o = readString(item, "topologyKey", p, c.topologyKey); !o) return o;
    if (auto o = readString(item, "whenUnsatisfiable", p, c.whenUnsatisfiable); !o) return o;
    auto selector = decodeLabelSelector(item, "labelSelector", p);
    if (!selector) return selector.error();
    c.labelSelector = std::move(*selector);
    if (member(item, "minDomains")) {
      int32_t minDomains = 0;
      if (auto o = readInt32(item, "minDomains", p, minDomains); !o) return o;
      c.minDomains = minDomains;
    }
    if (auto o = readStringList(item, "matchLabelKeys", p, c.matchLabelKeys); !o) return o;
    for (auto [field, policy] : {std::pair{"nodeAffinityPolicy", &c.nodeAffinityPolicy},
                                 std::pair{"nodeTaintsPolicy", &c.nodeTaintsPolicy}}) {
      std::string text;
      if (auto o = readString(item, field, p, text); !o) return o;
      if (text == "Honor") {
        *policy = NodeInclusionPolicy::Honor;
      } else if (text == "Ignore") {
        *policy = NodeInclusionPolicy::Ignore;
      } else if (!text.empty()) {
        return errorAt(p.child(field), "unknown node inclusion policy \"" + text + "\"");
      }
    }
    out.push_back(std::move(c));
  }
  return {};
}

// ---- containers ----

Outcome readContainers(const json& spec, std::string_view key, const Path& path, bool init,
                       std::vector<Container>& out) {
  auto arr = arrayMember(spec, key, path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child(key);
  out.reserve((*arr)->size());
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    Container c;
    if (auto o = readString(item, "name", p, c.name); !o) return o;
    if (auto o = readString(item, "image", p, c.image); !o) return o;

    auto resources = objectMember(item, "resources", p);
    if (!resources) return resources.error();
    if (*resources) {
      ResourceListPresence presence;
      if (auto o = readResourceList(**resources, "requests", p.child("resources"), c.requests, &presence); !o)
        return o;
      c.hasCpuRequest = presence.cpu;
      c.hasMemoryRequest = presence.memory;
    }

    auto ports = arrayMember(item, "ports", p);
    if (!ports) return ports.error();
    if (*ports) {
      const Path pp = p.child("ports");
      size_t j = 0;
      for (const json& port : **ports) {
        const Path portPath = pp.at(j++);
        if (!port.is_object()) return typeError(portPath, "an object", port);
        HostPort hp;
        if (auto o = readInt32(port, "hostPort", portPath, hp.port); !o) return o;
        if (auto o = readString(port, "hostIP", portPath, hp.ip); !o) return o;
        if (auto o = readString(port, "protocol", portPath, hp.protocol); !o) return o;
        if (hp.port <= 0) continue;
        if (hp.ip.empty()) hp.ip = "0.0.0.0";
        if (hp.protocol.empty()) hp.protocol = "TCP";
        c.hostPorts.push_back(std::move(hp));
      }
    }

    if (init) {
      std::string restartPolicy;
      if (auto o = readString(item, "restartPolicy", p, restartPolicy); !o) return o;
      c.restartableInit = restartPolicy == "Always";
    }
    out.push_back(std::move(c));
  }
  return {};
}

Outcome readPodLevelRequests(const json& spec, const Path& path, Pod& pod) {
  auto resources = objectMember(spec, "resources", path);
  if (!resources) return resources.error();
  if (!*resources) return {};
  Resources all;
  ResourceListPresence presence;
  if (auto o = readResourceList(**resources, "requests", path.child("resources"), all, &presence); !o) return o;
  Pod::PodLevelRequests level;
  level.hasCpu = presence.cpu;
  level.hasMemory = presence.memory;
  level.requests.milliCpu = all.milliCpu;
  level.requests.memory = all.memory;
  for (const auto& [name, value] : all.scalars)
    if (isHugePageResourceName(name)) level.requests.setScalar(name, value);
  if (level.hasCpu || level.hasMemory || !level.requests.scalars.empty()) pod.podLevelRequests = std::move(level);
  return {};
}

Outcome readVolumes(const json& spec, const Path& path, Pod& pod) {
  auto arr = arrayMember(spec, "volumes", path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child("volumes");
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    if (member(item, "persistentVolumeClaim")) pod.hasPvcVolume = true;
    if (member(item, "ephemeral")) pod.hasEphemeralVolume = true;
  }
  return {};
}

// ---- in-place resize status ----

// IsPodResizeInfeasible: the first PodResizePending condition decides.
Outcome readResizeInfeasible(const json& status, const Path& path, Pod& pod) {
  auto conditions = arrayMember(status, "conditions", path);
  if (!conditions) return conditions.error();
  if (!*conditions) return {};
  const Path cp = path.child("conditions");
  size_t i = 0;
  for (const json& item : **conditions) {
    const Path p = cp.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    std::string type;
    if (auto o = readString(item, "type", p, type); !o) return o;
    if (type != "PodResizePending") continue;
    std::string reason;
    if (auto o = readString(item, "reason", p, reason); !o) return o;
    pod.resizeInfeasible = reason == "Infeasible";
    return {};
  }
  return {};
}

struct ContainerStatusRequests {
  std::string name;
  std::optional<Container::StatusRequests> allocated;
  std::optional<Container::StatusRequests> actuated;
};

Outcome readStatusRequests(const json& object, std::string_view key, const Path& path,
                           std::optional<Container::StatusRequests>& out) {
  if (!member(object, key)) return {};
  Container::StatusRequests requests;
  ResourceListPresence presence;
  if (auto o = readResourceList(object, key, path, requests.requests, &presence); !o) return o;
  requests.hasCpu = presence.cpu;
  requests.hasMemory = presence.memory;
  out = std::move(requests);
  return {};
}

Outcome readContainerStatuses(const json& status, std::string_view key, const Path& path,
                              std::vector<ContainerStatusRequests>& out) {
  auto arr = arrayMember(status, key, path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  const Path here = path.child(key);
  size_t i = 0;
  for (const json& item : **arr) {
    const Path p = here.at(i++);
    if (!item.is_object()) return typeError(p, "an object", item);
    ContainerStatusRequests cs;
    if (auto o = readString(item, "name", p, cs.name); !o) return o;
    if (auto o = readStatusRequests(item, "allocatedResources", p, cs.allocated); !o) return o;
    auto resources = objectMember(item, "resources", p);
    if (!resources) return resources.error();
    if (*resources) {
      if (auto o = readStatusRequests(**resources, "requests", p.child("resources"), cs.actuated); !o) return o;
    }
    if (cs.allocated || cs.actuated) out.push_back(std::move(cs));
  }
  return {};
}

// Attaches each container's allocated / actuated requests; a container's
// status is looked up by name in containerStatuses, then initContainerStatuses.
Outcome readResizeStatus(const json& status, const Path& path, Pod& pod) {
  if (auto o = readResizeInfeasible(status, path, pod); !o) return o;
  std::vector<ContainerStatusRequests> statuses;
  if (auto o = readContainerStatuses(status, "containerStatuses", path, statuses); !o) return o;
  const size_t regular = statuses.size();
  if (auto o = readContainerStatuses(status, "initContainerStatuses", path, statuses); !o) return o;
  if (statuses.empty()) return {};
  auto attach = [&](Container& c) {
    auto find = [&](size_t from, size_t to) -> const ContainerStatusRequests* {
      for (size_t i = from; i < to; ++i)
        if (statuses[i].name == c.name) return &statuses[i];
      return nullptr;
    };
    const ContainerStatusRequests* cs = find(0, regular);
    if (!cs) cs = find(regular, statuses.size());
    if (!cs) return;
    c.allocatedRequests = cs->allocated;
    c.actuatedRequests = cs->actuated;
  };
  for (Container& c : pod.containers) attach(c);
  for (Container& c : pod.initContainers) attach(c);
  return {};
}

// ---- the request computation ----

// Which view of a container's requests an aggregate uses (resourcehelper:
// containerSpecRequests / containerAllocatedRequests / containerActuatedRequests).
enum class Source { Spec, Allocated, Actuated };

struct ContainerList {
  const Resources* requests = nullptr;  // nullptr: no list at all (nothing requested)
  bool hasCpu = false;
  bool hasMemory = false;
};

ContainerList requestList(const Container& c, Source source, bool resizeInfeasible) {
  const ContainerList spec{&c.requests, c.hasCpuRequest, c.hasMemoryRequest};
  auto fromStatus = [](const Container::StatusRequests& s) {
    return ContainerList{&s.requests, s.hasCpu, s.hasMemory};
  };
  switch (source) {
    case Source::Spec:
      return spec;
    case Source::Actuated:
      if (c.actuatedRequests) return fromStatus(*c.actuatedRequests);
      [[fallthrough]];
    case Source::Allocated:
      if (c.allocatedRequests) return fromStatus(*c.allocatedRequests);
      if (resizeInfeasible) return ContainerList{};
      return spec;
  }
  return spec;
}

// One container's contribution, either as listed or with the scorers'
// non-zero defaults for a cpu / memory request missing from the list.
Resources containerRequests(const Container& c, Source source, bool resizeInfeasible, bool nonZero,
                            bool defaultCpu, bool defaultMemory) {
  const ContainerList list = requestList(c, source, resizeInfeasible);
  static const Resources kNothing;
  const Resources& requests = list.requests ? *list.requests : kNothing;
  if (!nonZero) return requests;
  Resources r;
  r.milliCpu = (!list.hasCpu && defaultCpu) ? kDefaultMilliCpuRequest : requests.milliCpu;
  r.memory = (!list.hasMemory && defaultMemory) ? kDefaultMemoryRequest : requests.memory;
  return r;
}

// aggregateContainerResourcesByFn: regular containers summed; each init
// container runs alongside the sidecars (restartable init containers) started
// before it; sidecars keep running and add to the total.
Resources aggregateContainers(const Pod& pod, Source source, bool nonZero, bool defaultCpu, bool defaultMemory) {
  const bool infeasible = pod.resizeInfeasible;
  Resources result;
  for (const Container& c : pod.containers)
    result.add(containerRequests(c, source, infeasible, nonZero, defaultCpu, defaultMemory));

  Resources sidecars;
  Resources initPeak;
  for (const Container& c : pod.initContainers) {
    const Resources own = containerRequests(c, source, infeasible, nonZero, defaultCpu, defaultMemory);
    if (c.restartableInit) {
      result.add(own);
      sidecars.add(own);
      initPeak.setMax(sidecars);
    } else {
      Resources combined = own;
      combined.add(sidecars);
      initPeak.setMax(combined);
    }
  }
  result.setMax(initPeak);
  return result;
}

bool anyContainer(const Pod& pod, bool (*has)(const Container&)) {
  return std::any_of(pod.containers.begin(), pod.containers.end(), has) ||
         std::any_of(pod.initContainers.begin(), pod.initContainers.end(), has);
}

bool hasStatusRequests(const Container& c) { return c.allocatedRequests || c.actuatedRequests; }

// resourcehelper.PodRequests with UseStatusResources (in-place resize on, as
// kube-scheduler runs it): the per-resource maximum of the spec, allocated and
// actuated aggregates (spec left out while a resize is infeasible); then
// pod-level requests replace cpu / memory / hugepages; then overhead.
Resources podRequests(const Pod& pod, bool nonZero, bool defaultCpu, bool defaultMemory) {
  Resources result;
  const bool statuses = pod.resizeInfeasible || anyContainer(pod, hasStatusRequests);
  if (!statuses) {
    result = aggregateContainers(pod, Source::Spec, nonZero, defaultCpu, defaultMemory);
  } else {
    if (!pod.resizeInfeasible) result = aggregateContainers(pod, Source::Spec, nonZero, defaultCpu, defaultMemory);
    result.setMax(aggregateContainers(pod, Source::Allocated, nonZero, defaultCpu, defaultMemory));
    result.setMax(aggregateContainers(pod, Source::Actuated, nonZero, defaultCpu, defaultMemory));
  }

  if (pod.podLevelRequests) {
    const auto& level = *pod.podLevelRequests;
    if (level.hasCpu) result.milliCpu = level.requests.milliCpu;
    if (level.hasMemory) result.memory = level.requests.memory;
    if (!nonZero)
      for (const auto& [name, value] : level.requests.scalars) result.setScalar(name, value);
  }
  if (nonZero) {
    result.milliCpu += pod.overhead.milliCpu;
    result.memory += pod.overhead.memory;
  } else {
    result.add(pod.overhead);
  }
  return result;
}

}  // namespace

void computePodRequests(Pod& pod) {
  pod.requests = podRequests(pod, false, false, false);

  // Without pod-level requests every container missing a cpu / memory request
  // counts the default. With them, the default applies only to a resource
  // requested nowhere (no container, no pod-level value, no overhead).
  bool defaultCpu = true;
  bool defaultMemory = true;
  if (pod.podLevelRequests) {
    defaultCpu = !pod.podLevelRequests->hasCpu && pod.overhead.milliCpu == 0 &&
                 !anyContainer(pod, [](const Container& c) {
                   return c.hasCpuRequest || (c.allocatedRequests && c.allocatedRequests->hasCpu) ||
                          (c.actuatedRequests && c.actuatedRequests->hasCpu);
                 });
    defaultMemory = !pod.podLevelRequests->hasMemory && pod.overhead.memory == 0 &&
                    !anyContainer(pod, [](const Container& c) {
                      return c.hasMemoryRequest || (c.allocatedRequests && c.allocatedRequests->hasMemory) ||
                             (c.actuatedRequests && c.actuatedRequests->hasMemory);
                    });
  }
  const Resources nonZero = podRequests(pod, true, defaultCpu, defaultMemory);
  pod.nonZeroRequests = Resources{};
  pod.nonZeroRequests.milliCpu = nonZero.milliCpu;
  pod.nonZeroRequests.memory = nonZero.memory;

  // schedutil.GetHostPorts: sidecars first, then regular containers; other
  // init containers have finished before the pod runs.
  pod.hostPorts.clear();
  for (const Container& c : pod.initContainers)
    if (c.restartableInit) pod.hostPorts.insert(pod.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
  for (const Container& c : pod.containers)
    pod.hostPorts.insert(pod.hostPorts.end(), c.hostPorts.begin(), c.hostPorts.end());
}

Result<Pod> decodePod(const json& object) {
  const Path root;
  if (!object.is_object()) return typeError(root, "a Pod object", object);
  Pod pod;

  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (*metadata) {
    const json& m = **metadata;
    const Path mp = root.child("metadata");
    if (auto o = readString(m, "namespace", mp, pod.namespace_); !o) return o.error();
    if (auto o = readString(m, "name", mp, pod.name); !o) return o.error();
    if (auto o = readString(m, "generateName", mp, pod.generateName); !o) return o.error();
    if (auto o = readString(m, "uid", mp, pod.uid); !o) return o.error();
    if (auto o = readStringMap(m, "labels", mp, pod.labels); !o) return o.error();
    if (auto o = readStringMap(m, "annotations", mp, pod.annotations); !o) return o.error();
    if (const json* deletion = member(m, "deletionTimestamp")) {
      if (!deletion->is_string()) return typeError(mp.child("deletionTimestamp"), "a string", *deletion);
      pod.terminating = true;
    }
    auto owners = arrayMember(m, "ownerReferences", mp);
    if (!owners) return owners.error();
    if (*owners) {
      const Path op = mp.child("ownerReferences");
      size_t i = 0;
      for (const json& ref : **owners) {
        const Path p = op.at(i++);
        if (!ref.is_object()) return typeError(p, "an object", ref);
        bool controller = false;
        if (auto o = readBool(ref, "controller", p, controller); !o) return o.error();
        if (controller && pod.ownerKind.empty()) {
          if (auto o = readString(ref, "kind", p, pod.ownerKind); !o) return o.error();
          if (auto o = readString(ref, "apiVersion", p, pod.ownerApiVersion); !o) return o.error();
          if (auto o = readString(ref, "name", p, pod.ownerName); !o) return o.error();
        }
      }
    }
  }

  auto spec = objectMember(object, "spec", root);
  if (!spec) return spec.error();
  if (*spec) {
    const json& s = **spec;
    const Path sp = root.child("spec");
    if (auto o = readString(s, "nodeName", sp, pod.nodeName); !o) return o.error();
    if (auto o = readString(s, "schedulerName", sp, pod.schedulerName); !o) return o.error();
    if (auto o = readStringMap(s, "nodeSelector", sp, pod.nodeSelector); !o) return o.error();
    auto affinity = objectMember(s, "affinity", sp);
    if (!affinity) return affinity.error();
    if (*affinity) {
      const Path ap = sp.child("affinity");
      auto nodeAffinity = decodeNodeAffinity(**affinity, ap);
      if (!nodeAffinity) return nodeAffinity.error();
      pod.nodeAffinity = std::move(*nodeAffinity);
      auto podAffinity = decodePodAffinityRules(**affinity, "podAffinity", ap);
      if (!podAffinity) return podAffinity.error();
      pod.podAffinity = std::move(*podAffinity);
      auto podAntiAffinity = decodePodAffinityRules(**affinity, "podAntiAffinity", ap);
      if (!podAntiAffinity) return podAntiAffinity.error();
      pod.podAntiAffinity = std::move(*podAntiAffinity);
    }
    if (auto o = readTopologySpread(s, sp, pod.topologySpreadConstraints); !o) return o.error();
    if (auto o = readTolerations(s, sp, pod.tolerations); !o) return o.error();
    if (auto o = readContainers(s, "containers", sp, false, pod.containers); !o) return o.error();
    if (auto o = readContainers(s, "initContainers", sp, true, pod.initContainers); !o) return o.error();
    if (auto o = readResourceList(s, "overhead", sp, pod.overhead); !o) return o.error();
    if (auto o = readPodLevelRequests(s, sp, pod); !o) return o.error();
    if (auto o = readInt32(s, "priority", sp, pod.priority); !o) return o.error();
    auto gates = arrayMember(s, "schedulingGates", sp);
    if (!gates) return gates.error();
    if (*gates) pod.schedulingGates = static_cast<int32_t>(std::min<size_t>((*gates)->size(), INT32_MAX));
    if (auto o = readVolumes(s, sp, pod); !o) return o.error();
  }
  if (pod.schedulerName.empty()) pod.schedulerName = "default-scheduler";

  auto status = objectMember(object, "status", root);
  if (!status) return status.error();
  if (*status) {
    const Path stp = root.child("status");
    if (auto o = readString(**status, "phase", stp, pod.phase); !o) return o.error();
    if (auto o = readString(**status, "nominatedNodeName", stp, pod.nominatedNodeName); !o) return o.error();
    if (auto o = readString(**status, "reason", stp, pod.statusReason); !o) return o.error();
    if (auto o = readString(**status, "message", stp, pod.statusMessage); !o) return o.error();
    if (auto o = readResizeStatus(**status, stp, pod); !o) return o.error();
  }

  computePodRequests(pod);
  return pod;
}

Result<Node> decodeNode(const json& object) {
  const Path root;
  if (!object.is_object()) return typeError(root, "a Node object", object);
  Node node;

  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (*metadata) {
    const json& m = **metadata;
    const Path mp = root.child("metadata");
    if (auto o = readString(m, "name", mp, node.name); !o) return o.error();
    if (auto o = readString(m, "uid", mp, node.uid); !o) return o.error();
    if (auto o = readString(m, "resourceVersion", mp, node.resourceVersion); !o) return o.error();
    if (auto o = readStringMap(m, "labels", mp, node.labels); !o) return o.error();
  }

  auto spec = objectMember(object, "spec", root);
  if (!spec) return spec.error();
  if (*spec) {
    const Path sp = root.child("spec");
    if (auto o = readBool(**spec, "unschedulable", sp, node.unschedulable); !o) return o.error();
    if (auto o = readTaints(**spec, sp, node.taints); !o) return o.error();
  }

  auto status = objectMember(object, "status", root);
  if (!status) return status.error();
  if (*status) {
    const json& st = **status;
    const Path stp = root.child("status");
    if (auto o = readResourceList(st, "allocatable", stp, node.allocatable); !o) return o.error();
    auto images = arrayMember(st, "images", stp);
    if (!images) return images.error();
    if (*images) {
      const Path ip = stp.child("images");
      node.images.reserve((*images)->size());
      size_t i = 0;
      for (const json& item : **images) {
        const Path p = ip.at(i++);
        if (!item.is_object()) return typeError(p, "an object", item);
        NodeImage image;
        if (auto o = readStringList(item, "names", p, image.names); !o) return o.error();
        for (std::string& name : image.names) name = normalizedImageName(name);
        if (auto o = readInt64(item, "sizeBytes", p, image.sizeBytes); !o) return o.error();
        node.images.push_back(std::move(image));
      }
    }
  }
  return node;
}

std::string_view toString(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Service: return "Service";
    case WorkloadKind::ReplicationController: return "ReplicationController";
    case WorkloadKind::ReplicaSet: return "ReplicaSet";
    case WorkloadKind::StatefulSet: return "StatefulSet";
  }
  return "Service";
}

namespace {

Outcome readObjectName(const json& object, const Path& root, std::string* ns, std::string& name) {
  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (!*metadata) return {};
  const Path mp = root.child("metadata");
  if (auto o = readString(**metadata, "name", mp, name); !o) return o;
  if (ns != nullptr)
    if (auto o = readString(**metadata, "namespace", mp, *ns); !o) return o;
  return {};
}

}  // namespace

Result<Namespace> decodeNamespace(const json& object) {
  const Path root;
  if (!object.is_object()) return typeError(root, "a Namespace object", object);
  Namespace ns;
  if (auto o = readObjectName(object, root, nullptr, ns.name); !o) return o.error();
  if (const json* metadata = member(object, "metadata"); metadata && metadata->is_object())
    if (auto o = readStringMap(*metadata, "labels", root.child("metadata"), ns.labels); !o) return o.error();
  return ns;
}

Result<WorkloadSelector> decodeWorkloadSelector(WorkloadKind kind, const json& object) {
  const Path root;
  if (!object.is_object()) return typeError(root, "an object", object);
  WorkloadSelector w;
  w.kind = kind;
  if (auto o = readObjectName(object, root, &w.namespace_, w.name); !o) return o.error();
  auto spec = objectMember(object, "spec", root);
  if (!spec) return spec.error();
  if (!*spec) return w;
  const Path sp = root.child("spec");
  if (kind == WorkloadKind::Service || kind == WorkloadKind::ReplicationController) {
    auto selector = objectMember(**spec, "selector", sp);
    if (!selector) return selector.error();
    if (*selector) {
      Labels map;
      if (auto o = readStringMap(**spec, "selector", sp, map); !o) return o.error();
      w.selectorMap = std::move(map);
    }
  } else {
    auto selector = decodeLabelSelector(**spec, "selector", sp);
    if (!selector) return selector.error();
    w.labelSelector = std::move(*selector);
  }
  return w;
}

bool hasMatchLabelKeys(const Pod& pod) {
  auto termHas = [](const PodAffinityTerm& t) { return !t.matchLabelKeys.empty() || !t.mismatchLabelKeys.empty(); };
  for (const std::optional<PodAffinityRules>* rules : {&pod.podAffinity, &pod.podAntiAffinity}) {
    if (!*rules) continue;
    for (const PodAffinityTerm& t : (*rules)->required)
      if (termHas(t)) return true;
    for (const WeightedPodAffinityTerm& t : (*rules)->preferred)
      if (termHas(t.term)) return true;
  }
  for (const TopologySpreadConstraint& c : pod.topologySpreadConstraints)
    if (!c.matchLabelKeys.empty()) return true;
  return false;
}

Result<std::vector<TopologySpreadConstraint>> decodeTopologySpreadConstraints(const json& list) {
  json holder = json::object();
  holder["topologySpreadConstraints"] = list;
  std::vector<TopologySpreadConstraint> out;
  if (auto o = readTopologySpread(holder, Path(), out); !o) return o.error();
  return out;
}

void applyMatchLabelKeys(Pod& pod) {
  auto addRequirements = [&](std::optional<LabelSelector>& selector, const std::vector<std::string>& keys,
                             SelectorOperator op) {
    if (!selector) return;  // a nil selector matches nothing, and stays nil
    for (const std::string& key : keys)
      if (const std::string* value = findLabel(pod.labels, key))
        selector->matchExpressions.push_back(SelectorRequirement{key, op, {*value}, {}});
  };
  auto applyTerm = [&](PodAffinityTerm& term) {
    addRequirements(term.labelSelector, term.matchLabelKeys, SelectorOperator::In);
    addRequirements(term.labelSelector, term.mismatchLabelKeys, SelectorOperator::NotIn);
  };
  for (std::optional<PodAffinityRules>* rules : {&pod.podAffinity, &pod.podAntiAffinity}) {
    if (!*rules) continue;
    for (PodAffinityTerm& term : (*rules)->required) applyTerm(term);
    for (WeightedPodAffinityTerm& term : (*rules)->preferred) applyTerm(term.term);
  }
  for (TopologySpreadConstraint& c : pod.topologySpreadConstraints)
    addRequirements(c.labelSelector, c.matchLabelKeys, SelectorOperator::In);
}

}  // namespace placer
