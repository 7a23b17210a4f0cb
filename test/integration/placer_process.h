#pragma once
// The real `placer` binary as a child process, its stdout and stderr kept in
// files, for the integration tests that run `placer serve` beside the fake
// API server or run a one-shot command (`placer explain`, `placer check`).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test/integration/watch_support.h"
#include "placer_test_paths.h"

namespace placer::integration {

class PlacerProcess {
 public:
  // Starts `placer args...`; output goes to files in `dir`.
  PlacerProcess(const std::string& dir, std::vector<std::string> args) {
    static int counter = 0;
    const std::string base = dir + "/placer-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    outFile_ = base + ".out";
    errFile_ = base + ".err";
    pid_ = fork();
    if (pid_ == 0) {
      if (!freopen(outFile_.c_str(), "w", stdout) || !freopen(errFile_.c_str(), "w", stderr)) _exit(126);
      std::vector<char*> argv{const_cast<char*>(PLACER_BINARY)};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(PLACER_BINARY, argv.data());
      _exit(127);
    }
  }
  ~PlacerProcess() {
    if (pid_ > 0 && exitCode_ < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  PlacerProcess(const PlacerProcess&) = delete;
  PlacerProcess& operator=(const PlacerProcess&) = delete;

  std::string out() const { return read(outFile_); }
  std::string err() const { return read(errFile_); }

  // The port of listener `name` ("webhook", "extender", "metrics") from its
  // "listening" log line, waiting at most `bound`; -1 if it never appears.
  int port(const std::string& name, std::chrono::milliseconds bound = std::chrono::seconds(30)) const {
    const std::regex line("\"msg\":\"listening\"[^\\n]*\"listener\":\"" + name + "\",\"port\":(\\d+)");
    int found = -1;
    watchtest::waitFor(
        [&] {
          std::smatch m;
          std::string text = err();
          if (!std::regex_search(text, m, line)) return exitCode(std::chrono::milliseconds(0)) >= 0;
          found = std::stoi(m[1]);
          return true;
        },
        bound);
    return found;
  }

  // The exit code once the process ended within `bound`, else -1.
  int exitCode(std::chrono::milliseconds bound) const {
    if (exitCode_ >= 0) return exitCode_;
    watchtest::waitFor(
        [&] {
          int status = 0;
          if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
          exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          return true;
        },
        bound);
    return exitCode_;
  }

  // Sends `sig` (SIGKILL, SIGSTOP, SIGCONT, ...) to the process.
  void signal(int sig) const {
    if (exitCode_ < 0) kill(pid_, sig);
  }

  // SIGTERM, then the exit code.
  int stop(std::chrono::milliseconds bound = std::chrono::seconds(20)) {
    if (exitCode_ < 0) kill(pid_, SIGTERM);
    return exitCode(bound);
  }

 private:
  static std::string read(const std::string& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  pid_t pid_ = -1;
  mutable int exitCode_ = -1;
  std::string outFile_, errFile_;
};

// Runs a one-shot `placer args...` to completion (bounded).
struct PlacerRun {
  int exitCode = -1;
  std::string out, err;
};
inline PlacerRun runPlacer(const std::string& dir, std::vector<std::string> args,
                           std::chrono::milliseconds bound = std::chrono::seconds(120)) {
  PlacerProcess p(dir, std::move(args));
  PlacerRun run;
  run.exitCode = p.exitCode(bound);
  run.out = p.out();
  run.err = p.err();
  return run;
}

}  // namespace placer::integration
