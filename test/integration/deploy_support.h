#pragma once
// What the deploy tests share: running a command, turning a YAML stream into
// JSON objects (python3 + PyYAML read it as kubectl does), rendering a
// kustomize directory or the Helm chart, and finding objects in a rendering.
//
// kubectl, helm and promtool come from .ci/install-deps; a missing one is a
// test failure that says so, never a skip.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "placer_test_paths.h"

namespace placer::deploytest {

namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kDeploy = fs::path(PLACER_SOURCE_DIR) / "deploy";
inline const fs::path kChart = kDeploy / "helm" / "placer";
inline const fs::path kMonitoring = kDeploy / "monitoring";

struct Command {
  int status = -1;
  std::string out;  // stdout, then stderr
};

// Runs `command` with sh; `out` holds stdout followed by stderr.
inline Command run(const std::string& command) {
  Command c;
  const std::string errFile = ::testing::TempDir() + "placer-cmd-" + std::to_string(::getpid()) + ".err";
  FILE* pipe = ::popen((command + " 2>'" + errFile + "'").c_str(), "r");
  if (pipe == nullptr) return c;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) c.out.append(buf, n);
  int raw = ::pclose(pipe);
  c.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream err(errFile);
  c.out.append(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  fs::remove(errFile);
  return c;
}

inline std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// A tool .ci/install-deps installs; fails the test when it is missing.
inline bool haveTool(const std::string& name) {
  static std::map<std::string, bool> known;
  auto it = known.find(name);
  if (it == known.end())
    it = known.emplace(name, run("command -v " + name + " >/dev/null").status == 0).first;
  EXPECT_TRUE(it->second) << name << " is not on PATH: run `bash .ci/install-deps`";
  return it->second;
}

// Every non-empty document of a YAML stream, as JSON. Fails the test (and
// returns nothing) when the text is not YAML.
inline std::vector<json> yamlDocuments(const std::string& yaml) {
  const fs::path file = fs::path(::testing::TempDir()) / ("placer-yaml-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file, std::ios::binary) << yaml;
  Command c = run("python3 -c 'import json,sys,yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))' < " +
                  quoted(file));
  fs::remove(file);
  EXPECT_EQ(c.status, 0) << "python3 with PyYAML (python3-yaml) is needed:\n" << c.out;
  if (c.status != 0) return {};
  return json::parse(c.out).get<std::vector<json>>();
}

// `kubectl kustomize DIR` as objects; each directory is rendered once per run.
inline std::vector<json> renderKustomize(const fs::path& dir) {
  static std::map<fs::path, std::vector<json>> cache;
  if (auto it = cache.find(dir); it != cache.end()) return it->second;
  if (!haveTool("kubectl")) return {};
  Command k = run("kubectl kustomize " + quoted(dir));
  EXPECT_EQ(k.status, 0) << dir << ":\n" << k.out;
  if (k.status != 0) return {};
  return cache[dir] = yamlDocuments(k.out);
}

struct HelmRelease {
  std::string name = "placer";
  std::string namespace_ = "placer-system";
  std::optional<fs::path> valuesFile = std::nullopt;  // none: the chart's defaults
  std::vector<std::string> set = {};                  // --set arguments
};

inline std::string helmArgs(const HelmRelease& r) {
  std::string args = " -n '" + r.namespace_ + "'";
  if (r.valuesFile) args += " -f " + quoted(*r.valuesFile);
  for (const std::string& s : r.set) args += " --set '" + s + "'";
  return args;
}

// `helm template` of the chart; the command's output on failure.
inline Command helmTemplate(const HelmRelease& r) {
  if (!haveTool("helm")) return {};
  return run("helm template '" + r.name + "' " + quoted(kChart) + helmArgs(r));
}

inline std::vector<json> renderHelm(const HelmRelease& r) {
  Command c = helmTemplate(r);
  EXPECT_EQ(c.status, 0) << c.out;
  if (c.status != 0) return {};
  // Helm reports symbolic links (files/ links to deploy/monitoring) on stderr,
  // appended after the manifests: cut them off.
  std::string manifests = c.out;
  if (size_t warn = manifests.find("\nwalk.go:"); warn != std::string::npos) manifests.resize(warn + 1);
  return yamlDocuments(manifests);
}

inline std::vector<json> ofKind(const std::vector<json>& objects, const std::string& kind) {
  std::vector<json> out;
  for (const json& o : objects)
    if (o.value("kind", "") == kind) out.push_back(o);
  return out;
}

inline const json* named(const std::vector<json>& objects, const std::string& kind, const std::string& name) {
  for (const json& o : objects)
    if (o.value("kind", "") == kind && o["metadata"].value("name", "") == name) return &o;
  return nullptr;
}

// The ConfigMap's config.yaml (a PlacerConfiguration) of a rendering, parsed.
inline json placerConfig(const std::vector<json>& objects, const std::string& configMap = "placer-config") {
  const json* cm = named(objects, "ConfigMap", configMap);
  if (cm == nullptr) return nullptr;
  auto docs = yamlDocuments((*cm)["data"].value("config.yaml", ""));
  return docs.size() == 1 ? docs[0] : json();
}

}  // namespace placer::deploytest
