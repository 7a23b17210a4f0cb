#include "scoring/explain.h"

#include <algorithm>
#include <numeric>

namespace placer {

using nlohmann::ordered_json;

std::string explainPodName(const Pod& pod) {
  std::string ns = pod.namespace_.empty() ? "default" : pod.namespace_;
  return ns + "/" + (pod.name.empty() ? pod.generateName : pod.name);
}

namespace {

std::string joinReasons(const std::vector<std::string>& reasons, std::string_view separator) {
  std::string out;
  for (const std::string& r : reasons) {
    if (!out.empty()) out += separator;
    out += r;
  }
  return out;
}

}  // namespace

ordered_json explainJson(const Pod& pod, const Decision& decision) {
  ordered_json out;
  out["pod"] = explainPodName(pod);
  ordered_json feasible = ordered_json::array();
  ordered_json unfeasible = ordered_json::object();
  ordered_json scores = ordered_json::object();
  for (const NodeOutcome& outcome : decision.nodes) {
    const std::string& name = outcome.node->name();
    if (outcome.code != Code::Success) {
      unfeasible[name] = outcome.reasons.list();
      continue;
    }
    feasible.push_back(name);
    ordered_json perPlugin = ordered_json::object();
    for (size_t p = 0; p < decision.scorePlugins.size(); ++p)
      perPlugin[std::string(decision.scorePlugins[p])] = p < outcome.pluginScores.size() ? outcome.pluginScores[p] : 0;
    perPlugin["total"] = outcome.total;
    scores[name] = std::move(perPlugin);
  }
  out["feasible"] = std::move(feasible);
  out["unfeasible"] = std::move(unfeasible);
  out["scores"] = std::move(scores);
  out["selected"] = decision.selected ? ordered_json(decision.selected->name()) : ordered_json(nullptr);
  if (decision.selected == nullptr) out["message"] = decision.unschedulableMessage();
  if (decision.failure) out["error"] = joinReasons(decision.failure->reasons(), ", ");
  return out;
}

std::string explainTable(const Pod& pod, const Decision& decision) {
  std::vector<const NodeOutcome*> feasible, rejected;
  for (const NodeOutcome& outcome : decision.nodes)
    (outcome.code == Code::Success ? feasible : rejected).push_back(&outcome);
  std::sort(feasible.begin(), feasible.end(), [](const NodeOutcome* a, const NodeOutcome* b) {
    if (a->total != b->total) return a->total > b->total;
    return a->node->name() < b->node->name();
  });
  std::sort(rejected.begin(), rejected.end(),
            [](const NodeOutcome* a, const NodeOutcome* b) { return a->node->name() < b->node->name(); });

  std::string out = "pod " + explainPodName(pod) + ": ";
  if (decision.selected != nullptr)
    out += "selected " + decision.selected->name() + " (total " + std::to_string(decision.selectedTotal) + ")";
  else
    out += "no node selected";
  out += "; " + std::to_string(decision.feasibleCount) + " of " + std::to_string(decision.nodeCount) +
         " nodes feasible\n";
  if (decision.selected == nullptr) out += decision.unschedulableMessage() + "\n";
  if (decision.nodes.empty()) return out;

  // Columns: NODE, TOTAL, one per score plugin (its score before weight), then REASONS.
  std::vector<std::string> header{"NODE", "TOTAL"};
  for (std::string_view plugin : decision.scorePlugins) header.emplace_back(plugin);
  std::vector<std::vector<std::string>> rows;
  for (const NodeOutcome* o : feasible) {
    std::vector<std::string> row{o->node->name(), std::to_string(o->total)};
    for (int64_t s : o->pluginScores) row.push_back(std::to_string(s));
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const NodeOutcome* o : rejected) width[0] = std::max(width[0], o->node->name().size());

  auto pad = [](std::string& line, const std::string& cell, size_t w, bool right) {
    if (right) line.append(w - std::min(w, cell.size()), ' ');
    line += cell;
    if (!right) line.append(w - std::min(w, cell.size()), ' ');
  };
  std::string line;
  for (size_t c = 0; c < header.size(); ++c) {
    if (c) line += "  ";
    pad(line, header[c], width[c], c > 0);
  }
  line += "  REASONS";
  out += "\n" + line + "\n";
  for (const auto& row : rows) {
    line.clear();
    for (size_t c = 0; c < header.size(); ++c) {
      if (c) line += "  ";
      pad(line, c < row.size() ? row[c] : "", width[c], c > 0);
    }
    out += line + "\n";
  }
  for (const NodeOutcome* o : rejected) {
    line.clear();
    pad(line, o->node->name(), width[0], false);
    for (size_t c = 1; c < header.size(); ++c) {
      line += "  ";
      pad(line, "-", width[c], true);
    }
    line += "  " + joinReasons(o->reasons, "; ");
    if (!o->failedPlugin.empty()) line += " (" + std::string(o->failedPlugin) + ")";
    out += line + "\n";
  }
  return out;
}

}  // namespace placer
