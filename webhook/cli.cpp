#include "webhook/cli.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/log.h"
#include "webhook/process_metrics.h"

namespace placer {
namespace {

constexpr const char* kUsage =
    "usage: placer <command> [options]\n"
    "\n"
    "commands:\n"
    "  serve    run the admission webhook (and extender): --config, --kubeconfig, --cluster-file, --demo\n"
    "  explain  replay one decision: --snapshot FILE, or --kubeconfig FILE (--pod-file FILE | --pod NS/NAME)\n"
    "  check    check the installation in the cluster: [--kubeconfig FILE]\n"
    "  certs    generate or ensure the webhook's CA and serving certificate\n"
    "  version  print the version\n"
    "\n"
    "logging (any command):\n"
    "  --log-level debug|info|warning|error   lowest level logged (default info); -v is --log-level debug\n"
    "  --log-format json|text                 one JSON object per line (default for serve and certs)\n"
    "                                         or key=value text (default for explain and check)\n";

// Takes the logging flags out of the arguments (they may stand anywhere after
// the command) and applies them. Returns an error message for a bad value.
std::optional<std::string> takeLogFlags(std::string_view command, std::vector<char*>& args) {
  std::optional<LogFormat> format;
  std::optional<LogLevel> level;
  std::vector<char*> rest{args[0]};  // the command's own name
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    auto value = [&](std::string_view flag) -> std::optional<std::string_view> {
      if (a == flag) {
        if (i + 1 >= args.size()) return std::string_view();
        return std::string_view(args[++i]);
      }
      return a.substr(flag.size() + 1);
    };
    auto is = [&](std::string_view flag) {
      return a == flag || (a.size() > flag.size() && a.substr(0, flag.size()) == flag && a[flag.size()] == '=');
    };
    if (a == "-v") {
      level = LogLevel::Debug;
    } else if (is("--log-level")) {
      std::string_view v = *value("--log-level");
      level = parseLogLevel(v);
      if (!level) return "--log-level must be debug, info, warning or error, not \"" + std::string(v) + "\"";
    } else if (is("--log-format")) {
      std::string_view v = *value("--log-format");
      format = parseLogFormat(v);
      if (!format) return "--log-format must be json or text, not \"" + std::string(v) + "\"";
    } else {
      rest.push_back(args[i]);
    }
  }
  args = std::move(rest);
  if (level) setLogLevel(*level);
  // Commands a person runs at a terminal log as text unless told otherwise.
  setLogFormat(format.value_or(command == "explain" || command == "check" ? LogFormat::Text : LogFormat::Json));
  return std::nullopt;
}

}  // namespace

int runCli(int argc, char** argv) {
  std::string_view cmd = argc > 1 ? argv[1] : "";
  // Subcommands see their own name as argv[0].
  std::vector<char*> args(argv + 1, argv + std::max(argc, 1));
  if (!args.empty()) {
    if (auto bad = takeLogFlags(cmd, args); bad) {
      std::fprintf(stderr, "placer %.*s: %s\n", int(cmd.size()), cmd.data(), bad->c_str());
      return 2;
    }
  }
  args.push_back(nullptr);
  const int n = int(args.size()) - 1;
  if (cmd == "serve") return runServe(n, args.data());
  if (cmd == "explain") return runExplain(n, args.data());
  if (cmd == "check") return runCheck(n, args.data());
  if (cmd == "certs") return runCerts(n, args.data());
  if (cmd == "version" || cmd == "--version") {
    std::printf("placer %s (revision %s)\n", buildVersion().c_str(), buildRevision().c_str());
    return 0;
  }
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace placer
