// libFuzzer target: an AdmissionReview body through reviewAdmission (the
// /mutate handler's one call) and shedAdmission (its answer when overloaded),
// on a small cluster.
//
// What must hold, as the API server reads the answer:
//  - HTTP 400 only for a body that is not an AdmissionReview; otherwise 200;
//  - a 200 body is JSON with exactly apiVersion, kind, response; the response
//    has uid (request.uid), allowed: true, and patchType "JSONPatch" exactly
//    when it has a patch;
//  - the patch is base64 of a JSON array of operations that applies (as the
//    fake API server applies a webhook's patch, test/fakeapi/json_patch.h) to
//    request.object as the API server holds it (metadata, spec and
//    spec.schedulerName defaulted), and the patched pod, read as placer reads
//    a pod, names the node chosen;
//  - only an answer that holds a node leaves a reservation behind.

#include <chrono>
#include <set>

#include "test/fakeapi/json_patch.h"
#include "test/fuzz/fuzz_support.h"
#include "scoring/json_value.h"
#include "webhook/admission.h"

namespace placer::fuzz {
namespace {

using nlohmann::json;

// request.object as the API server encodes the pod it applies the patch to:
// ObjectMeta and PodSpec are always written, schedulerName is defaulted.
json asServerHoldsIt(json object) {
  if (!object.contains("metadata") || object["metadata"].is_null()) object["metadata"] = json::object();
  if (!object.contains("spec") || object["spec"].is_null()) object["spec"] = json::object();
  json& spec = object["spec"];
  if (spec.is_object() && (!spec.contains("schedulerName") || spec["schedulerName"] == ""))
    spec["schedulerName"] = "default-scheduler";
  return object;
}

void checkReviewAnswer(std::string_view body, const AdmissionAnswer& answer, bool fromShed) {
  if (answer.outcome == AdmissionOutcome::BadRequest) {
    FUZZ_CHECK(answer.httpStatus == 400, answer.body);
    FUZZ_CHECK(!answer.body.empty(), "a 400 says why");
    return;
  }
  FUZZ_CHECK(answer.httpStatus == 200, answer.body);
  auto out = referenceJson(answer.body);
  FUZZ_CHECK(out && out->is_object(), answer.body);
  FUZZ_CHECK((keysOf(*out) == std::set<std::string>{"apiVersion", "kind", "response"}), answer.body);
  FUZZ_CHECK((*out)["kind"] == "AdmissionReview", answer.body);
  FUZZ_CHECK((*out)["apiVersion"].is_string(), answer.body);
  const json& response = (*out)["response"];
  FUZZ_CHECK(response.is_object(), answer.body);
  const std::set<std::string> keys = keysOf(response);
  const bool hasPatch = keys.count("patch") > 0;
  const std::set<std::string> expected =
      hasPatch ? std::set<std::string>{"uid", "allowed", "patchType", "patch"} : std::set<std::string>{"uid", "allowed"};
  FUZZ_CHECK(keys == expected, answer.body);
  FUZZ_CHECK(response["allowed"] == true, answer.body);
  FUZZ_CHECK(response["uid"].is_string() && response["uid"].get<std::string>() == answer.uid, answer.body);
  FUZZ_CHECK(!answer.uid.empty(), answer.body);
  if (fromShed) {
    FUZZ_CHECK(!hasPatch, answer.body);
    return;
  }

  // The request as the reference parser reads it (when it does: the
  // filtered parser may accept bytes it refuses, such as invalid UTF-8).
  auto request = referenceJson(body);
  if (request) {
    const json& r = (*request)["request"];
    FUZZ_CHECK(r.is_object() && r["uid"] == answer.uid, answer.body);
    FUZZ_CHECK((*out)["apiVersion"] == (*request)["apiVersion"], answer.body);
  }
  if (!hasPatch) {
    FUZZ_CHECK(answer.outcome != AdmissionOutcome::Assigned || !answer.node.empty(), answer.reason);
    return;
  }
  FUZZ_CHECK(response["patchType"] == "JSONPatch", answer.body);
  FUZZ_CHECK(response["patch"].is_string(), answer.body);
  auto patchText = base64Decode(response["patch"].get<std::string>());
  FUZZ_CHECK(patchText.ok(), answer.body);
  auto patch = referenceJson(*patchText);
  FUZZ_CHECK(patch && patch->is_array() && !patch->empty(), *patchText);
  for (const json& op : *patch) {
    FUZZ_CHECK(op.is_object() && op["op"].is_string() && op["path"].is_string(), *patchText);
    const std::string kind = op["op"].get<std::string>();
    FUZZ_CHECK(kind == "add" || kind == "replace" || kind == "remove", *patchText);
    FUZZ_CHECK(op.contains("value") == (kind != "remove"), *patchText);
  }
  if (!request) return;
  const json& object = (*request)["request"]["object"];
  FUZZ_CHECK(object.is_object(), answer.body);
  // Applied as the fake API server applies a webhook's patch (evanphx/json-patch).
  auto patched = fakeapi::applyJsonPatch(asServerHoldsIt(object), *patch);
  FUZZ_CHECK(patched.ok(), (patched ? std::string() : patched.error().message) + "\n" + *patchText);
  // Read back as placer reads a pod (fields it skips are not checked: an
  // annotation that is not a string, say, which the API server never sends).
  JsonParser parser;
  auto kept = parser.parse(patched->dump(-1, ' ', false, json::error_handler_t::replace));
  FUZZ_CHECK(kept.ok(), kept ? std::string() : kept.error().message);
  auto pod = decodePod(*kept);
  FUZZ_CHECK(pod.ok(), pod ? std::string() : pod.error().message);
  if (answer.outcome == AdmissionOutcome::Assigned) {
    FUZZ_CHECK(pod->nodeName == answer.node, *patchText);
    const std::string* assigned = findLabel(pod->annotations, kAssignedNodeAnnotation);
    FUZZ_CHECK(assigned && *assigned == answer.node, *patchText);
  } else {
    FUZZ_CHECK(findLabel(pod->annotations, kUnassignedReasonAnnotation) != nullptr, *patchText);
  }
}

}  // namespace
}  // namespace placer::fuzz

using namespace placer;
using namespace placer::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body = asText(data, size);
  Cluster& c = cluster();
  const size_t before = reservationCount(c.state);
  const auto now = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  const AdmissionInput input{*c.engine, c.state, c.settings, now, true};

  AdmissionAnswer answer = reviewAdmission(body, input);
  checkReviewAnswer(body, answer, false);
  // A reservation is held by an assignment, or by a reinvoked review whose pod still fits its node.
  if (answer.reserved) c.state.update([&](MutableClusterView& view) { view.release(answer.reservation); });
  FUZZ_CHECK(reservationCount(c.state) == before, answer.reason);

  checkReviewAnswer(body, shedAdmission(body), true);
  return 0;
}
