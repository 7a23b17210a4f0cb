// placer explain --snapshot FILE [--format json|table]
//
// Replays one decision offline: loads the snapshot, builds the view and the
// profile (the snapshot's config, or the defaults), runs the engine over every
// node and prints why each node was or was not chosen. Exit codes: 0 with a
// decision (also when no node is feasible), 2 for bad flags or an unreadable
// or invalid snapshot (message on stderr).
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/explain.h"
#include "scoring/snapshot.h"
#include "webhook/cli.h"

namespace placer {
namespace {

constexpr const char* kExplainUsage =
    "usage: placer explain --snapshot FILE [--format json|table]\n"
    "\n"
    "Runs the engine once on a snapshot ({\"nodes\": [...], \"pods\": [...], \"pod\": {...},\n"
    "\"config\": {...}}) and prints the decision: feasible nodes, the reasons of the\n"
    "others, every plugin's score and the selected node. FILE \"-\" reads standard input.\n";

int fail(const std::string& message) {
  std::fprintf(stderr, "placer explain: %s\n", message.c_str());
  return 2;
}

}  // namespace

int runExplain(int argc, char** argv) {
  std::string snapshotPath;
  std::string format = "json";
  bool haveSnapshot = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&](std::string_view flag, std::string& out) -> int {
      // --flag VALUE or --flag=VALUE; returns 1 when consumed, -1 on a missing value, 0 if not this flag.
      if (arg == flag) {
        if (i + 1 >= argc) return -1;
        out = argv[++i];
        return 1;
      }
      if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag && arg[flag.size()] == '=') {
        out = std::string(arg.substr(flag.size() + 1));
        return 1;
      }
      return 0;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kExplainUsage, stdout);
      return 0;
    }
    int r = value("--snapshot", snapshotPath);
    if (r == 1) {
      haveSnapshot = true;
      continue;
    }
    if (r < 0) return fail("--snapshot needs a file");
    r = value("--format", format);
    if (r == 1) continue;
    if (r < 0) return fail("--format needs json or table");
    std::fputs(kExplainUsage, stderr);
    return fail("unknown argument \"" + std::string(arg) + "\"");
  }
  if (!haveSnapshot || snapshotPath.empty()) {
    std::fputs(kExplainUsage, stderr);
    return fail("--snapshot FILE is required");
  }
  if (format != "json" && format != "table") return fail("--format must be json or table, not \"" + format + "\"");

  try {
    auto snapshot = loadSnapshotFile(snapshotPath);
    if (!snapshot) return fail(snapshot.error().message);
    if (!snapshot->pod) return fail(snapshotPath + ": \"pod\" is required: the pod to place");
    auto config = configurationFromJson(snapshot->config);
    if (!config) return fail(snapshotPath + ": config." + config.error().message);
    for (const std::string& warning : config->profile->warnings())
      std::fprintf(stderr, "placer explain: warning: config.%s\n", warning.c_str());

    MutableClusterView view;
    fillView(view, *snapshot);
    Engine engine(config->profile);
    Decision decision = engine.place(*snapshot->pod, view, Detail::Full);
    if (format == "json")
      std::cout << explainJson(*snapshot->pod, decision).dump(2) << "\n";
    else
      std::cout << explainTable(*snapshot->pod, decision);
    std::cout.flush();
    return std::cout ? 0 : 2;
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}

}  // namespace placer
