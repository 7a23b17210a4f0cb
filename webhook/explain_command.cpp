#include <cstdio>

#include "webhook/cli.h"

namespace placer {

// Placeholder until the explain command lands; owned by its issue.
int runExplain(int argc, char** argv) {
  std::fprintf(stderr, "placer explain: not built yet\n");
  return 2;
}

}  // namespace placer
