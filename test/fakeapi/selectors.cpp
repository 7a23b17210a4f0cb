#include "test/fakeapi/selectors.h"

#include <algorithm>

namespace placer::fakeapi {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside parentheses.
std::vector<std::string_view> splitTerms(std::string_view text) {
  std::vector<std::string_view> terms;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (text[i] == ',' && depth == 0) {
      terms.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(text.substr(start));
  return terms;
}

const std::string* findLabel(const LabelPairs& labels, const std::string& key) {
  for (const auto& [k, v] : labels)
    if (k == key) return &v;
  return nullptr;
}

Result<LabelRequirement> parseSetTerm(std::string_view term, std::size_t opAt, std::size_t opLen,
                                      LabelRequirement::Op op) {
  LabelRequirement r;
  r.key = std::string(trim(term.substr(0, opAt)));
  r.op = op;
  std::string_view rest = trim(term.substr(opAt + opLen));
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')')
    return Error{"unable to parse requirement: found '" + std::string(rest) + "', expected: '('"};
  rest = rest.substr(1, rest.size() - 2);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= rest.size(); ++i) {
    if (i == rest.size() || rest[i] == ',') {
      std::string_view v = trim(rest.substr(start, i - start));
      if (!v.empty()) r.values.emplace_back(v);
      start = i + 1;
    }
  }
  if (r.key.empty()) return Error{"unable to parse requirement: empty key"};
  return r;
}

Result<LabelRequirement> parseLabelTerm(std::string_view term) {
  term = trim(term);
  if (term.empty()) return Error{"unable to parse requirement: empty term"};
  if (term.front() == '!') {
    LabelRequirement r{std::string(trim(term.substr(1))), LabelRequirement::Op::DoesNotExist, {}};
    if (r.key.empty()) return Error{"unable to parse requirement: empty key"};
    return r;
  }
  for (auto [word, op] : {std::pair{std::string_view(" notin "), LabelRequirement::Op::NotIn},
                          std::pair{std::string_view(" in "), LabelRequirement::Op::In}}) {
    if (auto at = term.find(word); at != std::string_view::npos) return parseSetTerm(term, at, word.size(), op);
  }
  LabelRequirement r;
  std::size_t at;
  std::size_t len = 0;
  if ((at = term.find("!=")) != std::string_view::npos) {
    r.op = LabelRequirement::Op::NotEquals;
    len = 2;
  } else if ((at = term.find("==")) != std::string_view::npos) {
    r.op = LabelRequirement::Op::Equals;
    len = 2;
  } else if ((at = term.find('=')) != std::string_view::npos) {
    r.op = LabelRequirement::Op::Equals;
    len = 1;
  } else {
    r.key = std::string(term);
    r.op = LabelRequirement::Op::Exists;
    return r;
  }
  r.key = std::string(trim(term.substr(0, at)));
  r.values.emplace_back(trim(term.substr(at + len)));
  if (r.key.empty()) return Error{"unable to parse requirement: empty key"};
  return r;
}

}  // namespace

bool LabelSelectorQuery::matches(const LabelPairs& labels) const {
  for (const auto& r : requirements) {
    const std::string* v = findLabel(labels, r.key);
    auto in = [&] { return v && std::find(r.values.begin(), r.values.end(), *v) != r.values.end(); };
    switch (r.op) {
      case LabelRequirement::Op::Equals:
      case LabelRequirement::Op::In:
        if (!in()) return false;
        break;
      case LabelRequirement::Op::NotEquals:
      case LabelRequirement::Op::NotIn:
        if (in()) return false;
        break;
      case LabelRequirement::Op::Exists:
        if (!v) return false;
        break;
      case LabelRequirement::Op::DoesNotExist:
        if (v) return false;
        break;
    }
  }
  return true;
}

Result<LabelSelectorQuery> parseLabelSelector(std::string_view text) {
  LabelSelectorQuery q;
  if (trim(text).empty()) return q;
  for (std::string_view term : splitTerms(text)) {
    auto r = parseLabelTerm(term);
    if (!r) return r.error();
    q.requirements.push_back(std::move(r.value()));
  }
  return q;
}

Result<LabelSelectorQuery> labelSelectorFromJson(const nlohmann::json& selector) {
  LabelSelectorQuery q;
  if (selector.is_null()) return q;
  if (!selector.is_object()) return Error{"labelSelector: must be an object"};
  if (auto it = selector.find("matchLabels"); it != selector.end() && !it->is_null()) {
    if (!it->is_object()) return Error{"labelSelector.matchLabels: must be an object"};
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) return Error{"labelSelector.matchLabels." + k + ": must be a string"};
      q.requirements.push_back({k, LabelRequirement::Op::In, {v.get<std::string>()}});
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && !it->is_null()) {
    if (!it->is_array()) return Error{"labelSelector.matchExpressions: must be an array"};
    for (const auto& e : *it) {
      if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("operator") ||
          !e["operator"].is_string())
        return Error{"labelSelector.matchExpressions: key and operator are required"};
      LabelRequirement r;
      r.key = e["key"].get<std::string>();
      const std::string op = e["operator"].get<std::string>();
      if (op == "In") r.op = LabelRequirement::Op::In;
      else if (op == "NotIn") r.op = LabelRequirement::Op::NotIn;
      else if (op == "Exists") r.op = LabelRequirement::Op::Exists;
      else if (op == "DoesNotExist") r.op = LabelRequirement::Op::DoesNotExist;
      else return Error{"labelSelector.matchExpressions: \"" + op + "\" is not a valid label selector operator"};
      if (auto vs = e.find("values"); vs != e.end() && vs->is_array())
        for (const auto& v : *vs)
          if (v.is_string()) r.values.push_back(v.get<std::string>());
      q.requirements.push_back(std::move(r));
    }
  }
  return q;
}

bool FieldSelectorQuery::matches(const FieldValues& values) const {
  for (const auto& r : requirements) {
    std::string_view actual;
    if (r.field == "metadata.name") actual = values.name;
    else if (r.field == "metadata.namespace") actual = values.ns;
    else if (r.field == "spec.nodeName") actual = values.nodeName;
    else if (r.field == "status.phase") actual = values.phase;
    else if (r.field == "spec.schedulerName") actual = values.schedulerName;
    else if (r.field == "spec.unschedulable") actual = values.unschedulable ? "true" : "false";
    if ((actual == r.value) != r.equals) return false;
  }
  return true;
}

Result<FieldSelectorQuery> parseFieldSelector(std::string_view text, bool isPod) {
  static const std::vector<std::string> podFields = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                                     "status.phase", "spec.schedulerName"};
  static const std::vector<std::string> nodeFields = {"metadata.name", "spec.unschedulable"};
  auto q = parseFieldSelector(text, isPod ? podFields : nodeFields);
  if (q) q->isPod = isPod;
  return q;
}

Result<FieldSelectorQuery> parseFieldSelector(std::string_view text, const std::vector<std::string>& allowed) {
  FieldSelectorQuery q;
  if (trim(text).empty()) return q;
  for (std::string_view term : splitTerms(text)) {
    term = trim(term);
    FieldRequirement r;
    std::size_t at;
    std::size_t len;
    if ((at = term.find("!=")) != std::string_view::npos) {
      r.equals = false;
      len = 2;
    } else if ((at = term.find("==")) != std::string_view::npos) {
      len = 2;
    } else if ((at = term.find('=')) != std::string_view::npos) {
      len = 1;
    } else {
      return Error{"invalid selector: '" + std::string(text) + "'; can't understand '" + std::string(term) + "'"};
    }
    r.field = std::string(trim(term.substr(0, at)));
    r.value = std::string(trim(term.substr(at + len)));
    if (std::find(allowed.begin(), allowed.end(), r.field) == allowed.end())
      return Error{"field label not supported: " + r.field};
    q.requirements.push_back(std::move(r));
  }
  return q;
}

}  // namespace placer::fakeapi
