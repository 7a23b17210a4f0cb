#include <cstdio>

#include "webhook/cli.h"

namespace placer {

// Placeholder until the certs command lands; owned by its issue.
int runCerts(int argc, char** argv) {
  std::fprintf(stderr, "placer certs: not built yet\n");
  return 2;
}

}  // namespace placer
