#include <cstdio>

#include "webhook/cli.h"

namespace placer {

// Placeholder until the serve command lands; owned by its issue.
int runServe(int argc, char** argv) {
  std::fprintf(stderr, "placer serve: not built yet\n");
  return 2;
}

}  // namespace placer
