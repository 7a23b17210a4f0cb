#include "scoring/plugins/node_affinity.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "scoring/plugins/names.h"
#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

std::string child(std::string_view base, std::string_view name) {
  std::string p(base);
  if (!p.empty()) p += '.';
  p += name;
  return p;
}

std::string quote(std::string_view s) {
  std::string q = "\"";
  q.append(s).append("\"");
  return q;
}

std::string quotedList(const std::vector<std::string>& values) {
  std::string q = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) q += ' ';
    q.append(values[i]);
  }
  q += ']';
  return q;
}

std::string invalid(std::string_view path, std::string_view shownValue, std::string_view detail) {
  std::string m(path);
  m.append(": Invalid value: ").append(shownValue).append(": ").append(detail);
  return m;
}

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) s.append(sep);
    s.append(parts[i]);
  }
  return s;
}

// errors.Flatten(errors.NewAggregate(errs)).Error(): one error prints as
// itself, several as "[a, b]".
std::string aggregate(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  return "[" + joined(errors, ", ") + "]";
}

std::optional<SelectorOperator> operatorFromString(std::string_view s) {
  if (s == "In") return SelectorOperator::In;
  if (s == "NotIn") return SelectorOperator::NotIn;
  if (s == "Exists") return SelectorOperator::Exists;
  if (s == "DoesNotExist") return SelectorOperator::DoesNotExist;
  if (s == "Gt") return SelectorOperator::Gt;
  if (s == "Lt") return SelectorOperator::Lt;
  return std::nullopt;
}

std::string_view operatorName(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::In: return "In";
    case SelectorOperator::NotIn: return "NotIn";
    case SelectorOperator::Exists: return "Exists";
    case SelectorOperator::DoesNotExist: return "DoesNotExist";
    case SelectorOperator::Gt: return "Gt";
    case SelectorOperator::Lt: return "Lt";
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// Parsing and matching

ParsedNodeSelectorTerm ParsedNodeSelectorTerm::parse(const NodeSelectorTerm& term, std::string_view path) {
  ParsedNodeSelectorTerm parsed;
  parsed.empty_ = term.matchExpressions.empty() && term.matchFields.empty();

  // nodeSelectorRequirementsAsSelector + labels.NewRequirement.
  if (!term.matchExpressions.empty()) {
    parsed.hasLabelSelector_ = true;
    const std::string base = child(path, "matchExpressions");
    for (size_t i = 0; i < term.matchExpressions.size(); ++i) {
      const SelectorRequirement& expr = term.matchExpressions[i];
      const std::string p = indexedField(base, i);
      const std::string valuesPath = child(p, "values");
      LabelRequirement req{expr.key, expr.op, expr.values, 0};
      if (auto errs = qualifiedNameErrors(expr.key); !errs.empty())
        parsed.errors_.push_back(invalid(child(p, "key"), quote(expr.key), joined(errs, "; ")));
      switch (expr.op) {
        case SelectorOperator::In:
        case SelectorOperator::NotIn:
          if (expr.values.empty())
            parsed.errors_.push_back(invalid(valuesPath, quotedList(expr.values),
                                             "for 'in', 'notin' operators, values set can't be empty"));
          break;
        case SelectorOperator::Exists:
        case SelectorOperator::DoesNotExist:
          if (!expr.values.empty())
            parsed.errors_.push_back(invalid(valuesPath, quotedList(expr.values),
                                             "values set must be empty for exists and does not exist"));
          break;
        case SelectorOperator::Gt:
        case SelectorOperator::Lt:
          if (expr.values.size() != 1)
            parsed.errors_.push_back(invalid(valuesPath, quotedList(expr.values),
                                             "for 'Gt', 'Lt' operators, exactly one value is required"));
          for (size_t v = 0; v < expr.values.size(); ++v) {
            std::optional<int64_t> bound = parseGoInt64(expr.values[v]);
            if (!bound)
              parsed.errors_.push_back(invalid(indexedField(valuesPath, v), quote(expr.values[v]),
                                               "for 'Gt', 'Lt' operators, the value must be an integer"));
            else
              req.bound = *bound;
          }
          break;
      }
      for (size_t v = 0; v < expr.values.size(); ++v) {
        if (auto errs = labelValueErrors(expr.values[v]); !errs.empty())
          parsed.errors_.push_back(
              invalid(indexedField(valuesPath, v) + "[" + expr.key + "]", quote(expr.values[v]), joined(errs, "; ")));
      }
      parsed.labels_.push_back(std::move(req));
    }
  }

  // nodeSelectorRequirementsAsFieldSelector: In / NotIn with exactly one value.
  if (!term.matchFields.empty()) {
    parsed.hasFieldSelector_ = true;
    const std::string base = child(path, "matchFields");
    for (size_t i = 0; i < term.matchFields.size(); ++i) {
      const SelectorRequirement& expr = term.matchFields[i];
      const std::string p = indexedField(base, i);
      if (expr.op != SelectorOperator::In && expr.op != SelectorOperator::NotIn) {
        parsed.errors_.push_back(child(p, "operator") + ": Unsupported value: " + quote(operatorName(expr.op)) +
                                 ": supported values: \"In\", \"NotIn\"");
        continue;
      }
      if (expr.values.size() != 1) {
        parsed.errors_.push_back(invalid(child(p, "values"), quotedList(expr.values), "must have one element"));
        continue;
      }
      parsed.fields_.push_back({expr.key, expr.op == SelectorOperator::In, expr.values.front()});
    }
  }
  if (!parsed.errors_.empty()) {
    parsed.labels_.clear();
    parsed.fields_.clear();
  }
  return parsed;
}

bool ParsedNodeSelectorTerm::matches(const Node& node) const {
  if (!errors_.empty() || empty_) return false;
  for (const LabelRequirement& r : labels_) {
    const std::string* value = findLabel(node.labels, r.key);
    if (r.op != SelectorOperator::Gt && r.op != SelectorOperator::Lt) {
      if (!matchesSetRequirement(r.op, r.values, value)) return false;
      continue;
    }
    if (value == nullptr) return false;
    std::optional<int64_t> v = parseGoInt64(*value);
    if (!v) return false;
    if (r.op == SelectorOperator::Gt ? !(*v > r.bound) : !(*v < r.bound)) return false;
  }
  return fieldsMatch(node);
}

bool ParsedNodeSelectorTerm::fieldsMatch(const Node& node) const {
  // A node without a name has no fields; upstream then ignores matchFields.
  if (hasFieldSelector_ && !node.name.empty()) {
    for (const FieldRequirement& f : fields_) {
      std::string_view actual = f.key == kObjectNameField ? std::string_view(node.name) : std::string_view();
      if ((actual == f.value) != f.equal) return false;
    }
  }
  return true;
}

ParsedNodeSelectorTerm::Indexed ParsedNodeSelectorTerm::resolve(const ClusterView& view) const {
  Indexed out;
  out.term = this;
  out.labels.reserve(labels_.size());
  for (const LabelRequirement& r : labels_) {
    Indexed::Requirement req{r.op, view.nodeLabelKeyId(r.key), {}, r.bound};
    if (r.op == SelectorOperator::In || r.op == SelectorOperator::NotIn) {
      // A value no node has can equal no node's value.
      for (const std::string& v : r.values)
        if (uint32_t id = view.nodeLabelValueId(v); id != StringTable::kNone) req.values.push_back(id);
    }
    out.labels.push_back(std::move(req));
  }
  return out;
}

bool ParsedNodeSelectorTerm::Indexed::matches(const NodeInfo& node, const ClusterView& view) const {
  if (!term->errors_.empty() || term->empty_) return false;
  for (const Requirement& r : labels) {
    const uint32_t value = r.key == StringTable::kNone ? StringTable::kNone : view.nodeLabel(r.key, node.id);
    const bool has = value != StringTable::kNone;
    switch (r.op) {
      case SelectorOperator::In:
        if (!has || std::find(r.values.begin(), r.values.end(), value) == r.values.end()) return false;
        break;
      case SelectorOperator::NotIn:
        if (has && std::find(r.values.begin(), r.values.end(), value) != r.values.end()) return false;
        break;
      case SelectorOperator::Exists:
        if (!has) return false;
        break;
      case SelectorOperator::DoesNotExist:
        if (has) return false;
        break;
      case SelectorOperator::Gt:
      case SelectorOperator::Lt: {
        if (!has) return false;
        std::optional<int64_t> v = parseGoInt64(view.nodeLabelValue(value));
        if (!v) return false;
        if (r.op == SelectorOperator::Gt ? !(*v > r.bound) : !(*v < r.bound)) return false;
        break;
      }
    }
  }
  return term->fieldsMatch(node.node);
}

ParsedNodeSelector::Indexed ParsedNodeSelector::resolve(const ClusterView& view) const {
  Indexed out;
  out.terms.reserve(terms_.size());
  for (const ParsedNodeSelectorTerm& t : terms_) out.terms.push_back(t.resolve(view));
  return out;
}

ParsedPreferredTerms::Indexed ParsedPreferredTerms::resolve(const ClusterView& view) const {
  Indexed out;
  out.terms.reserve(terms_.size());
  for (const auto& [t, weight] : terms_) out.terms.emplace_back(t.resolve(view), weight);
  return out;
}

ParsedNodeSelector ParsedNodeSelector::parse(const NodeSelector& selector, std::string_view path) {
  ParsedNodeSelector parsed;
  parsed.terms_.reserve(selector.terms.size());
  for (size_t i = 0; i < selector.terms.size(); ++i) {
    const NodeSelectorTerm& term = selector.terms[i];
    if (term.matchExpressions.empty() && term.matchFields.empty()) continue;  // selects nothing
    parsed.terms_.push_back(ParsedNodeSelectorTerm::parse(term, indexedField(path, i)));
  }
  return parsed;
}

bool ParsedNodeSelector::matches(const Node& node) const {
  for (const ParsedNodeSelectorTerm& term : terms_)
    if (term.matches(node)) return true;
  return false;
}

std::vector<std::string> ParsedNodeSelector::errors() const {
  std::vector<std::string> all;
  for (const ParsedNodeSelectorTerm& term : terms_) all.insert(all.end(), term.errors().begin(), term.errors().end());
  return all;
}

ParsedPreferredTerms ParsedPreferredTerms::parse(const std::vector<PreferredSchedulingTerm>& terms,
                                                 std::string_view path) {
  ParsedPreferredTerms parsed;
  for (size_t i = 0; i < terms.size(); ++i) {
    const PreferredSchedulingTerm& term = terms[i];
    if (term.weight == 0) continue;
    if (term.preference.matchExpressions.empty() && term.preference.matchFields.empty()) continue;
    ParsedNodeSelectorTerm t = ParsedNodeSelectorTerm::parse(term.preference, indexedField(path, i));
    if (!t.errors().empty())
      parsed.errors_.insert(parsed.errors_.end(), t.errors().begin(), t.errors().end());
    else
      parsed.terms_.emplace_back(std::move(t), term.weight);
  }
  return parsed;
}

int64_t ParsedPreferredTerms::score(const Node& node) const {
  int64_t score = 0;
  for (const auto& [term, weight] : terms_)
    if (term.matches(node)) score += weight;
  return score;
}

// ---------------------------------------------------------------------------
// JSON decoding of v1.NodeAffinity (for NodeAffinityArgs.addedAffinity)

namespace {

Outcome onlyKeys(const nlohmann::json& object, const std::string& path,
                 std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) return fieldError(child(path, key), "unknown field");
  }
  return {};
}

Result<std::vector<SelectorRequirement>> decodeRequirements(const nlohmann::json& list, const std::string& path) {
  std::vector<SelectorRequirement> out;
  if (list.is_null()) return out;
  if (!list.is_array()) return fieldError(path, "must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    const std::string p = indexedField(path, i);
    if (!item.is_object()) return fieldError(p, "must be an object");
    if (Outcome ok = onlyKeys(item, p, {"key", "operator", "values"}); !ok) return ok.error();
    SelectorRequirement req;
    if (auto key = item.find("key"); key != item.end() && !key->is_null()) {
      if (!key->is_string()) return fieldError(child(p, "key"), "must be a string");
      req.key = key->get<std::string>();
    }
    std::string op;
    if (auto o = item.find("operator"); o != item.end() && !o->is_null()) {
      if (!o->is_string()) return fieldError(child(p, "operator"), "must be a string");
      op = o->get<std::string>();
    }
    std::optional<SelectorOperator> parsedOp = operatorFromString(op);
    if (!parsedOp) return fieldError(child(p, "operator"), "unsupported " + quote(op));
    req.op = *parsedOp;
    if (auto values = item.find("values"); values != item.end() && !values->is_null()) {
      if (!values->is_array()) return fieldError(child(p, "values"), "must be a list of strings");
      for (size_t v = 0; v < values->size(); ++v) {
        if (!(*values)[v].is_string()) return fieldError(indexedField(child(p, "values"), v), "must be a string");
        req.values.push_back((*values)[v].get<std::string>());
      }
    }
    out.push_back(std::move(req));
  }
  return out;
}

Result<NodeSelectorTerm> decodeTerm(const nlohmann::json& object, const std::string& path) {
  if (!object.is_object()) return fieldError(path, "must be an object");
  if (Outcome ok = onlyKeys(object, path, {"matchExpressions", "matchFields"}); !ok) return ok.error();
  NodeSelectorTerm term;
  if (auto e = object.find("matchExpressions"); e != object.end()) {
    auto r = decodeRequirements(*e, child(path, "matchExpressions"));
    if (!r) return r.error();
    term.matchExpressions = std::move(r).value();
  }
  if (auto f = object.find("matchFields"); f != object.end()) {
    auto r = decodeRequirements(*f, child(path, "matchFields"));
    if (!r) return r.error();
    term.matchFields = std::move(r).value();
  }
  return term;
}

}  // namespace

Result<NodeAffinity> decodeNodeAffinity(const nlohmann::json& object, const std::string& path) {
  NodeAffinity affinity;
  if (object.is_null()) return affinity;
  if (!object.is_object()) return fieldError(path, "must be an object");
  constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  if (Outcome ok = onlyKeys(object, path, {kRequired, kPreferred}); !ok) return ok.error();

  if (auto required = object.find(kRequired); required != object.end() && !required->is_null()) {
    const std::string p = child(path, kRequired);
    if (!required->is_object()) return fieldError(p, "must be an object");
    if (Outcome ok = onlyKeys(*required, p, {"nodeSelectorTerms"}); !ok) return ok.error();
    NodeSelector selector;
    if (auto terms = required->find("nodeSelectorTerms"); terms != required->end() && !terms->is_null()) {
      const std::string tp = child(p, "nodeSelectorTerms");
      if (!terms->is_array()) return fieldError(tp, "must be a list");
      for (size_t i = 0; i < terms->size(); ++i) {
        auto term = decodeTerm((*terms)[i], indexedField(tp, i));
        if (!term) return term.error();
        selector.terms.push_back(std::move(term).value());
      }
    }
    affinity.required = std::move(selector);
  }

  if (auto preferred = object.find(kPreferred); preferred != object.end() && !preferred->is_null()) {
    const std::string p = child(path, kPreferred);
    if (!preferred->is_array()) return fieldError(p, "must be a list");
    for (size_t i = 0; i < preferred->size(); ++i) {
      const nlohmann::json& item = (*preferred)[i];
      const std::string ip = indexedField(p, i);
      if (!item.is_object()) return fieldError(ip, "must be an object");
      if (Outcome ok = onlyKeys(item, ip, {"weight", "preference"}); !ok) return ok.error();
      PreferredSchedulingTerm term;
      if (auto w = item.find("weight"); w != item.end() && !w->is_null()) {
        if (!w->is_number_integer()) return fieldError(child(ip, "weight"), "must be an integer");
        int64_t weight = w->get<int64_t>();
        if (weight < INT32_MIN || weight > INT32_MAX) return fieldError(child(ip, "weight"), "out of range");
        term.weight = static_cast<int32_t>(weight);
      }
      if (auto pref = item.find("preference"); pref != item.end() && !pref->is_null()) {
        auto t = decodeTerm(*pref, child(ip, "preference"));
        if (!t) return t.error();
        term.preference = std::move(t).value();
      }
      affinity.preferred.push_back(std::move(term));
    }
  }
  return affinity;
}

// ---------------------------------------------------------------------------
// The plugin

namespace {

constexpr std::string_view kPreFilterStateKey = "PreFilterNodeAffinity";
constexpr std::string_view kPreScoreStateKey = "PreScoreNodeAffinity";

struct RequiredAffinityState final : StateData {
  std::optional<ParsedNodeSelector> required;  // the pod's required terms, if it has any
  // The same, the plugin's addedAffinity and the pod's nodeSelector resolved
  // against the view's label index, for the nodes it indexes.
  const ClusterView* view = nullptr;
  std::optional<ParsedNodeSelector::Indexed> requiredIndexed;
  std::optional<ParsedNodeSelector::Indexed> addedIndexed;
  std::vector<std::pair<uint32_t, uint32_t>> selectorIndexed;  // (key id, value id)
  bool selectorUnmatchable = false;  // a nodeSelector key or value no node has
};

struct PreferredAffinityState final : StateData {
  std::optional<ParsedPreferredTerms> preferred;  // the pod's preferred terms, if it has any
  const ClusterView* view = nullptr;
  std::optional<ParsedPreferredTerms::Indexed> preferredIndexed;
  std::optional<ParsedPreferredTerms::Indexed> addedIndexed;
};

bool hasRequiredAffinity(const Pod& pod) { return pod.nodeAffinity && pod.nodeAffinity->required; }
bool hasPreferredAffinity(const Pod& pod) { return pod.nodeAffinity && !pod.nodeAffinity->preferred.empty(); }

bool matchesNodeSelector(const Labels& selector, const Node& node) {
  for (const auto& [key, value] : selector) {
    const std::string* actual = findLabel(node.labels, key);
    if (actual == nullptr || *actual != value) return false;
  }
  return true;
}

// PreFilter's node-name check: when every required term pins metadata.name
// with matchFields In, the union of the per-term intersections is the set of
// nodes that can match; an empty union means the terms conflict.
bool requiredTermsConflict(const NodeSelector& required) {
  if (required.terms.empty()) return false;
  bool anyName = false;
  for (const NodeSelectorTerm& term : required.terms) {
    std::optional<std::vector<std::string_view>> names;
    for (const SelectorRequirement& r : term.matchFields) {
      if (r.key != kObjectNameField || r.op != SelectorOperator::In) continue;
      std::vector<std::string_view> s(r.values.begin(), r.values.end());
      std::sort(s.begin(), s.end());
      s.erase(std::unique(s.begin(), s.end()), s.end());
      if (!names) {
        names = std::move(s);
      } else {
        std::vector<std::string_view> both;
        std::set_intersection(names->begin(), names->end(), s.begin(), s.end(), std::back_inserter(both));
        names = std::move(both);
      }
    }
    if (!names) return false;  // this term may match any node
    anyName = anyName || !names->empty();
  }
  return !anyName;
}

class NodeAffinityPlugin final : public PreFilterPlugin, public FilterPlugin, public PreScorePlugin, public ScorePlugin {
 public:
  NodeAffinityPlugin(std::optional<ParsedNodeSelector> addedRequired, std::optional<ParsedPreferredTerms> addedPreferred)
      : addedRequired_(std::move(addedRequired)), addedPreferred_(std::move(addedPreferred)) {}

  std::string_view name() const override { return names::kNodeAffinity; }
  bool resultsReusable() const override { return true; }  // see Plugin

  Status preFilter(CycleState& state, const Pod& pod, const ClusterView& view) const override {
    const bool required = hasRequiredAffinity(pod);
    if (!required && !addedRequired_ && pod.nodeSelector.empty()) return Status::skip();
    auto data = std::make_unique<RequiredAffinityState>();
    if (required) data->required = ParsedNodeSelector::parse(*pod.nodeAffinity->required);
    data->view = &view;
    if (data->required) data->requiredIndexed = data->required->resolve(view);
    if (addedRequired_) data->addedIndexed = addedRequired_->resolve(view);
    for (const auto& [key, value] : pod.nodeSelector) {
      uint32_t k = view.nodeLabelKeyId(key);
      uint32_t v = view.nodeLabelValueId(value);
      if (k == StringTable::kNone || v == StringTable::kNone) data->selectorUnmatchable = true;
      data->selectorIndexed.emplace_back(k, v);
    }
    state.write(kPreFilterStateKey, std::move(data));
    if (required && requiredTermsConflict(*pod.nodeAffinity->required))
      return Status(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeAffinityConflict));
    return Status::success();
  }

  Status filter(const CycleState& state, const Pod& pod, const NodeInfo& nodeInfo) const override {
    const Node& node = nodeInfo.node;
    if (addedRequired_ && !addedRequired_->matches(node))
      return Status(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeAffinityEnforced));
    if (!matchesNodeSelector(pod.nodeSelector, node)) return podMismatch();
    if (!hasRequiredAffinity(pod)) return Status::success();
    if (const auto* data = state.read<RequiredAffinityState>(kPreFilterStateKey); data && data->required)
      return data->required->matches(node) ? Status::success() : podMismatch();
    // PreFilter did not run: parse here (parse errors mean no match, as upstream).
    return ParsedNodeSelector::parse(*pod.nodeAffinity->required).matches(node) ? Status::success() : podMismatch();
  }

  void filterAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                 FilterSink& sink) const override {
    const auto* data = state.read<RequiredAffinityState>(kPreFilterStateKey);
    if (data == nullptr || data->view == nullptr) return FilterPlugin::filterAll(state, pod, nodes, sink);
    static const Status kEnforced(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeAffinityEnforced));
    static const Status kMismatch = podMismatch();
    const ClusterView& view = *data->view;
    const bool required = hasRequiredAffinity(pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      if (!ClusterView::labelsIndexed(node)) {
        Status status = filter(state, pod, node);
        if (!status.isSuccess()) sink.reject(static_cast<uint32_t>(i), std::move(status));
        continue;
      }
      if (data->addedIndexed && !data->addedIndexed->matches(node, view)) {
        sink.rejectWith(static_cast<uint32_t>(i), kEnforced);
        continue;
      }
      bool selected = !data->selectorUnmatchable;
      for (size_t k = 0; selected && k < data->selectorIndexed.size(); ++k) {
        const auto& [key, value] = data->selectorIndexed[k];
        selected = view.nodeLabel(key, node.id) == value;
      }
      if (!selected || (required && data->requiredIndexed && !data->requiredIndexed->matches(node, view)))
        sink.rejectWith(static_cast<uint32_t>(i), kMismatch);
    }
  }

  bool preScoreReadsFeasibleNodes() const override { return false; }

  Status preScore(CycleState& state, const Pod& pod, std::span<const NodeInfo* const>,
                  const ClusterView& view) const override {
    const bool preferred = hasPreferredAffinity(pod);
    if (!preferred && !addedPreferred_) return Status::skip();
    auto data = std::make_unique<PreferredAffinityState>();
    if (preferred) {
      data->preferred = ParsedPreferredTerms::parse(pod.nodeAffinity->preferred);
      if (!data->preferred->errors().empty()) return Status(Code::Error, aggregate(data->preferred->errors()));
    }
    data->view = &view;
    if (data->preferred) data->preferredIndexed = data->preferred->resolve(view);
    if (addedPreferred_) data->addedIndexed = addedPreferred_->resolve(view);
    state.write(kPreScoreStateKey, std::move(data));
    return Status::success();
  }

  int64_t score(const CycleState& state, const Pod& pod, const NodeInfo& nodeInfo) const override {
    const Node& node = nodeInfo.node;
    int64_t count = addedPreferred_ ? addedPreferred_->score(node) : 0;
    if (const auto* data = state.read<PreferredAffinityState>(kPreScoreStateKey)) {
      if (data->preferred) count += data->preferred->score(node);
    } else if (hasPreferredAffinity(pod)) {
      count += ParsedPreferredTerms::parse(pod.nodeAffinity->preferred).score(node);
    }
    return count;
  }

  void scoreAll(const CycleState& state, const Pod& pod, std::span<const NodeInfo* const> nodes,
                std::span<int64_t> out) const override {
    const auto* data = state.read<PreferredAffinityState>(kPreScoreStateKey);
    if (data == nullptr || data->view == nullptr) return ScorePlugin::scoreAll(state, pod, nodes, out);
    const ClusterView& view = *data->view;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      if (!ClusterView::labelsIndexed(node)) {
        out[i] = score(state, pod, node);
        continue;
      }
      int64_t count = data->addedIndexed ? data->addedIndexed->score(node, view) : 0;
      if (data->preferredIndexed) count += data->preferredIndexed->score(node, view);
      out[i] = count;
    }
  }

  void normalizeScores(const CycleState&, const Pod&, std::span<int64_t> scores) const override {
    defaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
  }

 private:
  static Status podMismatch() {
    return Status(Code::UnschedulableAndUnresolvable, std::string(kErrReasonNodeAffinityPod));
  }

  std::optional<ParsedNodeSelector> addedRequired_;
  std::optional<ParsedPreferredTerms> addedPreferred_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> newNodeAffinity(const nlohmann::json& args) {
  if (Outcome ok = checkArgsObject(args, "NodeAffinityArgs", {"addedAffinity"}); !ok) return ok.error();
  std::optional<ParsedNodeSelector> addedRequired;
  std::optional<ParsedPreferredTerms> addedPreferred;
  if (args.is_object()) {
    if (auto added = args.find("addedAffinity"); added != args.end() && !added->is_null()) {
      const std::string path = "NodeAffinityArgs.addedAffinity";
      Result<NodeAffinity> affinity = decodeNodeAffinity(*added, path);
      if (!affinity) return affinity.error();
      // ValidateNodeAffinityArgs: every term must parse.
      std::vector<std::string> errors;
      if (affinity->required) {
        addedRequired = ParsedNodeSelector::parse(
            *affinity->required, path + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
        std::vector<std::string> e = addedRequired->errors();
        errors.insert(errors.end(), e.begin(), e.end());
      }
      if (!affinity->preferred.empty()) {
        addedPreferred = ParsedPreferredTerms::parse(
            affinity->preferred, path + ".preferredDuringSchedulingIgnoredDuringExecution");
        errors.insert(errors.end(), addedPreferred->errors().begin(), addedPreferred->errors().end());
      }
      if (!errors.empty()) return Error{aggregate(errors)};
    }
  }
  return std::unique_ptr<Plugin>(
      std::make_unique<NodeAffinityPlugin>(std::move(addedRequired), std::move(addedPreferred)));
}

}  // namespace placer
