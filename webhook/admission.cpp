#include "webhook/admission.h"

#include <algorithm>
#include <exception>
#include <optional>

#include <nlohmann/json.hpp>

#include "scoring/base64.h"
#include "scoring/json_value.h"
#include "scoring/placement.h"
#include "webhook/json_text.h"

namespace placer {
namespace {

using nlohmann::json;

constexpr std::string_view kAdmissionV1 = "admission.k8s.io/v1";
constexpr std::string_view kAdmissionV1beta1 = "admission.k8s.io/v1beta1";

// The string member `key` of `object`, or empty when absent or not a string.
std::string_view stringMember(const JsonValue& object, std::string_view key) {
  const std::optional<JsonValue> v = object.member(key);
  const std::optional<std::string_view> text = v ? v->string() : std::nullopt;
  return text ? *text : std::string_view();
}

// The answer's body: allowed:true, with the patch (a JSON array) when there is
// one. Written by hand; the same bytes nlohmann::ordered_json would write.
std::string reviewResponse(std::string_view apiVersion, const std::string& uid, const std::string* patch) {
  std::string out;
  out.reserve(128 + apiVersion.size() + uid.size() + (patch ? (patch->size() + 2) / 3 * 4 : 0));
  out += "{\"apiVersion\":";
  appendJsonString(out, apiVersion);
  out += ",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":";
  appendJsonString(out, uid);
  out += ",\"allowed\":true";
  if (patch != nullptr) {
    out += ",\"patchType\":\"JSONPatch\",\"patch\":\"";
    out += base64Encode(*patch);
    out += '"';
  }
  out += "}}";
  return out;
}

// One JSONPatch "add" operation with a string value, appended to the patch
// array being written (keys in nlohmann's order: op, path, value).
void addOperation(std::string& patch, std::string_view path, std::string_view value) {
  patch += patch.size() > 1 ? ",{\"op\":\"add\",\"path\":" : "{\"op\":\"add\",\"path\":";
  appendJsonString(patch, path);
  patch += ",\"value\":";
  appendJsonString(patch, value);
  patch += '}';
}

// Operations adding `annotations` to a pod: one per key when the pod already
// has an annotations map, else the whole map (a JSONPatch "add" needs the parent).
// Keys are given sorted, as a JSON object writes them.
void addAnnotations(std::string& patch, bool podHasAnnotations,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> annotations) {
  if (podHasAnnotations) {
    for (const auto& [k, v] : annotations) addOperation(patch, "/metadata/annotations/" + escapeJsonPointer(k), v);
    return;
  }
  patch += patch.size() > 1 ? ",{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{"
                            : "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{";
  bool first = true;
  for (const auto& [k, v] : annotations) {
    if (!first) patch += ',';
    first = false;
    appendJsonString(patch, k);
    patch += ':';
    appendJsonString(patch, v);
  }
  patch += "}}";
}

// One JSONPatch operation without a value ("remove"), or with a string value.
void patchOperation(std::string& patch, std::string_view op, std::string_view path,
                    const std::string_view* value = nullptr) {
  patch += patch.size() > 1 ? ",{\"op\":" : "{\"op\":";
  appendJsonString(patch, op);
  patch += ",\"path\":";
  appendJsonString(patch, path);
  if (value != nullptr) {
    patch += ",\"value\":";
    appendJsonString(patch, *value);
  }
  patch += '}';
}

std::string annotationPath(std::string_view key) { return "/metadata/annotations/" + escapeJsonPointer(key); }

// Whether placer wrote this pod's spec.nodeName (an earlier call of this
// admission, now reinvoked): the node it names is the one it assigned, and
// the reservation it was made under (empty when not).
std::string ownReservation(const Pod& pod) {
  const std::string* assigned = findLabel(pod.annotations, kAssignedNodeAnnotation);
  const std::string* reservation = findLabel(pod.annotations, kReservationAnnotation);
  if (pod.nodeName.empty() || assigned == nullptr || *assigned != pod.nodeName || reservation == nullptr) return {};
  return *reservation;
}

bool isExcludedNamespace(const PlacerSettings& settings, std::string_view ns) {
  if (!settings.ownNamespace.empty() && ns == settings.ownNamespace) return true;
  return std::find(settings.excludedNamespaces.begin(), settings.excludedNamespaces.end(), ns) !=
         settings.excludedNamespaces.end();
}

// Why placer leaves this pod alone, or empty when it places it.
std::string skipReason(const Pod& pod, const PlacerSettings& settings) {
  if (!pod.nodeName.empty()) return "spec.nodeName already set";
  if (std::find(settings.schedulerNames.begin(), settings.schedulerNames.end(), pod.schedulerName) ==
      settings.schedulerNames.end())
    return "schedulerName " + pod.schedulerName + " is not served by placer";
  if (pod.schedulingGates > 0) return "pod has scheduling gates";
  // kube-scheduler's DynamicResources plugin allocates the claims while it
  // schedules; a pod bound without that allocation never starts.
  if (pod.resourceClaims > 0) return "pod has resource claims (DynamicResources allocates them)";
  if ((pod.hasPvcVolume || pod.hasEphemeralVolume) && !settings.placePodsWithBoundVolumes)
    return "pod has volumes that need binding";
  if (const std::string* skip = findLabel(pod.labels, kSkipLabel); skip && *skip == "true")
    return "pod labelled placer.io/skip=true";
  return {};
}

}  // namespace

std::string whyLeftAlone(const Pod& pod, const PlacerSettings& settings) {
  if (isExcludedNamespace(settings, pod.namespace_)) return "namespace " + pod.namespace_ + " is excluded";
  return skipReason(pod, settings);
}

std::string_view toString(AdmissionOutcome outcome) {
  switch (outcome) {
    case AdmissionOutcome::Assigned: return "assigned";
    case AdmissionOutcome::Fallback: return "fallback";
    case AdmissionOutcome::Skipped: return "skipped";
    case AdmissionOutcome::Error: return "error";
    case AdmissionOutcome::BadRequest: return "bad_request";
  }
  return "error";
}

std::string summarize(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  constexpr size_t kTailRoom = 40;  // ", and 18446744073709551615 more."
  size_t cut = limit > kTailRoom ? limit - kTailRoom : 0;
  // Never inside a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  const size_t separator = text.rfind(", ", cut);
  if (separator != std::string_view::npos && separator >= cut / 2) cut = separator;
  size_t more = 0;
  for (size_t at = text.find(", ", cut); at != std::string_view::npos; at = text.find(", ", at + 2)) ++more;
  std::string out(text.substr(0, cut));
  out += more > 0 ? ", and " + std::to_string(more) + " more." : " (truncated)";
  return out;
}

namespace {

// Finds apiVersion and request.uid in an AdmissionReview, stopping when both are known.
struct ReviewIdentity : nlohmann::json_sax<json> {
  int depth = 0;
  bool inRequest = false;
  std::string lastKey;
  std::optional<std::string> apiVersion;
  std::optional<std::string> uid;

  bool done() const { return apiVersion && uid; }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool string(string_t& value) override {
    if (depth == 1 && lastKey == "apiVersion") apiVersion = value;
    if (depth == 2 && inRequest && lastKey == "uid") uid = value;
    return !done();
  }
  bool start_object(std::size_t) override {
    if (depth == 1 && lastKey == "request") inRequest = true;
    ++depth;
    return true;
  }
  bool end_object() override {
    --depth;
    if (depth == 1) inRequest = false;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth;
    return true;
  }
  bool end_array() override {
    --depth;
    return true;
  }
  bool key(string_t& k) override {
    lastKey = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

AdmissionAnswer shedAdmission(std::string_view body) {
  ReviewIdentity identity;
  json::sax_parse(body.begin(), body.end(), &identity);
  AdmissionAnswer answer;
  if (!identity.uid || identity.uid->empty()) {  // as on /mutate: an empty uid is no uid
    answer.outcome = AdmissionOutcome::BadRequest;
    answer.httpStatus = 400;
    answer.reason = "no request.uid";
    answer.body = "not an admission.k8s.io/v1 AdmissionReview: no request.uid\n";
    return answer;
  }
  answer.outcome = AdmissionOutcome::Error;
  answer.uid = *identity.uid;
  answer.reason = "overloaded: every worker busy and the queue full";
  answer.body = reviewResponse(identity.apiVersion ? *identity.apiVersion : "admission.k8s.io/v1", answer.uid, nullptr);
  return answer;
}

std::string escapeJsonPointer(std::string_view token) {
  std::string out;
  out.reserve(token.size() + 4);
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// Called again (reinvocationPolicy: IfNeeded) for a pod placer assigned,
// after another webhook changed it: scheduling gates added take it back from
// the node (kube-scheduler places it once they are gone); otherwise it is
// checked as it is now against the node it holds, and moved (`replace`) when
// it no longer fits there, or handed to kube-scheduler when it fits nowhere.
AdmissionAnswer reinvoked(Pod pod, const std::string& key, const std::string& apiVersion, const AdmissionInput& input,
                          AdmissionAnswer& answer) {
  const std::string held = pod.nodeName;
  pod.nodeName.clear();  // the node it holds is checked as any other
  LocalReservationBook book(input.engine, input.state);
  auto respond = [&](AdmissionOutcome outcome, std::string reason, const std::string* patch) {
    answer.outcome = outcome;
    answer.reason = std::move(reason);
    answer.body = reviewResponse(apiVersion, answer.uid, patch);
    return answer;
  };
  // Back to kube-scheduler: no nodeName, none of placer's assignment annotations.
  auto unassign = [&](std::string why) {
    if (!answer.dryRun) book.release(key);
    std::string patch = "[";
    patchOperation(patch, "remove", "/spec/nodeName");
    for (std::string_view annotation : {kAssignedNodeAnnotation, kReservationAnnotation, kScoreAnnotation})
      if (findLabel(pod.annotations, annotation) != nullptr) patchOperation(patch, "remove", annotationPath(annotation));
    const std::string summary = summarize(why);
    const std::string_view value = summary;
    patchOperation(patch, "add", annotationPath(kUnassignedReasonAnnotation), &value);
    patch += ']';
    return std::pair(std::move(why), std::move(patch));
  };
  if (pod.schedulingGates > 0 || pod.resourceClaims > 0) {
    const char* what = pod.schedulingGates > 0 ? "scheduling gates" : "resource claims";
    auto [why, patch] = unassign(std::string("pod has ") + what + " (added after placer assigned node " + held + ")");
    return respond(AdmissionOutcome::Fallback, why, &patch);
  }
  if (!input.viewSynced) return respond(AdmissionOutcome::Skipped, "reinvoked: cluster view not synced", nullptr);
  Placement p = book.recheck(pod, held, key, input.now + input.settings.reservationTtl, !answer.dryRun);
  answer.nodeCount = p.nodeCount;
  answer.feasibleCount = p.feasibleCount;
  answer.accounting = p.accounting;
  if (p.outcome == Placement::Outcome::Refused)
    return respond(AdmissionOutcome::Skipped, "reinvoked: spec.nodeName already set (" + p.reason + ")", nullptr);
  answer.reserved = p.outcome == Placement::Outcome::Reserved;
  if (answer.reserved) answer.reservation = key;
  if (p.node == held) {
    answer.node = held;
    return respond(AdmissionOutcome::Skipped, "reinvoked: still fits node " + held, nullptr);
  }
  if (p.node.empty()) {
    auto [why, patch] = unassign(p.reason);
    if (!input.settings.fallbackSchedulerName.empty()) {
      patch.pop_back();
      const std::string_view scheduler = input.settings.fallbackSchedulerName;
      patchOperation(patch, "replace", "/spec/schedulerName", &scheduler);
      patch += ']';
    }
    return respond(AdmissionOutcome::Fallback, why, &patch);
  }
  answer.node = p.node;
  answer.score = p.score;
  const std::string score = std::to_string(p.score);
  const std::string_view node = p.node;
  const std::string_view scoreValue = score;
  std::string patch = "[";
  patchOperation(patch, "replace", "/spec/nodeName", &node);
  patchOperation(patch, "replace", annotationPath(kAssignedNodeAnnotation), &node);
  patchOperation(patch, findLabel(pod.annotations, kScoreAnnotation) ? "replace" : "add", annotationPath(kScoreAnnotation),
                 &scoreValue);
  patch += ']';
  return respond(AdmissionOutcome::Assigned, "reinvoked: no longer fits node " + held + ", moved", &patch);
}

}  // namespace

AdmissionAnswer reviewAdmission(std::string_view body, const AdmissionInput& input) {
  // simdjson's DOM: the whole body is validated, only what the review and
  // decodePod read is copied out.
  std::optional<JsonParser> own;
  auto review = threadParserFor(body.size(), own).parse(body);
  if (!review) {
    AdmissionAnswer answer;
    answer.outcome = AdmissionOutcome::BadRequest;
    answer.httpStatus = 400;
    answer.reason = "body is not JSON: " + review.error().message;
    answer.body = "request body is not JSON (" + review.error().message +
                  "); expected an admission.k8s.io/v1 AdmissionReview\n";
    return answer;
  }
  return reviewAdmissionDocument(*review, input);
}

AdmissionAnswer reviewAdmissionDocument(const JsonValue& review, const AdmissionInput& input) {
  AdmissionAnswer answer;
  auto badRequest = [&](std::string why) {
    answer.outcome = AdmissionOutcome::BadRequest;
    answer.httpStatus = 400;
    answer.reason = why;
    answer.body = "not an admission.k8s.io/v1 AdmissionReview: " + why + "\n";
    return answer;
  };
  if (!review.isObject()) return badRequest("body is not a JSON object");
  const std::string apiVersion(stringMember(review, "apiVersion"));
  if (stringMember(review, "kind") != "AdmissionReview") return badRequest("kind: expected AdmissionReview");
  if (apiVersion != kAdmissionV1 && apiVersion != kAdmissionV1beta1)
    return badRequest("apiVersion: expected admission.k8s.io/v1");
  const std::optional<JsonValue> request = review.member("request");
  if (!request || !request->isObject()) return badRequest("request: missing");
  const std::string_view uid = stringMember(*request, "uid");
  if (uid.empty()) return badRequest("request.uid: missing");
  answer.uid = uid;

  auto allowUntouched = [&](AdmissionOutcome outcome, std::string why) {
    answer.outcome = outcome;
    answer.reason = std::move(why);
    answer.body = reviewResponse(apiVersion, answer.uid, nullptr);
    return answer;
  };

  try {
    if (auto dry = request->member("dryRun"); dry && dry->boolean()) answer.dryRun = *dry->boolean();
    const std::string ns(stringMember(*request, "namespace"));
    const std::optional<JsonValue> kind = request->member("kind");
    const std::string operation(stringMember(*request, "operation"));
    const std::string_view subResource = stringMember(*request, "subResource");
    answer.pod = ns + "/" + std::string(stringMember(*request, "name"));

    if (operation != "CREATE") return allowUntouched(AdmissionOutcome::Skipped, "operation " + operation);
    if (!kind || stringMember(*kind, "kind") != "Pod" || stringMember(*kind, "group") != "" ||
        stringMember(*kind, "version") != "v1" || !subResource.empty())
      return allowUntouched(AdmissionOutcome::Skipped, "not a core/v1 Pod");
    if (isExcludedNamespace(input.settings, ns))
      return allowUntouched(AdmissionOutcome::Skipped, "namespace " + ns + " is excluded");

    const std::optional<JsonValue> object = request->member("object");
    if (!object || !object->isObject())
      return allowUntouched(AdmissionOutcome::Error, "request.object: missing");
    Result<Pod> decoded = decodePod(*object);
    if (!decoded) return allowUntouched(AdmissionOutcome::Error, "request.object." + decoded.error().message);
    Pod& pod = *decoded;
    if (pod.namespace_.empty()) pod.namespace_ = ns;
    answer.pod = pod.key();
    if (isExcludedNamespace(input.settings, pod.namespace_))
      return allowUntouched(AdmissionOutcome::Skipped, "namespace " + pod.namespace_ + " is excluded");
    if (std::string key = ownReservation(pod); !key.empty())
      return reinvoked(pod, key, apiVersion, input, answer);
    if (std::string why = skipReason(pod, input.settings); !why.empty())
      return allowUntouched(AdmissionOutcome::Skipped, std::move(why));
    if (!input.viewSynced) return allowUntouched(AdmissionOutcome::Error, "cluster view not synced yet");

    // Decide and reserve as one step (scoring/placement.h).
    LocalReservationBook book(input.engine, input.state);
    Placement placement = answer.dryRun ? book.decide(pod)
                                        : book.placeAndReserve(pod, answer.uid, input.now + input.settings.reservationTtl);
    answer.nodeCount = placement.nodeCount;
    answer.feasibleCount = placement.feasibleCount;
    answer.reserved = placement.outcome == Placement::Outcome::Reserved;
    answer.accounting = placement.accounting;
    if (answer.reserved) answer.reservation = answer.uid;
    if (placement.outcome == Placement::Outcome::Refused) return allowUntouched(AdmissionOutcome::Error, placement.reason);
    answer.node = placement.node;
    answer.score = placement.score;
    std::string unschedulable = placement.reason;

    const std::optional<JsonValue> metadata = object->member("metadata");
    const std::optional<JsonValue> annotations = metadata ? metadata->member("annotations") : std::nullopt;
    const bool podHasAnnotations = annotations && annotations->isObject();
    std::string patch;
    patch.reserve(512);
    patch += '[';
    if (!answer.node.empty()) {
      addOperation(patch, "/spec/nodeName", answer.node);
      const std::string score = std::to_string(answer.score);
      addAnnotations(patch, podHasAnnotations,
                     {{kAssignedNodeAnnotation, answer.node}, {kReservationAnnotation, answer.uid}, {kScoreAnnotation, score}});
      answer.outcome = AdmissionOutcome::Assigned;
    } else {
      addAnnotations(patch, podHasAnnotations, {{kUnassignedReasonAnnotation, summarize(unschedulable)}});
      if (!input.settings.fallbackSchedulerName.empty())
        addOperation(patch, "/spec/schedulerName", input.settings.fallbackSchedulerName);
      answer.outcome = AdmissionOutcome::Fallback;
      answer.reason = unschedulable;
    }
    patch += ']';
    answer.body = reviewResponse(apiVersion, answer.uid, &patch);
    return answer;
  } catch (const std::exception& e) {
    if (answer.reserved) input.state.update([&](MutableClusterView& view) { view.release(answer.uid); });
    answer.reserved = false;
    answer.node.clear();
    return allowUntouched(AdmissionOutcome::Error, std::string("internal error: ") + e.what());
  }
}

}  // namespace placer
