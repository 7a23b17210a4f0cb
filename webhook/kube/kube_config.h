#pragma once
// Where the Kubernetes API server is and how to authenticate to it: from a
// kubeconfig file (its current context) or from the in-cluster service
// account, as client-go's clientcmd and rest.InClusterConfig read them.

#include <optional>
#include <string>
#include <string_view>

#include "scoring/result.h"

namespace placer::kube {

struct KubeConfig {
  std::string server;          // "https://host:port" (a path prefix is kept)
  std::string tlsServerName;   // SNI / verification name override; empty: the server's host
  bool insecureSkipTlsVerify = false;
  std::string caPem;           // trusted CA certificates (PEM); empty: system defaults
  std::string clientCertPem;   // client certificate (PEM), with clientKeyPem
  std::string clientKeyPem;
  std::string token;           // a fixed bearer token
  std::string tokenFile;       // a bearer token re-read from this file (wins over token)
  std::string namespace_;      // the context's namespace (informational)
  std::string source;          // "kubeconfig /path (context x)" or "in-cluster", for logs
};

// Parses kubeconfig text (YAML or JSON). Relative file paths are resolved
// against baseDir, as kubectl resolves them against the file's directory.
// Errors name the offending field, e.g. "users[0].user.client-key-data: invalid base64".
Result<KubeConfig> parseKubeconfig(std::string_view text, const std::string& baseDir);
Result<KubeConfig> loadKubeconfigFile(const std::string& path);

// The service-account files of a pod. Overridable so that tests need no /var/run.
struct InClusterPaths {
  std::string tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string caFile = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT from the environment, the
// CA from caFile, the token re-read from tokenFile.
Result<KubeConfig> loadInClusterConfig(const InClusterPaths& paths = {});
// The same with the host and port given (the environment lookup is the caller's).
Result<KubeConfig> inClusterConfig(std::string_view host, std::string_view port, const InClusterPaths& paths);

// Reads a whole file; errors name the file.
Result<std::string> readFileText(const std::string& path);

}  // namespace placer::kube
