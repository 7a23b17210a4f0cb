// Whatever bytes a client sends to any endpoint, the answer is well-formed: a
// JSON answer parses, /mutate's 200 answers are allowed AdmissionReviews.
// A seeded sample of the fuzz that test/bench/answers_fuzz_loadgen runs at
// 100,000 requests per endpoint.
#include <gtest/gtest.h>

#include "test/support/answer_fuzzer.h"
#include "webhook/log.h"

namespace placer::testing {
namespace {

TEST(AnswerValidity, EveryEndpointAnswersMutatedRequestsWithWellFormedAnswers) {
  setLogOutput(nullptr);
  auto servers = FuzzServers::start();
  ASSERT_TRUE(servers);
  for (const Endpoint& endpoint : fuzzEndpoints()) {
    SCOPED_TRACE(endpoint.path);
    const FuzzReport report = fuzzEndpoint(*servers, endpoint, /*seed=*/15, /*count=*/600);
    EXPECT_EQ(report.requests, 600u);
    EXPECT_EQ(report.invalid, 0u) << (report.examples.empty() ? "" : report.examples.front());
    EXPECT_GT(report.statuses.count(200) + report.statuses.count(400), 0u);
  }
}

TEST(AnswerValidity, MutationsAreTheSameForTheSameSeed) {
  const std::vector<std::string> seeds = {R"({"a":"b","c":[1,2,3]})", R"({"PodName":"x"})"};
  std::mt19937_64 first(7), second(7);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(mutateRequest(seeds, first), mutateRequest(seeds, second));
}

}  // namespace
}  // namespace placer::testing
