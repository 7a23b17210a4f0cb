#include "webhook/cli.h"

#include <cstdio>
#include <string_view>

namespace placer {

int runCli(int argc, char** argv) {
  std::string_view cmd = argc > 1 ? argv[1] : "";
  if (cmd == "version") {
    std::printf("placer 0.1.0\n");
    return 0;
  }
  std::fprintf(stderr, "usage: placer serve|explain|certs|version\n");
  return 2;
}

}  // namespace placer
