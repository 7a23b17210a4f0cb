// libFuzzer target: one body through every scheduler-extender verb
// (webhook/extender.h): /filter, /filter_onlyone, /prioritize, /preempt and
// /bind, the handlers' own functions, on a small cluster.
//
// What must hold, as kube-scheduler reads the answers:
//  - 400 (a clear message) or 200, never anything else (the view is synced);
//  - a 200 body is JSON with exactly the Go field names of the result type:
//    ExtenderFilterResult {Nodes, NodeNames, FailedNodes,
//    FailedAndUnresolvableNodes, Error}; HostPriorityList [{Host, Score}] with
//    scores 0..10; ExtenderPreemptionResult {NodeNameToMetaVictims};
//    ExtenderBindingResult {Error};
//  - /bind leaves a reservation only for a pod it bound (released here, as
//    the watch would), nothing when it answers an error.

#include <set>

#include "test/fuzz/fuzz_support.h"
#include "webhook/extender.h"
#include "webhook/metrics.h"

namespace placer::fuzz {
namespace {

using nlohmann::json;

// The API server as /bind sees it: every pod exists, unbound, with uid
// "uid-<name>" and a small request; binding a pod named "conflict" fails.
class FakeBinder final : public PodBinder {
 public:
  Outcome bind(const std::string&, const std::string& name, const std::string&, const std::string&) override {
    if (name == "conflict") return Error{"Operation cannot be fulfilled on pods/binding \"conflict\": already assigned"};
    return {};
  }
  Result<Pod> getPod(const std::string& ns, const std::string& name) override {
    if (name == "missing") return Error{"pods \"missing\" not found"};
    json pod = {{"metadata", {{"namespace", ns}, {"name", name}, {"uid", "uid-" + name}}},
                {"spec", {{"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}};
    return decodePod(pod);
  }
};

// The 200 body as JSON, or a finding.
json answerJson(const HttpResponse& r, const char* verb) {
  FUZZ_CHECK(r.status == 200 || r.status == 400, std::string(verb) + ": HTTP " + std::to_string(r.status) + " " + r.body);
  if (r.status == 400) {
    FUZZ_CHECK(!r.body.empty(), verb);
    return json();
  }
  auto out = referenceJson(r.body);
  FUZZ_CHECK(out.has_value(), std::string(verb) + " answered invalid JSON: " + r.body);
  return *out;
}

void checkFailureMap(const json& map, const std::string& body) {
  FUZZ_CHECK(map.is_null() || map.is_object(), body);
  if (map.is_object())
    for (const auto& [node, reason] : map.items()) FUZZ_CHECK(reason.is_string(), body);
}

void checkFilter(const HttpResponse& r) {
  json out = answerJson(r, "filter");
  if (r.status != 200) return;
  FUZZ_CHECK(out.is_object(), r.body);
  FUZZ_CHECK((keysOf(out) == std::set<std::string>{"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes",
                                                   "Error"}),
             r.body);
  FUZZ_CHECK(out["Error"].is_string(), r.body);
  FUZZ_CHECK(out["Nodes"].is_null() || (out["Nodes"].is_object() && out["Nodes"]["items"].is_array()), r.body);
  FUZZ_CHECK(out["NodeNames"].is_null() || out["NodeNames"].is_array(), r.body);
  checkFailureMap(out["FailedNodes"], r.body);
  checkFailureMap(out["FailedAndUnresolvableNodes"], r.body);
  if (!out["Error"].get<std::string>().empty())
    FUZZ_CHECK(out["Nodes"].is_null() && out["NodeNames"].is_null(), r.body);
}

void checkPrioritize(const HttpResponse& r) {
  json out = answerJson(r, "prioritize");
  if (r.status != 200) return;
  FUZZ_CHECK(out.is_array(), r.body);
  for (const json& entry : out) {
    FUZZ_CHECK(entry.is_object() && (keysOf(entry) == std::set<std::string>{"Host", "Score"}), r.body);
    FUZZ_CHECK(entry["Host"].is_string() && entry["Score"].is_number_integer(), r.body);
    const int64_t score = entry["Score"].get<int64_t>();
    FUZZ_CHECK(score >= 0 && score <= 10, r.body);
  }
}

void checkPreempt(const HttpResponse& r) {
  json out = answerJson(r, "preempt");
  if (r.status != 200) return;
  FUZZ_CHECK(out.is_object() && (keysOf(out) == std::set<std::string>{"NodeNameToMetaVictims"}), r.body);
  const json& victims = out["NodeNameToMetaVictims"];
  FUZZ_CHECK(victims.is_object(), r.body);
  for (const auto& [node, v] : victims.items()) {
    FUZZ_CHECK(v.is_object() && (keysOf(v) == std::set<std::string>{"Pods", "NumPDBViolations"}), r.body);
    FUZZ_CHECK(v["Pods"].is_array() && v["NumPDBViolations"].is_number_integer(), r.body);
    for (const json& p : v["Pods"]) FUZZ_CHECK(p.is_object() && (keysOf(p) == std::set<std::string>{"UID"}), r.body);
  }
}

// Returns the bind's error text ("" when bound), or nullopt for a 400.
std::optional<std::string> checkBind(const HttpResponse& r) {
  json out = answerJson(r, "bind");
  if (r.status != 200) return std::nullopt;
  FUZZ_CHECK(out.is_object() && (keysOf(out) == std::set<std::string>{"Error"}) && out["Error"].is_string(), r.body);
  return out["Error"].get<std::string>();
}

}  // namespace
}  // namespace placer::fuzz

using namespace placer;
using namespace placer::fuzz;

namespace {
FakeBinder binder;
MetricsRegistry metrics;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = asText(data, size);
  Cluster& c = cluster();
  ExtenderContext context;
  context.engine = c.engine;
  context.state = &c.state;
  context.binder = &binder;
  context.metrics = &metrics;
  const size_t before = reservationCount(c.state);

  checkFilter(extenderFilter(context, body, false));
  checkFilter(extenderFilter(context, body, true));
  checkPrioritize(extenderPrioritize(context, body));
  checkPreempt(extenderPreempt(context, body));
  FUZZ_CHECK(reservationCount(c.state) == before, "only /bind reserves");

  auto bound = checkBind(extenderBind(context, body));
  if (!bound || !bound->empty()) {
    FUZZ_CHECK(reservationCount(c.state) == before, bound ? *bound : std::string("400"));
  } else {
    // Bound: what the watch would do when the pod shows up bound.
    c.state.update([&](MutableClusterView& view) {
      const auto held = view.reservedPods();
      for (const auto& p : held->pods) view.release(p->id);
    });
  }
  FUZZ_CHECK(reservationCount(c.state) == before, "released");
  return 0;
}
