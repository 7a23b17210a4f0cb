#include "test/support/answer_fuzzer.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "certs/x509.h"
#include "scoring/cluster_state.h"
#include "scoring/engine.h"
#include "scoring/profile.h"
#include "test/support/cluster_generator.h"
#include "test/support/http_test_client.h"
#include "webhook/extender.h"
#include "webhook/metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/webhook_routes.h"

namespace placer::testing {

using nlohmann::json;

namespace {

// Refuses every binding, echoing the (untrusted) names it was given.
class RefusingBinder final : public PodBinder {
 public:
  Outcome bind(const std::string& podNamespace, const std::string& podName, const std::string& podUid,
               const std::string& nodeName) override {
    return Error{"refused binding " + podNamespace + "/" + podName + " (" + podUid + ") to " + nodeName};
  }
  Result<Pod> getPod(const std::string& podNamespace, const std::string& podName) override {
    return Error{"refused reading " + podNamespace + "/" + podName};
  }
};

GeneratorParams clusterParams(int nodes) {
  GeneratorParams params;
  params.nodes = nodes;
  params.podsPerNode = 5;
  return params;
}

json admissionReview(const json& pod, const std::string& uid) {
  return {{"kind", "AdmissionReview"},
          {"apiVersion", "admission.k8s.io/v1"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", pod["metadata"].value("namespace", "default")},
            {"operation", "CREATE"},
            {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", true}}}};
}

}  // namespace

struct FuzzServers::State {
  ClusterState cluster;
  MetricsRegistry metrics;
  RefusingBinder binder;
  std::string caPem;
  std::unique_ptr<HttpServer> webhook;
  std::unique_ptr<HttpServer> extender;
};

std::unique_ptr<FuzzServers> FuzzServers::start(int nodes) {
  auto servers = std::unique_ptr<FuzzServers>(new FuzzServers());
  servers->state_ = std::make_unique<State>();
  State& s = *servers->state_;
  const GeneratorParams params = clusterParams(nodes);
  s.cluster.update([&](MutableClusterView& view) { fillClusterView(view, params); });

  auto ca = certs::generateCa("fuzz-ca", 1, certs::KeyType::EcdsaP256);
  auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1"}, 1, certs::KeyType::EcdsaP256);
  auto cert = ServingCertificate::fromPem(serving->certificatePem, serving->privateKeyPem);
  if (!cert) return nullptr;
  s.caPem = ca->certificatePem;

  auto engine = std::make_shared<const Engine>(Profile::defaults());
  WebhookContext webhook;
  webhook.engine = engine;
  webhook.state = &s.cluster;
  webhook.metrics = &s.metrics;
  ListenerOptions w;
  w.name = "webhook";
  w.address = "127.0.0.1:0";
  w.certificate = std::shared_ptr<const ServingCertificate>(std::move(*cert));
  w.routes = webhookRoutes(webhook);
  w.workerThreads = 2;
  auto started = HttpServer::start(std::move(w));
  if (!started) return nullptr;
  s.webhook = std::move(*started);

  ExtenderContext extender;
  extender.engine = engine;
  extender.state = &s.cluster;
  extender.metrics = &s.metrics;
  extender.binder = &s.binder;
  ListenerOptions e;
  e.name = "extender";
  e.address = "127.0.0.1:0";
  e.routes = extenderRoutes(extender);
  e.workerThreads = 2;
  e.maxBodyBytes = 16 * 1024 * 1024;
  started = HttpServer::start(std::move(e));
  if (!started) return nullptr;
  s.extender = std::move(*started);
  return servers;
}

FuzzServers::~FuzzServers() {
  if (!state_) return;
  if (state_->webhook) state_->webhook->stop(std::chrono::seconds(5));
  if (state_->extender) state_->extender->stop(std::chrono::seconds(5));
}

uint16_t FuzzServers::webhookPort() const { return state_->webhook->port(); }
uint16_t FuzzServers::extenderPort() const { return state_->extender->port(); }
const std::string& FuzzServers::caPem() const { return state_->caPem; }

std::vector<Endpoint> fuzzEndpoints(int nodes) {
  const GeneratorParams params = clusterParams(nodes);
  std::vector<Endpoint> endpoints;

  Endpoint mutate{"/mutate", true, {}};
  for (int i = 0; i < 6; ++i) mutate.seeds.push_back(admissionReview(generatePendingPod(params, i), "uid-" + std::to_string(i)).dump());
  endpoints.push_back(std::move(mutate));

  json names = json::array();
  json nodeList = json::array();
  for (int i = 0; i < 4; ++i) {
    names.push_back(generatedNodeName(params, i));
    nodeList.push_back(generateNode(params, i));
  }
  std::vector<std::string> filterSeeds;
  for (int i = 0; i < 3; ++i) {
    const json pod = generatePendingPod(params, i);
    filterSeeds.push_back(json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump());
    filterSeeds.push_back(json{{"Pod", pod}, {"Nodes", {{"items", nodeList}}}, {"NodeNames", nullptr}}.dump());
    filterSeeds.push_back(json{{"pod", pod}, {"nodenames", names}}.dump());  // schedulers up to 1.15
  }
  for (const char* path : {"/filter", "/filter_onlyone", "/prioritize"}) endpoints.push_back({path, false, filterSeeds});

  Endpoint bind{"/bind", false, {}};
  for (int i = 0; i < 3; ++i)
    bind.seeds.push_back(json{{"PodName", "web-" + std::to_string(i)},
                              {"PodNamespace", "default"},
                              {"PodUID", "uid-" + std::to_string(i)},
                              {"Node", generatedNodeName(params, i)}}
                             .dump());
  endpoints.push_back(std::move(bind));

  Endpoint preempt{"/preempt", false, {}};
  const json victim = generatePod(params, 0);
  const std::string victimNode = victim["spec"]["nodeName"];
  const json pod = generatePendingPod(params, 0);
  preempt.seeds.push_back(json{{"Pod", pod},
                               {"NodeNameToMetaVictims",
                                {{victimNode, {{"Pods", {{{"UID", victim["metadata"]["uid"]}}}}, {"NumPDBViolations", 0}}}}}}
                              .dump());
  preempt.seeds.push_back(
      json{{"Pod", pod}, {"NodeNameToVictims", {{victimNode, {{"Pods", {victim}}, {"NumPDBViolations", 1}}}}}}.dump());
  endpoints.push_back(std::move(preempt));
  return endpoints;
}

std::string mutateRequest(const std::vector<std::string>& seeds, std::mt19937_64& random) {
  auto below = [&random](size_t n) { return n == 0 ? size_t{0} : size_t(random() % n); };
  std::string s = seeds[below(seeds.size())];
  // Bytes a JSON text or a UTF-8 decoder trips on.
  static const std::vector<std::string> kNasty = {
      "\"", "\\", "\\u", "\\ud800", "\\udc00x", "\\u0000", std::string(1, '\0'), "\xff", "\xc3", "\xe2\x82",
      "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "\x7f", "\n", "\t", "{", "}", "[", "]", ",", ":", "null",
      "1e999999", "-0", "99999999999999999999999", "-1", "0.5", "true", "\"\\u00e9\"", "\xe2\x80\xa8"};
  const int edits = 1 + int(below(4));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    switch (below(10)) {
      case 0:  // flip bytes
        for (int k = 0; k < 1 + int(below(8)); ++k) s[below(s.size())] = char(random() & 0xff);
        break;
      case 1:  // insert something nasty
        s.insert(below(s.size() + 1), kNasty[below(kNasty.size())]);
        break;
      case 2:  // remove a run
        s.erase(below(s.size()), 1 + below(16));
        break;
      case 3:  // truncate
        s.resize(below(s.size()));
        break;
      case 4: {  // replace a string's content with random bytes
        const size_t open = s.find('"', below(s.size()));
        const size_t close = open == std::string::npos ? open : s.find('"', open + 1);
        if (close == std::string::npos) break;
        std::string junk;
        for (size_t k = 0, n = 1 + below(24); k < n; ++k) junk += char(random() & 0xff);
        junk.erase(std::remove(junk.begin(), junk.end(), '"'), junk.end());
        s.replace(open + 1, close - open - 1, junk);
        break;
      }
      case 5: {  // deep nesting where a value goes
        const size_t at = s.find(':', below(s.size()));
        if (at == std::string::npos) break;
        const size_t depth = 1 + below(20000);
        const bool arrays = below(2) == 0;
        std::string nest;
        for (size_t k = 0; k < depth; ++k) nest += arrays ? "[" : "{\"a\":";
        nest += "1";
        for (size_t k = 0; k < depth; ++k) nest += arrays ? "]" : "}";
        s.insert(at + 1, nest + ",");
        break;
      }
      case 6: {  // a number where one is
        const size_t digit = s.find_first_of("0123456789", below(s.size()));
        if (digit == std::string::npos) break;
        s.insert(digit, below(2) ? "99999999999999999999999" : "-");
        break;
      }
      case 7: {  // keys in another case (Go decodes them case-insensitively)
        for (int k = 0; k < 8; ++k) {
          const size_t at = below(s.size());
          s[at] = char(std::islower(static_cast<unsigned char>(s[at])) ? std::toupper(static_cast<unsigned char>(s[at]))
                                                                      : std::tolower(static_cast<unsigned char>(s[at])));
        }
        break;
      }
      case 8: {  // splice another seed in
        const std::string& other = seeds[below(seeds.size())];
        const size_t from = below(other.size());
        s.insert(below(s.size() + 1), other.substr(from, below(other.size() - from + 1)));
        break;
      }
      default:  // a long string of a repeated nasty piece
        s.insert(below(s.size() + 1), [&] {
          std::string piece = kNasty[below(kNasty.size())];
          std::string out;
          for (size_t k = 0, n = 1 + below(2000); k < n; ++k) out += piece;
          return out;
        }());
        break;
    }
  }
  return s;
}

namespace {

// Empty when the answer is well-formed, else what is wrong with it.
std::string checkAnswer(const Endpoint& endpoint, const HttpReply& reply) {
  const std::string type = reply.header("content-type");
  if (type.rfind("application/json", 0) != 0) {
    if (reply.status == 200) return "a 200 that is not JSON (" + type + ")";
    return "";  // an error in plain text
  }
  json answer;
  try {
    answer = json::parse(reply.body);  // strict: invalid UTF-8 in a string is an error
  } catch (const std::exception& e) {
    return std::string("invalid JSON: ") + e.what();
  }
  if (endpoint.path == "/mutate" && reply.status == 200) {
    const json* response = answer.is_object() && answer.contains("response") ? &answer["response"] : nullptr;
    if (response == nullptr || !response->is_object() || !response->contains("uid") ||
        response->value("allowed", false) != true)
      return "a 200 from /mutate that is not an allowed AdmissionReview";
  }
  return "";
}

}  // namespace

FuzzReport fuzzEndpoint(const FuzzServers& servers, const Endpoint& endpoint, uint64_t seed, size_t count) {
  FuzzReport report;
  std::mt19937_64 random(seed ^ std::hash<std::string>{}(endpoint.path));
  ClientOptions options;
  options.port = endpoint.webhook ? servers.webhookPort() : servers.extenderPort();
  if (endpoint.webhook) options.caPem = servers.caPem();
  std::unique_ptr<HttpTestClient> client;
  for (size_t i = 0; i < count; ++i) {
    const std::string body = mutateRequest(endpoint.seeds, random);
    ++report.requests;
    if (!client) {
      auto connected = HttpTestClient::connect(options);
      if (!connected) {
        ++report.invalid;
        if (report.examples.size() < 5) report.examples.push_back("cannot connect: " + connected.error().message);
        continue;
      }
      client = std::move(*connected);
    }
    auto reply = client->request("POST", endpoint.path, body);
    if (!reply) {
      // The connection closed without an answer: only a malformed request may
      // close it, and then after a 400. A request sent whole always gets one.
      ++report.statuses[0];
      ++report.invalid;
      if (report.examples.size() < 5) report.examples.push_back("no answer: " + reply.error().message + "\nrequest: " + body.substr(0, 300));
      client.reset();
      continue;
    }
    ++report.statuses[reply->status];
    if (std::string problem = checkAnswer(endpoint, *reply); !problem.empty()) {
      ++report.invalid;
      if (report.examples.size() < 5)
        report.examples.push_back(problem + "\nanswer: " + reply->body.substr(0, 300) + "\nrequest: " + body.substr(0, 300));
    }
    if (!reply->keepAlive) client.reset();
  }
  return report;
}

}  // namespace placer::testing
