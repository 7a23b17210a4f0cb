#pragma once
// metav1.Status bodies as the API server writes them (apimachinery
// pkg/api/errors): the same reasons, codes, messages and details.

#include <string>

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

// resource: "pods", "nodes", "pods/binding".
inline nlohmann::json notFound(const std::string& resource, const std::string& name) {
  return statusFailure(404, "NotFound", resource + " \"" + name + "\" not found",
                       {{"name", name}, {"kind", resource}});
}

inline nlohmann::json alreadyExists(const std::string& resource, const std::string& name) {
  return statusFailure(409, "AlreadyExists", resource + " \"" + name + "\" already exists",
                       {{"name", name}, {"kind", resource}});
}

inline nlohmann::json conflict(const std::string& resource, const std::string& name, const std::string& why) {
  return statusFailure(409, "Conflict", "Operation cannot be fulfilled on " + resource + " \"" + name + "\": " + why,
                       {{"name", name}, {"kind", resource}});
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
