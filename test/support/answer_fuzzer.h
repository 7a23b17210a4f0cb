#pragma once
// End-to-end answer validity: seeded, mutated requests to every endpoint of
// the webhook and extender listeners, over real sockets (TLS for the
// webhook), checking that every answer is well-formed whatever the bytes
// that came in: a JSON answer parses (strict UTF-8), /mutate's 200 answers
// are allowed AdmissionReviews. Used by a regular test (a few thousand
// requests) and by test/bench/answers_fuzz_loadgen (100,000 per endpoint).
//
// The same seed gives the same requests. Decoders are fuzzed on their own by
// the libFuzzer targets in test/fuzz/; this checks what the listeners answer.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "webhook/http_server.h"

namespace placer::testing {

// The two listeners over a small generated cluster: the webhook (TLS) and the
// extender (plain HTTP) with a binder that refuses, echoing what it was given.
class FuzzServers {
 public:
  static std::unique_ptr<FuzzServers> start(int nodes = 50);
  ~FuzzServers();

  uint16_t webhookPort() const;
  uint16_t extenderPort() const;
  const std::string& caPem() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

struct Endpoint {
  std::string path;
  bool webhook = false;  // the TLS listener; else the extender's
  std::vector<std::string> seeds;  // valid requests to mutate
};

// Every endpoint of both listeners, with valid seed requests for `servers`' cluster.
std::vector<Endpoint> fuzzEndpoints(int nodes = 50);

// A deterministic mutation of `seed`: flipped, inserted or removed bytes
// (invalid UTF-8, quotes, escapes, NULs among them), a truncation, deep
// nesting, extreme numbers, keys in another case, two seeds spliced.
std::string mutateRequest(const std::vector<std::string>& seeds, std::mt19937_64& random);

struct FuzzReport {
  size_t requests = 0;
  size_t invalid = 0;               // answers that are not well-formed
  std::map<int, size_t> statuses;   // HTTP status -> count (0: no answer, connection closed)
  std::vector<std::string> examples;  // the first few invalid answers, with their request
};

// Sends `count` mutated requests to `endpoint` and checks every answer.
FuzzReport fuzzEndpoint(const FuzzServers& servers, const Endpoint& endpoint, uint64_t seed, size_t count);

}  // namespace placer::testing
