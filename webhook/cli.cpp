#include "webhook/cli.h"

#include <cstdio>
#include <string_view>

namespace placer {
namespace {

constexpr const char* kUsage =
    "usage: placer <command> [options]\n"
    "\n"
    "commands:\n"
    "  serve    run the admission webhook (and extender): --config, --kubeconfig, --cluster-file, --demo\n"
    "  explain  replay one decision offline: --snapshot FILE [--format json|table]\n"
    "  certs    generate or ensure the webhook's CA and serving certificate\n"
    "  version  print the version\n";

}  // namespace

int runCli(int argc, char** argv) {
  std::string_view cmd = argc > 1 ? argv[1] : "";
  // Subcommands see their own name as argv[0].
  if (cmd == "serve") return runServe(argc - 1, argv + 1);
  if (cmd == "explain") return runExplain(argc - 1, argv + 1);
  if (cmd == "certs") return runCerts(argc - 1, argv + 1);
  if (cmd == "version" || cmd == "--version") {
    std::printf("placer %s\n", PLACER_VERSION);
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
