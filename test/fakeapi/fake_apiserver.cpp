#include "test/fakeapi/fake_apiserver.h"

#include <limits>

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/ThreadPool.h>
#include <Poco/URI.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <istream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "certs/x509.h"
#include "test/fakeapi/admission.h"
#include "test/fakeapi/api_status.h"
#include "test/fakeapi/selectors.h"

namespace placer::fakeapi {

using nlohmann::json;

namespace {

// The kind table, in Kind order. Strategy flags as upstream's registries set
// them (pkg/registry/<group>/<resource>/strategy.go and storage.go).
//   kind, group, version, apiVersion, resource, kind name, list kind,
//   namespaced, hasStatus, createOnUpdate, unconditionalUpdate, returnDeleted, generation
constexpr KindInfo kKinds[] = {
    {Kind::Node, "", "v1", "v1", "nodes", "Node", "NodeList", false, true, false, true, true, false},
    {Kind::Pod, "", "v1", "v1", "pods", "Pod", "PodList", true, true, false, true, true, false},
    {Kind::Namespace, "", "v1", "v1", "namespaces", "Namespace", "NamespaceList", false, true, false, true, true,
     false},
    {Kind::Service, "", "v1", "v1", "services", "Service", "ServiceList", true, true, true, true, true, false},
    {Kind::Endpoints, "", "v1", "v1", "endpoints", "Endpoints", "EndpointsList", true, false, true, true, false,
     false},
    {Kind::ReplicationController, "", "v1", "v1", "replicationcontrollers", "ReplicationController",
     "ReplicationControllerList", true, true, false, true, false, true},
    {Kind::Secret, "", "v1", "v1", "secrets", "Secret", "SecretList", true, false, false, true, false, false},
    {Kind::ConfigMap, "", "v1", "v1", "configmaps", "ConfigMap", "ConfigMapList", true, false, false, true, false,
     false},
    {Kind::ReplicaSet, "apps", "v1", "apps/v1", "replicasets", "ReplicaSet", "ReplicaSetList", true, true, false,
     true, false, true},
    {Kind::StatefulSet, "apps", "v1", "apps/v1", "statefulsets", "StatefulSet", "StatefulSetList", true, true,
     false, true, false, true},
    {Kind::Deployment, "apps", "v1", "apps/v1", "deployments", "Deployment", "DeploymentList", true, true, false,
     true, false, true},
    {Kind::Lease, "coordination.k8s.io", "v1", "coordination.k8s.io/v1", "leases", "Lease", "LeaseList", true,
     false, true, false, false, false},
    {Kind::Event, "events.k8s.io", "v1", "events.k8s.io/v1", "events", "Event", "EventList", true, false, true,
     true, false, false},
    {Kind::EndpointSlice, "discovery.k8s.io", "v1", "discovery.k8s.io/v1", "endpointslices", "EndpointSlice",
     "EndpointSliceList", true, false, false, true, false, false},
    {Kind::MutatingWebhookConfiguration, "admissionregistration.k8s.io", "v1", "admissionregistration.k8s.io/v1",
     "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", "MutatingWebhookConfigurationList", false,
     false, false, false, false, false},
};
static_assert(std::size(kKinds) == kKindCount);

constexpr bool kindsInOrder() {
  for (std::size_t i = 0; i < std::size(kKinds); ++i)
    if (static_cast<std::size_t>(kKinds[i].kind) != i) return false;
  return true;
}
static_assert(kindsInOrder(), "kKinds must list the kinds in Kind order");

}  // namespace

const KindInfo& kindInfo(Kind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

std::span<const KindInfo> allKinds() { return kKinds; }

std::string qualifiedResource(Kind kind) {
  const KindInfo& k = kindInfo(kind);
  return qualifiedName(std::string(k.resource), std::string(k.group));
}

std::optional<Kind> kindForResource(std::string_view group, std::string_view version, std::string_view resource) {
  for (const KindInfo& k : kKinds)
    if (k.group == group && k.version == version && k.resource == resource) return k.kind;
  return std::nullopt;
}

std::optional<Kind> kindForType(std::string_view apiVersion, std::string_view kindName) {
  for (const KindInfo& k : kKinds)
    if (k.apiVersion == apiVersion && k.kindName == kindName) return k.kind;
  return std::nullopt;
}

std::string_view kindName(Kind kind) { return kindInfo(kind).kindName; }

std::string ApiResponse::message() const {
  if (body.is_object() && body.value("kind", "") == "Status" && body.contains("message") &&
      body["message"].is_string())
    return body["message"].get<std::string>();
  return "";
}

namespace {

// genericregistry.OptimisticLockErrorMsg.
const char* kModifiedMessage() {
  return "the object has been modified; please apply your changes to the latest version and try again";
}

std::string resourceName(Kind kind) { return std::string(kindInfo(kind).resource); }
std::string groupName(Kind kind) { return std::string(kindInfo(kind).group); }
bool namespaced(Kind kind) { return kindInfo(kind).namespaced; }

// The Status bodies of upstream's registry for one object of `kind`.
json notFoundStatus(Kind kind, const std::string& name) { return notFound(resourceName(kind), name, groupName(kind)); }
json alreadyExistsStatus(Kind kind, const std::string& name) {
  return alreadyExists(resourceName(kind), name, groupName(kind));
}
json conflictStatus(Kind kind, const std::string& name) {
  return conflict(resourceName(kind), name, kModifiedMessage(), groupName(kind));
}

const char* const kNamespaceNameLabel = "kubernetes.io/metadata.name";

bool present(const json& object, const char* field) {
  auto it = object.find(field);
  return it != object.end() && !it->is_null() && !(it->is_string() && it->get<std::string>().empty());
}

// ValidateEventCreate for events.k8s.io/v1 (pkg/apis/core/validation/events.go):
// the legacy checks, then the strict ones, in upstream's order and wording.
// The internal field names are upstream's (message for note).
std::vector<FieldError> validateEventCreate(const json& event) {
  std::vector<FieldError> errors;
  auto required = [&](const char* field) { errors.push_back({field, "FieldValueRequired", "Required value"}); };
  auto tooLong = [&](const char* field, std::size_t limit) {
    errors.push_back({field, "FieldValueInvalid",
                      "Invalid value: \"\": can have at most " + std::to_string(limit) + " characters"});
  };
  auto text = [&](const char* field) { return event.contains(field) && event[field].is_string() ? event[field].get<std::string>() : std::string(); };
  const bool hasEventTime = present(event, "eventTime");
  if (hasEventTime) {
    if (text("reportingController").empty()) required("reportingController");
    if (text("reportingInstance").empty()) required("reportingInstance");
    if (text("reportingInstance").size() > 128) tooLong("reportingInstance", 128);
    if (text("action").empty()) required("action");
    if (text("action").size() > 128) tooLong("action", 128);
    if (text("reason").empty()) required("reason");
    if (text("reason").size() > 128) tooLong("reason", 128);
    if (text("note").size() > 1024) tooLong("message", 1024);
  } else {
    required("eventTime");
  }
  const std::string type = text("type");
  if (type != "Normal" && type != "Warning")
    errors.push_back({"type", "FieldValueInvalid", "Invalid value: \"\": has invalid value: " + type});
  for (const char* deprecated : {"deprecatedFirstTimestamp", "deprecatedLastTimestamp"})
    if (present(event, deprecated))
      errors.push_back({std::string(deprecated) == "deprecatedFirstTimestamp" ? "firstTimestamp" : "lastTimestamp",
                        "FieldValueInvalid", "Invalid value: \"\": needs to be unset"});
  if (event.contains("deprecatedCount") && event["deprecatedCount"].is_number() && event["deprecatedCount"] != 0)
    errors.push_back({"count", "FieldValueInvalid", "Invalid value: \"\": needs to be unset"});
  return errors;
}

// The strategy's PrepareForCreate (and, for events.k8s.io Events created over
// HTTP, its validation). Returns a refusal or nothing.
std::optional<ApiResponse> prepareForCreate(Kind kind, json& object, bool fromApi) {
  json& meta = object["metadata"];
  const KindInfo& info = kindInfo(kind);
  if (info.tracksGeneration && (fromApi || !meta.contains("generation"))) meta["generation"] = 1;
  switch (kind) {
    case Kind::Namespace: {
      if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
      meta["labels"][kNamespaceNameLabel] = meta["name"];
      json& spec = object["spec"];
      if (!spec.is_object()) spec = json::object();
      json& finalizers = spec["finalizers"];
      if (!finalizers.is_array()) finalizers = json::array();
      if (std::find(finalizers.begin(), finalizers.end(), json("kubernetes")) == finalizers.end())
        finalizers.push_back("kubernetes");
      if (fromApi || !object.contains("status") || !object["status"].is_object()) object["status"] = json::object();
      if (!object["status"].contains("phase")) object["status"]["phase"] = "Active";
      break;
    }
    case Kind::Service:
      if (fromApi) object["status"] = {{"loadBalancer", json::object()}};
      break;
    case Kind::ReplicationController:
    case Kind::ReplicaSet:
      if (fromApi) object["status"] = {{"replicas", 0}};
      break;
    case Kind::StatefulSet:
      if (fromApi) object["status"] = {{"replicas", 0}, {"availableReplicas", 0}};
      break;
    case Kind::Deployment:
      if (fromApi) object["status"] = json::object();
      break;
    case Kind::Event:
      if (fromApi) {
        auto errors = validateEventCreate(object);
        if (!errors.empty())
          return ApiResponse{422, invalidFields("Event.events.k8s.io", "Event", "events.k8s.io",
                                                meta.value("name", ""), errors)};
      }
      break;
    default:
      break;
  }
  return std::nullopt;
}

// The strategy's PrepareForUpdate for what every kind shares here: a
// Namespace keeps its name label; generation follows spec changes.
void prepareForUpdate(Kind kind, json& object, const json& old) {
  json& meta = object["metadata"];
  if (kind == Kind::Namespace) {
    if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
    meta["labels"][kNamespaceNameLabel] = meta["name"];
  }
  if (kindInfo(kind).tracksGeneration) {
    const json& oldMeta = old["metadata"];
    int64_t generation = oldMeta.contains("generation") && oldMeta["generation"].is_number_integer()
                             ? oldMeta["generation"].get<int64_t>()
                             : 1;
    if (object.value("spec", json()) != old.value("spec", json())) ++generation;
    meta["generation"] = generation;
  }
}


// One stored version of an object. Immutable once built; shared between the
// store and the event history. The JSON text is kept split around the
// resourceVersion so that rendering is two appends:
//   head + rv + tail, head = '{' [typeMeta ','] '"metadata":{"resourceVersion":"'
struct Object {
  Kind kind = Kind::Pod;
  uint64_t rv = 0;
  std::string ns;
  std::string name;
  std::string uid;
  std::string nodeName;
  std::string phase;
  std::string schedulerName;
  bool unschedulable = false;
  bool deleting = false;
  LabelPairs labels;
  std::string tail;

  FieldValues fields() const { return {name, ns, nodeName, phase, schedulerName, unschedulable}; }
};
using ObjectPtr = std::shared_ptr<const Object>;

std::string objectKey(Kind kind, const std::string& ns, const std::string& name) {
  return namespaced(kind) ? ns + "/" + name : name;
}

std::string stringAt(const json& obj, const char* a, const char* b) {
  auto i = obj.find(a);
  if (i == obj.end() || !i->is_object()) return "";
  auto j = i->find(b);
  return j != i->end() && j->is_string() ? j->get<std::string>() : "";
}

// Builds the stored form. `object` is consumed.
std::shared_ptr<Object> makeObject(Kind kind, json object, uint64_t rv) {
  auto o = std::make_shared<Object>();
  o->kind = kind;
  o->rv = rv;
  object.erase("apiVersion");
  object.erase("kind");
  json meta = object.contains("metadata") && object["metadata"].is_object() ? std::move(object["metadata"])
                                                                             : json::object();
  object.erase("metadata");
  meta.erase("resourceVersion");
  o->name = meta.value("name", "");
  o->ns = namespaced(kind) ? meta.value("namespace", "") : "";
  o->uid = meta.value("uid", "");
  o->deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto l = meta.find("labels"); l != meta.end() && l->is_object())
    for (const auto& [k, v] : l->items())
      if (v.is_string()) o->labels.emplace_back(k, v.get<std::string>());
  o->nodeName = stringAt(object, "spec", "nodeName");
  o->schedulerName = stringAt(object, "spec", "schedulerName");
  o->phase = stringAt(object, "status", "phase");
  if (auto s = object.find("spec"); s != object.end() && s->is_object()) {
    auto u = s->find("unschedulable");
    o->unschedulable = u != s->end() && u->is_boolean() && u->get<bool>();
  }
  const std::string metaText = meta.dump();
  const std::string restText = object.dump();
  o->tail.reserve(metaText.size() + restText.size() + 4);
  o->tail += '"';
  o->tail += metaText.size() > 2 ? "," + metaText.substr(1) : "}";
  o->tail += restText.size() > 2 ? "," + restText.substr(1) : "}";
  return o;
}

// '{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",' for each kind.
const std::string& typeMetaPrefix(Kind kind) {
  static const auto prefixes = [] {
    std::array<std::string, kKindCount> p;
    for (const KindInfo& k : kKinds)
      p[static_cast<std::size_t>(k.kind)] =
          R"({"kind":")" + std::string(k.kindName) + R"(","apiVersion":")" + std::string(k.apiVersion) + R"(",)";
    return p;
  }();
  return prefixes[static_cast<std::size_t>(kind)];
}

void appendObject(std::string& out, const Object& o, bool withType, uint64_t rv = 0) {
  if (withType) {
    out += typeMetaPrefix(o.kind);
  } else {
    out += '{';
  }
  out += R"("metadata":{"resourceVersion":")";
  out += std::to_string(rv ? rv : o.rv);
  out += o.tail;
}

std::string renderObject(const Object& o, bool withType, uint64_t rv = 0) {
  std::string s;
  s.reserve(o.tail.size() + 96);
  appendObject(s, o, withType, rv);
  return s;
}

json parseObject(const Object& o) { return json::parse(renderObject(o, true)); }

ObjectPtr withRv(const ObjectPtr& o, uint64_t rv) {
  auto copy = std::make_shared<Object>(*o);
  copy->rv = rv;
  return copy;
}

enum class EventType { Added, Modified, Deleted };

struct Event {
  EventType type;
  uint64_t rv;
  Kind kind;
  std::string key;
  ObjectPtr object;  // Added/Modified: the new object; Deleted: the last state with the deletion rv
  ObjectPtr prev;    // Modified/Deleted: the state before
};

std::string base64UrlNoPad(std::string_view bytes) {
  std::string s = base64Encode(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

Result<std::string> base64UrlDecode(std::string s) {
  for (char& c : s) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (s.size() % 4) s += '=';
  return base64Decode(s);
}

// storage.EncodeContinue: {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}.
std::string encodeContinue(int64_t rv, const std::string& startKey) {
  json token = {{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", startKey}};
  return base64UrlNoPad(token.dump());
}

struct ContinueToken {
  int64_t rv = 0;
  std::string start;
};

Result<ContinueToken> decodeContinue(const std::string& token) {
  auto bytes = base64UrlDecode(token);
  if (!bytes) return Error{"continue key is not valid: " + bytes.error().message};
  try {
    json j = json::parse(*bytes);
    if (!j.is_object() || j.value("v", "") != "meta.k8s.io/v1")
      return Error{"continue key is not valid: server does not recognize this encoded key"};
    ContinueToken t;
    t.rv = j.at("rv").get<int64_t>();
    t.start = j.at("start").get<std::string>();
    if (t.rv == 0) return Error{"continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"};
    return t;
  } catch (const std::exception& e) {
    return Error{std::string("continue key is not valid: ") + e.what()};
  }
}

struct Filter {
  Kind kind = Kind::Pod;
  std::string ns;  // "" = all namespaces
  LabelSelectorQuery labels;
  FieldSelectorQuery fields;

  bool matches(const Object& o) const {
    if (o.kind != kind) return false;
    if (!ns.empty() && o.ns != ns) return false;
    return labels.matches(o.labels) && fields.matches(o.fields());
  }
  bool hasSelectors() const { return !labels.empty() || !fields.empty(); }
};

struct WatchState {
  bool drop = false;
  bool timeout = false;
  bool bookmark = false;
  bool allowBookmarks = false;
};

std::string queryParam(const Poco::URI::QueryParameters& params, const std::string& name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return "";
}

bool truthy(const std::string& v) { return v == "1" || v == "true" || v == "True"; }

std::vector<std::string> splitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '/'))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// What follows the metadata in a bookmark's object: the kind's zero value as
// Go's encoding/json writes it (fields without omitempty), as upstream sends.
std::string_view zeroValueTail(Kind kind) {
  switch (kind) {
    case Kind::Pod:
      return R"("spec":{"containers":null},"status":{})";
    case Kind::Node:
      return R"("spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}})";
    case Kind::Namespace:
      return R"("spec":{},"status":{})";
    case Kind::Service:
      return R"("spec":{},"status":{"loadBalancer":{}})";
    case Kind::ReplicationController:
      return R"("spec":{},"status":{"replicas":0})";
    case Kind::ReplicaSet:
      return R"("spec":{"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}}},"status":{"replicas":0})";
    case Kind::StatefulSet:
      return R"("spec":{"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}},"serviceName":"","updateStrategy":{}},"status":{"replicas":0,"availableReplicas":0})";
    case Kind::Deployment:
      return R"("spec":{"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}},"strategy":{}},"status":{})";
    case Kind::Lease:
      return R"("spec":{})";
    case Kind::Event:
      return R"("eventTime":null,"reportingController":"","reportingInstance":"","action":"","reason":"","regarding":{},"type":"")";
    case Kind::EndpointSlice:
      return R"("addressType":"","endpoints":null)";
    case Kind::Endpoints:
    case Kind::Secret:
    case Kind::ConfigMap:
    case Kind::MutatingWebhookConfiguration:
      return "";
  }
  return "";
}

std::string bookmarkFrame(Kind kind, uint64_t rv) {
  std::string s = R"({"type":"BOOKMARK","object":)";
  s += typeMetaPrefix(kind);
  s += R"("metadata":{"resourceVersion":")";
  s += std::to_string(rv);
  s += R"(","creationTimestamp":null})";
  const std::string_view tail = zeroValueTail(kind);
  if (!tail.empty()) {
    s += ',';
    s += tail;
  }
  s += "}}\n";
  return s;
}

// The fields a fieldSelector may name, per kind (upstream's GetAttrs /
// field label conversion funcs; the generic ones for every other kind).
const std::vector<std::string>& selectableFields(Kind kind) {
  static const std::vector<std::string> pod = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                               "status.phase", "spec.schedulerName"};
  static const std::vector<std::string> node = {"metadata.name", "spec.unschedulable"};
  static const std::vector<std::string> ns = {"metadata.name", "status.phase"};
  static const std::vector<std::string> namespacedGeneric = {"metadata.name", "metadata.namespace"};
  static const std::vector<std::string> clusterGeneric = {"metadata.name"};
  switch (kind) {
    case Kind::Pod:
      return pod;
    case Kind::Node:
      return node;
    case Kind::Namespace:
      return ns;
    default:
      return namespaced(kind) ? namespacedGeneric : clusterGeneric;
  }
}

// Discovery documents built from the kind table.
json apiVersions(const std::string& serverAddress) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", serverAddress}}})}};
}

json apiGroupList() {
  json groups = json::array();
  std::set<std::string> seen;
  for (const KindInfo& k : kKinds) {
    if (k.group.empty() || !seen.insert(std::string(k.group)).second) continue;
    json version = {{"groupVersion", k.apiVersion}, {"version", k.version}};
    groups.push_back({{"name", k.group}, {"versions", {version}}, {"preferredVersion", version}});
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json> apiResourceList(const std::string& group, const std::string& version) {
  json resources = json::array();
  std::string groupVersion;
  for (const KindInfo& k : kKinds) {
    if (k.group != group || k.version != version) continue;
    groupVersion = std::string(k.apiVersion);
    std::string singular(k.kindName);
    std::transform(singular.begin(), singular.end(), singular.begin(), [](unsigned char c) { return std::tolower(c); });
    resources.push_back({{"name", k.resource},
                         {"singularName", singular},
                         {"namespaced", k.namespaced},
                         {"kind", k.kindName},
                         {"verbs", {"create", "delete", "get", "list", "patch", "update", "watch"}}});
    if (k.hasStatus)
      resources.push_back({{"name", std::string(k.resource) + "/status"},
                           {"singularName", ""},
                           {"namespaced", k.namespaced},
                           {"kind", k.kindName},
                           {"verbs", {"get", "patch", "update"}}});
    if (k.kind == Kind::Pod)
      resources.push_back({{"name", "pods/binding"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"kind", "Binding"},
                           {"verbs", {"create"}}});
  }
  if (groupVersion.empty()) return std::nullopt;
  return json{{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", groupVersion},
              {"resources", resources}};
}

std::string errorFrame(const json& status) { return R"({"type":"ERROR","object":)" + status.dump() + "}\n"; }

}  // namespace

// ---------------------------------------------------------------------------

class FakeApiServer::Impl {
 public:
  explicit Impl(Options options) : options_(std::move(options)), rng_(std::random_device{}()) {
    tokens_.insert(options_.tokens.begin(), options_.tokens.end());
    authRequired_ = !tokens_.empty();
  }

  ~Impl() { stop(); }

  Outcome start();
  void stop();

  // --- state -------------------------------------------------------------
  // wantBody=false skips rendering the created object (bulk loads).
  // fromApi: a client's POST (server-set identity, the strategy's
  // PrepareForCreate and validation); otherwise a controller-like direct write.
  ApiResponse createDirect(Kind kind, json object, bool fromApi, const std::string& urlNamespace,
                           bool wantBody = true, bool dryRun = false);
  ApiResponse createPod(json pod, const std::string& urlNamespace, bool dryRun);
  // PUT: optimistic concurrency and create-on-update as the kind's strategy says.
  ApiResponse update(Kind kind, json object, const std::string& ns, const std::string& name, bool statusOnly);
  ApiResponse patch(Kind kind, const std::string& ns, const std::string& name, const json& patch,
                    const std::string& contentType, bool statusOnly);
  // The change answers a refusal (an ApiResponse with the Status) or nothing.
  using Change = std::function<std::optional<ApiResponse>(json&)>;
  ApiResponse mutate(Kind kind, const std::string& ns, const std::string& name, const Change& change);
  ApiResponse remove(Kind kind, const std::string& ns, const std::string& name);
  ApiResponse bind(const std::string& ns, const std::string& name, const json& binding);
  ObjectPtr find(Kind kind, const std::string& ns, const std::string& name) const {
    std::lock_guard lock(mu_);
    return findLocked(kind, ns, name);
  }
  ObjectPtr findLocked(Kind kind, const std::string& ns, const std::string& name) const {
    auto& m = objects_[static_cast<int>(kind)];
    auto it = m.find(objectKey(kind, ns, name));
    return it == m.end() ? nullptr : it->second;
  }
  // What a webhook's namespaceSelector sees for `ns`. Requires mu_.
  LabelPairs namespaceLabelsLocked(const std::string& ns) const {
    LabelPairs labels;
    if (ObjectPtr o = findLocked(Kind::Namespace, "", ns)) labels = o->labels;
    if (std::none_of(labels.begin(), labels.end(), [](const auto& l) { return l.first == kNamespaceNameLabel; }))
      labels.emplace_back(kNamespaceNameLabel, ns);
    return labels;
  }

  // --- HTTP --------------------------------------------------------------
  void handle(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp);
  void serveList(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp, const Filter& filter,
                 const Poco::URI::QueryParameters& q);
  void serveWatch(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp, const Filter& filter,
                  const Poco::URI::QueryParameters& q);
  void record(const std::string& method, const std::string& target, int status, bool watch) {
    std::lock_guard lock(recordMu_);
    if (records_.size() < 200000) records_.push_back({method, target, status, watch});
  }

  // Appends an event and wakes watchers. Requires mu_.
  void commitLocked(Event event) {
    history_.push_back(std::move(event));
    if (options_.historyLimit > 0)
      while (history_.size() > options_.historyLimit) {
        compactedRv_ = history_.front().rv;
        history_.pop_front();
      }
    cv_.notify_all();
  }

  Options options_;
  std::string certDir_;
  bool ownCertDir_ = false;
  std::string caPem_;
  uint16_t port_ = 0;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, ObjectPtr> objects_[kKindCount];
  std::deque<Event> history_;
  uint64_t rv_ = 1;
  uint64_t compactedRv_ = 1;  // watches from an rv below this get 410
  std::set<std::string> tokens_;
  bool authRequired_ = true;  // fixed at start: rotating to no tokens rejects everyone
  std::vector<MutatingWebhook> webhooks_;
  std::set<WatchState*> watches_;
  int failRemaining_ = 0;
  int failStatus_ = 500;
  int failRetryAfter_ = 1;
  std::chrono::milliseconds watchDelay_{0};
  std::mt19937_64 rng_;
  bool stopping_ = false;

  std::mutex recordMu_;
  std::vector<RequestRecord> records_;
  std::atomic<uint64_t> admissionCalls_{0};

  std::unique_ptr<Poco::ThreadPool> threadPool_;
  std::unique_ptr<Poco::Net::HTTPServer> server_;
};

namespace {

class Handler : public Poco::Net::HTTPRequestHandler {
 public:
  explicit Handler(FakeApiServer::Impl& server) : server_(server) {}
  void handleRequest(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp) override {
    server_.handle(req, resp);
  }

 private:
  FakeApiServer::Impl& server_;
};

class HandlerFactory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit HandlerFactory(FakeApiServer::Impl& server) : server_(server) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(const Poco::Net::HTTPServerRequest&) override {
    return new Handler(server_);
  }

 private:
  FakeApiServer::Impl& server_;
};

void sendBody(Poco::Net::HTTPServerResponse& resp, int code, const std::string& body) {
  resp.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(code));
  resp.setContentType("application/json");
  resp.setContentLength(static_cast<std::streamsize>(body.size()));
  resp.send() << body;
}

Outcome writeFile(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Error{"cannot write " + path};
  f << content;
  return f ? Outcome{} : Outcome{Error{"cannot write " + path}};
}

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

Outcome FakeApiServer::Impl::start() {
  std::signal(SIGPIPE, SIG_IGN);
  namespace fs = std::filesystem;
  if (options_.certDir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "fakeapi-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return Error{"cannot create a temporary directory"};
    certDir_ = tmpl;
    ownCertDir_ = true;
  } else {
    certDir_ = options_.certDir;
    std::error_code ec;
    fs::create_directories(certDir_, ec);
  }
  const std::string caFile = certDir_ + "/ca.crt", certFile = certDir_ + "/tls.crt", keyFile = certDir_ + "/tls.key";
  auto existingCa = readFile(caFile);
  if (existingCa && fs::exists(certFile) && fs::exists(keyFile)) {
    caPem_ = *existingCa;
  } else {
    auto ca = certs::generateCa("fake-kube-apiserver-ca", 30, certs::KeyType::EcdsaP256);
    if (!ca) return Error{"generating CA: " + ca.error().message};
    auto serving = certs::generateServingCert(*ca, {"localhost", "kubernetes", "kubernetes.default",
                                                    "kubernetes.default.svc"},
                                              {"127.0.0.1", "::1"}, 30, certs::KeyType::EcdsaP256);
    if (!serving) return Error{"generating serving certificate: " + serving.error().message};
    caPem_ = ca->certificatePem;
    for (auto [path, content] : {std::pair{caFile, ca->certificatePem}, std::pair{certFile, serving->certificatePem},
                                 std::pair{keyFile, serving->privateKeyPem}})
      if (auto o = writeFile(path, content); !o) return o;
  }
  try {
    Poco::Net::initializeSSL();
    Poco::Net::Context::Ptr context = new Poco::Net::Context(Poco::Net::Context::SERVER_USE, keyFile, certFile, "",
                                                             Poco::Net::Context::VERIFY_NONE, 9, false,
                                                             "ALL:!ADH:!LOW:!EXP:!MD5:@STRENGTH");
    // TLS 1.3 suites as Go's crypto/tls (the API server's) picks them on a
    // machine with AES hardware, for a client that lists AES-GCM first as
    // OpenSSL does: the server's order, TLS_AES_128_GCM_SHA256 first
    // (defaultCipherSuitesTLS13). OpenSSL's own server default would take the
    // client's first choice, AES-256.
    SSL_CTX* ssl = context->sslContext();
    if (SSL_CTX_set_ciphersuites(ssl, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256") != 1)
      return Error{"fake API server: setting the TLS 1.3 cipher suites failed"};
    SSL_CTX_set_options(ssl, SSL_OP_CIPHER_SERVER_PREFERENCE);
    Poco::Net::SecureServerSocket socket(Poco::Net::SocketAddress(options_.bindHost, options_.port), 128, context);
    port_ = socket.address().port();
    Poco::Net::HTTPServerParams::Ptr params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(options_.maxThreads);
    params->setMaxQueued(4096);
    params->setKeepAlive(true);
    params->setTimeout(Poco::Timespan(60, 0));
    params->setKeepAliveTimeout(Poco::Timespan(60, 0));
    threadPool_ = std::make_unique<Poco::ThreadPool>(2, options_.maxThreads + 4, 60);
    server_ = std::make_unique<Poco::Net::HTTPServer>(new HandlerFactory(*this), *threadPool_, socket, params);
    server_->start();
  } catch (const Poco::Exception& e) {
    return Error{"fake API server: " + e.displayText()};
  }
  return {};
}

void FakeApiServer::Impl::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (server_) {
    try {
      server_->stopAll(true);
    } catch (...) {
    }
  }
  {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return watches_.empty(); });
  }
  if (threadPool_) threadPool_->joinAll();
  server_.reset();
  threadPool_.reset();
  if (ownCertDir_) {
    std::error_code ec;
    std::filesystem::remove_all(certDir_, ec);
  }
}

// --- mutations ---------------------------------------------------------------

ApiResponse FakeApiServer::Impl::createDirect(Kind kind, json object, bool fromApi, const std::string& urlNamespace,
                                              bool wantBody, bool dryRun) {
  if (!object.is_object()) return {400, badRequest("the body of the request was in an unknown format")};
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  if (namespaced(kind)) {
    std::string ns = meta.value("namespace", "");
    if (!urlNamespace.empty()) {
      if (!ns.empty() && ns != urlNamespace)
        return {400, badRequest("the namespace of the provided object does not match the namespace sent on the request")};
      ns = urlNamespace;
    }
    if (ns.empty()) ns = "default";
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  {
    std::lock_guard lock(mu_);  // for rng_
    if (meta.value("name", "").empty()) {
      const std::string generateName = meta.value("generateName", "");
      if (generateName.empty())
        return {422, invalid(std::string(kindName(kind)), "", "metadata.name",
                             "Required value: name or generateName is required")};
      meta["name"] = generateName + generateNameSuffix(rng_);
    }
    if (fromApi || meta.value("uid", "").empty()) meta["uid"] = randomUid(rng_);
  }
  if (fromApi || !meta.contains("creationTimestamp") || meta["creationTimestamp"].is_null())
    meta["creationTimestamp"] = nowRfc3339();
  if (auto refusal = prepareForCreate(kind, object, fromApi)) return *refusal;
  const std::string name = object["metadata"]["name"].get<std::string>();
  const std::string key = objectKey(kind, object["metadata"].value("namespace", ""), name);
  // Serialize outside the lock; only the revision is assigned under it.
  std::shared_ptr<Object> o = makeObject(kind, std::move(object), 0);
  {
    std::lock_guard lock(mu_);
    auto& store = objects_[static_cast<int>(kind)];
    if (store.count(key)) return {409, alreadyExistsStatus(kind, name)};
    if (dryRun) {
      o->rv = rv_;
    } else {
      o->rv = ++rv_;
      store[key] = o;
      commitLocked({EventType::Added, o->rv, kind, key, o, nullptr});
    }
  }
  if (!wantBody) return {201, nullptr};
  return {201, parseObject(*o)};
}

ApiResponse FakeApiServer::Impl::createPod(json pod, const std::string& urlNamespace, bool dryRun) {
  if (!pod.is_object()) return {400, badRequest("the body of the request was in an unknown format")};
  if (!pod.contains("metadata") || !pod["metadata"].is_object()) pod["metadata"] = json::object();
  std::string ns = pod["metadata"].value("namespace", "");
  if (!urlNamespace.empty()) {
    if (!ns.empty() && ns != urlNamespace)
      return {400, badRequest("the namespace of the provided object does not match the namespace sent on the request")};
    ns = urlNamespace;
  }
  if (ns.empty()) ns = "default";
  pod["metadata"].erase("uid");
  pod["metadata"].erase("resourceVersion");
  pod["metadata"].erase("creationTimestamp");
  AdmissionRequestContext request;
  std::vector<MutatingWebhook> webhooks;
  {
    std::lock_guard lock(mu_);
    if (options_.admissionDefaults) {
      applyPodCreateDefaults(pod, ns, rng_);
    } else {
      pod["metadata"]["namespace"] = ns;
      pod["apiVersion"] = "v1";
      pod["kind"] = "Pod";
    }
    request.requestUid = randomUid(rng_);
    webhooks = webhooks_;
    request.namespaceLabels = namespaceLabelsLocked(ns);
  }
  request.ns = ns;
  request.name = pod["metadata"].value("name", "");
  request.dryRun = dryRun;
  if (request.name.empty() && pod["metadata"].value("generateName", "").empty())
    return {422, invalid("Pod", "", "metadata.name", "Required value: name or generateName is required")};
  if (!webhooks.empty()) {
    if (auto refusal = runMutatingWebhooks(webhooks, pod, request, admissionCalls_))
      return {refusal->code, refusal->status};
  }
  const json& spec = pod.value("spec", json::object());
  if (!spec.is_object() || !spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty())
    return {422, invalid("Pod", pod["metadata"].value("name", pod["metadata"].value("generateName", "")),
                         "spec.containers", "Required value")};
  // ValidatePodSpec: a pod with scheduling gates cannot name its node yet.
  if (spec.contains("schedulingGates") && spec["schedulingGates"].is_array() && !spec["schedulingGates"].empty() &&
      spec.contains("nodeName") && spec["nodeName"].is_string() && !spec["nodeName"].get<std::string>().empty())
    return {422, invalid("Pod", pod["metadata"].value("name", pod["metadata"].value("generateName", "")),
                         "spec.nodeName", "Forbidden: cannot be set until all schedulingGates have been cleared")};

  {
    std::lock_guard lock(mu_);  // for rng_
    preparePodForCreate(pod, rng_);
  }
  pod["metadata"]["namespace"] = ns;
  const std::string name = pod["metadata"].value("name", "");
  const std::string key = objectKey(Kind::Pod, ns, name);
  std::shared_ptr<Object> o = makeObject(Kind::Pod, std::move(pod), 0);
  {
    std::lock_guard lock(mu_);
    auto& store = objects_[static_cast<int>(Kind::Pod)];
    if (store.count(key)) return {409, alreadyExistsStatus(Kind::Pod, name)};
    if (dryRun) {
      o->rv = rv_;
    } else {
      o->rv = ++rv_;
      store[key] = o;
      commitLocked({EventType::Added, o->rv, Kind::Pod, key, o, nullptr});
    }
  }
  return {201, parseObject(*o)};
}

ApiResponse FakeApiServer::Impl::mutate(Kind kind, const std::string& ns, const std::string& name,
                                        const Change& change) {
  std::lock_guard lock(mu_);
  const std::string key = objectKey(kind, ns, name);
  auto& store = objects_[static_cast<int>(kind)];
  auto it = store.find(key);
  if (it == store.end()) return {404, notFoundStatus(kind, name)};
  ObjectPtr prev = it->second;
  const json old = parseObject(*prev);
  json object = old;
  if (auto refusal = change(object)) return *refusal;
  if (!object.is_object()) return {400, badRequest("the body of the request was in an unknown format")};
  // Identity is the server's: name, namespace, uid and creationTimestamp stay.
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta["name"] = name;
  if (namespaced(kind)) meta["namespace"] = ns;
  else meta.erase("namespace");
  meta["uid"] = prev->uid;
  meta["creationTimestamp"] = old["metadata"].value("creationTimestamp", json());
  object["apiVersion"] = kindInfo(kind).apiVersion;
  object["kind"] = kindName(kind);
  prepareForUpdate(kind, object, old);
  ObjectPtr o = makeObject(kind, std::move(object), ++rv_);
  it->second = o;
  commitLocked({EventType::Modified, o->rv, kind, key, o, prev});
  return {200, parseObject(*o)};
}

ApiResponse FakeApiServer::Impl::update(Kind kind, json object, const std::string& ns, const std::string& name,
                                        bool statusOnly) {
  if (!object.is_object()) return {400, badRequest("the body of the request was in an unknown format")};
  const json bodyMeta = object.value("metadata", json::object());
  const std::string bodyName = bodyMeta.is_object() ? bodyMeta.value("name", "") : "";
  if (!bodyName.empty() && bodyName != name)
    return {400, badRequest("the name of the object (" + bodyName + ") does not match the name on the URL (" + name + ")")};
  const std::string bodyNs = bodyMeta.is_object() ? bodyMeta.value("namespace", "") : "";
  if (namespaced(kind) && !bodyNs.empty() && bodyNs != ns)
    return {400, badRequest("the namespace of the provided object does not match the namespace sent on the request")};
  const std::string bodyRv = bodyMeta.is_object() ? bodyMeta.value("resourceVersion", "") : "";
  const KindInfo& info = kindInfo(kind);
  auto change = [&](json& current) -> std::optional<ApiResponse> {
    const std::string currentRv = current["metadata"].value("resourceVersion", "");
    if (bodyRv.empty() && !info.allowUnconditionalUpdate)
      return ApiResponse{422, invalidFields(qualifiedResource(kind), resourceName(kind), groupName(kind), name,
                                            {{"metadata.resourceVersion", "FieldValueInvalid",
                                              "Invalid value: 0x0: must be specified for an update"}})};
    if (!bodyRv.empty() && bodyRv != currentRv) return ApiResponse{409, conflictStatus(kind, name)};
    if (statusOnly) {
      // The status strategy: only status changes.
      current["status"] = object.value("status", json::object());
    } else if (info.hasStatus) {
      // The main resource's strategy leaves status alone.
      json status = current.value("status", json());
      current = object;
      if (!status.is_null()) current["status"] = status;
      else current.erase("status");
    } else {
      current = object;
    }
    return std::nullopt;
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    ApiResponse r = mutate(kind, ns, name, change);
    if (r.code != 404 || statusOnly || !info.allowCreateOnUpdate) return r;
    // Create on update, as the registry does when the object is missing.
    json created = object;
    created["metadata"]["name"] = name;
    created["metadata"].erase("resourceVersion");
    r = createDirect(kind, std::move(created), true, ns);
    if (r.code != 409) return r;  // lost a race with a create: update what is there now
  }
  return {409, conflictStatus(kind, name)};
}

ApiResponse FakeApiServer::Impl::patch(Kind kind, const std::string& ns, const std::string& name, const json& patchBody,
                                       const std::string& contentType, bool statusOnly) {
  const std::string mediaType = contentType.substr(0, contentType.find(';'));
  const bool jsonPatch = mediaType == "application/json-patch+json";
  const bool mergePatch = mediaType == "application/merge-patch+json";
  if (!jsonPatch && !mergePatch)
    return {415, statusFailure(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/apply-patch+yaml")};
  const bool hasStatus = kindInfo(kind).hasStatus;
  return mutate(kind, ns, name, [&](json& current) -> std::optional<ApiResponse> {
    json patched = current;
    if (jsonPatch) {
      auto r = applyJsonPatch(current, patchBody);
      if (!r) return ApiResponse{422, statusFailure(422, "Invalid", r.error().message)};
      patched = std::move(*r);
    } else {
      patched.merge_patch(patchBody);
    }
    if (!patched.is_object()) return ApiResponse{400, badRequest("the body of the request was in an unknown format")};
    // A resourceVersion the patch sets is a precondition on the stored one.
    const std::string currentRv = current["metadata"].value("resourceVersion", "");
    const json& patchedMeta = patched.value("metadata", json::object());
    const std::string patchedRv = patchedMeta.is_object() ? patchedMeta.value("resourceVersion", "") : "";
    if (!patchedRv.empty() && patchedRv != currentRv) return ApiResponse{409, conflictStatus(kind, name)};
    if (statusOnly) {
      current["status"] = patched.value("status", json::object());
    } else if (hasStatus) {
      json status = current.value("status", json());
      current = std::move(patched);
      if (!status.is_null()) current["status"] = status;
      else current.erase("status");
    } else {
      current = std::move(patched);
    }
    return std::nullopt;
  });
}

ApiResponse FakeApiServer::Impl::remove(Kind kind, const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  const std::string key = objectKey(kind, ns, name);
  auto& store = objects_[static_cast<int>(kind)];
  auto it = store.find(key);
  if (it == store.end()) return {404, notFoundStatus(kind, name)};
  ObjectPtr prev = it->second;
  store.erase(it);
  ObjectPtr deleted = withRv(prev, ++rv_);
  commitLocked({EventType::Deleted, deleted->rv, kind, key, deleted, prev});
  if (!kindInfo(kind).returnDeletedObject)
    return {200, deletedStatus(resourceName(kind), name, groupName(kind), prev->uid)};
  return {200, parseObject(*deleted)};
}

ApiResponse FakeApiServer::Impl::bind(const std::string& ns, const std::string& name, const json& binding) {
  if (!binding.is_object()) return {400, badRequest("the body of the request was in an unknown format")};
  const json meta = binding.value("metadata", json::object());
  const std::string bindingName = meta.is_object() ? meta.value("name", "") : "";
  if (bindingName != name) return {400, badRequest("name in URL does not match name in Binding object")};
  const json target = binding.value("target", json::object());
  const std::string node = target.is_object() ? target.value("name", "") : "";
  const std::string targetKind = target.is_object() ? target.value("kind", "") : "";
  if (!targetKind.empty() && targetKind != "Node")
    return {400, badRequest("must be a node")};  // upstream's invalid binding target error
  if (node.empty())
    return {422, invalid("Binding", name, "target.name", "Required value")};
  const std::string uidPrecondition = meta.is_object() ? meta.value("uid", "") : "";
  json annotations = meta.is_object() ? meta.value("annotations", json::object()) : json::object();

  auto result = mutate(Kind::Pod, ns, name, [&](json& pod) -> std::optional<ApiResponse> {
    json& pmeta = pod["metadata"];
    if (!uidPrecondition.empty() && pmeta.value("uid", "") != uidPrecondition)
      return ApiResponse{409, conflict("pods", name,
                                       "Precondition failed: UID in precondition: " + uidPrecondition +
                                           ", UID in object meta: " + pmeta.value("uid", ""))};
    if (pmeta.contains("deletionTimestamp") && !pmeta["deletionTimestamp"].is_null())
      return ApiResponse{409, conflict("pods/binding", name,
                                       "pod " + name + " is being deleted, cannot be assigned to a host")};
    const std::string current = pod.value("spec", json::object()).value("nodeName", "");
    if (!current.empty())
      return ApiResponse{409, conflict("pods/binding", name,
                                       "pod " + name + " is already assigned to node \"" + current + "\"")};
    pod["spec"]["nodeName"] = node;
    if (annotations.is_object() && !annotations.empty()) {
      if (!pmeta.contains("annotations") || !pmeta["annotations"].is_object()) pmeta["annotations"] = json::object();
      for (const auto& [k, v] : annotations.items()) pmeta["annotations"][k] = v;
    }
    json& status = pod["status"];
    if (!status.is_object()) status = json::object();
    json& conditions = status["conditions"];
    if (!conditions.is_array()) conditions = json::array();
    json condition = {{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
                      {"lastTransitionTime", nowRfc3339()}};
    bool replaced = false;
    for (json& c : conditions)
      if (c.is_object() && c.value("type", "") == "PodScheduled") {
        c = condition;
        replaced = true;
      }
    if (!replaced) conditions.push_back(condition);
    return std::nullopt;
  });
  if (!result.ok()) return result;
  return {201, statusSuccess(201)};
}

// --- HTTP ----------------------------------------------------------------------

void FakeApiServer::Impl::handle(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp) {
  const std::string method = req.getMethod();
  const std::string target = req.getURI();
  auto answer = [&](int code, const json& body, bool watch = false) {
    record(method, target, code, watch);
    // A request answered before its body was read (401, an injected fault, a
    // path that does not exist): the body is read and dropped, as Go's server
    // does, so that the next request on the keep-alive connection starts
    // where it should. Nothing to read when a handler read it already. (A
    // request with neither a length nor chunks has no body Poco can delimit.)
    if (req.hasContentLength() || req.getChunkedTransferEncoding())
      req.stream().ignore(std::numeric_limits<std::streamsize>::max());
    sendBody(resp, code, body.dump());
  };
  try {
    Poco::URI uri(target);
    const auto query = uri.getQueryParameters();
    const std::vector<std::string> parts = splitPath(uri.getPath());

    // Authentication first, as the real filter chain does; then injected faults.
    bool authorized = true;
    int failCode = 0;
    int retryAfter = 0;
    {
      const std::string auth = req.get("Authorization", "");
      const std::string prefix = "Bearer ";
      std::lock_guard lock(mu_);
      if (authRequired_)
        authorized = auth.compare(0, prefix.size(), prefix) == 0 && tokens_.count(auth.substr(prefix.size())) > 0;
      if (authorized && failRemaining_ > 0) {
        --failRemaining_;
        failCode = failStatus_;
        retryAfter = failRetryAfter_;
      }
    }
    if (!authorized) {
      answer(401, unauthorized());
      return;
    }
    if (failCode != 0) {
      json body = failCode == 429   ? tooManyRequests(retryAfter)
                  : failCode == 503 ? serviceUnavailable(retryAfter)
                  : failCode == 500 ? internalError("injected fault")
                                    : statusFailure(failCode, "", "injected fault");
      if (failCode == 429 || failCode == 503) resp.set("Retry-After", std::to_string(retryAfter));
      answer(failCode, body);
      return;
    }

    if (parts.size() == 1 && (parts[0] == "healthz" || parts[0] == "readyz" || parts[0] == "livez")) {
      record(method, target, 200, false);
      resp.setContentType("text/plain");
      resp.setContentLength(2);
      resp.send() << "ok";
      return;
    }
    if (parts.size() == 1 && parts[0] == "version") {
      answer(200, {{"major", "1"}, {"minor", "31"}, {"gitVersion", "v1.31.0-fake"}, {"platform", "linux/amd64"}});
      return;
    }
    auto notFoundPath = [&] {
      answer(404, statusFailure(404, "NotFound", "the server could not find the requested resource"));
    };
    // /api/v1/... or /apis/{group}/{version}/...
    std::string group, version;
    std::size_t restAt = 0;
    if (parts.size() >= 2 && parts[0] == "api") {
      version = parts[1];
      restAt = 2;
    } else if (parts.size() >= 3 && parts[0] == "apis") {
      group = parts[1];
      version = parts[2];
      restAt = 3;
    } else if (method == "GET" && parts.size() == 1 && (parts[0] == "api" || parts[0] == "apis")) {
      answer(200, parts[0] == "api" ? apiVersions(options_.bindHost + ":" + std::to_string(port_)) : apiGroupList());
      return;
    } else {
      notFoundPath();
      return;
    }
    std::vector<std::string> rest(parts.begin() + static_cast<std::ptrdiff_t>(restAt), parts.end());
    if (rest.empty()) {
      auto resources = apiResourceList(group, version);
      if (method == "GET" && resources) answer(200, *resources);
      else notFoundPath();
      return;
    }
    bool watch = truthy(queryParam(query, "watch"));
    if (rest[0] == "watch") {
      watch = true;
      rest.erase(rest.begin());
    }
    // namespaces/{ns}/{resource}[/{name}[/{sub}]] for a namespaced resource of
    // this group version; else {resource}[/{name}[/{sub}]].
    std::optional<Kind> kind;
    std::string ns, name, sub;
    if (rest.size() >= 3 && rest.size() <= 5 && rest[0] == "namespaces") {
      kind = kindForResource(group, version, rest[2]);
      if (kind && namespaced(*kind)) {
        ns = rest[1];
        if (rest.size() > 3) name = rest[3];
        if (rest.size() > 4) sub = rest[4];
      } else {
        kind.reset();
      }
    }
    if (!kind && !rest.empty() && rest.size() <= 3) {
      kind = kindForResource(group, version, rest[0]);
      if (rest.size() > 1) name = rest[1];
      if (rest.size() > 2) sub = rest[2];
      // A namespaced object is only addressed through its namespace.
      if (kind && namespaced(*kind) && !name.empty()) kind.reset();
    }
    if (!kind) {
      notFoundPath();
      return;
    }
    const Kind resolved = kind.value();
    const bool knownSub = sub.empty() || (sub == "status" && kindInfo(resolved).hasStatus) ||
                          (sub == "binding" && resolved == Kind::Pod);
    if (!knownSub) {
      notFoundPath();
      return;
    }

    auto readBody = [&]() -> std::optional<json> {
      std::string text;
      std::istream& in = req.stream();
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      try {
        return json::parse(text);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    };
    auto respond = [&](const ApiResponse& r) { answer(r.code, r.body); };
    auto badBody = [&] { answer(400, badRequest("the body of the request was in an unknown format")); };

    if (method == "GET" && name.empty()) {
      Filter filter;
      filter.kind = *kind;
      filter.ns = ns;
      auto labels = parseLabelSelector(queryParam(query, "labelSelector"));
      if (!labels) {
        answer(400, badRequest("unable to parse requirement: " + labels.error().message));
        return;
      }
      auto fields = parseFieldSelector(queryParam(query, "fieldSelector"), selectableFields(*kind));
      if (!fields) {
        answer(400, badRequest(fields.error().message));
        return;
      }
      filter.labels = std::move(*labels);
      filter.fields = std::move(*fields);
      if (watch) {
        serveWatch(req, resp, filter, query);
        return;
      }
      serveList(req, resp, filter, query);
      record(method, target, 200, false);
      return;
    }
    if (method == "GET" && (sub.empty() || sub == "status")) {
      ObjectPtr o = find(*kind, ns, name);
      if (!o) {
        answer(404, notFoundStatus(*kind, name));
        return;
      }
      record(method, target, 200, false);
      sendBody(resp, 200, renderObject(*o, true));
      return;
    }
    if (method == "POST" && name.empty()) {
      if (namespaced(*kind) && ns.empty()) {
        answer(405, methodNotAllowed());
        return;
      }
      auto body = readBody();
      if (!body) return badBody();
      const bool dryRun = queryParam(query, "dryRun") == "All";
      if (*kind == Kind::Pod) respond(createPod(std::move(*body), ns, dryRun));
      else respond(createDirect(*kind, std::move(*body), true, ns, true, dryRun));
      return;
    }
    if (method == "POST" && sub == "binding") {
      auto body = readBody();
      if (!body) return badBody();
      respond(bind(ns, name, *body));
      return;
    }
    if (method == "PUT" && !name.empty() && sub != "binding") {
      auto body = readBody();
      if (!body) return badBody();
      respond(update(*kind, std::move(*body), ns, name, sub == "status"));
      return;
    }
    if (method == "PATCH" && !name.empty() && sub != "binding") {
      auto body = readBody();
      if (!body) return badBody();
      respond(patch(*kind, ns, name, *body, req.getContentType(), sub == "status"));
      return;
    }
    if (method == "DELETE" && !name.empty() && sub.empty()) {
      respond(remove(*kind, ns, name));
      return;
    }
    answer(405, methodNotAllowed());
  } catch (const std::exception& e) {
    // Never let an escaped exception tear the connection without a word.
    try {
      if (!resp.sent()) answer(500, internalError(e.what()));
    } catch (...) {
    }
  }
}

void FakeApiServer::Impl::serveList(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp,
                                    const Filter& filter,
                                    const Poco::URI::QueryParameters& q) {
  const std::string continueParam = queryParam(q, "continue");
  const std::string rvParam = queryParam(q, "resourceVersion");
  int64_t limit = 0;
  try {
    if (auto l = queryParam(q, "limit"); !l.empty()) limit = std::stoll(l);
  } catch (...) {
    sendBody(resp, 400, badRequest("limit: invalid value").dump());
    return;
  }
  if (limit < 0) limit = 0;
  if (options_.ignoreLimitForResourceVersionZero && rvParam == "0" && continueParam.empty()) limit = 0;

  const std::string prefix = namespaced(filter.kind) && !filter.ns.empty() ? filter.ns + "/" : "";
  std::vector<ObjectPtr> items;
  std::string nextContinue;
  int64_t remaining = -1;
  uint64_t snapshotRv;
  {
    std::unique_lock lock(mu_);
    std::string start = prefix;
    snapshotRv = rv_;
    if (!continueParam.empty()) {
      auto token = decodeContinue(continueParam);
      if (!token) {
        lock.unlock();
        sendBody(resp, 400, badRequest(token.error().message).dump());
        return;
      }
      if (token->start.compare(0, prefix.size(), prefix) != 0) {
        lock.unlock();
        sendBody(resp, 400, badRequest("continue key is not valid: key is outside the requested range").dump());
        return;
      }
      if (token->rv > 0 && static_cast<uint64_t>(token->rv) < compactedRv_) {
        // etcd3 handleCompactedErrorForPaging: 410 with a token to go on at the latest version.
        json status = expired(
            "The provided continue parameter is too old to display a consistent list result. You can start a new "
            "list without the continue parameter, or use the continue token in this response to retrieve the "
            "remainder of the results. Continuing with the provided token results in an inconsistent list - "
            "objects that were created, modified, or deleted between the time the first chunk was returned and "
            "now may show up in the list.");
        status["metadata"]["continue"] = encodeContinue(-1, token->start);
        lock.unlock();
        sendBody(resp, 410, status.dump());
        return;
      }
      if (token->rv > 0) snapshotRv = static_cast<uint64_t>(token->rv);
      start = token->start;
    }
    // The view at snapshotRv: the current objects, with every key changed since
    // then replaced by its state before the first later change.
    std::map<std::string, ObjectPtr> changed;
    if (snapshotRv < rv_) {
      auto it = std::upper_bound(history_.begin(), history_.end(), snapshotRv,
                                 [](uint64_t rv, const Event& e) { return rv < e.rv; });
      for (; it != history_.end(); ++it)
        if (it->kind == filter.kind && !changed.count(it->key)) changed.emplace(it->key, it->prev);
    }
    const auto& store = objects_[static_cast<int>(filter.kind)];
    auto cur = store.lower_bound(start);
    auto chg = changed.lower_bound(start);
    auto inRange = [&](const std::string& key) { return key.compare(0, prefix.size(), prefix) == 0; };
    std::string lastKey;
    bool more = false;
    for (;;) {
      const bool curOk = cur != store.end() && inRange(cur->first);
      const bool chgOk = chg != changed.end() && inRange(chg->first);
      if (!curOk && !chgOk) break;
      std::string key;
      ObjectPtr o;
      if (chgOk && (!curOk || chg->first <= cur->first)) {
        key = chg->first;
        o = chg->second;
        if (curOk && cur->first == chg->first) ++cur;
        ++chg;
      } else {
        key = cur->first;
        o = cur->second;
        ++cur;
      }
      if (!o) continue;
      if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
        more = true;
        if (!filter.hasSelectors()) {
          remaining = 0;
          // count this one and the rest
          remaining = 1;
          while (true) {
            const bool c1 = cur != store.end() && inRange(cur->first);
            const bool c2 = chg != changed.end() && inRange(chg->first);
            if (!c1 && !c2) break;
            ObjectPtr x;
            if (c2 && (!c1 || chg->first <= cur->first)) {
              x = chg->second;
              if (c1 && cur->first == chg->first) ++cur;
              ++chg;
            } else {
              x = cur->second;
              ++cur;
            }
            if (x) ++remaining;
          }
        }
        break;
      }
      if (!filter.matches(*o)) continue;
      items.push_back(std::move(o));
      lastKey = key;
    }
    if (more) nextContinue = encodeContinue(static_cast<int64_t>(snapshotRv), lastKey + std::string(1, '\0'));
  }
  // Small lists go out with a Content-Length; big ones are streamed in chunks
  // (as Go's net/http does once a body outgrows its buffer), so that a
  // 150,000-pod list never exists as one string.
  constexpr std::size_t kFlushBytes = 1 << 20;
  std::size_t size = 256;
  for (const auto& o : items) size += o->tail.size() + 64;
  const bool stream = size > 4 * kFlushBytes;
  std::ostream* out = nullptr;
  // Poco's chunked stream cuts the body into 4 KB chunks, each its own TLS
  // record and write(2); a big list is instead written to the socket in 1 MB
  // chunks (16 KB records, as Go's TLS writer makes them). Poco's stream, left
  // empty, still writes the last chunk when the response ends.
  Poco::Net::StreamSocket* socket = nullptr;
  if (stream) {
    resp.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    resp.setContentType("application/json");
    resp.setChunkedTransferEncoding(true);
    out = &resp.send();
    out->flush();
    if (auto* impl = dynamic_cast<Poco::Net::HTTPServerRequestImpl*>(&req)) socket = &impl->socket();
  }
  auto writeChunk = [&](const std::string& data) {
    if (data.empty()) return;  // a zero-size chunk would end the body
    if (!socket) {
      out->write(data.data(), static_cast<std::streamsize>(data.size()));
      return;
    }
    char header[24];
    const int headerSize = std::snprintf(header, sizeof header, "%zx\r\n", data.size());
    auto sendAll = [&](const char* p, std::size_t n) {
      while (n > 0) {
        const int sent = socket->sendBytes(p, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
        if (sent <= 0) throw Poco::Net::NetException("list: connection closed while writing");
        p += sent;
        n -= static_cast<std::size_t>(sent);
      }
    };
    sendAll(header, static_cast<std::size_t>(headerSize));
    sendAll(data.data(), data.size());
    sendAll("\r\n", 2);
  };
  std::string body;
  body.reserve(stream ? kFlushBytes + 65536 : size);
  body += R"({"kind":")";
  body += kindInfo(filter.kind).listKind;
  body += R"(","apiVersion":")";
  body += kindInfo(filter.kind).apiVersion;
  body += R"(","metadata":{"resourceVersion":")";
  body += std::to_string(snapshotRv);
  body += '"';
  if (!nextContinue.empty()) {
    body += R"(,"continue":")";
    body += nextContinue;
    body += '"';
    if (remaining >= 0) {
      body += R"(,"remainingItemCount":)";
      body += std::to_string(remaining);
    }
  }
  body += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) body += ',';
    appendObject(body, *items[i], false);
    if (out && body.size() >= kFlushBytes) {
      writeChunk(body);
      body.clear();
    }
  }
  body += "]}";
  if (out) {
    writeChunk(body);
    out->flush();
    return;
  }
  sendBody(resp, 200, body);
}

void FakeApiServer::Impl::serveWatch(Poco::Net::HTTPServerRequest& req, Poco::Net::HTTPServerResponse& resp,
                                     const Filter& filter, const Poco::URI::QueryParameters& q) {
  const std::string rvParam = queryParam(q, "resourceVersion");
  const bool allowBookmarks = truthy(queryParam(q, "allowWatchBookmarks"));
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (auto t = queryParam(q, "timeoutSeconds"); !t.empty()) {
    try {
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(std::stoll(t));
    } catch (...) {
    }
  }
  uint64_t cursor = 0;
  if (!rvParam.empty() && rvParam != "0") {
    try {
      cursor = std::stoull(rvParam);
    } catch (...) {
      record(req.getMethod(), req.getURI(), 400, true);
      sendBody(resp, 400, badRequest("resourceVersion: Invalid value: \"" + rvParam + "\"").dump());
      return;
    }
  }
  record(req.getMethod(), req.getURI(), 200, true);
  resp.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
  resp.setContentType("application/json");
  resp.setChunkedTransferEncoding(true);
  resp.setKeepAlive(false);
  std::ostream& out = resp.send();
  out.flush();

  WatchState state;
  state.allowBookmarks = allowBookmarks;
  std::vector<std::string> frames;
  std::vector<ObjectPtr> initial;  // rendered one by one while writing
  bool finished = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (rvParam.empty() || rvParam == "0") {
      // Synthetic ADDED events for the current state, then everything after it.
      for (const auto& [key, o] : objects_[static_cast<int>(filter.kind)])
        if (filter.matches(*o)) initial.push_back(o);
      cursor = rv_;
    } else if (cursor < compactedRv_) {
      frames.push_back(errorFrame(expired("too old resource version: " + std::to_string(cursor) + " (" +
                                         std::to_string(compactedRv_) + ")")));
      finished = true;
    }
    if (!finished) {
      watches_.insert(&state);
      cv_.notify_all();
    }
  }
  enum class Next { Continue, Drop, End };
  auto unregister = [&] {
    std::lock_guard lock(mu_);
    watches_.erase(&state);
    cv_.notify_all();
  };
  Poco::Net::StreamSocket* socket = nullptr;
  if (auto* impl = dynamic_cast<Poco::Net::HTTPServerRequestImpl*>(&req)) socket = &impl->socket();

  // Requires mu_.
  auto interrupted = [&]() -> Next {
    if (stopping_ || state.timeout) return Next::End;
    if (state.drop) return Next::Drop;
    return Next::Continue;
  };
  // Writes a batch of events. Like the upstream watch server, which flushes
  // whenever its queue runs empty, a backlog is coalesced (flushed every 32 KB
  // and at the end of the batch); a lone event is flushed at once.
  auto writeFrames = [&](std::vector<std::string>& batch) -> Next {
    std::size_t unflushed = 0;
    bool slow = false;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (i % 64 == 0 || slow) {
        std::unique_lock lock(mu_);
        slow = watchDelay_.count() > 0;
        if (slow) cv_.wait_for(lock, watchDelay_, [&] { return interrupted() != Next::Continue; });
        if (Next n = interrupted(); n != Next::Continue) return n;
      }
      out << batch[i];
      unflushed += batch[i].size();
      if (slow || unflushed >= 32768 || i + 1 == batch.size()) {
        out.flush();
        unflushed = 0;
      }
      if (!out.good()) return Next::End;
    }
    batch.clear();
    return Next::Continue;
  };
  auto cut = [&] {
    // Cut mid-chunk: a chunk header promising more than is sent, then an
    // abortive close without a TLS close_notify.
    out.flush();
    if (!socket) return;
    try {
      const std::string partial = "1f4\r\n{\"type\":\"MODIFIED\",\"object\":{\"kind\":";
      socket->sendBytes(partial.data(), static_cast<int>(partial.size()));
      Poco::Net::SecureStreamSocket secure(*socket);
      secure.abort();
    } catch (...) {
      try {
        socket->close();
      } catch (...) {
      }
    }
  };

  try {
    Next next = writeFrames(frames);
    if (finished) return;
    for (std::size_t i = 0; i < initial.size() && next == Next::Continue; i += 256) {
      std::vector<std::string> batch;
      for (std::size_t j = i; j < std::min(initial.size(), i + 256); ++j) {
        std::string f = R"({"type":"ADDED","object":)";
        appendObject(f, *initial[j], true);
        f += "}\n";
        batch.push_back(std::move(f));
        initial[j].reset();
      }
      next = writeFrames(batch);
    }
    initial.clear();
    auto nextBookmark = std::chrono::steady_clock::now() + options_.bookmarkInterval;
    while (next == Next::Continue) {
      std::vector<std::string> batch;
      {
        std::unique_lock lock(mu_);
        auto wakeAt = nextBookmark;
        if (deadline && *deadline < wakeAt) wakeAt = *deadline;
        cv_.wait_until(lock, wakeAt, [&] {
          return interrupted() != Next::Continue || state.bookmark ||
                 (!history_.empty() && history_.back().rv > cursor);
        });
        next = interrupted();
        if (next != Next::Continue) break;
        const auto now = std::chrono::steady_clock::now();
        if (deadline && now >= *deadline) {
          next = Next::End;
          break;
        }
        if (cursor < compactedRv_) {
          // Events this watcher has not seen were compacted away.
          batch.push_back(errorFrame(expired("too old resource version: " + std::to_string(cursor) + " (" +
                                             std::to_string(compactedRv_) + ")")));
          finished = true;
        } else {
          auto it = std::upper_bound(history_.begin(), history_.end(), cursor,
                                     [](uint64_t rv, const Event& e) { return rv < e.rv; });
          for (; it != history_.end(); ++it) {
            const Event& e = *it;
            // Upstream cacher: an object entering the selector is ADDED, one
            // leaving it is DELETED (its previous state at the event's rv).
            const bool curPasses = e.type != EventType::Deleted && e.kind == filter.kind && filter.matches(*e.object);
            const bool oldPasses = e.prev && e.kind == filter.kind && filter.matches(*e.prev);
            if (!curPasses && !oldPasses) continue;
            std::string f = R"({"type":")";
            if (curPasses) {
              f += oldPasses ? "MODIFIED" : "ADDED";
              f += R"(","object":)";
              appendObject(f, *e.object, true);
            } else {
              f += R"(DELETED","object":)";
              appendObject(f, *e.prev, true, e.rv);
            }
            f += "}\n";
            batch.push_back(std::move(f));
          }
          cursor = std::max(cursor, rv_);
          if (state.allowBookmarks && (state.bookmark || now >= nextBookmark))
            batch.push_back(bookmarkFrame(filter.kind, cursor));
          state.bookmark = false;
          if (now >= nextBookmark) nextBookmark = now + options_.bookmarkInterval;
        }
      }
      next = writeFrames(batch);
      if (finished) break;
    }
    if (next == Next::Drop) cut();
  } catch (const std::exception&) {
    // the client went away
  }
  unregister();
}

// ---------------------------------------------------------------------------

FakeApiServer::FakeApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeApiServer::~FakeApiServer() = default;

Result<std::unique_ptr<FakeApiServer>> FakeApiServer::start(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  if (auto o = impl->start(); !o) return o.error();
  return std::unique_ptr<FakeApiServer>(new FakeApiServer(std::move(impl)));
}

uint16_t FakeApiServer::port() const { return impl_->port_; }

std::string FakeApiServer::url() const {
  std::string host = impl_->options_.bindHost;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  return "https://" + host + ":" + std::to_string(impl_->port_);
}

const std::string& FakeApiServer::caPem() const { return impl_->caPem_; }
std::string FakeApiServer::caFile() const { return impl_->certDir_ + "/ca.crt"; }

std::string FakeApiServer::kubeconfig(const std::string& token) const {
  std::string t = token;
  if (t.empty() && !impl_->options_.tokens.empty()) t = impl_->options_.tokens.front();
  std::string out;
  out += "apiVersion: v1\nkind: Config\n";
  out += "clusters:\n- name: fake\n  cluster:\n    server: " + url() + "\n";
  out += "    certificate-authority-data: " + base64Encode(impl_->caPem_) + "\n";
  out += "users:\n- name: fake\n  user:\n    token: \"" + t + "\"\n";
  out += "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n";
  out += "current-context: fake\n";
  return out;
}

Outcome FakeApiServer::writeKubeconfig(const std::string& path, const std::string& token) const {
  return writeFile(path, kubeconfig(token));
}

Result<json> FakeApiServer::create(Kind kind, json object) {
  auto r = impl_->createDirect(kind, std::move(object), false, "");
  if (!r.ok()) return Error{r.message()};
  return std::move(r.body);
}

ApiResponse FakeApiServer::createPod(json pod, const std::string& ns, bool dryRun) {
  return impl_->createPod(std::move(pod), ns, dryRun);
}

ApiResponse FakeApiServer::bindPod(const std::string& ns, const std::string& name, const std::string& node,
                                   const std::string& uid) {
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", name}, {"namespace", ns}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!uid.empty()) binding["metadata"]["uid"] = uid;
  return impl_->bind(ns, name, binding);
}

Result<json> FakeApiServer::update(Kind kind, json object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object())
    return Error{"metadata: required"};
  const std::string name = object["metadata"].value("name", "");
  const std::string ns = namespaced(kind) ? object["metadata"].value("namespace", "default") : "";
  // C++ updates replace the whole object, status included.
  auto r = impl_->mutate(kind, ns, name, [&](json& current) -> std::optional<ApiResponse> {
    const std::string rv = object["metadata"].value("resourceVersion", "");
    if (!rv.empty() && rv != current["metadata"].value("resourceVersion", ""))
      return ApiResponse{409, conflictStatus(kind, name)};
    current = object;
    return std::nullopt;
  });
  if (!r.ok()) return Error{r.message()};
  return std::move(r.body);
}

Result<json> FakeApiServer::mutate(Kind kind, const std::string& ns, const std::string& name,
                                   const std::function<void(json&)>& change) {
  auto r = impl_->mutate(kind, namespaced(kind) ? ns : "", name, [&](json& current) -> std::optional<ApiResponse> {
    change(current);
    return std::nullopt;
  });
  if (!r.ok()) return Error{r.message()};
  return std::move(r.body);
}

Outcome FakeApiServer::remove(Kind kind, const std::string& ns, const std::string& name) {
  auto r = impl_->remove(kind, namespaced(kind) ? ns : "", name);
  if (!r.ok()) return Error{r.message()};
  return {};
}

std::optional<json> FakeApiServer::get(Kind kind, const std::string& ns, const std::string& name) const {
  ObjectPtr o = impl_->find(kind, namespaced(kind) ? ns : "", name);
  if (!o) return std::nullopt;
  return parseObject(*o);
}

bool FakeApiServer::contains(Kind kind, const std::string& ns, const std::string& name) const {
  return impl_->find(kind, namespaced(kind) ? ns : "", name) != nullptr;
}

std::vector<json> FakeApiServer::list(Kind kind) const {
  std::vector<json> out;
  forEachText(kind, [&](std::string_view text) { out.push_back(json::parse(text)); });
  return out;
}

std::vector<json> FakeApiServer::list(Kind kind, const std::string& ns) const {
  std::vector<ObjectPtr> objects;
  {
    std::lock_guard lock(impl_->mu_);
    const auto& store = impl_->objects_[static_cast<int>(kind)];
    const std::string prefix = namespaced(kind) ? ns + "/" : "";
    for (auto it = store.lower_bound(prefix); it != store.end() && it->first.compare(0, prefix.size(), prefix) == 0;
         ++it)
      objects.push_back(it->second);
  }
  std::vector<json> out;
  out.reserve(objects.size());
  for (const auto& o : objects) out.push_back(parseObject(*o));
  return out;
}

ApiResponse FakeApiServer::put(Kind kind, const std::string& ns, const std::string& name, json object,
                               const std::string& sub) {
  if (!sub.empty() && (sub != "status" || !kindInfo(kind).hasStatus))
    return {404, statusFailure(404, "NotFound", "the server could not find the requested resource")};
  return impl_->update(kind, std::move(object), namespaced(kind) ? ns : "", name, sub == "status");
}

ApiResponse FakeApiServer::patch(Kind kind, const std::string& ns, const std::string& name, const json& patch,
                                 const std::string& contentType, const std::string& sub) {
  if (!sub.empty() && (sub != "status" || !kindInfo(kind).hasStatus))
    return {404, statusFailure(404, "NotFound", "the server could not find the requested resource")};
  return impl_->patch(kind, namespaced(kind) ? ns : "", name, patch, contentType, sub == "status");
}

void FakeApiServer::forEachText(Kind kind, const std::function<void(std::string_view)>& visit) const {
  std::vector<ObjectPtr> objects;
  {
    std::lock_guard lock(impl_->mu_);
    const auto& store = impl_->objects_[static_cast<int>(kind)];
    objects.reserve(store.size());
    for (const auto& [key, o] : store) objects.push_back(o);
  }
  std::string text;
  for (const auto& o : objects) {
    text.clear();
    appendObject(text, *o, true);
    visit(text);
  }
}

std::size_t FakeApiServer::count(Kind kind) const {
  std::lock_guard lock(impl_->mu_);
  return impl_->objects_[static_cast<int>(kind)].size();
}

uint64_t FakeApiServer::resourceVersion() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->rv_;
}

Outcome FakeApiServer::load(Kind kind, std::string_view objectJson) {
  json object;
  try {
    object = json::parse(objectJson);
  } catch (const std::exception& e) {
    return Error{std::string("load: ") + e.what()};
  }
  auto r = impl_->createDirect(kind, std::move(object), false, "", /*wantBody=*/false);
  if (!r.ok()) return Error{r.message()};
  return {};
}

Outcome FakeApiServer::load(Kind kind, nlohmann::json object) {
  auto r = impl_->createDirect(kind, std::move(object), false, "", /*wantBody=*/false);
  if (!r.ok()) return Error{r.message()};
  return {};
}

Result<std::size_t> FakeApiServer::loadAny(json objectOrList) {
  if (!objectOrList.is_object()) return Error{"load: not a JSON object"};
  const std::string apiVersion = objectOrList.value("apiVersion", "");
  const std::string kind = objectOrList.value("kind", "");
  auto typeOf = [](const json& o, std::optional<Kind> fallback) -> Result<Kind> {
    const std::string v = o.is_object() ? o.value("apiVersion", "") : "";
    const std::string k = o.is_object() ? o.value("kind", "") : "";
    if (k.empty() && fallback) return *fallback;
    if (auto found = kindForType(v, k)) return *found;
    return Error{"load: the server does not serve kind \"" + k + "\" of apiVersion \"" + v + "\""};
  };
  std::vector<std::pair<Kind, json>> objects;
  const bool isList = kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0 &&
                      objectOrList.contains("items");
  if (isList) {
    if (!objectOrList["items"].is_array()) return Error{"load: " + kind + ".items is not an array"};
    std::optional<Kind> itemKind;
    if (kind != "List") itemKind = kindForType(apiVersion, kind.substr(0, kind.size() - 4));
    for (auto& item : objectOrList["items"]) {
      auto k = typeOf(item, itemKind);
      if (!k) return k.error();
      objects.emplace_back(*k, std::move(item));
    }
  } else {
    auto k = typeOf(objectOrList, std::nullopt);
    if (!k) return k.error();
    objects.emplace_back(*k, std::move(objectOrList));
  }
  // Every item's kind is known before anything is stored.
  std::size_t loaded = 0;
  for (auto& [k, object] : objects) {
    const std::string name = object.contains("metadata") && object["metadata"].is_object()
                                 ? object["metadata"].value("name", "")
                                 : "";
    if (auto o = load(k, std::move(object)); !o)
      return Error{"load: " + std::string(kindName(k)) + " \"" + name + "\": " + o.error().message};
    ++loaded;
  }
  return loaded;
}

void FakeApiServer::setNamespaceLabels(const std::string& ns, std::map<std::string, std::string> labels) {
  json wanted = json::object();
  for (auto& [k, v] : labels) wanted[k] = std::move(v);
  // Update, or create when missing; a create racing ours makes it an update.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto r = impl_->mutate(Kind::Namespace, "", ns, [&](json& current) -> std::optional<ApiResponse> {
      current["metadata"]["labels"] = wanted;
      return std::nullopt;
    });
    if (r.code != 404) return;
    json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}, {"labels", wanted}}}};
    if (impl_->createDirect(Kind::Namespace, std::move(object), false, "", false).code != 409) return;
  }
}

void FakeApiServer::setMutatingWebhooks(std::vector<MutatingWebhook> webhooks) {
  std::lock_guard lock(impl_->mu_);
  impl_->webhooks_ = std::move(webhooks);
}

void FakeApiServer::setTokens(std::vector<std::string> tokens) {
  std::lock_guard lock(impl_->mu_);
  impl_->tokens_ = std::set<std::string>(tokens.begin(), tokens.end());
}

void FakeApiServer::expireToken(const std::string& token) {
  std::lock_guard lock(impl_->mu_);
  impl_->tokens_.erase(token);
}

void FakeApiServer::failNextRequests(int n, int status, int retryAfterSeconds) {
  std::lock_guard lock(impl_->mu_);
  impl_->failRemaining_ = n;
  impl_->failStatus_ = status;
  impl_->failRetryAfter_ = retryAfterSeconds;
}

void FakeApiServer::dropWatches() {
  std::lock_guard lock(impl_->mu_);
  for (WatchState* w : impl_->watches_) w->drop = true;
  impl_->cv_.notify_all();
}

void FakeApiServer::timeoutWatches() {
  std::lock_guard lock(impl_->mu_);
  for (WatchState* w : impl_->watches_) w->timeout = true;
  impl_->cv_.notify_all();
}

void FakeApiServer::compact() {
  std::lock_guard lock(impl_->mu_);
  impl_->history_.clear();
  impl_->compactedRv_ = impl_->rv_;
  impl_->cv_.notify_all();
}

void FakeApiServer::sendBookmarks() {
  std::lock_guard lock(impl_->mu_);
  for (WatchState* w : impl_->watches_)
    if (w->allowBookmarks) w->bookmark = true;
  impl_->cv_.notify_all();
}

void FakeApiServer::setWatchEventDelay(std::chrono::milliseconds delay) {
  std::lock_guard lock(impl_->mu_);
  impl_->watchDelay_ = delay;
  impl_->cv_.notify_all();
}

std::size_t FakeApiServer::openWatches() const {
  std::lock_guard lock(impl_->mu_);
  return impl_->watches_.size();
}

bool FakeApiServer::waitForOpenWatches(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(impl_->mu_);
  return impl_->cv_.wait_for(lock, timeout, [&] { return impl_->watches_.size() >= n; });
}

std::vector<RequestRecord> FakeApiServer::requests() const {
  std::lock_guard lock(impl_->recordMu_);
  return impl_->records_;
}

void FakeApiServer::clearRequests() {
  std::lock_guard lock(impl_->recordMu_);
  impl_->records_.clear();
}

uint64_t FakeApiServer::admissionCalls() const { return impl_->admissionCalls_.load(); }

}  // namespace placer::fakeapi
