#pragma once
// The admission decision: an AdmissionReview (admission.k8s.io/v1) in, an
// AdmissionReview out, as a pure function of (review, engine, cluster state,
// settings, clock). The HTTP handler around it only decodes and encodes.
//
// Never blocks pod creation: every review that is an AdmissionReview at all is
// answered allowed:true — with a patch writing spec.nodeName when a node was
// chosen, without one when placer declines, cannot decode the pod, or its view
// is not complete. Only a body that is not an AdmissionReview gets HTTP 400.
//
// Decide and reserve are one step inside ClusterState::update, so concurrent
// admissions never overcommit a node; the reservation is keyed by the
// admission request uid (the pod may have neither name nor uid yet).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/json_value.h"
#include "scoring/placement.h"

namespace placer {

inline constexpr std::string_view kAssignedNodeAnnotation = "placer.io/assigned-node";
inline constexpr std::string_view kScoreAnnotation = "placer.io/score";
inline constexpr std::string_view kUnassignedReasonAnnotation = "placer.io/unassigned-reason";
inline constexpr std::string_view kSkipLabel = "placer.io/skip";
// The most placer writes into one annotation: the API server refuses a pod
// whose annotations exceed 256 KiB, which would fail its creation.
inline constexpr size_t kMaxAnnotationBytes = 4096;

// `text` if it fits in `limit` bytes; else its first list entries (", "
// separated, as kube-scheduler's "0/N nodes are available: ..." message)
// followed by ", and N more.", cut on a UTF-8 boundary, at most `limit` bytes.
std::string summarize(std::string_view text, size_t limit = kMaxAnnotationBytes);

enum class AdmissionOutcome : uint8_t {
  Assigned,  // patch writes spec.nodeName (and a reservation was made unless dry-run)
  Fallback,  // no feasible node: left to kube-scheduler (or the fallback scheduler)
  Skipped,   // not placer's to place (other operation, nodeName set, excluded namespace, ...)
  Error,     // undecodable pod, cold cache, internal failure: allowed without patch
  BadRequest // not an AdmissionReview at all: HTTP 400
};
std::string_view toString(AdmissionOutcome outcome);

struct AdmissionInput {
  const Engine& engine;
  ClusterState& state;
  const PlacerSettings& settings;
  std::chrono::steady_clock::time_point now;  // reservation expiry is now + settings.reservationTtl
  bool viewSynced = true;                     // false: cold cache, nothing is placed
};

struct AdmissionAnswer {
  AdmissionOutcome outcome = AdmissionOutcome::Error;
  int httpStatus = 200;
  std::string body;         // the AdmissionReview response, or the 400 message
  std::string reason;       // why skipped / error / fallback, for logs and metrics
  std::string pod;          // "namespace/name" (generateName when no name)
  std::string uid;          // request.uid
  std::string node;         // chosen node, if any
  int64_t score = 0;
  size_t feasibleCount = 0;
  size_t nodeCount = 0;
  bool dryRun = false;
  bool reserved = false;
  std::string reservation;  // the reservation's id when reserved: request.uid, or the first call's when reinvoked
  // The chosen node's accounting when the reservation was made (reserved only).
  Placement::NodeAccounting accounting;
};

// `body` is the raw request body.
AdmissionAnswer reviewAdmission(std::string_view body, const AdmissionInput& input);
// The same from an already parsed document (simdjson's DOM, scoring/json_value.h).
AdmissionAnswer reviewAdmissionDocument(const JsonValue& review, const AdmissionInput& input);

// Why the webhook leaves `pod` alone under `settings` (an excluded namespace,
// spec.nodeName set, another scheduler, scheduling gates, volumes to bind, the
// opt-out label), or empty when it places it.
std::string whyLeftAlone(const Pod& pod, const PlacerSettings& settings);

// The answer when every worker is busy and the queue is full: the review is
// allowed unchanged (placer never blocks a creation; kube-scheduler takes the
// pod), echoing request.uid. Read without building the document, stopping as
// soon as apiVersion and request.uid are known. A body that is not an
// AdmissionReview gets a 400, as on /mutate.
AdmissionAnswer shedAdmission(std::string_view body);

// JSON-pointer escaping of one reference token (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string escapeJsonPointer(std::string_view token);

}  // namespace placer
