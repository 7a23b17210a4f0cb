// libFuzzer target: a configuration file's text (YAML or JSON: a
// PlacerConfiguration, a KubeSchedulerConfiguration, their profiles and
// pluginConfig) through parseConfiguration (scoring/config.h), as
// `placer serve --config` reads it, and through parseYaml (scoring/yaml.h).
//
// What must hold: an error has a message; YAML that parses becomes a JSON
// value that can be written out (strings are UTF-8); a configuration that
// parses has a profile, and an engine built from it decides on a small
// cluster (plugin arguments reach the plugins' arithmetic) and explains that
// decision as JSON.

#include "scoring/explain.h"
#include "scoring/yaml.h"
#include "test/fuzz/fuzz_support.h"

using namespace placer;
using namespace placer::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = asText(data, size);
  auto yaml = parseYaml(text);
  if (!yaml) {
    FUZZ_CHECK(!yaml.error().message.empty(), "a YAML error says why");
  } else {
    try {
      (void)yaml->dump();
    } catch (const nlohmann::json::exception& e) {
      FUZZ_CHECK(false, std::string("parseYaml returned a value that cannot be written: ") + e.what());
    }
  }

  auto config = parseConfiguration(text);
  if (!config) {
    FUZZ_CHECK(!config.error().message.empty(), "a configuration error says why");
    return 0;
  }
  FUZZ_CHECK(config->profile != nullptr, "a configuration has a profile");
  Engine engine(config->profile);
  const Pod& pod = probePod();
  Decision decision = cluster().state.readForDecision(
      [&](const ClusterView& view) { return engine.place(pod, view, Detail::Full); });
  FUZZ_CHECK(decision.feasibleCount <= decision.nodeCount, "feasible <= nodes");
  try {
    (void)explainJson(pod, decision).dump();
    (void)explainTable(pod, decision);
  } catch (const nlohmann::json::exception& e) {
    FUZZ_CHECK(false, std::string("explain output cannot be written: ") + e.what());
  }
  return 0;
}
