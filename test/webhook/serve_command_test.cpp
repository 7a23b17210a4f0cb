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

TEST(ServeCommandTest, DemoPrintsACurlCommandThatAssignsThePodAndStopsOnSigterm) {
  Process placer({PLACER_BINARY, "serve", "--demo", "--listen", "127.0.0.1:0"});
  ASSERT_GT(placer.pid(), 0);
  std::vector<std::string> m = placer.waitForStdout(
      std::regex(R"(curl --cacert (\S+) -H 'Content-Type: application/json' --data @(\S+) https://127\.0\.0\.1:(\d+)/mutate)"),
      std::chrono::seconds(30));
  ASSERT_EQ(m.size(), 4u) << placer.output() << placer.stderrText();
  std::string caFile = m[1], reviewFile = m[2];
  int port = std::stoi(m[3]);

  ClientOptions o;
  o.port = uint16_t(port);
  o.caPem = readFile(caFile);
  o.serverName = "127.0.0.1";
  auto c = HttpTestClient::connect(o);
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto r = (*c)->request("POST", "/mutate", readFile(reviewFile));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->status, 200) << r->body;
  json patch = patchOf(r->body);
  ASSERT_TRUE(patch.is_array()) << r->body;
  EXPECT_EQ(patch[0]["op"], "add");
  EXPECT_EQ(patch[0]["path"], "/spec/nodeName");
  std::string node = patch[0]["value"];
  EXPECT_EQ(node.rfind("general-", 0), 0u) << node;  // the demo pod tolerates no taint
  EXPECT_EQ((*c)->request("GET", "/readyz")->status, 200);

  ASSERT_EQ(kill(placer.pid(), SIGTERM), 0);
  EXPECT_EQ(placer.waitExit(std::chrono::seconds(20)), 0) << placer.stderrText();
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
