#pragma once
// The decoders of model.h written once, over any JSON representation that
// offers the few reads below. model.cpp instantiates them for nlohmann::json
// (snapshots, configuration, AdmissionReview, extender bodies) and
// json_value.cpp for simdjson's DOM (list items and watch events, decoded
// straight from the bytes the API server sent). Internal to scoring/: include
// it only from those two files.
//
// A representation V is a small copyable view of one JSON value with:
//   JsonKind kind() const;
//   std::optional<V> member(std::string_view key) const;  // object only; the
//       last member of that key (as nlohmann and Go's encoding/json keep
//       duplicates); nullopt when absent or JSON null (Go decodes null as the
//       zero value)
//   std::string_view string() const;  bool boolean() const;
//   int64_t int64() const; uint64_t uint64() const; double float64() const;
//   std::string numberText() const;   // as nlohmann::json::dump() writes it
//   size_t size() const;              // elements of an array / members of an object
//   elements()                        // an array's elements, in order, as V
//   Outcome forEachMember(F f) const; // f(std::string_view key, const V&) -> Outcome,
//       sorted by key, each key once (its last value): the order in which
//       nlohmann iterates, so that the first error reported is the same.
//   V picking(std::span<const std::string_view> keys, typename V::Picks& picks) const;
//       // object only: the same object, whose member() answers for `keys`
//       // (at most kMaxPicked) from `picks`, filled here in one walk over it
//       // (other keys are still looked up); picks outlives the view. A
//       // representation whose member() costs no walk returns *this.
//
// Adding a field a plugin reads: declare it in model.h, read it in the kind's
// decode function below (decodePodInto / decodeNodeAs), one line with the
// reader for its JSON type. Both representations then decode it; the list
// and watch path keeps no field list of its own.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scoring/model.h"
#include "scoring/quantity.h"

namespace placer::model_decode {

enum class JsonKind : uint8_t { Null, Bool, Signed, Unsigned, Float, String, Array, Object };

// The most keys one picking() finds in a walk.
inline constexpr size_t kMaxPicked = 16;

// The members a decoder reads of the objects it reads most members of, found
// in one walk over each (picking()) rather than one walk per member. A key
// left out here is still read, by a walk of its own.
inline constexpr std::string_view kMetadataKeys[] = {"namespace", "name", "generateName", "uid", "labels",
                                                     "annotations", "deletionTimestamp", "ownerReferences"};
inline constexpr std::string_view kPodSpecKeys[] = {
    "nodeName", "schedulerName", "nodeSelector", "affinity", "topologySpreadConstraints", "tolerations",
    "containers", "initContainers", "overhead", "resources", "priority", "schedulingGates", "resourceClaims",
    "volumes"};
inline constexpr std::string_view kPodStatusKeys[] = {"phase", "nominatedNodeName", "reason", "message",
                                                      "conditions", "containerStatuses", "initContainerStatuses"};
inline constexpr std::string_view kContainerKeys[] = {"name", "image", "resources", "ports", "restartPolicy"};
inline constexpr std::string_view kContainerStatusKeys[] = {"name", "allocatedResources", "resources"};
inline constexpr std::string_view kTolerationKeys[] = {"key", "operator", "value", "effect", "tolerationSeconds"};
inline constexpr std::string_view kOwnerReferenceKeys[] = {"controller", "kind", "apiVersion", "name"};
inline constexpr std::string_view kPortKeys[] = {"hostPort", "hostIP", "protocol"};
inline constexpr std::string_view kConditionKeys[] = {"type", "reason"};
static_assert(std::size(kPodSpecKeys) <= kMaxPicked && std::size(kMetadataKeys) <= kMaxPicked);

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

// An array's elements as V: what a representation's elements() returns,
// over its own iterator (whose elements V is constructed from).
template <class V, class It>
class ElementRange {
 public:
  ElementRange(It begin, It end) : begin_(begin), end_(end) {}
  class iterator {
   public:
    explicit iterator(It it) : it_(it) {}
    V operator*() const { return V(*it_); }
    iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return it_ != o.it_; }

   private:
    It it_;
  };
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  It begin_, end_;
};

inline Error errorAt(const Path& path, std::string_view what) {
  std::string field = path.str();
  if (field.empty()) return Error{std::string(what)};
  return fieldError(field, what);
}

inline std::string_view typeName(JsonKind kind) {
  switch (kind) {
    case JsonKind::Object: return "an object";
    case JsonKind::Array: return "an array";
    case JsonKind::String: return "a string";
    case JsonKind::Bool: return "a boolean";
    case JsonKind::Signed:
    case JsonKind::Unsigned:
    case JsonKind::Float: return "a number";
    case JsonKind::Null: return "null";
  }
  return "null";
}

template <class V>
Error typeError(const Path& path, std::string_view expected, const V& got) {
  std::string m = "expected ";
  m.append(expected).append(", got ").append(typeName(got.kind()));
  return errorAt(path, m);
}

template <class V>
bool isNumber(const V& v) {
  const JsonKind k = v.kind();
  return k == JsonKind::Signed || k == JsonKind::Unsigned || k == JsonKind::Float;
}

// Each reader leaves `out` unchanged when the value is absent.
template <class V>
Outcome readString(const V& object, std::string_view key, const Path& path, std::string& out) {
  auto v = object.member(key);
  if (!v) return {};
  if (v->kind() != JsonKind::String) return typeError(path.child(key), "a string", *v);
  out = v->string();
  return {};
}

template <class V>
Outcome readBool(const V& object, std::string_view key, const Path& path, bool& out) {
  auto v = object.member(key);
  if (!v) return {};
  if (v->kind() != JsonKind::Bool) return typeError(path.child(key), "a boolean", *v);
  out = v->boolean();
  return {};
}

template <class V>
Outcome toInt64(const V& v, const Path& path, int64_t& out) {
  switch (v.kind()) {
    case JsonKind::Unsigned: {
      const uint64_t u = v.uint64();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return errorAt(path, "number out of range");
      out = static_cast<int64_t>(u);
      return {};
    }
    case JsonKind::Signed:
      out = v.int64();
      return {};
    case JsonKind::Float: {
      const double d = v.float64();
      if (!(d >= -9.2e18 && d <= 9.2e18) || std::trunc(d) != d) return errorAt(path, "expected an integer");
      out = static_cast<int64_t>(d);
      return {};
    }
    default:
      return typeError(path, "an integer", v);
  }
}

template <class V>
Outcome readInt64(const V& object, std::string_view key, const Path& path, int64_t& out) {
  auto v = object.member(key);
  if (!v) return {};
  return toInt64(*v, path.child(key), out);
}

template <class V>
Outcome readInt32(const V& object, std::string_view key, const Path& path, int32_t& out) {
  auto v = object.member(key);
  if (!v) return {};
  int64_t wide = 0;
  if (auto r = toInt64(*v, path.child(key), wide); !r) return r;
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max())
    return errorAt(path.child(key), "number out of range for int32");
  out = static_cast<int32_t>(wide);
  return {};
}

// An optional object member: nullopt when absent; an error when not an object.
template <class V>
Result<std::optional<V>> objectMember(const V& object, std::string_view key, const Path& path) {
  auto v = object.member(key);
  if (!v) return std::optional<V>{};
  if (v->kind() != JsonKind::Object) return typeError(path.child(key), "an object", *v);
  return v;
}

template <class V>
Result<std::optional<V>> arrayMember(const V& object, std::string_view key, const Path& path) {
  auto v = object.member(key);
  if (!v) return std::optional<V>{};
  if (v->kind() != JsonKind::Array) return typeError(path.child(key), "an array", *v);
  return v;
}

struct IgnoreCount {
  void operator()(size_t) const {}
};

// The walk over an array member every list decoder takes: `each(item, path)`
// on the elements of `object`'s member `key` in order, each with its path
// ("key[i]"); the first error ends the walk. An absent or null member has no
// elements. `count(n)` hears the number of elements first (to reserve).
template <class V, class Each, class Count = IgnoreCount>
Outcome forEachElement(const V& object, std::string_view key, const Path& path, Each each, Count count = {}) {
  auto arr = arrayMember(object, key, path);
  if (!arr) return arr.error();
  if (!*arr) return {};
  count((*arr)->size());
  const Path here = path.child(key);
  size_t i = 0;
  for (const V& item : (*arr)->elements())
    if (Outcome o = each(item, here.at(i++)); !o) return o;
  return {};
}

// The same over a list of objects: an element that is not one is an error.
template <class V, class Each, class Count = IgnoreCount>
Outcome forEachObject(const V& object, std::string_view key, const Path& path, Each each, Count count = {}) {
  return forEachElement(
      object, key, path,
      [&](const V& item, const Path& p) -> Outcome {
        if (item.kind() != JsonKind::Object) return typeError(p, "an object", item);
        return each(item, p);
      },
      count);
}

// Reserves room in `out` for the elements of a list.
template <class T>
auto reserveIn(std::vector<T>& out) {
  return [&out](size_t n) { out.reserve(n); };
}

// Moves `from`'s buffer into `to`, emptied: what is kept of a reused object.
template <class T>
void keepEmptied(T& to, T& from) {
  to = std::move(from);
  to.clear();
}

// The reset of each reused element: everything as a fresh one, the buffers
// listed kept (a field not listed is simply not reused, never stale).
inline void reuse(std::pair<std::string, std::string>& entry) {
  entry.first.clear();
  entry.second.clear();
}

inline void reuse(Toleration& t) {
  Toleration fresh;
  keepEmptied(fresh.key, t.key);
  keepEmptied(fresh.value, t.value);
  t = std::move(fresh);
}

inline void reuse(Container& c) {
  Container fresh;
  keepEmptied(fresh.name, c.name);
  keepEmptied(fresh.image, c.image);
  keepEmptied(fresh.requests.scalars, c.requests.scalars);
  keepEmptied(fresh.hostPorts, c.hostPorts);
  c = std::move(fresh);
}

// A pod about to be decoded into: everything as in a fresh Pod, but the
// strings keep their capacity, and the lists that decodePodInto refills on
// every path (Refill) keep their elements.
inline void reuse(Pod& pod) {
  Pod fresh;
  for (auto field : {&Pod::namespace_, &Pod::name, &Pod::generateName, &Pod::uid, &Pod::nodeName,
                     &Pod::schedulerName, &Pod::phase, &Pod::nominatedNodeName, &Pod::statusReason,
                     &Pod::statusMessage, &Pod::ownerKind, &Pod::ownerApiVersion, &Pod::ownerName})
    keepEmptied(fresh.*field, pod.*field);
  for (auto list : {&Pod::labels, &Pod::annotations, &Pod::nodeSelector}) fresh.*list = std::move(pod.*list);
  fresh.tolerations = std::move(pod.tolerations);
  fresh.containers = std::move(pod.containers);
  fresh.initContainers = std::move(pod.initContainers);
  keepEmptied(fresh.hostPorts, pod.hostPorts);
  pod = std::move(fresh);
}

// Fills a list from its start, reusing the elements a previous decode left
// in it (decodePodInto): their strings and vectors keep their capacity, so
// decoding a pod like the one before it allocates nothing. Whatever is left
// past the last element filled is dropped when the Refill ends, on every
// path (the list absent, an error). Each element handed out is as a fresh
// T would be, but for the capacity: `reuse(T&)` resets it.
template <class T>
class Refill {
 public:
  explicit Refill(std::vector<T>& out) : out_(out) {}
  ~Refill() { out_.erase(out_.begin() + static_cast<std::ptrdiff_t>(filled_), out_.end()); }
  Refill(const Refill&) = delete;
  Refill& operator=(const Refill&) = delete;

  T& next() {
    if (filled_ < out_.size()) {
      T& element = out_[filled_++];
      reuse(element);
      return element;
    }
    ++filled_;
    return out_.emplace_back();
  }
  // For forEachElement's count: room for n elements in all.
  auto reserve() {
    return [this](size_t n) { out_.reserve(n); };
  }

 private:
  std::vector<T>& out_;
  size_t filled_ = 0;
};

// Appends decode(item, path) of each element of the list `key` to `out`.
template <class V, class T, class Decode>
Outcome readList(const V& object, std::string_view key, const Path& path, std::vector<T>& out, Decode decode) {
  return forEachElement(
      object, key, path,
      [&](const V& item, const Path& p) -> Outcome {
        auto decoded = decode(item, p);
        if (!decoded) return decoded.error();
        out.push_back(std::move(*decoded));
        return {};
      },
      reserveIn(out));
}

// A list of weighted terms (the preferred terms of node and pod affinity):
// objects of `weight` and, under `termKey`, a term read by decode into
// `Weighted::*term`.
template <class V, class Weighted, class Term, class Decode>
Outcome readWeightedList(const V& object, std::string_view key, const Path& path, std::string_view termKey,
                         Term Weighted::*term, std::vector<Weighted>& out, Decode decode) {
  return forEachObject(
      object, key, path,
      [&](const V& item, const Path& p) -> Outcome {
        Weighted weighted;
        if (auto o = readInt32(item, "weight", p, weighted.weight); !o) return o;
        if (auto t = item.member(termKey)) {
          auto decoded = decode(*t, p.child(termKey));
          if (!decoded) return decoded.error();
          weighted.*term = std::move(*decoded);
        }
        out.push_back(std::move(weighted));
        return {};
      },
      reserveIn(out));
}

// The same over a list of strings: `each(text)` on each, in order; an
// element that is not a string is an error.
template <class V, class Each, class Count = IgnoreCount>
Outcome forEachString(const V& object, std::string_view key, const Path& path, Each each, Count count = {}) {
  return forEachElement(
      object, key, path,
      [&](const V& v, const Path& p) -> Outcome {
        if (v.kind() != JsonKind::String) return typeError(p, "a string", v);
        each(v.string());
        return {};
      },
      count);
}

template <class V>
Outcome readStringList(const V& object, std::string_view key, const Path& path,
                       std::vector<std::string>& out) {
  return forEachString(
      object, key, path, [&](std::string_view text) { out.emplace_back(text); }, reserveIn(out));
}

// map[string]string, sorted by key; replaces what `out` held.
template <class V>
Outcome readStringMap(const V& object, std::string_view key, const Path& path, Labels& out) {
  Refill fill(out);
  auto obj = objectMember(object, key, path);
  if (!obj) return obj.error();
  if (!*obj) return {};
  const Path here = path.child(key);
  out.reserve((*obj)->size());
  return (*obj)->forEachMember([&](std::string_view name, const V& value) -> Outcome {
    if (value.kind() != JsonKind::String) return typeError(here.child(name), "a string", value);
    auto& entry = fill.next();
    entry.first.assign(name);
    entry.second.assign(value.string());
    return {};
  });
}

// ---- quantities and resource lists ----

// A quantity as JSON: normally a string ("100m"); Quantity.UnmarshalJSON also
// takes a bare number and trims surrounding spaces.
template <class V>
Result<int64_t> quantityValue(const V& v, const Path& path, bool milli) {
  std::string numberText;
  std::string_view text;
  if (v.kind() == JsonKind::String) {
    text = v.string();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  } else if (isNumber(v)) {
    numberText = v.numberText();
    text = numberText;
  } else {
    return typeError(path, "a quantity string", v);
  }
  auto q = milli ? parseMilliQuantity(text) : parseQuantity(text);
  if (!q) return errorAt(path, q.error().message);
  return q;
}

struct ResourceListPresence {
  bool cpu = false;
  bool memory = false;
};

// A v1.ResourceList into Resources the way framework.Resource.Add reads it:
// cpu in millicores, pods as a count, scalar names kept, other names ignored.
template <class V>
Outcome readResourceList(const V& object, std::string_view key, const Path& path, Resources& out,
                         ResourceListPresence* presence = nullptr) {
  auto obj = objectMember(object, key, path);
  if (!obj) return obj.error();
  if (!*obj) return {};
  const Path here = path.child(key);
  return (*obj)->forEachMember([&](std::string_view name, const V& item) -> Outcome {
    const Path field = here.child(name);
    const bool isCpu = name == kResourceCpu;
    auto value = quantityValue(item, field, isCpu);
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
    return {};
  });
}

// ---- selectors, taints, tolerations ----

inline Result<SelectorOperator> selectorOperator(const std::string& op, const Path& path, bool nodeSelector) {
  if (op == "In") return SelectorOperator::In;
  if (op == "NotIn") return SelectorOperator::NotIn;
  if (op == "Exists") return SelectorOperator::Exists;
  if (op == "DoesNotExist") return SelectorOperator::DoesNotExist;
  if (nodeSelector && op == "Gt") return SelectorOperator::Gt;
  if (nodeSelector && op == "Lt") return SelectorOperator::Lt;
  return errorAt(path, "unknown operator \"" + op + "\"");
}

template <class V>
Outcome readRequirements(const V& object, std::string_view key, const Path& path, bool nodeSelector,
                         std::vector<SelectorRequirement>& out) {
  return forEachObject(
      object, key, path,
      [&](const V& item, const Path& p) -> Outcome {
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
          r.unknownOperator =
              op.empty() ? std::string("\"\"") : op;  // reported when the selector is compiled
        }
        if (auto o = readStringList(item, "values", p, r.values); !o) return o;
        out.push_back(std::move(r));
        return {};
      },
      reserveIn(out));
}

template <class V>
Result<NodeSelectorTerm> decodeNodeSelectorTerm(const V& item, const Path& p) {
  if (item.kind() != JsonKind::Object) return typeError(p, "an object", item);
  NodeSelectorTerm term;
  if (auto o = readRequirements(item, "matchExpressions", p, true, term.matchExpressions); !o) return o.error();
  if (auto o = readRequirements(item, "matchFields", p, true, term.matchFields); !o) return o.error();
  return term;
}

template <class V>
Result<std::optional<LabelSelector>> decodeLabelSelector(const V& object, std::string_view key, const Path& path) {
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

inline Result<TaintEffect> taintEffect(const std::string& effect, const Path& path, bool allowEmpty) {
  if (effect == "NoSchedule") return TaintEffect::NoSchedule;
  if (effect == "PreferNoSchedule") return TaintEffect::PreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::NoExecute;
  if (allowEmpty && effect.empty()) return TaintEffect::All;
  return errorAt(path, "unknown taint effect \"" + effect + "\"");
}

template <class V>
Outcome readTaints(const V& spec, const Path& path, std::vector<Taint>& out) {
  return forEachObject(
      spec, "taints", path,
      [&](const V& item, const Path& p) -> Outcome {
        Taint t;
        std::string effect;
        if (auto o = readString(item, "key", p, t.key); !o) return o;
        if (auto o = readString(item, "value", p, t.value); !o) return o;
        if (auto o = readString(item, "effect", p, effect); !o) return o;
        auto e = taintEffect(effect, p.child("effect"), false);
        if (!e) return e.error();
        t.effect = *e;
        out.push_back(std::move(t));
        return {};
      },
      reserveIn(out));
}

template <class V>
Outcome readTolerations(const V& spec, const Path& path, std::vector<Toleration>& out) {
  Refill fill(out);
  return forEachObject(
      spec, "tolerations", path,
      [&](const V& element, const Path& p) -> Outcome {
        typename V::Picks picks;
        const V item = element.picking(kTolerationKeys, picks);
        Toleration& t = fill.next();
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
        if (auto seconds = item.member("tolerationSeconds")) {
          int64_t s = 0;
          if (auto o = toInt64(*seconds, p.child("tolerationSeconds"), s); !o) return o;
          t.tolerationSeconds = s;
        }
        return {};
      },
      fill.reserve());
}

// ---- affinity ----

template <class V>
Result<std::optional<NodeAffinity>> decodeNodeAffinity(const V& affinity, const Path& path) {
  auto obj = objectMember(affinity, "nodeAffinity", path);
  if (!obj) return obj.error();
  if (!*obj) return std::optional<NodeAffinity>{};
  const V& na = **obj;
  const Path here = path.child("nodeAffinity");
  NodeAffinity result;

  auto required = objectMember(na, "requiredDuringSchedulingIgnoredDuringExecution", here);
  if (!required) return required.error();
  if (*required) {
    const Path rp = here.child("requiredDuringSchedulingIgnoredDuringExecution");
    NodeSelector selector;
    if (auto o = readList(**required, "nodeSelectorTerms", rp, selector.terms, decodeNodeSelectorTerm<V>); !o)
      return o.error();
    result.required = std::move(selector);
  }
  if (auto o = readWeightedList(na, "preferredDuringSchedulingIgnoredDuringExecution", here, "preference",
                                &PreferredSchedulingTerm::preference, result.preferred, decodeNodeSelectorTerm<V>);
      !o)
    return o.error();
  return std::optional<NodeAffinity>(std::move(result));
}

template <class V>
Result<PodAffinityTerm> decodePodAffinityTerm(const V& item, const Path& p) {
  if (item.kind() != JsonKind::Object) return typeError(p, "an object", item);
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

template <class V>
Result<std::optional<PodAffinityRules>> decodePodAffinityRules(const V& affinity, std::string_view key,
                                                               const Path& path) {
  auto obj = objectMember(affinity, key, path);
  if (!obj) return obj.error();
  if (!*obj) return std::optional<PodAffinityRules>{};
  const Path here = path.child(key);
  PodAffinityRules rules;

  if (auto o = readList(**obj, "requiredDuringSchedulingIgnoredDuringExecution", here, rules.required,
                        decodePodAffinityTerm<V>);
      !o)
    return o.error();
  if (auto o = readWeightedList(**obj, "preferredDuringSchedulingIgnoredDuringExecution", here, "podAffinityTerm",
                                &WeightedPodAffinityTerm::term, rules.preferred, decodePodAffinityTerm<V>);
      !o)
    return o.error();
  return std::optional<PodAffinityRules>(std::move(rules));
}

// spec.topologySpreadConstraints: a list of v1.TopologySpreadConstraint.
template <class V>
Outcome readTopologySpread(const V& spec, const Path& path, std::vector<TopologySpreadConstraint>& out) {
  return forEachObject(spec, "topologySpreadConstraints", path, [&](const V& item, const Path& p) -> Outcome {
    TopologySpreadConstraint c;
    if (auto o = readInt32(item, "maxSkew", p, c.maxSkew); !o) return o;
    if (auto o = readString(item, "topologyKey", p, c.topologyKey); !o) return o;
    if (auto o = readString(item, "whenUnsatisfiable", p, c.whenUnsatisfiable); !o) return o;
    auto selector = decodeLabelSelector(item, "labelSelector", p);
    if (!selector) return selector.error();
    c.labelSelector = std::move(*selector);
    if (item.member("minDomains")) {
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
    return {};
  });
}

// ---- containers ----

template <class V>
Outcome readContainers(const V& spec, std::string_view key, const Path& path, bool init,
                       std::vector<Container>& out) {
  Refill fill(out);
  return forEachObject(
      spec, key, path,
      [&](const V& element, const Path& p) -> Outcome {
        typename V::Picks picks;
        const V item = element.picking(kContainerKeys, picks);
        Container& c = fill.next();
        if (auto o = readString(item, "name", p, c.name); !o) return o;
        if (auto o = readString(item, "image", p, c.image); !o) return o;

        auto resources = objectMember(item, "resources", p);
        if (!resources) return resources.error();
        if (*resources) {
          ResourceListPresence presence;
          if (auto o = readResourceList(**resources, "requests", p.child("resources"), c.requests, &presence);
              !o)
            return o;
          c.hasCpuRequest = presence.cpu;
          c.hasMemoryRequest = presence.memory;
        }

        if (auto o = forEachObject(item, "ports", p,
                                   [&](const V& element, const Path& portPath) -> Outcome {
                                     typename V::Picks picks;
                                     const V port = element.picking(kPortKeys, picks);
                                     HostPort hp;
                                     if (auto o = readInt32(port, "hostPort", portPath, hp.port); !o)
                                       return o;
                                     if (auto o = readString(port, "hostIP", portPath, hp.ip); !o) return o;
                                     if (auto o = readString(port, "protocol", portPath, hp.protocol); !o)
                                       return o;
                                     if (hp.port <= 0) return {};
                                     if (hp.ip.empty()) hp.ip = "0.0.0.0";
                                     if (hp.protocol.empty()) hp.protocol = "TCP";
                                     c.hostPorts.push_back(std::move(hp));
                                     return {};
                                   });
            !o)
          return o;

        if (init) {
          std::string restartPolicy;
          if (auto o = readString(item, "restartPolicy", p, restartPolicy); !o) return o;
          c.restartableInit = restartPolicy == "Always";
        }
        return {};
      },
      fill.reserve());
}

template <class V>
Outcome readPodLevelRequests(const V& spec, const Path& path, Pod& pod) {
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

template <class V>
Outcome readVolumes(const V& spec, const Path& path, Pod& pod) {
  return forEachObject(spec, "volumes", path, [&](const V& item, const Path&) -> Outcome {
    if (item.member("persistentVolumeClaim")) pod.hasPvcVolume = true;
    if (item.member("ephemeral")) pod.hasEphemeralVolume = true;
    return {};
  });
}

// ---- in-place resize status ----

// IsPodResizeInfeasible: the first PodResizePending condition decides.
template <class V>
Outcome readResizeInfeasible(const V& status, const Path& path, Pod& pod) {
  bool decided = false;
  return forEachObject(status, "conditions", path, [&](const V& element, const Path& p) -> Outcome {
    if (decided) return {};
    typename V::Picks picks;
    const V item = element.picking(kConditionKeys, picks);
    std::string type;
    if (auto o = readString(item, "type", p, type); !o) return o;
    if (type != "PodResizePending") return {};
    std::string reason;
    if (auto o = readString(item, "reason", p, reason); !o) return o;
    pod.resizeInfeasible = reason == "Infeasible";
    decided = true;
    return {};
  });
}

struct ContainerStatusRequests {
  std::string name;
  std::optional<Container::StatusRequests> allocated;
  std::optional<Container::StatusRequests> actuated;
};

template <class V>
Outcome readStatusRequests(const V& object, std::string_view key, const Path& path,
                           std::optional<Container::StatusRequests>& out) {
  if (!object.member(key)) return {};
  Container::StatusRequests requests;
  ResourceListPresence presence;
  if (auto o = readResourceList(object, key, path, requests.requests, &presence); !o) return o;
  requests.hasCpu = presence.cpu;
  requests.hasMemory = presence.memory;
  out = std::move(requests);
  return {};
}

template <class V>
Outcome readContainerStatuses(const V& status, std::string_view key, const Path& path,
                              std::vector<ContainerStatusRequests>& out) {
  return forEachObject(status, key, path, [&](const V& element, const Path& p) -> Outcome {
    typename V::Picks picks;
    const V item = element.picking(kContainerStatusKeys, picks);
    ContainerStatusRequests cs;
    if (auto o = readString(item, "name", p, cs.name); !o) return o;
    if (auto o = readStatusRequests(item, "allocatedResources", p, cs.allocated); !o) return o;
    auto resources = objectMember(item, "resources", p);
    if (!resources) return resources.error();
    if (*resources) {
      if (auto o = readStatusRequests(**resources, "requests", p.child("resources"), cs.actuated); !o)
        return o;
    }
    if (cs.allocated || cs.actuated) out.push_back(std::move(cs));
    return {};
  });
}

// Attaches each container's allocated / actuated requests; a container's
// status is looked up by name in containerStatuses, then initContainerStatuses.
template <class V>
Outcome readResizeStatus(const V& status, const Path& path, Pod& pod) {
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

// ---- the kinds ----

// Decodes into `pod`, whatever it held before (reuse(Pod&)); on an error
// `pod` holds part of a decode and is only good for the next decode into it.
template <class V>
Outcome decodePodInto(const V& object, Pod& pod) {
  const Path root;
  if (object.kind() != JsonKind::Object) return typeError(root, "a Pod object", object);
  reuse(pod);

  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (!*metadata) {
    pod.labels.clear();
    pod.annotations.clear();
  } else {
    typename V::Picks picks;
    const V m = (**metadata).picking(kMetadataKeys, picks);
    const Path mp = root.child("metadata");
    if (auto o = readString(m, "namespace", mp, pod.namespace_); !o) return o.error();
    if (auto o = readString(m, "name", mp, pod.name); !o) return o.error();
    if (auto o = readString(m, "generateName", mp, pod.generateName); !o) return o.error();
    if (auto o = readString(m, "uid", mp, pod.uid); !o) return o.error();
    if (auto o = readStringMap(m, "labels", mp, pod.labels); !o) return o.error();
    if (auto o = readStringMap(m, "annotations", mp, pod.annotations); !o) return o.error();
    if (auto deletion = m.member("deletionTimestamp")) {
      if (deletion->kind() != JsonKind::String)
        return typeError(mp.child("deletionTimestamp"), "a string", *deletion);
      pod.terminating = true;
    }
    if (auto o = forEachObject(m, "ownerReferences", mp,
                               [&](const V& element, const Path& p) -> Outcome {
                                 typename V::Picks picks;
                                 const V ref = element.picking(kOwnerReferenceKeys, picks);
                                 bool controller = false;
                                 if (auto o = readBool(ref, "controller", p, controller); !o) return o;
                                 if (!controller || !pod.ownerKind.empty()) return {};
                                 if (auto o = readString(ref, "kind", p, pod.ownerKind); !o) return o;
                                 if (auto o = readString(ref, "apiVersion", p, pod.ownerApiVersion); !o)
                                   return o;
                                 return readString(ref, "name", p, pod.ownerName);
                               });
        !o)
      return o.error();
  }

  auto spec = objectMember(object, "spec", root);
  if (!spec) return spec.error();
  if (!*spec) {
    pod.nodeSelector.clear();
    pod.tolerations.clear();
    pod.containers.clear();
    pod.initContainers.clear();
  } else {
    typename V::Picks picks;
    const V s = (**spec).picking(kPodSpecKeys, picks);
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
    auto claims = arrayMember(s, "resourceClaims", sp);
    if (!claims) return claims.error();
    if (*claims) pod.resourceClaims = static_cast<int32_t>(std::min<size_t>((*claims)->size(), INT32_MAX));
    if (auto o = readVolumes(s, sp, pod); !o) return o.error();
  }
  if (pod.schedulerName.empty()) pod.schedulerName = "default-scheduler";

  auto status = objectMember(object, "status", root);
  if (!status) return status.error();
  if (*status) {
    typename V::Picks picks;
    const V st = (**status).picking(kPodStatusKeys, picks);
    const Path stp = root.child("status");
    if (auto o = readString(st, "phase", stp, pod.phase); !o) return o.error();
    if (auto o = readString(st, "nominatedNodeName", stp, pod.nominatedNodeName); !o) return o.error();
    if (auto o = readString(st, "reason", stp, pod.statusReason); !o) return o.error();
    if (auto o = readString(st, "message", stp, pod.statusMessage); !o) return o.error();
    if (auto o = readResizeStatus(st, stp, pod); !o) return o.error();
  }

  computePodRequests(pod);
  return {};
}

template <class V>
Result<Pod> decodePodAs(const V& object) {
  Pod pod;
  if (auto o = decodePodInto(object, pod); !o) return o.error();
  return pod;
}

template <class V>
Result<Node> decodeNodeAs(const V& object) {
  const Path root;
  if (object.kind() != JsonKind::Object) return typeError(root, "a Node object", object);
  Node node;

  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (*metadata) {
    const V& m = **metadata;
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
    const V& st = **status;
    const Path stp = root.child("status");
    if (auto o = readResourceList(st, "allocatable", stp, node.allocatable); !o) return o.error();
    // Each image's names go straight into the node's block of names (no
    // string per name); ~2 names of ~75 bytes an image.
    if (auto o = forEachObject(
            st, "images", stp,
            [&](const V& item, const Path& p) -> Outcome {
              node.images.openImage();
              if (auto o = forEachString(item, "names", p, [&](std::string_view name) { node.images.addName(name); });
                  !o)
                return o;
              int64_t sizeBytes = 0;
              if (auto o = readInt64(item, "sizeBytes", p, sizeBytes); !o) return o;
              node.images.setSize(sizeBytes);
              return {};
            },
            [&](size_t n) { node.images.reserve(n, 2 * n, 160 * n); });
        !o)
      return o.error();
  }
  return node;
}

template <class V>
Outcome readObjectName(const V& object, const Path& root, std::string* ns, std::string& name) {
  auto metadata = objectMember(object, "metadata", root);
  if (!metadata) return metadata.error();
  if (!*metadata) return {};
  const Path mp = root.child("metadata");
  if (auto o = readString(**metadata, "name", mp, name); !o) return o;
  if (ns != nullptr)
    if (auto o = readString(**metadata, "namespace", mp, *ns); !o) return o;
  return {};
}

template <class V>
Result<Namespace> decodeNamespaceAs(const V& object) {
  const Path root;
  if (object.kind() != JsonKind::Object) return typeError(root, "a Namespace object", object);
  Namespace ns;
  if (auto o = readObjectName(object, root, nullptr, ns.name); !o) return o.error();
  if (auto metadata = object.member("metadata"); metadata && metadata->kind() == JsonKind::Object)
    if (auto o = readStringMap(*metadata, "labels", root.child("metadata"), ns.labels); !o) return o.error();
  return ns;
}

template <class V>
Result<WorkloadSelector> decodeWorkloadSelectorAs(WorkloadKind kind, const V& object) {
  const Path root;
  if (object.kind() != JsonKind::Object) return typeError(root, "an object", object);
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

}  // namespace placer::model_decode
