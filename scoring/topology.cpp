#include "scoring/topology.h"

#include <algorithm>

namespace placer {

TopologyKey::TopologyKey(const ClusterView& view, std::string key)
    : view_(&view), key_(std::move(key)), keyId_(view.nodeLabelKeyId(key_)) {}

uint32_t TopologyKey::valueOfCopy(const NodeInfo& node) const {
  const std::string* value = findLabel(node.node.labels, key_);
  if (value == nullptr) return kAbsent;
  uint32_t id = view_->nodeLabelValueId(*value);
  return id == StringTable::kNone ? kUnknown : id;
}

ResolvedSelector::ResolvedSelector(const ClusterView& view, const CompiledSelector& selector) {
  if (selector.nothing()) {
    impossible_ = true;
    return;
  }
  for (const CompiledSelector::Requirement& r : selector.requirements()) {
    Requirement out;
    out.key = view.stringId(r.key);
    out.op = r.op;
    for (const std::string& v : r.values)
      if (uint32_t id = view.stringId(v); id != StringTable::kNone) out.values.push_back(id);
    switch (r.op) {
      case SelectorOperator::In:
        if (out.key == StringTable::kNone || out.values.empty()) impossible_ = true;
        break;
      case SelectorOperator::Exists:
        if (out.key == StringTable::kNone) impossible_ = true;
        break;
      case SelectorOperator::NotIn:
      case SelectorOperator::DoesNotExist:
        if (out.key == StringTable::kNone) continue;  // no pod has the key: always holds
        break;
      default:
        impossible_ = true;
        break;
    }
    requirements_.push_back(std::move(out));
  }
}

bool ResolvedSelector::matches(const PodRecord& pod) const {
  if (impossible_) return false;
  for (const Requirement& r : requirements_) {
    const uint32_t value = ClusterView::podLabelId(pod, r.key);
    const bool present = value != StringTable::kNone;
    const bool listed = present && std::find(r.values.begin(), r.values.end(), value) != r.values.end();
    switch (r.op) {
      case SelectorOperator::In:
        if (!listed) return false;
        break;
      case SelectorOperator::NotIn:
        if (listed) return false;
        break;
      case SelectorOperator::Exists:
        if (!present) return false;
        break;
      case SelectorOperator::DoesNotExist:
        if (present) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

bool ResolvedSelector::candidates(const ClusterView& view, std::vector<std::span<const uint32_t>>& out) const {
  out.clear();
  size_t best = SIZE_MAX;
  for (const Requirement& r : requirements_) {
    if (r.op != SelectorOperator::In) continue;
    size_t total = 0;
    for (uint32_t v : r.values) total += view.podsWithLabel(r.key, v).size();
    if (total >= best) continue;
    best = total;
    out.clear();
    for (uint32_t v : r.values) out.push_back(view.podsWithLabel(r.key, v));
  }
  return best != SIZE_MAX;
}

std::vector<uint32_t> namespaceIds(const ClusterView& view, const std::vector<std::string>& namespaces) {
  std::vector<uint32_t> ids;
  ids.reserve(namespaces.size());
  for (const std::string& ns : namespaces) ids.push_back(view.stringId(ns));
  return ids;
}

}  // namespace placer
