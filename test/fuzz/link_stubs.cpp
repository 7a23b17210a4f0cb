// Link stubs for the fuzz build, which compiles only the webhook decoders:
// symbols those objects reference from sources left out (webhook/http_server.cpp
// and its Boost.Asio listener), on paths no target reaches. Reaching one is a
// harness bug and aborts.

#include <cstdio>
#include <cstdlib>

#include "webhook/http_server.h"

namespace placer {

// isLoopbackAddress (extender.cpp), for the extender's listen address at start-up.
Result<std::pair<std::string, uint16_t>> splitHostPort(std::string_view) {
  std::fputs("fuzz build: splitHostPort is not part of the fuzzed code\n", stderr);
  std::abort();
}

}  // namespace placer
