#pragma once
// The field table of Pod (model.h): every member once, with the JSON field it
// comes from and whether it belongs to the pod's scheduling shape.
//
// The scheduling shape is what a plugin may read of the incoming pod. The
// decision cache (decision_cache.h) reuses a decision only for a pod equal to
// it in every shape field, so a field a plugin reads must be `Shape`, or two
// pods that differ in it would share a decision. Identity, status and
// bookkeeping fields are `NotShape` (replicas of one Deployment differ in them).
//
// A member added to Pod without a row here fails to compile (the count below),
// and the row decides the cache key. README "Adding a field a plugin reads"
// lists the other steps (declare, decode, read).

#include <cstddef>
#include <string_view>
#include <tuple>

#include "scoring/model.h"

namespace placer {

enum class FieldRole : bool { NotShape, Shape };

template <class T, class M>
struct FieldOf {
  M T::*member;
  std::string_view json;  // where decodePod reads it (or what it is derived from)
  FieldRole role;
};

template <class T, class M>
constexpr FieldOf<T, M> field(M T::*member, std::string_view json, FieldRole role) {
  return {member, json, role};
}

inline constexpr auto kPodFields = std::tuple{
    // Identity: replicas differ in these; no plugin reads them.
    field(&Pod::name, "metadata.name", FieldRole::NotShape),
    field(&Pod::generateName, "metadata.generateName", FieldRole::NotShape),
    field(&Pod::uid, "metadata.uid", FieldRole::NotShape),
    field(&Pod::labels, "metadata.labels", FieldRole::NotShape),  // read by the topology plugins, which are never cached
    field(&Pod::annotations, "metadata.annotations (placer.io/ only)", FieldRole::NotShape),
    field(&Pod::ownerKind, "metadata.ownerReferences[controller].kind", FieldRole::NotShape),
    field(&Pod::ownerApiVersion, "metadata.ownerReferences[controller].apiVersion", FieldRole::NotShape),
    field(&Pod::ownerName, "metadata.ownerReferences[controller].name", FieldRole::NotShape),
    field(&Pod::terminating, "metadata.deletionTimestamp", FieldRole::NotShape),
    // The scheduling shape.
    field(&Pod::namespace_, "metadata.namespace", FieldRole::Shape),
    field(&Pod::nodeName, "spec.nodeName", FieldRole::Shape),
    field(&Pod::schedulerName, "spec.schedulerName", FieldRole::Shape),
    field(&Pod::nodeSelector, "spec.nodeSelector", FieldRole::Shape),
    field(&Pod::nodeAffinity, "spec.affinity.nodeAffinity", FieldRole::Shape),
    field(&Pod::podAffinity, "spec.affinity.podAffinity", FieldRole::Shape),
    field(&Pod::podAntiAffinity, "spec.affinity.podAntiAffinity", FieldRole::Shape),
    field(&Pod::topologySpreadConstraints, "spec.topologySpreadConstraints", FieldRole::Shape),
    field(&Pod::tolerations, "spec.tolerations", FieldRole::Shape),
    field(&Pod::containers, "spec.containers", FieldRole::Shape),
    field(&Pod::initContainers, "spec.initContainers", FieldRole::Shape),
    field(&Pod::overhead, "spec.overhead", FieldRole::Shape),
    field(&Pod::podLevelRequests, "spec.resources.requests", FieldRole::Shape),
    field(&Pod::priority, "spec.priority", FieldRole::Shape),
    field(&Pod::schedulingGates, "spec.schedulingGates", FieldRole::Shape),
    field(&Pod::resourceClaims, "spec.resourceClaims", FieldRole::Shape),
    field(&Pod::hasPvcVolume, "spec.volumes[].persistentVolumeClaim", FieldRole::Shape),
    field(&Pod::hasEphemeralVolume, "spec.volumes[].ephemeral", FieldRole::Shape),
    // Derived from the shape (resourcehelper.PodRequests); compared too, cheaply.
    field(&Pod::requests, "derived: containers, initContainers, overhead, spec.resources", FieldRole::Shape),
    field(&Pod::nonZeroRequests, "derived: containers, initContainers, overhead", FieldRole::Shape),
    field(&Pod::hostPorts, "derived: containers[].ports, initContainers[].ports", FieldRole::Shape),
    // Status: where the pod is in its life, not how it schedules.
    field(&Pod::phase, "status.phase", FieldRole::NotShape),
    field(&Pod::nominatedNodeName, "status.nominatedNodeName", FieldRole::NotShape),
    field(&Pod::statusReason, "status.reason", FieldRole::NotShape),
    field(&Pod::statusMessage, "status.message", FieldRole::NotShape),
    field(&Pod::resizeInfeasible, "status.conditions[PodResizePending].reason", FieldRole::NotShape),
};

namespace field_count {
// The number of members of an aggregate: the most initializers T{...} takes
// (each converts to any member type).
struct AnyMember {
  template <class M>
  operator M&() const&&;  // NOLINT: implicit on purpose; never defined (unevaluated only)
};
template <class T, class... A>
consteval size_t of() {
  if constexpr (requires { T{A{}..., AnyMember{}}; })
    return of<T, A..., AnyMember>();
  else
    return sizeof...(A);
}
}  // namespace field_count

static_assert(field_count::of<Pod>() == std::tuple_size_v<decltype(kPodFields)>,
              "a Pod member has no row in kPodFields (scoring/pod_fields.h): add one and choose its role");

// f(const FieldOf<Pod, M>&) for every row, in table order.
template <class F>
constexpr void forEachPodField(F&& f) {
  std::apply([&](const auto&... row) { (f(row), ...); }, kPodFields);
}

}  // namespace placer
