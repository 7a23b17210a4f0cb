#pragma once
// A fake kube-apiserver for tests and benchmarks: real TLS, bearer tokens, real
// HTTP/1.1 chunked watch streams, and the wire behaviour of the upstream server
// (staging/src/k8s.io/apiserver) for every kind placer reads or writes.
//
// Kinds served (the table kKinds in the .cpp; kindInfo() exposes it):
//   core/v1             nodes*, pods, namespaces*, services, endpoints,
//                       replicationcontrollers, secrets, configmaps
//   apps/v1             replicasets, statefulsets, deployments
//   coordination.k8s.io/v1       leases
//   events.k8s.io/v1             events
//   discovery.k8s.io/v1          endpointslices
//   admissionregistration.k8s.io/v1  mutatingwebhookconfigurations*
//   (* cluster-scoped)
//
// Paths, as upstream: /api/v1/{resource}[/{name}[/{sub}]] for cluster-scoped
// kinds, /api/v1/namespaces/{ns}/{resource}[/{name}[/{sub}]] for namespaced
// ones, and /apis/{group}/{version}/... likewise; /api/v1/{resource} and
// /apis/{group}/{version}/{resource} list a namespaced kind across namespaces.
// A ".../watch/..." path segment or ?watch=1 makes a list a watch. Discovery:
// /api, /apis, /api/v1, /apis/{group}/{version}; /healthz, /readyz, /livez,
// /version.
//
// Verbs, for every kind:
//   GET list  limit/continue pagination (one consistent snapshot, 410 Expired
//             with an inconsistent-continue token after compaction),
//             resourceVersion, labelSelector, fieldSelector (metadata.name and,
//             for namespaced kinds, metadata.namespace; pods also spec.nodeName,
//             status.phase, spec.schedulerName; nodes spec.unschedulable;
//             namespaces status.phase)
//   GET watch concatenated WatchEvent objects, one chunk per event;
//             resourceVersion, allowWatchBookmarks, timeoutSeconds; objects
//             entering/leaving a selector are ADDED/DELETED; a compacted
//             resourceVersion is an ERROR event with 410 Expired
//   GET       one object; 404 NotFound: `leases.coordination.k8s.io "x" not found`
//   POST      create; generateName; 409 AlreadyExists; 422 without a name.
//             Pods go through the admission chain (defaulting, then the
//             configured mutating webhooks, whose namespaceSelector reads the
//             Namespace object's labels); events.k8s.io Events are validated as
//             upstream's ValidateEventCreate does for events.k8s.io/v1.
//   PUT       update with optimistic concurrency: a metadata.resourceVersion that
//             differs from the stored one is 409 Conflict ("Operation cannot be
//             fulfilled on leases.coordination.k8s.io \"x\": the object has been
//             modified; please apply your changes to the latest version and try
//             again"); no resourceVersion is an unconditional update where the
//             kind's strategy allows it, else 422 ("metadata.resourceVersion:
//             Invalid value: 0x0: must be specified for an update": leases,
//             mutatingwebhookconfigurations); a missing object is 404, or created
//             (201) where the strategy allows create-on-update (services,
//             endpoints, leases, events).
//   PATCH     application/merge-patch+json, application/json-patch+json (else
//             415); a resourceVersion in the patch is a precondition (409).
//   DELETE    200 with the object (pods, nodes, namespaces, services) or a
//             Success Status with details (every other kind), as upstream's
//             ReturnDeletedObject has it; 404 when missing.
//   /status   PUT and PATCH for kinds with a status subresource (nodes, pods,
//             namespaces, services, replicationcontrollers, replicasets,
//             statefulsets, deployments); there, a main-resource write leaves
//             status alone and a /status write changes nothing else.
//   POST /api/v1/namespaces/{ns}/pods/{name}/binding
//
// Status bodies (apimachinery pkg/api/errors) carry details {name, group,
// kind: the resource}. Kind-specific behaviour kept from upstream's
// strategies: a Namespace always carries the label kubernetes.io/metadata.name
// and gets spec.finalizers [kubernetes] and status.phase Active on create;
// ReplicaSets, StatefulSets, Deployments and ReplicationControllers get
// metadata.generation 1 on create and +1 on each spec change, and their status
// (and a Service's) is cleared when created over HTTP.
// Not modelled: deletion is immediate (no finalizers, no Terminating namespace,
// no garbage collection of a namespace's contents); a pod may be created in a
// namespace that does not exist (it then has only its kubernetes.io/metadata.name
// label for webhook selectors); strategic-merge patch; apply; deletecollection.
//
// Resource versions are one counter over all kinds (like etcd's revision).
// History is kept until compact(): a watch or a continue token older than the
// last compaction gets 410 Gone. Objects are held as serialized JSON text
// (never as DOMs), so 5,000 nodes and 150,000 realistic pods fit.
//
// Thread-safety: every public method may be called from any thread, concurrently
// with request serving and with each other.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::fakeapi {

// Every kind the server stores. Node and Pod keep their historical values.
enum class Kind {
  Node,
  Pod,
  Namespace,
  Service,
  Endpoints,
  ReplicationController,
  Secret,
  ConfigMap,
  ReplicaSet,
  StatefulSet,
  Deployment,
  Lease,                         // coordination.k8s.io/v1
  Event,                         // events.k8s.io/v1
  EndpointSlice,                 // discovery.k8s.io/v1
  MutatingWebhookConfiguration,  // admissionregistration.k8s.io/v1
};
inline constexpr std::size_t kKindCount = 15;

// One row of the kind table: how a kind is named on the wire and which of
// upstream's strategy rules it follows.
struct KindInfo {
  Kind kind;
  std::string_view group;       // "" for the core group
  std::string_view version;     // "v1"
  std::string_view apiVersion;  // "v1", "apps/v1", "coordination.k8s.io/v1"
  std::string_view resource;    // "leases"
  std::string_view kindName;    // "Lease"
  std::string_view listKind;    // "LeaseList"
  bool namespaced;
  bool hasStatus;                 // a /status subresource
  bool allowCreateOnUpdate;       // PUT of a missing object creates it
  bool allowUnconditionalUpdate;  // PUT without metadata.resourceVersion is accepted
  bool returnDeletedObject;       // DELETE answers the object, else a Success Status
  bool tracksGeneration;          // metadata.generation: 1 on create, +1 per spec change
};

const KindInfo& kindInfo(Kind kind);
std::span<const KindInfo> allKinds();  // in Kind order
// "leases.coordination.k8s.io", "pods": the qualified resource of Status messages.
std::string qualifiedResource(Kind kind);
// By the URL's group ("" = core), version and resource: "apps", "v1", "replicasets".
std::optional<Kind> kindForResource(std::string_view group, std::string_view version, std::string_view resource);
// By an object's apiVersion and kind: "apps/v1", "ReplicaSet".
std::optional<Kind> kindForType(std::string_view apiVersion, std::string_view kindName);

// A mutating webhook as a MutatingWebhookConfiguration entry describes it (the
// parts the fake honours). Called for pod CREATE only.
struct MutatingWebhook {
  enum class FailurePolicy { Fail, Ignore };
  std::string name = "placer.placer.io";
  std::string url;          // clientConfig.url; "?timeout=Ns" is appended as upstream does
  std::string caBundlePem;  // clientConfig.caBundle (PEM, not base64); empty = system roots
  FailurePolicy failurePolicy = FailurePolicy::Fail;
  nlohmann::json namespaceSelector;  // metav1.LabelSelector; null/empty matches everything
  nlohmann::json objectSelector;     // metav1.LabelSelector; null/empty matches everything
  int timeoutSeconds = 10;
  // reinvocationPolicy: with IfNeeded, a webhook called before a later one
  // changed the pod is called once more after the first pass, as upstream's
  // dispatcher does (each call with a request uid of its own).
  enum class Reinvocation { Never, IfNeeded };
  Reinvocation reinvocationPolicy = Reinvocation::Never;
};

struct Options {
  std::string bindHost = "127.0.0.1";
  uint16_t port = 0;  // 0 = any free port; see FakeApiServer::port()
  // Valid bearer tokens; an empty list here disables authentication for the
  // server's life (setTokens({}) later rejects every request instead).
  std::vector<std::string> tokens = {"test-token"};
  // When non-empty: ca.crt, tls.crt, tls.key are written there (and reused if
  // present). Otherwise a fresh CA and serving cert live in a private temp dir.
  std::string certDir;
  // Bookmarks to watchers that asked for them (upstream: about once a minute).
  std::chrono::milliseconds bookmarkInterval{60'000};
  // Events kept for watches and continued lists; the oldest are forgotten beyond
  // this (as if compacted). 0 = keep everything until compact().
  std::size_t historyLimit = 0;
  int maxThreads = 256;  // concurrent connections (each open watch holds one)
  // Apply the API server's pod defaulting and default admission plugins
  // (ServiceAccount, DefaultTolerationSeconds, Priority) before webhooks.
  bool admissionDefaults = true;
  // Upstream's watch cache answers resourceVersion=0 lists in one page,
  // ignoring limit. Set false to paginate those too.
  bool ignoreLimitForResourceVersionZero = true;
};

// One request as the server saw it (for tests that assert on client behaviour).
struct RequestRecord {
  std::string method;
  std::string target;  // path and query
  int status = 0;
  bool watch = false;
};

// What the API server answers to a request: the HTTP status and the body
// (the object, or a metav1.Status when refused).
struct ApiResponse {
  int code = 0;
  nlohmann::json body;
  bool ok() const { return code >= 200 && code < 300; }
  std::string message() const;  // body.message for a Status, else ""
};

class FakeApiServer {
 public:
  static Result<std::unique_ptr<FakeApiServer>> start(Options options = {});
  ~FakeApiServer();  // stops serving; open watches are closed
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  uint16_t port() const;
  std::string url() const;  // "https://127.0.0.1:<port>"
  const std::string& caPem() const;
  std::string caFile() const;  // path of the CA certificate (PEM)
  // A kubeconfig (YAML) with server, CA data and the given token (default: the first).
  std::string kubeconfig(const std::string& token = "") const;
  Outcome writeKubeconfig(const std::string& path, const std::string& token = "") const;

  // --- Objects, driven from C++. These bypass authentication and faults. ----
  // Direct writes, like a controller's: no admission. Assign uid,
  // creationTimestamp and resourceVersion; generateName is honoured.
  // Objects of namespaced kinds get their namespace from metadata.namespace
  // (default "default"); `ns` is ignored for cluster-scoped kinds everywhere.
  Result<nlohmann::json> create(Kind kind, nlohmann::json object);
  // Exactly what POST /api/v1/namespaces/{ns}/pods does: defaulting, the
  // mutating webhooks, then store (201) or refuse (a Status). ns "" = the
  // pod's metadata.namespace or "default".
  ApiResponse createPod(nlohmann::json pod, const std::string& ns = "", bool dryRun = false);
  // POST .../pods/{name}/binding: 201, 404, 409 as upstream.
  ApiResponse bindPod(const std::string& ns, const std::string& name, const std::string& node,
                      const std::string& uid = "");
  // Replaces the stored object (matched by namespace/name), status included;
  // bumps resourceVersion. A metadata.resourceVersion that differs from the
  // stored one is an Error with upstream's Conflict message.
  Result<nlohmann::json> update(Kind kind, nlohmann::json object);
  // Exactly what the HTTP verbs do, without a socket (no auth, no faults):
  // the code and body a client would get. `sub` is "" or "status".
  ApiResponse put(Kind kind, const std::string& ns, const std::string& name, nlohmann::json object,
                  const std::string& sub = "");
  // contentType: "application/merge-patch+json" or "application/json-patch+json".
  ApiResponse patch(Kind kind, const std::string& ns, const std::string& name, const nlohmann::json& patch,
                    const std::string& contentType, const std::string& sub = "");
  // Read-modify-write of one object; the change is one MODIFIED event.
  Result<nlohmann::json> mutate(Kind kind, const std::string& ns, const std::string& name,
                                const std::function<void(nlohmann::json&)>& change);
  Outcome remove(Kind kind, const std::string& ns, const std::string& name);
  std::optional<nlohmann::json> get(Kind kind, const std::string& ns, const std::string& name) const;
  bool contains(Kind kind, const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> list(Kind kind) const;  // small clusters only: parses every object
  // The objects of one namespace (namespaced kinds), in name order.
  std::vector<nlohmann::json> list(Kind kind, const std::string& ns) const;
  // Visits each stored object as JSON text (with resourceVersion), in key order.
  void forEachText(Kind kind, const std::function<void(std::string_view)>& visit) const;
  std::size_t count(Kind kind) const;
  uint64_t resourceVersion() const;  // the latest revision

  // Bulk load for big clusters: an ordinary direct create, without rendering
  // the stored object back. Safe to call from several threads at once.
  Outcome load(Kind kind, std::string_view objectJson);
  Outcome load(Kind kind, nlohmann::json object);
  // Loads one object of any kind, told by its apiVersion and kind, or a List
  // (v1 List or any *List) of them; items of a typed list without their own
  // kind take the list's. Answers how many objects were loaded.
  Result<std::size_t> loadAny(nlohmann::json objectOrList);

  // Creates the Namespace object or replaces its labels (kubernetes.io/
  // metadata.name is always kept), as one ADDED or MODIFIED event. Its labels
  // feed webhook namespaceSelectors. Pods may also be created in namespaces
  // that were never created.
  void setNamespaceLabels(const std::string& ns, std::map<std::string, std::string> labels);
  void setMutatingWebhooks(std::vector<MutatingWebhook> webhooks);

  // --- Faults ---------------------------------------------------------------
  void setTokens(std::vector<std::string> tokens);  // rotation: exactly these are valid
  void expireToken(const std::string& token);
  // The next n API requests (not counting C++ calls) answer `status` with a
  // Status body; 429 and 503 carry Retry-After: retryAfterSeconds.
  void failNextRequests(int n, int status, int retryAfterSeconds = 1);
  // Cuts every open watch abruptly, in the middle of a chunk (no final chunk).
  void dropWatches();
  // Ends every open watch as a server-side timeout does: a clean final chunk.
  void timeoutWatches();
  // Forgets history up to now: watches from an older resourceVersion get an
  // ERROR event with 410; continue tokens issued before now get 410 Expired.
  void compact();
  // Sends a BOOKMARK now to each open watch that allowed bookmarks.
  void sendBookmarks();
  // Delay before each watch event is written (a slow stream). 0 = none.
  void setWatchEventDelay(std::chrono::milliseconds delay);

  // --- Observation ----------------------------------------------------------
  std::size_t openWatches() const;
  // Waits (bounded) until at least n watches are open. True if reached.
  bool waitForOpenWatches(std::size_t n, std::chrono::milliseconds timeout) const;
  std::vector<RequestRecord> requests() const;
  void clearRequests();
  uint64_t admissionCalls() const;  // webhook calls made (attempted)

  class Impl;

 private:
  explicit FakeApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::string_view kindName(Kind kind);  // "Node", "Pod", "Lease", ...

}  // namespace placer::fakeapi
