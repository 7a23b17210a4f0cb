// Load generator for the admission webhook: keep-alive TLS clients posting
// realistic AdmissionReviews to /mutate against a large generated view, and
// the same payloads to a trivial route on the same server, so the ratio shows
// what the decision costs over the bare TLS round trip.
//
//   admission_loadgen [--nodes 5000] [--pods-per-node 30] [--clients 8]
//                     [--seconds 5] [--workers 8] [--route both|mutate|echo|hold]
//                     [--rate R] [--profile default|trivial] [--dry-run 1]
//                     [--watch-rate W] [--decision-cache ENTRIES] [--distinct N]
//
// Closed loop (default): each client sends its next request as soon as the
// previous answer arrives; the figure is the maximum throughput, and latency
// at that load (with 8 clients, Little's law ties the two together).
// Open loop (--rate R, requests per second over all clients): each client
// sends on a fixed schedule (client i at t0 + (i + k * clients) / R) and
// latency is measured from the scheduled send time, so a slow answer that
// delays the next send is counted against that send too (no coordinated
// omission).
//
// --profile trivial disables every plugin (every node feasible, total 0): what
// remains is the webhook's own cost per admission (TLS, decode, the engine's
// bare loop over the nodes, reserve, patch, log, metrics).
//
// --watch-rate W hands W pod events per second to the watch's handler while
// /mutate runs, as the watch delivers them: MODIFIED events of bound pods, one
// in three changing the pod (a label), two in three changing nothing (status).
// A cluster admitting 2,000 pods/s sends a few events per created pod.
//
// --shape N sends only pending pods of the generator's shape N (0 system
// default spreading, 6 required anti-affinity on the hostname, 7 required
// affinity on the zone, 8 a DoNotSchedule zone spread; see
// generatePendingPod), 512 replicas of different Deployments.
//
// --distinct N cycles through N distinct pending pods (default 512), each of
// its own Deployment, so N pod shapes for the decision cache (issue 16 names
// 256).
//
// --warmup S sends /mutate for S seconds, as the timed run does (same
// clients, rate and pods), after the reset and before the timed run; its
// latencies are reported on a line of their own and its admissions are not
// counted in the timed run's. The first pass over the distinct pods fills the
// decision cache (a miss costs about 1.3 decisions without the cache): its
// queue shows in the first quarter second of an open-loop run (p99 ~35 ms at
// 2,000/s) and nowhere after, as on a placer that has been serving a while.
// Without it (the default) the figures include that start.
//
// --decision-cache ENTRIES sizes the engine's decision cache (default: the
// engine's default; 0: none, every decision computes every node), for an A/B
// of the cache in one binary.
//
// --events 1 follows every decision as `placer serve` does on a live cluster
// (PlacedPods records it) and, as the pods appear in the watch (the API
// server model below hands them to the pod handler's observer after their
// answer), queues its Scheduled Event, which the recorder POSTs over
// keep-alive TLS to an Events API in this process that accepts every Event
// (201): the whole path, the sink's own cost included (so the A/B against
// --events 0 is an upper bound of what the Event machinery costs admission).
// --events 2 sends them to an Events API that refuses connections
// (127.0.0.1:1) instead: the recorder backs off and drops, as it would during
// an outage. The in-process Events API runs in every mode and reports how
// many Events it received (0 with --events 0 or 2).
//
// The Events API in a process of its own, as on a cluster, where it is the
// API server's and runs on the API server's cores (issue 19's A/B):
//   admission_loadgen --events-sink DIR [--nodes N --shape S]   writes DIR/port, DIR/ca.pem, DIR/pid; serves until SIGTERM
// and --events-api DIR in the server (--serve, or the single process) points
// the recorder at it (--events 1); in the clients (--target, or the single
// process) it is where the Events received are counted (GET
// /loadgen/events-received). A --target run with --server-pid and
// --sink-pid prints the CPU seconds each process used from just before the
// timed run until its Events are through (/proc/PID/stat), and the share of
// the server's Event sender thread (named placer-events).
//
// --dry-run 1 sends dryRun reviews: the same decisions, nothing reserved, so
// the difference to a normal run is what reserving costs (locks included).
//
// The API server behind the webhook (--appear-ms MS, default 10): each pod
// admitted with a node is created as the patch says (spec.nodeName, the
// placer.io annotations, a uid and a name of its own) and reaches placer's pod
// watch MS milliseconds after its answer, as an ADDED event's bytes handed to
// the feed's pod handler (kube::makePodHandler: parsed, decoded and applied in
// batches, as `placer serve` does). That releases its reservation and counts
// it as a bound pod, so reservations in flight are the last MS milliseconds'
// admissions, as on a live cluster. Before each /mutate run the pods created
// by earlier runs are deleted and every reservation still held is released
// (route /loadgen/reset, so also with --serve / --target): successive runs
// start from the same view. --appear-ms -1: pods never appear, reservations
// stay until their 30 s lifetime ends (the loadgen before this option).
//
// --connections N opens N more TLS keep-alive connections before the run, each
// sending one request, and holds them idle throughout (an API server's pool:
// many connections, few active). --slowloris N keeps N connections sending
// their headers a byte every --slowloris-interval ms (default 100; reopened
// when the server closes them at its header deadline), and N/4 more that
// connect and never start TLS.
//
// Two processes, so the server's memory is its own:
//   admission_loadgen --serve DIR [view and server options]   writes DIR/port and DIR/ca.pem, serves until SIGTERM
//   admission_loadgen --target DIR [client options] [--server-pid PID]
// --server-pid reports the server's RSS (from /proc) before and after the
// idle connections are opened. A client process with --route hold only opens
// --connections and --slowloris and holds them for --seconds, so that the
// admissions measured beside them come from another process.
//
// Server and clients share the machine (the figures are for that setup).
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "certs/x509.h"
#include "scoring/base64.h"
#include "scoring/cluster_state.h"
#include "scoring/config.h"
#include "scoring/engine.h"
#include "scoring/json_value.h"
#include "scoring/profile.h"
#include "test/support/cluster_generator.h"
#include "test/support/http_test_client.h"
#include "webhook/http_server.h"
#include "webhook/kube/event_recorder.h"
#include "webhook/kube/kube_feed.h"
#include "webhook/placed_pods.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/serving_certificate.h"
#include "webhook/webhook_routes.h"

using namespace placer;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kDefaultPayloads = 512;  // distinct pending pods sent unless --distinct says otherwise

struct Options {
  int nodes = 5000;
  int podsPerNode = 30;
  int clients = 8;
  double seconds = 5;
  int workers = 8;
  std::string route = "both";
  double rate = 0;  // > 0: open loop at this many requests per second
  std::string profile = "default";
  bool dryRun = false;  // dryRun reviews: decisions without reservations
  double watchRate = 0;  // > 0: pod MODIFIED events applied to the view per second meanwhile
  size_t decisionCache = Engine::kDefaultCacheCapacity;
  double warmup = 0;  // --warmup S: /mutate runs this long, as the timed run, before it (reported apart)
  int distinct = kDefaultPayloads;  // --distinct N: how many distinct pending pods (shapes) the clients cycle through
  int shape = -1;  // --shape N: only pending pods of shape N (index % kPendingShapes); -1: the mix
  int events = 0;  // 1: decisions followed (PlacedPods) and told as Events to an accepting Events API; 2: a failing one
  int connections = 0;  // idle keep-alive connections held open during the run
  int slowloris = 0;    // connections sending their headers a byte at a time
  int slowlorisIntervalMs = 100;
  int appearMs = 10;  // the API server's pod watch shows an admitted pod this long after its answer; -1: never
  std::string serveDir;   // --serve: server only
  std::string targetDir;  // --target: clients only, against a --serve process
  int serverPid = 0;
  std::string eventsSinkDir;  // --events-sink: the Events API only
  std::string eventsApiDir;   // --events-api: the Events API of an --events-sink process
  int sinkPid = 0;
  // --latency-log FILE: one line per answered request (its start and its
  // latency), or, for --route hold, one line per slowloris pass (its start and
  // the connections it reopened); times in ms of CLOCK_MONOTONIC, comparable
  // across processes.
  std::string latencyLog;
};

double monotonicMs(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

// The resident set of a process, in MB (VmRSS).
double rssMb(int pid) {
  std::ifstream in("/proc/" + (pid > 0 ? std::to_string(pid) : std::string("self")) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// CPU seconds (user + system) a process, or one of its threads, has used so far.
double cpuSeconds(const std::string& statPath) {
  const std::string text = [&] {
    std::ifstream in(statPath);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }();
  // Fields after the command name (which may hold spaces): state is field 3,
  // utime 14, stime 15.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i >= 14) ticks += std::stod(field);
  return ticks / double(sysconf(_SC_CLK_TCK));
}
double processCpuSeconds(int pid) { return cpuSeconds("/proc/" + std::to_string(pid) + "/stat"); }
// The CPU seconds of the process's threads named `name` (/proc/PID/task/*/comm).
double threadCpuSeconds(int pid, const std::string& name) {
  double total = 0;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string threadName;
    std::getline(comm, threadName);
    if (threadName == name) total += cpuSeconds(task.path() / "stat");
  }
  return total;
}

void raiseOpenFileLimit() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

std::string trimmedLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Idle keep-alive connections (one request each, then held) and slowloris
// connections, kept up until stop().
class BackgroundConnections {
 public:
  BackgroundConnections(uint16_t port, std::string caPem) : port_(port), caPem_(std::move(caPem)) {}
  ~BackgroundConnections() { stop(); }

  size_t openIdle(int n) {
    for (int i = 0; i < n; ++i) {
      auto c = connect();
      if (!c) continue;
      auto r = (*c)->request("POST", "/echo", "{}");
      if (r && r->status == 200) idle_.push_back(std::move(*c));
    }
    return idle_.size();
  }

  void startSlowloris(int n, int intervalMs, std::string passLog = {}) {
    if (n <= 0) return;
    thread_ = std::thread([this, n, intervalMs, passLog] {
      std::FILE* log = passLog.empty() ? nullptr : std::fopen(passLog.c_str(), "w");
      std::vector<std::unique_ptr<testing::HttpTestClient>> slow(static_cast<size_t>(n));
      std::vector<int> silent(size_t(n / 4), -1);
      const std::string header = "POST /mutate HTTP/1.1\r\nHost: placer\r\nContent-Type: application/json\r\n";
      std::vector<size_t> sent(static_cast<size_t>(n), 0);
      while (!stopping_.load()) {
        const double passStart = monotonicMs(std::chrono::steady_clock::now());
        const size_t reopenedBefore = reopened_.load();
        for (size_t i = 0; i < slow.size() && !stopping_.load(); ++i) {
          if (!slow[i]) {
            auto c = connect();
            if (!c) continue;
            slow[i] = std::move(*c);
            sent[i] = 0;
            ++reopened_;
          }
          // One byte of a header that never ends.
          char byte = header[sent[i] % header.size()];
          if (!slow[i]->writeRaw(std::string_view(&byte, 1))) slow[i].reset();
          ++sent[i];
        }
        for (int& fd : silent) {
          char probe;
          if (fd >= 0 && ::recv(fd, &probe, 1, MSG_DONTWAIT) == 0) {  // closed by the server
            ::close(fd);
            fd = -1;
          }
          if (fd < 0) fd = rawConnect();
        }
        if (log != nullptr) {  // flushed: the holder ends by a signal
          std::fprintf(log, "%.3f %zu\n", passStart, reopened_.load() - reopenedBefore);
          std::fflush(log);
        }
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, std::chrono::milliseconds(intervalMs), [this] { return stopping_.load(); });
      }
      for (int fd : silent)
        if (fd >= 0) ::close(fd);
      if (log != nullptr) std::fclose(log);
    });
  }

  size_t reopened() const { return reopened_.load(); }

  void stop() {
    stopping_ = true;
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    idle_.clear();
  }

 private:
  Result<std::unique_ptr<testing::HttpTestClient>> connect() {
    testing::ClientOptions co;
    co.port = port_;
    co.caPem = caPem_;
    return testing::HttpTestClient::connect(co);
  }
  int rawConnect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  uint16_t port_;
  std::string caPem_;
  std::vector<std::unique_ptr<testing::HttpTestClient>> idle_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> reopened_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

constexpr std::string_view kUidPlaceholder = "00000000-0000-4000-8000-000000000000";

// One request body per distinct pending pod; the uid is rewritten in place per request.
struct Payload {
  std::string body;
  size_t uidOffset;
  int podIndex;  // generatePendingPod's index
};

// A request uid: a counter, with the pending pod's generator index in the
// second group, so the API server model (in another process with --serve)
// knows which pod a review created.
std::string requestUid(uint64_t n, int podIndex) {
  char uid[40];
  std::snprintf(uid, sizeof uid, "%08llx-%04x-4000-8000-%012llx", (unsigned long long)(n >> 32),
                unsigned(podIndex) & 0xffffu, (unsigned long long)(n & 0xffffffffffffULL));
  return uid;
}

// What the loadgen does in the API server's place (see --appear-ms above).
// admitted() is called by the /mutate route's workers, reset() between runs.
// Thread-safety: every method may be called from any thread.
class ApiServerModel {
 public:
  ApiServerModel(ClusterState& state, const GeneratorParams& params, int appearMs, PodObserver* observer)
      : state_(state), params_(params), delay_(std::chrono::milliseconds(appearMs)), observer_(observer),
        handler_(kube::makePodHandler(state, observer)), thread_([this] { run(); }) {}
  ~ApiServerModel() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  // The webhook answered `response` to a review: a pod assigned to a node is
  // created (the patch applied) and shows in the watch after the delay.
  void admitted(std::string_view response) {
    const std::string_view uid = field(response, "\"uid\":\"");
    const std::string_view patch = field(response, "\"patch\":\"");
    if (uid.size() != kUidPlaceholder.size() || patch.empty()) return;
    auto decoded = base64Decode(patch);
    if (!decoded) return;
    const std::string_view node = field(*decoded, "\"/spec/nodeName\",\"value\":\"");
    if (node.empty()) return;
    const int podIndex = std::stoi(std::string(uid.substr(9, 4)), nullptr, 16);
    std::string podUid(uid);
    podUid[14] = '5';  // the API server's own uid for the pod, not the request's
    std::string text = podText(podIndex, podUid, uid, node);
    std::lock_guard lock(mutex_);
    created_.push_back(podUid);
    queue_.push_back({Clock::now() + delay_, std::move(text)});
    wake_.notify_one();
  }

  // Pods handed to the watch so far.
  uint64_t appeared() const { return appeared_.load(); }

  // Deletes every pod created so far and releases every reservation still
  // held; pods not yet shown in the watch never will be.
  void reset() {
    std::vector<std::string> created;
    {
      std::lock_guard lock(mutex_);
      queue_.clear();
      created.swap(created_);
    }
    {
      // A new handler: the old one applies what it has queued before it goes.
      std::lock_guard lock(handlerMutex_);
      handler_.reset();
      handler_ = kube::makePodHandler(state_, observer_);
    }
    state_.update([&](MutableClusterView& view) {
      for (const std::string& uid : created) view.removePod(uid);
      view.expireReservations(Clock::time_point::max());
    });
  }

 private:
  static std::string_view field(std::string_view text, std::string_view prefix) {
    const size_t at = text.find(prefix);
    if (at == std::string_view::npos) return {};
    const size_t start = at + prefix.size();
    const size_t end = text.find('"', start);
    return end == std::string_view::npos ? std::string_view() : text.substr(start, end - start);
  }

  // The created pod's JSON, from a template per pending pod: the generated
  // pod with spec.nodeName, metadata.name and uid, and placer's annotations set.
  std::string podText(int podIndex, std::string_view podUid, std::string_view requestUid, std::string_view node) {
    const std::vector<std::string>* parts;
    {
      std::lock_guard lock(mutex_);
      auto it = templates_.find(podIndex);
      if (it == templates_.end()) it = templates_.emplace(podIndex, makeTemplate(podIndex)).first;
      parts = &it->second;  // node-based map: stays put
    }
    std::string out;
    for (size_t i = 0; i < parts->size(); ++i) {
      if (i > 0) {
        const char hole = (*parts)[i][0];
        out += hole == 'N' ? node : hole == 'U' ? podUid : hole == 'R' ? requestUid : podUid.substr(24);
      }
      out.append((*parts)[i], i > 0 ? 1 : 0);
    }
    return out;
  }

  // The pod's text split at its holes; every part after the first starts with
  // the hole's letter: N node, U pod uid, R request uid, S name suffix.
  std::vector<std::string> makeTemplate(int podIndex) const {
    json pod = generatePendingPod(params_, podIndex);
    json& metadata = pod["metadata"];
    metadata["name"] = metadata.value("generateName", std::string("pod-")) + "\x01S";
    metadata["uid"] = "\x01U";
    metadata["annotations"]["placer.io/assigned-node"] = "\x01N";
    metadata["annotations"]["placer.io/reservation"] = "\x01R";
    pod["spec"]["nodeName"] = "\x01N";
    pod["status"] = {{"phase", "Pending"}};
    const std::string text = pod.dump();
    std::vector<std::string> parts;
    size_t from = 0;
    for (size_t at; (at = text.find("\\u0001", from)) != std::string::npos; from = at + 6)
      parts.push_back(text.substr(from, at - from));
    parts.push_back(text.substr(from));
    return parts;
  }

  void run() {
    JsonParser parser;  // as the watch parses each event's bytes
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (queue_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const auto due = queue_.front().due;
      if (Clock::now() < due) {
        wake_.wait_until(lock, due);
        continue;
      }
      std::string text = std::move(queue_.front().text);
      queue_.pop_front();
      lock.unlock();
      {
        std::lock_guard handlerLock(handlerMutex_);
        if (auto value = parser.parse(text)) handler_->upserted(*value);
      }
      appeared_.fetch_add(1);
      lock.lock();
    }
  }

  struct Pending {
    Clock::time_point due;
    std::string text;
  };
  ClusterState& state_;
  const GeneratorParams params_;
  const Clock::duration delay_;
  PodObserver* const observer_;
  std::mutex handlerMutex_;  // handler_, against reset()
  std::unique_ptr<kube::StateHandler> handler_;
  std::mutex mutex_;  // the members below
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  std::vector<std::string> created_;
  std::map<int, std::vector<std::string>> templates_;
  bool stopping_ = false;
  std::atomic<uint64_t> appeared_{0};
  std::thread thread_;  // last: starts once the members above exist
};

int payloadPodIndex(int i, int shape) { return shape < 0 ? i : i * kPendingShapes + shape; }

// The namespaces of the `count` pods makePayloads sends.
std::vector<std::string> pendingNamespaces(const GeneratorParams& params, int count, int shape) {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    out.push_back(generatePendingPod(params, payloadPodIndex(i, shape))["metadata"].value("namespace", "default"));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The Events API: accepts an Event (201, the body echoed as the API server
// answers with the created object) in any namespace of the pods sent, counts
// it, and tells the count (GET /loadgen/events-received). `distinct` and
// `shape`: the pods sent, as makePayloads is given them.
Result<std::unique_ptr<HttpServer>> startEventsApi(const GeneratorParams& params, int distinct, int shape,
                                                   const certs::PemPair& serving,
                                                   std::atomic<uint64_t>& received) {
  ListenerOptions sink;
  sink.name = "events-api";
  sink.address = "127.0.0.1:0";
  auto cert = ServingCertificate::fromPem(serving.certificatePem, serving.privateKeyPem);
  if (!cert) return cert.error();
  sink.certificate = std::shared_ptr<const ServingCertificate>(std::move(*cert));
  for (const std::string& ns : pendingNamespaces(params, distinct, shape))
    sink.routes.push_back(Route{"POST", "/apis/events.k8s.io/v1/namespaces/" + ns + "/events",
                                [&received](const HttpRequest& r) {
                                  received.fetch_add(1);
                                  return HttpResponse::json(201, r.body);
                                },
                                {}});
  sink.routes.push_back(Route{"GET", "/loadgen/events-received",
                              [&received](const HttpRequest&) {
                                return HttpResponse::text(200, std::to_string(received.load()));
                              },
                              {}});
  sink.workerThreads = 1;
  return HttpServer::start(std::move(sink));
}

// GET `target` from a loadgen process's listener (its DIR/port and DIR/ca.pem): the body, "" on failure.
std::string getFrom(const std::string& dir, const std::string& target) {
  testing::ClientOptions co;
  co.port = static_cast<uint16_t>(std::atoi(readFile(dir + "/port").c_str()));
  co.caPem = readFile(dir + "/ca.pem");
  auto client = testing::HttpTestClient::connect(co);
  if (!client) return "";
  auto reply = (*client)->request("GET", target);
  return reply && reply->status == 200 ? reply->body : "";
}

// Writes DIR/ca.pem, DIR/pid and (last, atomically, so that a reader that
// sees it sees the rest) DIR/port.
void announce(const std::string& dir, uint16_t port, const std::string& caPem) {
  std::ofstream(dir + "/ca.pem") << caPem;
  std::ofstream(dir + "/pid") << getpid() << "\n";
  std::ofstream(dir + "/port.tmp") << port << "\n";
  std::rename((dir + "/port.tmp").c_str(), (dir + "/port").c_str());
}

// Waits for SIGTERM or SIGINT (blocked in every thread first).
void blockTermination() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}
void awaitTermination() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int signal = 0;
  sigwait(&signals, &signal);
}

// Reads a port file a process writes once it serves (bounded: 60 s).
std::string awaitPortFile(const std::string& dir) {
  std::string portText;
  for (int i = 0; i < 600 && (portText = readFile(dir + "/port")).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return portText;
}

std::vector<Payload> makePayloads(const GeneratorParams& params, int count, bool dryRun, int shape) {
  std::vector<Payload> out;
  for (int i = 0; i < count; ++i) {
    const int podIndex = payloadPodIndex(i, shape);
    json pod = generatePendingPod(params, podIndex);
    std::string ns = pod["metadata"].value("namespace", "default");
    json review = {{"kind", "AdmissionReview"},
                   {"apiVersion", "admission.k8s.io/v1"},
                   {"request",
                    {{"uid", kUidPlaceholder},
                     {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                     {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                     {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                     {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                     {"namespace", ns},
                     {"operation", "CREATE"},
                     {"userInfo",
                      {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
                       {"groups", json::array({"system:serviceaccounts", "system:authenticated"})}}},
                     {"object", pod},
                     {"oldObject", nullptr},
                     {"dryRun", dryRun},
                     {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}}}};
    std::string body = review.dump();
    out.push_back({body, body.find(kUidPlaceholder), podIndex});
  }
  return out;
}

struct PhaseResult {
  std::string route;
  size_t requests = 0;
  size_t failures = 0;
  double seconds = 0;
  std::vector<double> latenciesUs;
  std::vector<std::pair<double, double>> timeline;  // (start, ms monotonic; latency, µs), with --latency-log
  double avgBodyBytes = 0;
  double rate = 0;  // the schedule's rate, open loop
  size_t late = 0;  // open loop: sends that started after the next one was due
};

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = std::min(sorted.size() - 1, size_t(p * double(sorted.size())));
  return sorted[i];
}

PhaseResult runPhase(const std::string& route, uint16_t port, const std::string& caPem,
                     const std::vector<Payload>& payloads, const Options& o, std::atomic<uint64_t>& uidCounter) {
  PhaseResult result;
  result.route = route;
  std::vector<std::vector<double>> perClient(size_t(o.clients));
  std::vector<std::vector<std::pair<double, double>>> timelines(size_t(o.clients));
  std::vector<size_t> failures(size_t(o.clients), 0);
  std::vector<double> bodyBytes(size_t(o.clients), 0);
  std::vector<size_t> late(size_t(o.clients), 0);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point deadline;
  Clock::time_point startedAt;
  std::vector<std::thread> threads;
  for (int t = 0; t < o.clients; ++t) {
    threads.emplace_back([&, t] {
      testing::ClientOptions co;
      co.port = port;
      co.caPem = caPem;
      auto client = testing::HttpTestClient::connect(co);
      ready.fetch_add(1);
      if (!client) {
        std::fprintf(stderr, "connect: %s\n", client.error().message.c_str());
        return;
      }
      while (!go.load()) std::this_thread::yield();
      auto& lat = perClient[size_t(t)];
      lat.reserve(100000);
      size_t i = size_t(t) * 7919;
      std::string body;
      // Open loop: this client's k-th send is due at go + (t + k * clients) / rate.
      const auto period = o.rate > 0 ? std::chrono::duration<double>(double(o.clients) / o.rate) : Clock::duration(0);
      auto due = startedAt + std::chrono::duration_cast<Clock::duration>(period * (double(t) / double(o.clients)));
      while (Clock::now() < deadline) {
        if (o.rate > 0) {
          if (due >= deadline) break;
          std::this_thread::sleep_until(due);
          if (Clock::now() > due + std::chrono::duration_cast<Clock::duration>(period)) ++late[size_t(t)];
        }
        const Payload& p = payloads[i++ % payloads.size()];
        body = p.body;
        const std::string uid = requestUid(uidCounter.fetch_add(1), p.podIndex);
        std::memcpy(body.data() + p.uidOffset, uid.data(), kUidPlaceholder.size());
        auto start = o.rate > 0 ? due : Clock::now();
        if (o.rate > 0) due += std::chrono::duration_cast<Clock::duration>(period);
        auto r = (*client)->request("POST", route, body);
        double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        if (!r || r->status != 200) {
          ++failures[size_t(t)];
          if (!r) return;  // connection gone
          continue;
        }
        lat.push_back(us);
        if (!o.latencyLog.empty()) timelines[size_t(t)].emplace_back(monotonicMs(start), us);
        bodyBytes[size_t(t)] += double(body.size());
      }
    });
  }
  while (ready.load() < o.clients) std::this_thread::yield();
  auto started = Clock::now();
  startedAt = started;
  deadline = started + std::chrono::microseconds(int64_t(o.seconds * 1e6));
  go.store(true);
  for (auto& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  double bytes = 0;
  for (int t = 0; t < o.clients; ++t) {
    result.latenciesUs.insert(result.latenciesUs.end(), perClient[size_t(t)].begin(), perClient[size_t(t)].end());
    result.timeline.insert(result.timeline.end(), timelines[size_t(t)].begin(), timelines[size_t(t)].end());
    result.failures += failures[size_t(t)];
    result.late += late[size_t(t)];
    bytes += bodyBytes[size_t(t)];
  }
  std::sort(result.latenciesUs.begin(), result.latenciesUs.end());
  result.requests = result.latenciesUs.size();
  result.avgBodyBytes = result.requests ? bytes / double(result.requests) : 0;
  result.rate = o.rate;
  return result;
}

// The warm-up's options: the timed run's for --warmup seconds, without its latency log.
Options warmupOptions(const Options& o) {
  Options w = o;
  w.seconds = o.warmup;
  w.latencyLog.clear();
  return w;
}

void reportWarmup(const PhaseResult& r) {
  std::printf("warm-up  requests=%zu failures=%zu over %.1f s  p50=%.0f us  p99=%.0f us  max=%.0f us (not counted below)\n",
              r.requests, r.failures, r.seconds, percentile(r.latenciesUs, 0.50), percentile(r.latenciesUs, 0.99),
              r.latenciesUs.empty() ? 0.0 : r.latenciesUs.back());
}

void writeTimeline(const std::string& path, const PhaseResult& r) {
  if (path.empty()) return;
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return;
  for (const auto& [start, us] : r.timeline) std::fprintf(out, "%.3f %.0f\n", start, us);
  std::fclose(out);
}

void report(const PhaseResult& r) {
  if (r.rate > 0)
    std::printf("open loop, scheduled %.0f req/s, latency from the scheduled send; %zu sends a period late\n", r.rate,
                r.late);
  std::printf("%-8s requests=%zu failures=%zu  %.0f req/s  body=%.0f B  p50=%.0f us  p99=%.0f us  p99.9=%.0f us  max=%.0f us\n",
              r.route.c_str(), r.requests, r.failures, double(r.requests) / r.seconds, r.avgBodyBytes,
              percentile(r.latenciesUs, 0.50), percentile(r.latenciesUs, 0.99), percentile(r.latenciesUs, 0.999),
              r.latenciesUs.empty() ? 0.0 : r.latenciesUs.back());
}

// One series' value in a metrics text ("0" when absent).
std::string seriesValue(const std::string& metricsText, const std::string& key) {
  const size_t at = metricsText.find("\n" + key + " ");
  if (at == std::string::npos) return "0";
  const size_t from = at + key.size() + 2;
  return metricsText.substr(from, metricsText.find('\n', from) - from);
}

// What follows a /mutate run's latency line: the outcomes, and with Events
// on, a bounded wait (at most 30 s, not timed) until every assigned pod's
// Event is through (received by the Events API and counted by the recorder,
// or dropped), then the Events' figures. metricsText() is the server's
// metrics (with the loadgen's loadgen_pods_appeared line).
// `before`: the metrics at the start of the timed run (after a warm-up, and
// after earlier client runs of a --serve process), whose admissions are not
// the run's.
void reportOutcomes(const Options& o, const PhaseResult& mutate, const std::function<std::string()>& metricsText,
                    const std::function<uint64_t()>& eventsReceived, const std::string& before) {
  std::string m = metricsText();
  // A counter's growth over the run.
  auto ofRun = [&](const std::string& key) { return std::stod(seriesValue(m, key)) - std::stod(seriesValue(before, key)); };
  double assigned = 0;
  for (const char* outcome : {"assigned", "fallback", "skipped", "error"}) {
    const double count = ofRun(std::string("placer_admissions_total{outcome=\"") + outcome + "\"}");
    if (std::string_view(outcome) == "assigned") assigned = count;
    std::printf("  %s=%.0f", outcome, count);
  }
  std::printf("  (%.0f assignments/s)\n", assigned / mutate.seconds);
  // The server's own handling time (placer_admission_duration_seconds: decode,
  // decide, reserve, encode), apart from the transport and the queues before
  // it: the share of the run's admissions over each bound (the bounds as
  // the registry renders them, the shortest text of each double).
  {
    auto bucket = [&](const char* le) {
      return ofRun(std::string("placer_admission_duration_seconds_bucket{le=\"") + le + "\"}");
    };
    const double all = bucket("+Inf");
    if (all > 0)
      std::printf("  server handling: over 0.25 ms %.1f%%, 0.5 ms %.1f%%, 1 ms %.2f%%, 2.5 ms %.3f%%\n",
                  100 * (all - bucket("0.00025")) / all, 100 * (all - bucket("5e-04")) / all,
                  100 * (all - bucket("0.001")) / all, 100 * (all - bucket("0.0025")) / all);
  }
  auto dropped = [&](const char* reason) {
    return seriesValue(m, std::string("placer_events_dropped_total{reason=\"") + reason + "\"}");
  };
  uint64_t received = eventsReceived();
  if (o.events == 1 && o.appearMs >= 0) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    auto through = [&] {
      m = metricsText();
      received = eventsReceived();
      const double lost =
          std::stod(dropped("queue_full")) + std::stod(dropped("refused")) + std::stod(dropped("retries_exhausted"));
      // Both sides: the sink received it and the recorder counted it sent.
      return double(received) + lost >= assigned && std::stod(seriesValue(m, "placer_events_sent_total")) + lost >= assigned;
    };
    while (!through() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf("  Events API: %llu Events received (%.3f per assigned pod)\n", (unsigned long long)received,
              assigned > 0 ? double(received) / assigned : 0.0);
  if (o.events != 0)
    std::printf("  events: %s pods appeared; sent=%s dropped queue_full=%s refused=%s retries_exhausted=%s (%s)\n",
                seriesValue(m, "loadgen_pods_appeared").c_str(), seriesValue(m, "placer_events_sent_total").c_str(),
                dropped("queue_full").c_str(), dropped("refused").c_str(), dropped("retries_exhausted").c_str(),
                o.events == 1 ? "an accepting Events API" : "an Events API that refuses connections");
}

// Clients only, against `admission_loadgen --serve DIR` in another process.
int runClients(const Options& o, const GeneratorParams& params) {
  const std::string portText = awaitPortFile(o.targetDir);  // the server fills its view first
  if (portText.empty()) {
    std::fprintf(stderr, "no %s/port: is admission_loadgen --serve running?\n", o.targetDir.c_str());
    return 1;
  }
  const uint16_t port = static_cast<uint16_t>(std::stoi(portText));
  const std::string caPem = readFile(o.targetDir + "/ca.pem");
  auto payloads = makePayloads(params, o.distinct, o.dryRun, o.shape);
  std::printf("target port %u; clients=%d seconds=%.1f connections=%d slowloris=%d\n", port, o.clients, o.seconds,
              o.connections, o.slowloris);
  if (o.serverPid > 0) std::printf("server RSS before: %.1f MB\n", rssMb(o.serverPid));
  BackgroundConnections background(port, caPem);
  if (o.connections > 0) {
    const size_t opened = background.openIdle(o.connections);
    std::printf("idle keep-alive connections: %zu open\n", opened);
    if (o.serverPid > 0) std::printf("server RSS with them: %.1f MB\n", rssMb(o.serverPid));
  }
  background.startSlowloris(o.slowloris, o.slowlorisIntervalMs, o.route == "hold" ? o.latencyLog : std::string());
  // Request uids unique across client processes (a reservation is keyed by its uid).
  std::atomic<uint64_t> uids{(uint64_t(getpid()) << 32) | 1};
  if (o.route == "both" || o.route == "echo") report(runPhase("/echo", port, caPem, payloads, o, uids));
  if (o.route == "both" || o.route == "mutate") {
    testing::ClientOptions co;
    co.port = port;
    co.caPem = caPem;
    auto client = testing::HttpTestClient::connect(co);
    if (!client || !(*client)->request("POST", "/loadgen/reset", "{}")) std::fprintf(stderr, "reset failed\n");
    if (o.warmup > 0) reportWarmup(runPhase("/mutate", port, caPem, payloads, warmupOptions(o), uids));
    // The server's counters are its whole life's: earlier client runs and the
    // warm-up are not this run's.
    const std::string metricsBefore = getFrom(o.targetDir, "/loadgen/metrics");
    // CPU seconds per process, from just before the timed run until its Events are through.
    struct Cpu {
      double server = 0, sender = 0, sink = 0, clients = 0;
    };
    auto cpuNow = [&] {
      Cpu c;
      if (o.serverPid > 0) c.server = processCpuSeconds(o.serverPid), c.sender = threadCpuSeconds(o.serverPid, "placer-events");
      if (o.sinkPid > 0) c.sink = processCpuSeconds(o.sinkPid);
      c.clients = processCpuSeconds(getpid());
      return c;
    };
    const Cpu before = cpuNow();
    const auto started = Clock::now();
    const PhaseResult mutate = runPhase("/mutate", port, caPem, payloads, o, uids);
    report(mutate);
    writeTimeline(o.latencyLog, mutate);
    reportOutcomes(
        o, mutate, [&] { return "\n" + getFrom(o.targetDir, "/loadgen/metrics"); },
        [&]() -> uint64_t {
          return o.eventsApiDir.empty() ? 0 : std::strtoull(getFrom(o.eventsApiDir, "/loadgen/events-received").c_str(), nullptr, 10);
        },
        metricsBefore);
    const Cpu after = cpuNow();
    const double wall = std::chrono::duration<double>(Clock::now() - started).count();
    std::printf("  cpu: server=%.2f s (event sender thread %.2f s) sink=%.2f s clients=%.2f s over %.1f s\n",
                after.server - before.server, after.sender - before.sender, after.sink - before.sink,
                after.clients - before.clients, wall);
  }
  // --route hold: only hold the idle and slowloris connections for --seconds,
  // so that a third process can load the server beside them (client CPU of
  // the two kinds of load kept apart).
  if (o.route == "hold") std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
  if (o.slowloris > 0) std::printf("slowloris connections (re)opened: %zu\n", background.reopened());
  if (o.serverPid > 0) std::printf("server RSS after: %.1f MB\n", rssMb(o.serverPid));
  background.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    std::string v = argv[i + 1];
    if (a == "--nodes") o.nodes = std::stoi(v);
    else if (a == "--pods-per-node") o.podsPerNode = std::stoi(v);
    else if (a == "--clients") o.clients = std::stoi(v);
    else if (a == "--seconds") o.seconds = std::stod(v);
    else if (a == "--workers") o.workers = std::stoi(v);
    else if (a == "--route") o.route = v;
    else if (a == "--rate") o.rate = std::stod(v);
    else if (a == "--profile") o.profile = v;
    else if (a == "--dry-run") o.dryRun = v == "1" || v == "true";
    else if (a == "--watch-rate") o.watchRate = std::stod(v);
    else if (a == "--events") o.events = std::stoi(v);
    else if (a == "--decision-cache") o.decisionCache = std::stoul(v);
    else if (a == "--shape") o.shape = std::stoi(v);
    else if (a == "--distinct") o.distinct = std::stoi(v);
    else if (a == "--warmup") o.warmup = std::stod(v);
    else if (a == "--connections") o.connections = std::stoi(v);
    else if (a == "--slowloris") o.slowloris = std::stoi(v);
    else if (a == "--slowloris-interval") o.slowlorisIntervalMs = std::stoi(v);
    else if (a == "--appear-ms") o.appearMs = std::stoi(v);
    else if (a == "--serve") o.serveDir = v;
    else if (a == "--target") o.targetDir = v;
    else if (a == "--server-pid") o.serverPid = std::stoi(v);
    else if (a == "--events-sink") o.eventsSinkDir = v;
    else if (a == "--events-api") o.eventsApiDir = v;
    else if (a == "--sink-pid") o.sinkPid = std::stoi(v);
    else if (a == "--latency-log") o.latencyLog = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  // Decision log lines are formatted and written, to /dev/null.
  std::FILE* devnull = std::fopen("/dev/null", "w");
  setLogOutput(devnull);
  raiseOpenFileLimit();
  GeneratorParams params;
  params.nodes = o.nodes;
  params.podsPerNode = o.podsPerNode;
  if (!o.targetDir.empty()) return runClients(o, params);
  // Before any thread starts, so that every thread has them blocked.
  if (!o.serveDir.empty() || !o.eventsSinkDir.empty()) blockTermination();
  if (!o.eventsSinkDir.empty()) {
    // The Events API only, in a process of its own.
    auto ca = certs::generateCa("loadgen-events-ca", 1, certs::KeyType::EcdsaP256);
    auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1"}, 1, certs::KeyType::EcdsaP256);
    std::atomic<uint64_t> received{0};
    auto sink = startEventsApi(params, o.distinct, o.shape, *serving, received);
    if (!sink) {
      std::fprintf(stderr, "%s\n", sink.error().message.c_str());
      return 1;
    }
    announce(o.eventsSinkDir, (*sink)->port(), ca->certificatePem);
    std::printf("Events API on port %u, pid %d\n", (*sink)->port(), int(getpid()));
    std::fflush(stdout);
    awaitTermination();
    std::printf("Events API: %llu Events received\n", (unsigned long long)received.load());
    (*sink)->stop(std::chrono::seconds(5));
    return 0;
  }

  auto t0 = Clock::now();
  ClusterState state;
  state.update([&](MutableClusterView& view) { fillClusterView(view, params); });
  size_t nodes = 0, pods = 0;
  state.read([&](const ClusterView& v) {
    nodes = v.nodes().size();
    pods = v.podCount();
  });
  std::printf("view: %zu nodes, %zu pods (filled in %.1f s)\n", nodes, pods,
              std::chrono::duration<double>(Clock::now() - t0).count());

  auto ca = certs::generateCa("loadgen-ca", 1, certs::KeyType::EcdsaP256);
  auto serving = certs::generateServingCert(*ca, {"localhost"}, {"127.0.0.1"}, 1, certs::KeyType::EcdsaP256);
  auto cert = ServingCertificate::fromPem(serving->certificatePem, serving->privateKeyPem);
  if (!cert) {
    std::fprintf(stderr, "%s\n", cert.error().message.c_str());
    return 1;
  }

  MetricsRegistry metrics;
  WebhookContext context;
  auto config = configurationFromJson(json());
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().message.c_str());
    return 1;
  }
  std::shared_ptr<const Profile> profile = config->profile;
  if (o.profile == "trivial") {
    auto trivial = Profile::fromJson(json::parse(R"({"plugins":{"multiPoint":{"disabled":[{"name":"*"}]}}})"));
    if (!trivial) {
      std::fprintf(stderr, "%s\n", trivial.error().message.c_str());
      return 1;
    }
    profile = *trivial;
  } else if (o.profile != "default") {
    std::fprintf(stderr, "--profile: default or trivial\n");
    return 2;
  }
  context.engine = std::make_shared<const Engine>(profile, o.decisionCache);
  context.state = &state;
  context.settings = config->settings;
  context.metrics = &metrics;
  std::unique_ptr<kube::ApiEventRecorder> recorder;
  std::unique_ptr<PlacedPods> placed;
  // The Events API (every mode, so that each arm reports what it received):
  // in this process, or with --events-api that of an --events-sink process.
  std::atomic<uint64_t> eventsReceived{0};
  std::unique_ptr<HttpServer> eventsApi;
  std::function<uint64_t()> eventsReceivedNow = [&] { return eventsReceived.load(); };
  if (o.eventsApiDir.empty()) {
    auto started = startEventsApi(params, o.distinct, o.shape, *serving, eventsReceived);
    if (!started) {
      std::fprintf(stderr, "%s\n", started.error().message.c_str());
      return 1;
    }
    eventsApi = std::move(*started);
  } else {
    if (awaitPortFile(o.eventsApiDir).empty()) {
      std::fprintf(stderr, "no %s/port: is admission_loadgen --events-sink running?\n", o.eventsApiDir.c_str());
      return 1;
    }
    eventsReceivedNow = [&] {
      return uint64_t(std::strtoull(getFrom(o.eventsApiDir, "/loadgen/events-received").c_str(), nullptr, 10));
    };
  }
  if (o.events != 0) {
    kube::KubeConfig eventsConfig;
    eventsConfig.server = "https://127.0.0.1:1";  // --events 2: nothing listens; every Event fails, backs off, is dropped
    eventsConfig.token = "loadgen";
    if (o.events == 1 && eventsApi) {
      eventsConfig.server = "https://127.0.0.1:" + std::to_string(eventsApi->port());
      eventsConfig.caPem = ca->certificatePem;
    } else if (o.events == 1) {
      eventsConfig.server = "https://127.0.0.1:" + trimmedLine(readFile(o.eventsApiDir + "/port"));
      eventsConfig.caPem = readFile(o.eventsApiDir + "/ca.pem");
    }
    auto client = kube::ApiClient::create(eventsConfig);
    if (!client) {
      std::fprintf(stderr, "%s\n", client.error().message.c_str());
      return 1;
    }
    recorder = std::make_unique<kube::ApiEventRecorder>(std::move(*client), metrics,
                                                        kube::ApiEventRecorder::Options{.reportingInstance = "loadgen"});
    placed = std::make_unique<PlacedPods>(metrics, recorder.get());
    context.placed = placed.get();
  }
  std::unique_ptr<ApiServerModel> apiServer;
  if (o.appearMs >= 0) apiServer = std::make_unique<ApiServerModel>(state, params, o.appearMs, placed.get());

  ListenerOptions listener;
  listener.name = "loadgen";
  listener.address = "127.0.0.1:0";
  listener.certificate = std::shared_ptr<const ServingCertificate>(std::move(*cert));
  listener.routes = webhookRoutes(context);
  if (apiServer) {
    for (Route& route : listener.routes) {
      if (route.path != "/mutate") continue;
      route.handler = [inner = route.handler, model = apiServer.get()](const HttpRequest& request) {
        HttpResponse response = inner(request);
        if (response.status == 200) model->admitted(response.body);
        return response;
      };
    }
  }
  // Benchmark-only: the API server model starts again from the generated view.
  listener.routes.push_back(Route{"POST", "/loadgen/reset", [model = apiServer.get()](const HttpRequest&) {
                                    if (model) model->reset();
                                    return HttpResponse::json(200, "{}");
                                  },
                                  {}});
  // Benchmark-only: the server's metrics, and the pods the API server model
  // handed to the watch, for clients in another process.
  listener.routes.push_back(Route{"GET", "/loadgen/metrics",
                                  [&metrics, model = apiServer.get()](const HttpRequest&) {
                                    return HttpResponse::text(200, metrics.render() + "loadgen_pods_appeared " +
                                                                       std::to_string(model ? model->appeared() : 0) +
                                                                       "\n");
                                  },
                                  {}});
  // Benchmark-only: the same TLS round trip and body, no decision.
  listener.routes.push_back(Route{"POST", "/echo", [](const HttpRequest&) {
                                    return HttpResponse::json(
                                        200, R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                                             R"("response":{"uid":"x","allowed":true}})");
                                  },
                                  {}});
  listener.workerThreads = o.workers;
  auto server = HttpServer::start(std::move(listener));
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message.c_str());
    return 1;
  }

  if (!o.serveDir.empty()) {
    // Server only: clients come from another process (--target).
    announce(o.serveDir, (*server)->port(), ca->certificatePem);
    std::printf("serving on port %u, pid %d, RSS %.0f MB\n", (*server)->port(), int(getpid()), rssMb(0));
    std::fflush(stdout);
    awaitTermination();
    const HttpServer::Stats st = (*server)->stats();
    std::printf("server: open=%lld idle=%lld shed=%llu refused=%llu handshake failures=%llu, RSS %.0f MB\n",
                (long long)st.openConnections, (long long)st.idleConnections, (unsigned long long)st.shedRequests,
                (unsigned long long)st.refusedConnections, (unsigned long long)st.handshakeFailures, rssMb(0));
    (*server)->stop(std::chrono::seconds(5));
    return 0;
  }

  auto payloads = makePayloads(params, o.distinct, o.dryRun, o.shape);
  {
    // The decision alone, on one thread, for scale: every node computed (no cache).
    const Engine uncached(profile, 0);
    constexpr int kDecisions = 200;
    std::vector<Pod> pending;
    for (int i = 0; i < kDecisions; ++i) pending.push_back(generatePendingPodObject(params, i));
    size_t feasible = 0;
    std::vector<double> each;  // µs per decision: the tail is the heaviest shapes'
    state.read([&](const ClusterView& view) {
      for (const Pod& pod : pending) {
        const auto start = Clock::now();
        feasible += uncached.place(pod, view).feasibleCount;
        each.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
    });
    const double us = std::accumulate(each.begin(), each.end(), 0.0) / kDecisions;
    std::sort(each.begin(), each.end());
    std::printf(
        "Engine::place alone: %.0f us per decision (p50 %.0f, p99 %.0f, max %.0f; %zu nodes, mean feasible %zu)\n",
        us, each[each.size() / 2], each[each.size() * 99 / 100], each.back(), nodes, feasible / kDecisions);
  }
  std::printf("clients=%d workers=%d seconds=%.1f, %zu distinct pending pods, %s profile, decision cache %zu entries\n",
              o.clients, o.workers, o.seconds, payloads.size(), o.profile.c_str(), o.decisionCache);
  // Request uids unique across client processes (a reservation is keyed by its uid).
  std::atomic<uint64_t> uids{(uint64_t(getpid()) << 32) | 1};
  BackgroundConnections background((*server)->port(), ca->certificatePem);
  if (o.connections > 0) {
    const double before = rssMb(0);
    const size_t opened = background.openIdle(o.connections);
    std::printf("idle keep-alive connections: %zu open (process RSS %.0f MB -> %.0f MB, clients included)\n", opened,
                before, rssMb(0));
  }
  background.startSlowloris(o.slowloris, o.slowlorisIntervalMs);
  if (o.route == "both" || o.route == "echo") report(runPhase("/echo", (*server)->port(), ca->certificatePem, payloads, o, uids));
  if (o.route == "both" || o.route == "mutate") {
    std::atomic<bool> watchDone{false};
    size_t watchEvents = 0;
    std::thread watch;
    if (o.watchRate > 0) {
      // Through the feed's handler, as the watch delivers them: per bound pod
      // visited, one event that changes it (a label) and two that do not (status).
      std::vector<json> bound;
      for (int64_t i = 0; i < 20000 && i < generatedPodCount(params); ++i) bound.push_back(generatePod(params, i));
      watch = std::thread([&, bound = std::move(bound)]() mutable {
        auto handler = kube::makePodHandler(state);
        JsonParser parser;  // as the watch parses each event's bytes
        const auto period = std::chrono::duration<double>(1.0 / o.watchRate);
        auto due = Clock::now();
        while (!watchDone.load()) {
          std::this_thread::sleep_until(due);
          due += std::chrono::duration_cast<Clock::duration>(period);
          size_t visit = watchEvents / 3;
          json& pod = bound[visit % bound.size()];
          if (watchEvents % 3 == 0) pod["metadata"]["labels"]["placer.io/loadgen-revision"] = std::to_string(visit);
          handler->upserted(*parser.parse(pod.dump()));
          ++watchEvents;
        }
      });
    }
    if (apiServer) apiServer->reset();
    if (o.warmup > 0)
      reportWarmup(runPhase("/mutate", (*server)->port(), ca->certificatePem, payloads, warmupOptions(o), uids));
    const std::string before = metrics.render();
    DecisionCache::Stats cacheBefore;
    if (const DecisionCache* cache = context.engine->cache()) cacheBefore = cache->stats();
    PhaseResult mutate = runPhase("/mutate", (*server)->port(), ca->certificatePem, payloads, o, uids);
    watchDone = true;
    if (watch.joinable()) watch.join();
    report(mutate);
    writeTimeline(o.latencyLog, mutate);
    if (o.watchRate > 0)
      std::printf("  watch: %zu pod events applied meanwhile (%.0f/s)\n", watchEvents, double(watchEvents) / mutate.seconds);
    reportOutcomes(
        o, mutate,
        [&] {
          return "\n" + metrics.render() + "loadgen_pods_appeared " +
                 std::to_string(apiServer ? apiServer->appeared() : 0) + "\n";
        },
        eventsReceivedNow, before);
    if (const DecisionCache* cache = context.engine->cache()) {
      const DecisionCache::Stats stats = cache->stats();
      std::printf("  decision cache: hits=%llu misses=%llu bypassed=%llu\n",
                  (unsigned long long)(stats.hits - cacheBefore.hits),
                  (unsigned long long)(stats.misses - cacheBefore.misses),
                  (unsigned long long)(stats.bypassed - cacheBefore.bypassed));
    }
  }
  background.stop();
  if (recorder) recorder->stop();
  if (eventsApi) eventsApi->stop(std::chrono::seconds(5));
  (*server)->stop(std::chrono::seconds(5));
  return 0;
}
