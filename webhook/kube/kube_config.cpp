#include "webhook/kube/kube_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "scoring/base64.h"
#include "scoring/yaml.h"

namespace placer::kube {
namespace {

using nlohmann::json;

std::string resolvePath(const std::string& baseDir, const std::string& path) {
  if (path.empty() || path[0] == '/' || baseDir.empty()) return path;
  return baseDir + "/" + path;
}

// A string field that may be absent; present with another type is an error.
Result<std::string> optionalString(const json& object, const char* key, const std::string& field) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return fieldError(field + "." + key, "must be a string");
  return it->get<std::string>();
}

// The entry named `name` in a kubeconfig list (clusters, users, contexts):
// [{name: x, <kind>: {...}}]. Returns its index and body.
Result<std::pair<size_t, const json*>> findNamed(const json& root, const char* list, const char* kind,
                                                 const std::string& name) {
  auto it = root.find(list);
  if (it != root.end() && !it->is_null() && !it->is_array()) return fieldError(list, "must be a list");
  if (it != root.end() && it->is_array()) {
    for (size_t i = 0; i < it->size(); ++i) {
      const json& entry = (*it)[i];
      if (!entry.is_object()) return fieldError(indexedField(list, i), "must be a mapping");
      auto n = entry.find("name");
      if (n == entry.end() || !n->is_string() || n->get<std::string>() != name) continue;
      auto body = entry.find(kind);
      if (body == entry.end() || !body->is_object())
        return fieldError(indexedField(list, i) + "." + kind, "missing or not a mapping");
      return std::pair<size_t, const json*>{i, &*body};
    }
  }
  return fieldError(list, "no entry named \"" + name + "\"");
}

// "-data" (base64) wins over the file, as in client-go.
Result<std::string> pemFromDataOrFile(const json& object, const std::string& field, const char* dataKey,
                                      const char* fileKey, const std::string& baseDir) {
  auto data = optionalString(object, dataKey, field);
  if (!data) return data.error();
  if (!data->empty()) {
    auto decoded = base64Decode(*data);
    if (!decoded) return fieldError(field + "." + dataKey, "invalid base64");
    return decoded;
  }
  auto file = optionalString(object, fileKey, field);
  if (!file) return file.error();
  if (file->empty()) return std::string();
  auto text = readFileText(resolvePath(baseDir, *file));
  if (!text) return fieldError(field + "." + fileKey, text.error().message);
  return text;
}

bool validServer(const std::string& server) {
  return server.rfind("https://", 0) == 0 || server.rfind("http://", 0) == 0;
}

}  // namespace

Result<std::string> readFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return out.str();
}

Result<KubeConfig> parseKubeconfig(std::string_view text, const std::string& baseDir) {
  auto parsed = parseYaml(text);
  if (!parsed) return Error{"kubeconfig: " + parsed.error().message};
  const json& root = *parsed;
  if (!root.is_object()) return Error{"kubeconfig: not a mapping"};

  auto current = optionalString(root, "current-context", "kubeconfig");
  if (!current) return current.error();
  if (current->empty()) return fieldError("current-context", "not set");

  auto context = findNamed(root, "contexts", "context", *current);
  if (!context) return context.error();
  const std::string contextField = "contexts[" + std::to_string(context->first) + "].context";
  auto clusterName = optionalString(*context->second, "cluster", contextField);
  if (!clusterName) return clusterName.error();
  auto userName = optionalString(*context->second, "user", contextField);
  if (!userName) return userName.error();
  auto ns = optionalString(*context->second, "namespace", contextField);
  if (!ns) return ns.error();

  KubeConfig config;
  config.namespace_ = ns->empty() ? "default" : *ns;
  config.source = "kubeconfig (context " + *current + ")";

  auto cluster = findNamed(root, "clusters", "cluster", *clusterName);
  if (!cluster) return cluster.error();
  const json& c = *cluster->second;
  const std::string clusterField = "clusters[" + std::to_string(cluster->first) + "].cluster";
  auto server = optionalString(c, "server", clusterField);
  if (!server) return server.error();
  if (server->empty()) return fieldError(clusterField + ".server", "not set");
  if (!validServer(*server)) return fieldError(clusterField + ".server", "must start with https:// or http://");
  while (server->size() > 1 && server->back() == '/') server->pop_back();
  config.server = *server;
  if (auto it = c.find("insecure-skip-tls-verify"); it != c.end() && !it->is_null()) {
    if (!it->is_boolean()) return fieldError(clusterField + ".insecure-skip-tls-verify", "must be a boolean");
    config.insecureSkipTlsVerify = it->get<bool>();
  }
  auto serverName = optionalString(c, "tls-server-name", clusterField);
  if (!serverName) return serverName.error();
  config.tlsServerName = *serverName;
  auto ca = pemFromDataOrFile(c, clusterField, "certificate-authority-data", "certificate-authority", baseDir);
  if (!ca) return ca.error();
  config.caPem = std::move(*ca);

  // A context may name no user (anonymous access).
  if (!userName->empty()) {
    auto user = findNamed(root, "users", "user", *userName);
    if (!user) return user.error();
    const json& u = *user->second;
    const std::string userField = "users[" + std::to_string(user->first) + "].user";
    if (u.contains("exec")) return fieldError(userField + ".exec", "credential plugins are not supported");
    if (u.contains("auth-provider")) return fieldError(userField + ".auth-provider", "not supported");
    auto cert = pemFromDataOrFile(u, userField, "client-certificate-data", "client-certificate", baseDir);
    if (!cert) return cert.error();
    auto key = pemFromDataOrFile(u, userField, "client-key-data", "client-key", baseDir);
    if (!key) return key.error();
    if (cert->empty() != key->empty())
      return fieldError(userField, "client certificate and client key must be given together");
    config.clientCertPem = std::move(*cert);
    config.clientKeyPem = std::move(*key);
    auto token = optionalString(u, "token", userField);
    if (!token) return token.error();
    config.token = *token;
    auto tokenFile = optionalString(u, "tokenFile", userField);
    if (!tokenFile) return tokenFile.error();
    if (!tokenFile->empty()) {
      config.tokenFile = resolvePath(baseDir, *tokenFile);
      if (auto t = readFileText(config.tokenFile); !t) return fieldError(userField + ".tokenFile", t.error().message);
    }
  }
  return config;
}

Result<KubeConfig> loadKubeconfigFile(const std::string& path) {
  auto text = readFileText(path);
  if (!text) return text.error();
  std::string dir;
  if (auto slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash == 0 ? 1 : slash);
  auto config = parseKubeconfig(*text, dir);
  if (!config) return Error{path + ": " + config.error().message};
  config->source = path + " " + config->source;
  return config;
}

Result<KubeConfig> inClusterConfig(std::string_view host, std::string_view port, const InClusterPaths& paths) {
  if (host.empty() || port.empty())
    return Error{"in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (or use --kubeconfig)"};
  KubeConfig config;
  // net.JoinHostPort: an IPv6 literal is bracketed.
  std::string h(host);
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";
  config.server = "https://" + h + ":" + std::string(port);
  auto token = readFileText(paths.tokenFile);
  if (!token) return Error{"in-cluster token: " + token.error().message};
  config.tokenFile = paths.tokenFile;
  auto ca = readFileText(paths.caFile);
  if (!ca) return Error{"in-cluster CA: " + ca.error().message};
  config.caPem = std::move(*ca);
  if (auto ns = readFileText(paths.namespaceFile); ns) {
    config.namespace_ = *ns;
    while (!config.namespace_.empty() && isspace(static_cast<unsigned char>(config.namespace_.back())))
      config.namespace_.pop_back();
  }
  config.source = "in-cluster " + config.server;
  return config;
}

Result<KubeConfig> loadInClusterConfig(const InClusterPaths& paths) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  return inClusterConfig(host ? host : "", port ? port : "", paths);
}

}  // namespace placer::kube
