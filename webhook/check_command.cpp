// placer check [--kubeconfig FILE] [--webhook-config NAME] [--timeout D]
//
// Checks an installation the way the API server will use it, in the manner of
// cert-manager's `cmctl check api`, one line per fact with a verdict:
//   - the MutatingWebhookConfiguration exists and names a Service;
//   - the Service exists and has Ready endpoints (EndpointSlices);
//   - on each Ready endpoint, a TLS handshake verified against the webhook's
//     caBundle for the name the API server uses (<service>.<namespace>.svc),
//     as the API server does it;
//   - the served certificate's expiry;
//   - each replica's readiness and view sync (its /readyz over that connection);
//   - which namespaces the webhook's namespaceSelector opts in.
// Exit 0 when everything holds, 1 when something does not (the FAIL lines say
// what), 2 when the check itself cannot run (bad flags, no credentials, the
// API server unreachable).
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "certs/openssl_error.h"
#include "scoring/base64.h"
#include "scoring/config.h"
#include "webhook/cli.h"
#include "webhook/kube/api_client.h"
#include "webhook/kube/kube_config.h"

namespace placer {
namespace {

using nlohmann::json;

constexpr const char* kCheckUsage =
    "usage: placer check [--kubeconfig FILE] [--webhook-config NAME] [--timeout D]\n"
    "\n"
    "Checks placer's installation: the webhook configuration, its Service and Ready\n"
    "endpoints, that the caBundle verifies the certificate each endpoint serves, its\n"
    "expiry, each replica's readiness and sync, and which namespaces are opted in.\n"
    "Exit 0 when everything holds, 1 otherwise, 2 when the check cannot run.\n"
    "\n"
    "  --kubeconfig FILE       API server credentials (default: in-cluster)\n"
    "  --webhook-config NAME   the MutatingWebhookConfiguration (default placer)\n"
    "  --timeout D             per connection (Go duration, default 10s)\n";

// Renewal is due 30 days before expiry; 21 left means it has been failing.
constexpr auto kExpiryWarning = std::chrono::hours(24 * 21);

enum class Verdict { Ok, Warn, Fail, Info };

class Report {
 public:
  void line(Verdict v, const std::string& text) {
    const char* tag = v == Verdict::Ok ? "OK  " : v == Verdict::Warn ? "WARN" : v == Verdict::Fail ? "FAIL" : "INFO";
    std::printf("%s  %s\n", tag, text.c_str());
    std::fflush(stdout);
    if (v == Verdict::Fail) failed_ = true;
  }
  bool failed() const { return failed_; }

 private:
  bool failed_ = false;
};

struct Api {
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<kube::Connection> connection;
  std::chrono::milliseconds timeout;

  // The object, nothing for 404, an error for anything else.
  Result<std::optional<json>> get(const std::string& path) {
    auto r = connection->send("GET", path, "", "", timeout);
    if (!r) return Error{"GET " + path + ": " + r.error().message};
    if (r->status == 404) return std::optional<json>();
    if (r->status != 200) {
      json status = json::parse(r->body, nullptr, false);
      std::string message = status.is_object() ? status.value("message", "") : r->body.substr(0, 200);
      return Error{"GET " + path + ": HTTP " + std::to_string(r->status) + ": " + message};
    }
    json object = json::parse(r->body, nullptr, false);
    if (object.is_discarded()) return Error{"GET " + path + ": the answer is not JSON"};
    return std::optional<json>(std::move(object));
  }
};

std::string str(const json& object, std::initializer_list<const char*> path, std::string fallback = "") {
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return fallback;
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : at->is_number() ? at->dump() : fallback;
}

// A LabelSelector as a labelSelector query value; nothing when it cannot be
// written as one (an operator it does not know).
std::optional<std::string> selectorQuery(const json& selector) {
  std::vector<std::string> terms;
  if (selector.is_object()) {
    const json labels = selector.value("matchLabels", json::object());
    for (const auto& [k, v] : labels.items())
      terms.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
    for (const json& e : selector.value("matchExpressions", json::array())) {
      const std::string key = e.value("key", ""), op = e.value("operator", "");
      std::string values;
      for (const json& v : e.value("values", json::array())) values += (values.empty() ? "" : ",") + v.get<std::string>();
      if (op == "In") terms.push_back(key + " in (" + values + ")");
      else if (op == "NotIn") terms.push_back(key + " notin (" + values + ")");
      else if (op == "Exists") terms.push_back(key);
      else if (op == "DoesNotExist") terms.push_back("!" + key);
      else return std::nullopt;
    }
  }
  std::string out;
  for (const std::string& t : terms) out += (out.empty() ? "" : ",") + t;
  return out;
}

std::string formatDate(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

// What one endpoint showed: a TLS handshake verified as the API server
// verifies it, then GET /readyz on the same connection.
struct Probe {
  std::string error;         // could not connect or handshake at all
  std::string verifyError;   // the handshake completed but the chain or name did not verify
  std::optional<std::chrono::system_clock::time_point> notAfter;
  int readyzStatus = 0;
};

int connectWithTimeout(const std::string& host, uint16_t port, std::chrono::milliseconds timeout, std::string& error) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    error = gai_strerror(rc);
    return -1;
  }
  int fd = socket(found->ai_family, SOCK_STREAM, 0);
  if (fd < 0) {
    error = strerror(errno);
    freeaddrinfo(found);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int rc = connect(fd, found->ai_addr, found->ai_addrlen);
  const int connectError = errno;
  freeaddrinfo(found);
  if (rc != 0 && connectError == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = poll(&p, 1, int(timeout.count())) == 1 ? 0 : -1;
    int soError = 0;
    socklen_t len = sizeof soError;
    if (rc == 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len);
    if (rc != 0 || soError != 0) {
      error = rc != 0 ? "connection timed out" : std::string(strerror(soError));
      close(fd);
      return -1;
    }
  } else if (rc != 0) {
    error = strerror(connectError);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  timeval tv{long(timeout.count() / 1000), long(timeout.count() % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

Probe probeEndpoint(const std::string& host, uint16_t port, const std::string& caBundlePem, const std::string& serverName,
                    std::chrono::milliseconds timeout) {
  Probe probe;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  {
    BIO* bio = BIO_new_mem_buf(caBundlePem.data(), int(caBundlePem.size()));
    while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, ca);
      X509_free(ca);
    }
    BIO_free(bio);
    ERR_clear_error();
  }
  // Verification is judged after the handshake (SSL_get_verify_result), so
  // that a wrong caBundle is told apart from an endpoint that does not answer.
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  int fd = connectWithTimeout(host, port, timeout, probe.error);
  if (fd < 0) return probe;
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  SSL_set_tlsext_host_name(ssl.get(), serverName.c_str());
  X509_VERIFY_PARAM_set1_host(SSL_get0_param(ssl.get()), serverName.c_str(), 0);
  if (SSL_connect(ssl.get()) != 1) {
    probe.error = "TLS handshake failed: " + certs::takeOpensslError("connection closed during the handshake");
    close(fd);
    return probe;
  }
  if (long v = SSL_get_verify_result(ssl.get()); v != X509_V_OK) probe.verifyError = X509_verify_cert_error_string(v);
  if (X509* peer = SSL_get1_peer_certificate(ssl.get())) {
    std::tm tm{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(peer), &tm) == 1)
      probe.notAfter = std::chrono::system_clock::from_time_t(timegm(&tm));
    X509_free(peer);
  }
  const std::string request = "GET /readyz HTTP/1.1\r\nHost: " + serverName + "\r\nConnection: close\r\n\r\n";
  if (SSL_write(ssl.get(), request.data(), int(request.size())) == int(request.size())) {
    char buf[256];
    int n = SSL_read(ssl.get(), buf, sizeof buf - 1);
    if (n > 12 && std::string_view(buf, 5) == "HTTP/") probe.readyzStatus = std::atoi(buf + 9);
  }
  SSL_shutdown(ssl.get());
  close(fd);
  return probe;
}

struct Endpoint {
  std::string address;
  uint16_t port = 0;
  bool ready = true;
  std::string pod;  // targetRef name, if any
};

int fail(const std::string& message) {
  std::fprintf(stderr, "placer check: %s\n", message.c_str());
  return 2;
}

int check(Api& api, const std::string& webhookConfig) {
  Report report;
  auto mwc = api.get("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/" + kube::urlEncode(webhookConfig));
  if (!mwc) return fail(mwc.error().message);
  if (!*mwc) {
    report.line(Verdict::Fail, "webhook configuration \"" + webhookConfig +
                                   "\": not found: the API server calls nothing (install with `kubectl apply -k "
                                   "deploy/` or the Helm chart)");
    return 1;
  }
  const json& webhooks = (**mwc).value("webhooks", json::array());
  if (webhooks.empty()) {
    report.line(Verdict::Fail, "webhook configuration \"" + webhookConfig + "\": has no webhooks");
    return 1;
  }
  const json& hook = webhooks[0];
  const std::string hookName = hook.value("name", "");
  const json& ref = hook.value("clientConfig", json::object()).value("service", json());
  if (!ref.is_object()) {
    report.line(Verdict::Fail, "webhook " + hookName + ": clientConfig names no Service");
    return 1;
  }
  const std::string ns = str(ref, {"namespace"}), svcName = str(ref, {"name"});
  const int svcPort = ref.value("port", 443);
  report.line(Verdict::Ok, "webhook configuration \"" + webhookConfig + "\": webhook " + hookName + " calls service " +
                               ns + "/" + svcName + ":" + std::to_string(svcPort) + str(ref, {"path"}) +
                               ", failurePolicy " + hook.value("failurePolicy", "Fail") + ", timeout " +
                               std::to_string(hook.value("timeoutSeconds", 10)) + "s");
  const auto decodedBundle = base64Decode(str(hook, {"clientConfig", "caBundle"}));
  const std::string caBundle = decodedBundle ? *decodedBundle : std::string();
  if (caBundle.empty())
    report.line(Verdict::Fail, "webhook " + hookName + ": no caBundle (placer certs ensure or cert-manager fills it)");

  // Which namespaces are opted in.
  const json selector = hook.value("namespaceSelector", json::object());
  if (auto query = selectorQuery(selector)) {
    auto namespaces = api.get("/api/v1/namespaces" + (query->empty() ? "" : "?labelSelector=" + kube::urlEncode(*query)));
    if (!namespaces) return fail(namespaces.error().message);
    std::string names;
    size_t count = 0;
    if (*namespaces)
      for (const json& n : (**namespaces).value("items", json::array())) {
        names += (names.empty() ? "" : ", ") + str(n, {"metadata", "name"});
        ++count;
      }
    const std::string which = query->empty() ? "every namespace" : "namespaces with " + *query;
    if (count == 0)
      report.line(Verdict::Warn, "namespaces opted in (" + which + "): none, so placer places no pod; opt one in with "
                                 "`kubectl label namespace NAME placer.io/enabled=true`");
    else
      report.line(Verdict::Info, "namespaces opted in (" + which + "): " + std::to_string(count) + ": " + names);
  } else {
    report.line(Verdict::Info, "namespaces opted in: namespaceSelector " + selector.dump());
  }

  // The Service and its Ready endpoints.
  auto service = api.get("/api/v1/namespaces/" + kube::urlEncode(ns) + "/services/" + kube::urlEncode(svcName));
  if (!service) return fail(service.error().message);
  if (!*service) {
    report.line(Verdict::Fail, "service " + ns + "/" + svcName + ": not found");
    return 1;
  }
  std::string portName;
  json targetPort;
  for (const json& p : (**service).value("spec", json::object()).value("ports", json::array()))
    if (p.value("port", 0) == svcPort) portName = p.value("name", ""), targetPort = p.value("targetPort", json());
  if (targetPort.is_null() && portName.empty()) {
    report.line(Verdict::Fail, "service " + ns + "/" + svcName + ": has no port " + std::to_string(svcPort));
    return 1;
  }
  auto slices = api.get("/apis/discovery.k8s.io/v1/namespaces/" + kube::urlEncode(ns) +
                        "/endpointslices?labelSelector=" + kube::urlEncode("kubernetes.io/service-name=" + svcName));
  if (!slices) return fail(slices.error().message);
  std::vector<Endpoint> endpoints;
  if (*slices)
    for (const json& slice : (**slices).value("items", json::array())) {
      uint16_t port = 0;
      for (const json& p : slice.value("ports", json::array()))
        if (p.value("name", "") == portName) port = uint16_t(p.value("port", 0));
      if (port == 0) continue;
      for (const json& e : slice.value("endpoints", json::array())) {
        const json& conditions = e.value("conditions", json::object());
        const bool ready = !conditions.contains("ready") || conditions["ready"].is_null() || conditions["ready"] == true;
        for (const json& a : e.value("addresses", json::array()))
          endpoints.push_back({a.get<std::string>(), port, ready, str(e, {"targetRef", "name"})});
      }
    }
  size_t ready = 0;
  for (const Endpoint& e : endpoints) ready += e.ready;
  const std::string svc = "service " + ns + "/" + svcName;
  if (ready == 0) {
    report.line(Verdict::Fail, svc + ": no Ready endpoints (" + std::to_string(endpoints.size()) +
                                   " not ready): the API server fails open on every pod");
  } else {
    report.line(Verdict::Ok, svc + ": " + std::to_string(ready) + " Ready endpoint" + (ready == 1 ? "" : "s") +
                                 (endpoints.size() > ready ? ", " + std::to_string(endpoints.size() - ready) + " not ready" : ""));
  }

  // Each endpoint as the API server reaches it.
  const std::string serverName = svcName + "." + ns + ".svc";
  for (const Endpoint& e : endpoints) {
    const std::string who = (e.pod.empty() ? "" : "replica " + e.pod + " ") + "at " + e.address + ":" + std::to_string(e.port);
    if (!e.ready) {
      report.line(Verdict::Warn, who + ": not Ready");
      continue;
    }
    Probe probe = probeEndpoint(e.address, e.port, caBundle, serverName, api.timeout);
    if (!probe.error.empty()) {
      report.line(Verdict::Fail, who + ": " + probe.error);
      continue;
    }
    if (!caBundle.empty()) {
      if (probe.verifyError.empty())
        report.line(Verdict::Ok, who + ": caBundle verifies the served certificate for " + serverName);
      else
        report.line(Verdict::Fail, who + ": caBundle does not verify the served certificate for " + serverName + ": " +
                                       probe.verifyError + " (the API server refuses the handshake and fails open)");
    }
    if (probe.notAfter) {
      const auto left = *probe.notAfter - std::chrono::system_clock::now();
      const long days = long(std::chrono::duration_cast<std::chrono::hours>(left).count() / 24);
      const std::string when = "certificate expires " + formatDate(*probe.notAfter) + " (" + std::to_string(days) + " days)";
      report.line(left <= std::chrono::seconds(0) ? Verdict::Fail : left < kExpiryWarning ? Verdict::Warn : Verdict::Ok,
                  who + ": " + when);
    }
    if (probe.readyzStatus == 200)
      report.line(Verdict::Ok, who + ": ready, view synced");
    else if (probe.readyzStatus == 503)
      report.line(Verdict::Fail, who + ": not ready: its view of the cluster is not synced");
    else
      report.line(Verdict::Fail, who + ": /readyz answered " +
                                     (probe.readyzStatus ? "HTTP " + std::to_string(probe.readyzStatus) : "nothing"));
  }
  return report.failed() ? 1 : 0;
}

}  // namespace

int runCheck(int argc, char** argv) {
  std::string kubeconfig, webhookConfig = "placer";
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kCheckUsage, stdout);
      return 0;
    }
    std::string_view flag = arg.substr(0, arg.find('='));
    std::string value;
    if (flag.size() < arg.size()) {
      value = std::string(arg.substr(flag.size() + 1));
    } else if (i + 1 < argc && arg.rfind("--", 0) == 0) {
      value = argv[++i];
    }
    if (flag == "--kubeconfig") {
      kubeconfig = value;
    } else if (flag == "--webhook-config") {
      webhookConfig = value;
    } else if (flag == "--timeout") {
      auto d = parseGoDuration(value);
      if (!d || d->count() <= 0) return fail("--timeout must be a positive duration such as 10s, not \"" + value + "\"");
      timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    } else {
      std::fputs(kCheckUsage, stderr);
      return fail("unknown argument \"" + std::string(arg) + "\"");
    }
    if (value.empty()) return fail(std::string(flag) + " needs a value");
  }
  auto config = kubeconfig.empty() ? kube::loadInClusterConfig() : kube::loadKubeconfigFile(kubeconfig);
  if (!config) return fail(config.error().message);
  kube::ApiClientOptions options;
  options.connectTimeout = timeout;
  auto client = kube::ApiClient::create(*config, options);
  if (!client) return fail(client.error().message);
  Api api{std::move(*client), nullptr, timeout};
  api.connection = std::make_unique<kube::Connection>(*api.client);
  try {
    return check(api, webhookConfig);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}

}  // namespace placer
