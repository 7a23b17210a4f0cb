// `placer serve` as a user runs it: the demo prints a curl command whose
// answer assigns the pod, and SIGTERM stops the process cleanly with exit 0.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "test/webhook/webhook_fixture.h"
#include "webhook/demo_cluster.h"
#include "placer_test_paths.h"

namespace placer::testing {
namespace {

// A child process with its stdout and stderr captured.
class Process {
 public:
  explicit Process(std::vector<std::string> args) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(err[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Process() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
    if (err_ >= 0) close(err_);
  }

  // Reads stdout until `pattern` matches it, for at most `bound`.
  // Returns the match and its groups, or nothing.
  std::vector<std::string> waitForStdout(const std::regex& pattern, std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    std::smatch m;
    while (!std::regex_search(stdout_, m, pattern)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, int(left.count())) <= 0) break;
      char buf[4096];
      ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) break;
      stdout_.append(buf, size_t(n));
    }
    return std::vector<std::string>(m.begin(), m.end());
  }

  // Waits for the exit status for at most `bound`; -1 if still running.
  int waitExit(std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }
  std::string stderrText() {
    std::string s;
    char buf[4096];
    fcntl(err_, F_SETFL, O_NONBLOCK);
    ssize_t n;
    while ((n = read(err_, buf, sizeof buf)) > 0) s.append(buf, size_t(n));
    return s;
  }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return stdout_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  bool exited_ = false;
  std::string stdout_;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a command the demo printed, exactly as printed, with sh; its stdout.
std::string runPrinted(const std::string& command) {
  // `timeout` bounds a command that would hang; the demo's own never do.
  FILE* pipe = popen(("timeout 30 sh -c '" + std::regex_replace(command, std::regex("'"), "'\\''") + "'").c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

TEST(ServeCommandTest, DemoPrintsCurlCommandsForTheWebhookAndTheExtenderThatWorkAsPrinted) {
  Process placer({PLACER_BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--extender-listen", "127.0.0.1:0"});
  ASSERT_GT(placer.pid(), 0);
  // The whole text is printed at once; the metrics line ends it.
  ASSERT_EQ(placer.waitForStdout(std::regex(R"(Metrics: (curl [^\n]+)\n)"), std::chrono::seconds(30)).size(), 2u)
      << placer.output() << placer.stderrText();
  std::vector<std::string> commands;
  std::istringstream lines(placer.output());
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  curl ", 0) == 0) commands.push_back(line.substr(2));
    if (line.rfind("Metrics: curl ", 0) == 0) commands.push_back(line.substr(9));
  }
  ASSERT_EQ(commands.size(), 5u) << placer.output();
  auto printed = [&](const std::string& needle) {
    for (const std::string& c : commands)
      if (c.find(needle) != std::string::npos) return c;
    ADD_FAILURE() << "no printed command with " << needle << " in\n" << placer.output();
    return std::string("false");
  };

  // /mutate answers an AdmissionReview whose patch assigns a node.
  ASSERT_NE(commands[0].find("/mutate"), std::string::npos) << commands[0];
  json review = json::parse(runPrinted(commands[0]), nullptr, false);
  ASSERT_TRUE(review.is_object()) << commands[0];
  EXPECT_EQ(review["response"]["allowed"], true);
  json patch = patchOf(review.dump());
  ASSERT_TRUE(patch.is_array()) << review.dump();
  EXPECT_EQ(patch[0]["path"], "/spec/nodeName");
  EXPECT_EQ(patch[0]["value"].get<std::string>().rfind("general-", 0), 0u) << "the demo pod tolerates no taint";

  // The decoding pipeline prints the JSONPatch itself.
  json decoded = json::parse(runPrinted(printed("base64")), nullptr, false);
  ASSERT_TRUE(decoded.is_array());
  EXPECT_EQ(decoded[0]["op"], "add");
  EXPECT_EQ(decoded[0]["path"], "/spec/nodeName");

  // /filter keeps the general nodes and names why each tainted or cordoned
  // one fails; /prioritize scores the nodes 0-10 with placer's choice at 10.
  json filter = json::parse(runPrinted(printed("/filter")), nullptr, false);
  ASSERT_TRUE(filter.is_object());
  EXPECT_EQ(filter["Error"], "");
  ASSERT_FALSE(filter["NodeNames"].empty());
  for (const json& n : filter["NodeNames"]) EXPECT_EQ(n.get<std::string>().rfind("general-", 0), 0u) << n;
  // Every node sent is either kept or failed with a reason.
  EXPECT_EQ(filter["NodeNames"].size() + filter["FailedNodes"].size() + filter["FailedAndUnresolvableNodes"].size(),
            demoExtenderArgs()["NodeNames"].size());
  EXPECT_FALSE(filter["FailedAndUnresolvableNodes"].empty()) << "the tainted pools";
  json scores = json::parse(runPrinted(printed("/prioritize")), nullptr, false);
  ASSERT_TRUE(scores.is_array());
  ASSERT_FALSE(scores.empty());
  int best = 0;
  for (const json& s : scores) best = std::max(best, s["Score"].get<int>());
  EXPECT_EQ(best, 10);

  // The metrics command shows the decision just made.
  EXPECT_NE(runPrinted(printed("/metrics")).find("placer_admissions_total{outcome=\"assigned\"} 2"), std::string::npos);

  // Stopping takes the files the commands use along.
  std::smatch ca;
  ASSERT_TRUE(std::regex_search(commands[0], ca, std::regex(R"(--cacert (\S+))")));
  const std::filesystem::path demoDir = std::filesystem::path(ca[1].str()).parent_path();
  EXPECT_TRUE(std::filesystem::exists(demoDir / "extender-args.json"));
  ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
  EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0) << placer.stderrText();
  EXPECT_FALSE(std::filesystem::exists(demoDir)) << demoDir;
}

// The port of a listener from its "listening" log line on stderr.
int listenerPort(Process& placer, const std::string& listener, std::string& err) {
  std::smatch m;
  std::regex listening("\"msg\":\"listening\"[^\n]*\"listener\":\"" + listener + "\",\"port\":(\\d+)");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::regex_search(err, m, listening) && std::chrono::steady_clock::now() < deadline) {
    err += placer.stderrText();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return m.size() == 2 ? std::stoi(m[1]) : -1;
}

TEST(ServeCommandTest, MetricsListenerServesProcessBuildAndCertificateMetricsOverPlainHttp) {
  Process placer({PLACER_BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--extender-listen", "127.0.0.1:0",
                  "--metrics-listen", "127.0.0.1:0"});
  std::string err;
  const int port = listenerPort(placer, "metrics", err);
  ASSERT_GT(port, 0) << err;
  ClientOptions o;
  o.port = uint16_t(port);
  auto c = HttpTestClient::connect(o);  // no TLS
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto r = (*c)->request("GET", "/metrics");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->status, 200);
  for (const char* series : {"process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ",
                             "process_start_time_seconds ", "placer_build_info{version=\"0.1.0\",revision=\"",
                             "placer_serving_certificate_expiry_seconds{listener=\"webhook\"} ", "placer_view_synced 1"})
    EXPECT_NE(r->body.find(series), std::string::npos) << series << "\n" << r->body;
  EXPECT_NE(r->body.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  // The demo certificate is valid for 7 days from now.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r->body, m, std::regex(R"(placer_serving_certificate_expiry_seconds\{listener="webhook"\} (\d+))")));
  const double left = std::stod(m[1]) - double(std::chrono::duration_cast<std::chrono::seconds>(
                                                   std::chrono::system_clock::now().time_since_epoch()).count());
  EXPECT_GT(left, 6.9 * 86400);
  EXPECT_LE(left, 7 * 86400);
  // Only /metrics there: the webhook's routes stay on the TLS listener.
  EXPECT_EQ((*c)->request("POST", "/mutate", demoAdmissionReview().dump())->status, 404);
  ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
  EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0);
}

TEST(ServeCommandTest, LivezAnswersOnTheWebhookListener) {
  Process placer({PLACER_BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--extender-listen", "127.0.0.1:0"});
  auto m = placer.waitForStdout(std::regex(R"(serving https://127\.0\.0\.1:(\d+)\n[\s\S]*--cacert (\S+) )"),
                                std::chrono::seconds(30));
  ASSERT_EQ(m.size(), 3u) << placer.output();
  ClientOptions o;
  o.port = uint16_t(std::stoi(m[1]));
  o.caPem = readFile(m[2]);
  o.serverName = "127.0.0.1";
  auto c = HttpTestClient::connect(o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  for (const char* path : {"/livez", "/healthz", "/readyz"}) EXPECT_EQ((*c)->request("GET", path)->status, 200) << path;
  ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
  EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0);
}

TEST(ServeCommandTest, LogFlagsChooseTheFormatAndTheLevel) {
  {
    Process placer({PLACER_BINARY, "serve", "--demo", "--listen", "127.0.0.1:0", "--extender-listen", "127.0.0.1:0",
                    "--log-format", "text"});
    ASSERT_EQ(placer.waitForStdout(std::regex("Metrics:"), std::chrono::seconds(30)).size(), 1u);
    ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
    EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0);
    const std::string err = placer.stderrText();
    EXPECT_TRUE(std::regex_search(err, std::regex(R"(\d{4}-\d\d-\d\dT[\d:.]+Z info +listening address=127\.0\.0\.1:0 listener=webhook port=\d+ tls=true\n)")))
        << err;
    EXPECT_EQ(err.find("{\""), std::string::npos) << err;
  }
  {
    Process placer({PLACER_BINARY, "serve", "--log-level=warning", "--demo", "--listen", "127.0.0.1:0",
                    "--extender-listen", "127.0.0.1:0"});
    ASSERT_EQ(placer.waitForStdout(std::regex("Metrics:"), std::chrono::seconds(30)).size(), 1u);
    ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
    EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0);
    EXPECT_EQ(placer.stderrText().find("\"level\":\"info\""), std::string::npos);
  }
  for (auto [flag, message] : {std::pair{"--log-format=xml", "--log-format must be json or text"},
                               std::pair{"--log-level=loud", "--log-level must be debug, info, warning or error"}}) {
    Process p({PLACER_BINARY, "serve", "--demo", flag});
    EXPECT_EQ(p.waitExit(std::chrono::seconds(20)), 2) << flag;
    EXPECT_NE(p.stderrText().find(message), std::string::npos) << flag;
  }
}

TEST(ServeCommandTest, ServesASnapshotFileWithCertificateFiles) {
  std::string dir = ::testing::TempDir() + "placer-serve-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/snapshot.json") << demoSnapshot().dump();
  std::ofstream(dir + "/tls.crt") << testPki().serving.certificatePem;
  std::ofstream(dir + "/tls.key") << testPki().serving.privateKeyPem;
  Process placer({PLACER_BINARY, "serve", "--cluster-file", dir + "/snapshot.json", "--tls-cert-file", dir + "/tls.crt",
                  "--tls-key-file", dir + "/tls.key", "--listen", "127.0.0.1:0"});
  // The port is in the "listening" log line on stderr.
  std::string err;
  std::smatch m;
  std::regex listening(R"("msg":"listening".*"port":(\d+))");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!std::regex_search(err, m, listening) && std::chrono::steady_clock::now() < deadline) {
    err += placer.stderrText();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(m.size(), 2u) << err;
  ClientOptions o;
  o.port = uint16_t(std::stoi(m[1]));
  o.caPem = testPki().ca.certificatePem;
  auto c = HttpTestClient::connect(o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto r = (*c)->request("POST", "/mutate", demoAdmissionReview().dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(patchOf(r->body)[0]["path"], "/spec/nodeName");
  ASSERT_EQ(kill(placer.pid(), SIGINT), 0);
  EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0);
  std::filesystem::remove_all(dir);
}

// --cluster-file is checked as `explain --snapshot` checks it: a snapshot
// that does not decode is not served, and the message names the element.
TEST(ServeCommandTest, ASnapshotFileThatDoesNotDecodeIsNotServed) {
  std::string dir = ::testing::TempDir() + "placer-serve-bad-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/tls.crt") << testPki().serving.certificatePem;
  std::ofstream(dir + "/tls.key") << testPki().serving.privateKeyPem;
  const std::string node = R"({"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi"}}})";
  struct Case {
    const char* name;
    std::string snapshot;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"DuplicateNode", R"({"nodes":[)" + node + "," + node + "]}", "nodes[1].metadata.name: Duplicate value: \"n1\""},
      {"BadQuantity",
       R"({"nodes":[)" + node + R"(],"pods":[{"metadata":{"name":"p","namespace":"d"},"spec":{"nodeName":"n1",)" +
           R"("containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}]}}]})",
       "pods[0].spec.containers[0].resources.requests.cpu: invalid quantity \"abc\""},
      {"CutShort", R"({"nodes":[)" + node, "invalid JSON"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string file = dir + "/" + k.name + ".json";
    std::ofstream(file) << k.snapshot;
    Process p({PLACER_BINARY, "serve", "--cluster-file", file, "--tls-cert-file", dir + "/tls.crt", "--tls-key-file",
               dir + "/tls.key", "--listen", "127.0.0.1:0"});
    EXPECT_EQ(p.waitExit(std::chrono::seconds(20)), 2);
    const std::string err = p.stderrText();
    EXPECT_NE(err.find(file + ": " + k.message), std::string::npos) << err;
  }
  std::filesystem::remove_all(dir);
}

TEST(ServeCommandTest, BadArgumentsAndMissingCertificateExit2WithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{PLACER_BINARY, "serve", "--bogus"}, "unknown argument --bogus"},
      {{PLACER_BINARY, "serve", "--demo", "--cluster-file", "x.json"}, "exclude each other"},
      {{PLACER_BINARY, "serve", "--cluster-file", "x.json"}, "serving certificate is required"},
      {{PLACER_BINARY, "serve", "--config"}, "needs a value"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.args.back());
    Process p(k.args);
    EXPECT_EQ(p.waitExit(std::chrono::seconds(20)), 2);
    EXPECT_NE(p.stderrText().find(k.message), std::string::npos);
  }
}

}  // namespace
}  // namespace placer::testing
