#pragma once
// A fake kube-apiserver for tests and benchmarks: real TLS, bearer tokens, real
// HTTP/1.1 chunked watch streams, and the wire behaviour of the upstream server
// (staging/src/k8s.io/apiserver) for the parts placer uses:
//
//   GET  /api/v1/nodes, /api/v1/pods, /api/v1/namespaces/{ns}/pods
//        limit/continue pagination, ListMeta.resourceVersion, fieldSelector,
//        labelSelector; ?watch=1|true with resourceVersion, allowWatchBookmarks,
//        timeoutSeconds (a stream of concatenated WatchEvent objects, one chunk
//        per event)
//   GET  /api/v1/nodes/{name}, /api/v1/namespaces/{ns}/pods/{name}
//   POST /api/v1/nodes, /api/v1/namespaces/{ns}/pods (pods go through the
//        admission chain: defaulting, then the configured mutating webhooks)
//   PUT  /api/v1/nodes/{name}, /api/v1/namespaces/{ns}/pods/{name}[/status]
//   DELETE the same object paths
//   POST /api/v1/namespaces/{ns}/pods/{name}/binding
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
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::fakeapi {

enum class Kind { Node, Pod };

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
  // Pods get their namespace from metadata.namespace (default "default").
  Result<nlohmann::json> create(Kind kind, nlohmann::json object);
  // Exactly what POST /api/v1/namespaces/{ns}/pods does: defaulting, the
  // mutating webhooks, then store (201) or refuse (a Status). ns "" = the
  // pod's metadata.namespace or "default".
  ApiResponse createPod(nlohmann::json pod, const std::string& ns = "", bool dryRun = false);
  // POST .../pods/{name}/binding: 201, 404, 409 as upstream.
  ApiResponse bindPod(const std::string& ns, const std::string& name, const std::string& node,
                      const std::string& uid = "");
  // Replaces the stored object (matched by namespace/name); bumps resourceVersion.
  Result<nlohmann::json> update(Kind kind, nlohmann::json object);
  // Read-modify-write of one object; the change is one MODIFIED event.
  Result<nlohmann::json> mutate(Kind kind, const std::string& ns, const std::string& name,
                                const std::function<void(nlohmann::json&)>& change);
  Outcome remove(Kind kind, const std::string& ns, const std::string& name);
  std::optional<nlohmann::json> get(Kind kind, const std::string& ns, const std::string& name) const;
  bool contains(Kind kind, const std::string& ns, const std::string& name) const;
  std::vector<nlohmann::json> list(Kind kind) const;  // small clusters only: parses every object
  // Visits each stored object as JSON text (with resourceVersion), in key order.
  void forEachText(Kind kind, const std::function<void(std::string_view)>& visit) const;
  std::size_t count(Kind kind) const;
  uint64_t resourceVersion() const;  // the latest revision

  // Bulk load for big clusters: an ordinary direct create, without rendering
  // the stored object back. Safe to call from several threads at once.
  Outcome load(Kind kind, std::string_view objectJson);
  Outcome load(Kind kind, nlohmann::json object);

  // Namespaces exist implicitly; their labels feed webhook namespaceSelectors.
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

std::string_view kindName(Kind kind);  // "Node" | "Pod"

}  // namespace placer::fakeapi
