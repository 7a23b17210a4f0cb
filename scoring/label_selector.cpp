#include "scoring/label_selector.h"

#include <algorithm>
#include <tuple>

#include "scoring/plugins/plugin_args.h"

namespace placer {
namespace {

// Go's %#v of a []string built by append([]string(nil), values...).
std::string goStringSlice(const std::vector<std::string>& values) {
  if (values.empty()) return "[]string(nil)";
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += goQuote(values[i]);
  }
  out += "}";
  return out;
}

std::string joinErrors(const std::vector<std::string>& errors, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += sep;
    out += errors[i];
  }
  return out;
}

// labels.NewRequirement's validation: every problem of one requirement, as
// field errors ("key: Invalid value: ...", "values: Invalid value: ...").
std::vector<std::string> requirementErrors(const std::string& key, SelectorOperator op,
                                           const std::vector<std::string>& values, bool equals) {
  std::vector<std::string> errors;
  if (auto keyErrors = qualifiedNameErrors(key); !keyErrors.empty())
    errors.push_back("key: Invalid value: " + goQuote(key) + ": " + joinErrors(keyErrors, "; "));
  switch (op) {
    case SelectorOperator::In:
    case SelectorOperator::NotIn:
      if (equals) {
        if (values.size() != 1)
          errors.push_back("values: Invalid value: " + goStringSlice(values) +
                           ": exact-match compatibility requires one single value");
      } else if (values.empty()) {
        errors.push_back("values: Invalid value: " + goStringSlice(values) +
                         ": for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case SelectorOperator::Exists:
    case SelectorOperator::DoesNotExist:
      if (!values.empty())
        errors.push_back("values: Invalid value: " + goStringSlice(values) +
                         ": values set must be empty for exists and does not exist");
      break;
    default:
      break;
  }
  // validateLabelValue's path is valuePath.Index(i).Key(key): "values[0][app]".
  for (size_t i = 0; i < values.size(); ++i)
    if (auto valueErrors = labelValueErrors(values[i]); !valueErrors.empty())
      errors.push_back("values[" + std::to_string(i) + "][" + key + "]: Invalid value: " + goQuote(values[i]) + ": " +
                       joinErrors(valueErrors, "; "));
  return errors;
}

// utilerrors.NewAggregate(...).Error(): one error as is, several in brackets.
Error aggregate(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return Error{errors[0]};
  return Error{"[" + joinErrors(errors, ", ") + "]"};
}

CompiledSelector::Requirement makeRequirement(std::string key, SelectorOperator op, std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return CompiledSelector::Requirement{std::move(key), op, std::move(values)};
}

}  // namespace

Result<CompiledSelector> CompiledSelector::compile(const std::optional<LabelSelector>& selector) {
  if (!selector) return CompiledSelector();
  CompiledSelector out = everything();
  // Go visits matchLabels in random order; sorted here, so that the first of
  // several invalid labels is always the same one.
  for (const auto& [key, value] : selector->matchLabels) {
    std::vector<std::string> values{value};
    if (auto errors = requirementErrors(key, SelectorOperator::In, values, true); !errors.empty()) return aggregate(errors);
    out.requirements_.push_back(makeRequirement(key, SelectorOperator::In, std::move(values)));
  }
  for (const SelectorRequirement& e : selector->matchExpressions) {
    if (!e.unknownOperator.empty() || e.op == SelectorOperator::Gt || e.op == SelectorOperator::Lt) {
      std::string op = e.unknownOperator.empty() ? (e.op == SelectorOperator::Gt ? "Gt" : "Lt") : e.unknownOperator;
      return Error{goQuote(op) + " is not a valid label selector operator"};
    }
    if (auto errors = requirementErrors(e.key, e.op, e.values, false); !errors.empty()) return aggregate(errors);
    out.requirements_.push_back(makeRequirement(e.key, e.op, e.values));
  }
  out.sortRequirements();
  return out;
}

CompiledSelector CompiledSelector::fromSet(const Labels& set) {
  CompiledSelector out = everything();
  for (const auto& [key, value] : set) out.requirements_.push_back(makeRequirement(key, SelectorOperator::In, {value}));
  out.sortRequirements();
  return out;
}

void CompiledSelector::add(const std::vector<Requirement>& requirements) {
  if (nothing_) return;
  requirements_.insert(requirements_.end(), requirements.begin(), requirements.end());
  sortRequirements();
}

void CompiledSelector::add(Requirement requirement) {
  if (nothing_) return;
  requirements_.push_back(std::move(requirement));
  sortRequirements();
}

void CompiledSelector::sortRequirements() {
  std::sort(requirements_.begin(), requirements_.end(), [](const Requirement& a, const Requirement& b) {
    return std::tie(a.key, a.op, a.values) < std::tie(b.key, b.op, b.values);
  });
  requirements_.erase(std::unique(requirements_.begin(), requirements_.end()), requirements_.end());
}

std::string CompiledSelector::canonical() const {
  if (nothing_) return "!";
  std::string out;
  for (const Requirement& r : requirements_) {
    out += r.key;
    out += '\x01';
    out += static_cast<char>('0' + static_cast<int>(r.op));
    for (const std::string& v : r.values) {
      out += '\x02';
      out += v;
    }
    out += '\x03';
  }
  return out;
}

}  // namespace placer
