// End-to-end answer validity at volume: N seeded, mutated requests to every
// endpoint of the webhook (TLS) and extender listeners, counting answers that
// are not well-formed (a JSON answer that does not parse, a /mutate 200 that
// is not an allowed AdmissionReview, a request sent whole left unanswered).
// Build with -DPLACER_SANITIZE=ON to run it under ASan/UBSan.
//
//   answers_fuzz_loadgen [--requests 100000] [--seed 15] [--nodes 50] [--endpoint /filter]
//
// Exit status 1 when any answer was invalid. The same seed sends the same requests.
#include <chrono>
#include <cstdio>
#include <string>

#include "test/support/answer_fuzzer.h"
#include "webhook/log.h"

using namespace placer;
using namespace placer::testing;

int main(int argc, char** argv) {
  size_t requests = 100000;
  uint64_t seed = 15;
  int nodes = 50;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--requests") requests = std::stoul(v);
    else if (a == "--seed") seed = std::stoull(v);
    else if (a == "--nodes") nodes = std::stoi(v);
    else if (a == "--endpoint") only = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::FILE* devnull = std::fopen("/dev/null", "w");
  setLogOutput(devnull);
  auto servers = FuzzServers::start(nodes);
  if (!servers) {
    std::fprintf(stderr, "cannot start the listeners\n");
    return 1;
  }
  size_t invalid = 0;
  for (const Endpoint& endpoint : fuzzEndpoints(nodes)) {
    if (!only.empty() && endpoint.path != only) continue;
    const auto started = std::chrono::steady_clock::now();
    const FuzzReport report = fuzzEndpoint(*servers, endpoint, seed, requests);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    invalid += report.invalid;
    std::printf("%-16s requests=%zu invalid=%zu (%.0f s) statuses:", endpoint.path.c_str(), report.requests,
                report.invalid, seconds);
    for (const auto& [status, n] : report.statuses) std::printf(" %d=%zu", status, n);
    std::printf("\n");
    for (const std::string& example : report.examples) std::printf("  invalid: %s\n", example.c_str());
    std::fflush(stdout);
  }
  return invalid == 0 ? 0 : 1;
}
