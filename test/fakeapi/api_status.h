#pragma once
// metav1.Status bodies as the API server writes them (apimachinery
// pkg/api/errors): the same reasons, codes, messages and details.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace placer::fakeapi {

inline nlohmann::json statusFailure(int code, const std::string& reason, const std::string& message,
                                    nlohmann::json details = nullptr) {
  nlohmann::json s = {{"kind", "Status"},     {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                      {"status", "Failure"},  {"message", message}, {"code", code}};
  if (!reason.empty()) s["reason"] = reason;
  if (!details.is_null()) s["details"] = std::move(details);
  return s;
}

inline nlohmann::json statusSuccess(int code = 201) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
          {"status", "Success"}, {"code", code}};
}

// The details of a Status about one object: {name, group (omitted when core),
// kind: the resource}, as metav1.StatusDetails serializes.
inline nlohmann::json objectDetails(const std::string& resource, const std::string& name,
                                    const std::string& group = "") {
  nlohmann::json d = {{"name", name}, {"kind", resource}};
  if (!group.empty()) d["group"] = group;
  return d;
}

// schema.GroupResource.String(): "pods", "leases.coordination.k8s.io".
inline std::string qualifiedName(const std::string& resource, const std::string& group) {
  return group.empty() ? resource : resource + "." + group;
}

// resource: "pods", "nodes", "pods/binding", "leases"; group "" for core.
inline nlohmann::json notFound(const std::string& resource, const std::string& name, const std::string& group = "") {
  return statusFailure(404, "NotFound", qualifiedName(resource, group) + " \"" + name + "\" not found",
                       objectDetails(resource, name, group));
}

inline nlohmann::json alreadyExists(const std::string& resource, const std::string& name,
                                    const std::string& group = "") {
  return statusFailure(409, "AlreadyExists", qualifiedName(resource, group) + " \"" + name + "\" already exists",
                       objectDetails(resource, name, group));
}

inline nlohmann::json conflict(const std::string& resource, const std::string& name, const std::string& why,
                               const std::string& group = "") {
  return statusFailure(409, "Conflict",
                       "Operation cannot be fulfilled on " + qualifiedName(resource, group) + " \"" + name +
                           "\": " + why,
                       objectDetails(resource, name, group));
}

// A Success Status for a DELETE whose registry does not return the object.
inline nlohmann::json deletedStatus(const std::string& resource, const std::string& name, const std::string& group,
                                    const std::string& uid) {
  nlohmann::json s = statusSuccess(200);
  s.erase("code");
  s["details"] = objectDetails(resource, name, group);
  if (!uid.empty()) s["details"]["uid"] = uid;
  return s;
}

// One field.Error: "eventTime: Required value", "type: Invalid value: \"\": has invalid value: X".
struct FieldError {
  std::string field;
  std::string reason;  // CauseType: FieldValueRequired, FieldValueInvalid
  std::string body;    // "Required value", "Invalid value: 0x0: must be specified for an update"
};

// NewInvalid: `<Kind.group> "<name>" is invalid: <errors>`, several errors in
// brackets as utilerrors.Aggregate prints them. qualifiedKind: "Event.events.k8s.io".
inline nlohmann::json invalidFields(const std::string& qualifiedKind, const std::string& detailsKind,
                                    const std::string& group, const std::string& name,
                                    const std::vector<FieldError>& errors) {
  std::string joined;
  nlohmann::json causes = nlohmann::json::array();
  for (const auto& e : errors) {
    if (!joined.empty()) joined += ", ";
    joined += e.field + ": " + e.body;
    causes.push_back({{"reason", e.reason}, {"message", e.body}, {"field", e.field}});
  }
  if (errors.size() > 1) joined = "[" + joined + "]";
  nlohmann::json details = objectDetails(detailsKind, name, group);
  details["causes"] = std::move(causes);
  return statusFailure(422, "Invalid", qualifiedKind + " \"" + name + "\" is invalid: " + joined, std::move(details));
}

inline nlohmann::json expired(const std::string& message) { return statusFailure(410, "Expired", message); }

inline nlohmann::json gone(const std::string& message) { return statusFailure(410, "Gone", message); }

inline nlohmann::json internalError(const std::string& cause) {
  return statusFailure(500, "InternalError", "Internal error occurred: " + cause,
                       {{"causes", nlohmann::json::array({{{"message", cause}}})}});
}

inline nlohmann::json badRequest(const std::string& message) { return statusFailure(400, "BadRequest", message); }

inline nlohmann::json unauthorized() { return statusFailure(401, "Unauthorized", "Unauthorized"); }

inline nlohmann::json methodNotAllowed() {
  return statusFailure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

inline nlohmann::json tooManyRequests(int retryAfterSeconds) {
  return statusFailure(429, "TooManyRequests", "Too many requests, please try again later.",
                       {{"retryAfterSeconds", retryAfterSeconds}});
}

inline nlohmann::json serviceUnavailable(int retryAfterSeconds) {
  return statusFailure(503, "ServiceUnavailable", "the server is currently unable to handle the request",
                       {{"retryAfterSeconds", retryAfterSeconds}});
}

// 422: field errors ("spec.containers: Required value").
inline nlohmann::json invalid(const std::string& kind, const std::string& name, const std::string& field,
                              const std::string& what) {
  return statusFailure(422, "Invalid", kind + " \"" + name + "\" is invalid: " + field + ": " + what,
                       {{"name", name},
                        {"kind", kind},
                        {"causes", nlohmann::json::array({{{"reason", "FieldValueRequired"},
                                                           {"message", what},
                                                           {"field", field}}})}});
}

}  // namespace placer::fakeapi
