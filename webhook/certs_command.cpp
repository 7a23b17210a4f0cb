// `placer certs generate|ensure`: the webhook's CA and serving certificate, in
// files or in the cluster. The decisions live in certs/; this file parses the
// command line, talks to the API server (ensure) and reports.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "certs/cert_files.h"
#include "certs/in_cluster.h"
#include "webhook/certs_kube_api.h"
#include "webhook/cli.h"

namespace placer {
namespace {

using certs::Clock;

constexpr const char* kUsage =
    "usage:\n"
    "  placer certs generate --service NAME --namespace NS --out DIR [options]\n"
    "      Writes DIR/ca.crt, ca.key, tls.crt, tls.key. Valid files are kept; the serving\n"
    "      certificate is renewed when fewer than 30 days remain or its names changed.\n"
    "  placer certs ensure --service NAME --namespace NS [--secret NAME] [--webhook-config NAME]\n"
    "                      [--out DIR] [--interval DURATION] [--kubeconfig FILE] [options]\n"
    "      Keeps the certificates in a Secret of NS, injects the CA bundle into the\n"
    "      MutatingWebhookConfiguration (and restores it if overwritten), optionally writes\n"
    "      the files to DIR. Runs once, or every DURATION (e.g. 10m) with --interval.\n"
    "\n"
    "options:\n"
    "  --days N            serving certificate lifetime in days (default 365)\n"
    "  --ca-days N         CA lifetime in days (default 3650)\n"
    "  --key-type T        ecdsa (P-256, default) or rsa (2048)\n"
    "  --dns NAME          an extra DNS name (repeatable)\n"
    "  --ip ADDRESS        an IP address SAN (repeatable)\n";

struct Args {
  std::string subcommand;
  certs::CertificateSpec spec;
  std::string outDir;
  std::string secretName = "placer-certs";
  std::string secretNamespace;
  std::string webhookConfig = "placer";
  std::string kubeconfig;
  std::chrono::seconds interval{0};
};

Result<int> parsePositive(std::string_view flag, const std::string& text) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v <= 0 || v > 1000000) {
    return fieldError(flag, "must be a positive integer, not \"" + text + "\"");
  }
  return static_cast<int>(v);
}

// "90s", "10m", "1h", or plain seconds.
Result<std::chrono::seconds> parseDuration(std::string_view flag, const std::string& text) {
  if (text.empty()) return fieldError(flag, "empty duration");
  long unit = 1;
  std::string number = text;
  switch (text.back()) {
    case 's':
      number.pop_back();
      break;
    case 'm':
      unit = 60;
      number.pop_back();
      break;
    case 'h':
      unit = 3600;
      number.pop_back();
      break;
    default:
      break;
  }
  auto n = parsePositive(flag, number);
  if (!n) return fieldError(flag, "must be a duration such as 90s, 10m or 1h, not \"" + text + "\"");
  return std::chrono::seconds(*n * unit);
}

Result<Args> parseArgs(int argc, char** argv) {
  Args a;
  if (argc < 2) return Error{"missing subcommand"};
  a.subcommand = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--help" || flag == "-h") return Error{""};
    std::string value;
    if (size_t eq = flag.find('='); flag.starts_with("--") && eq != std::string_view::npos) {
      value = std::string(flag.substr(eq + 1));  // --flag=value, as in container args
      flag = flag.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return fieldError(flag, "needs a value");
    }
    if (flag == "--service") {
      a.spec.service = value;
    } else if (flag == "--namespace") {
      a.spec.ns = value;
    } else if (flag == "--out") {
      a.outDir = value;
    } else if (flag == "--days") {
      auto n = parsePositive(flag, value);
      if (!n) return n.error();
      a.spec.days = *n;
    } else if (flag == "--ca-days") {
      auto n = parsePositive(flag, value);
      if (!n) return n.error();
      a.spec.caDays = *n;
    } else if (flag == "--key-type") {
      auto t = certs::parseKeyType(value);
      if (!t) return Error{"--" + t.error().message};
      a.spec.keyType = *t;
    } else if (flag == "--dns") {
      a.spec.extraDnsNames.push_back(value);
    } else if (flag == "--ip") {
      a.spec.ipAddresses.push_back(value);
    } else if (flag == "--secret") {
      a.secretName = value;
    } else if (flag == "--secret-namespace") {
      a.secretNamespace = value;
    } else if (flag == "--webhook-config") {
      a.webhookConfig = value;
    } else if (flag == "--kubeconfig") {
      a.kubeconfig = value;
    } else if (flag == "--interval") {
      auto d = parseDuration(flag, value);
      if (!d) return d.error();
      a.interval = *d;
    } else {
      return Error{"unknown option " + std::string(flag)};
    }
  }
  if (a.spec.service.empty()) return fieldError("--service", "is required");
  if (a.spec.ns.empty()) return fieldError("--namespace", "is required");
  // A 365-day default leaf under a shorter CA would be refused; follow the CA.
  if (a.spec.caDays < a.spec.days) return fieldError("--ca-days", "must be at least --days");
  if (Outcome o = certs::validateSpec(a.spec); !o) return Error{"--" + o.error().message};
  return a;
}

int runGenerate(const Args& a) {
  if (a.outDir.empty()) {
    std::fprintf(stderr, "placer certs generate: --out: is required\n");
    return 2;
  }
  auto r = certs::ensureCertificateDir(a.outDir, a.spec, Clock::now());
  if (!r) {
    std::fprintf(stderr, "placer certs generate: %s\n", r.error().message.c_str());
    return 1;
  }
  auto leaf = certs::inspectCertificate(r->material.serving.certificatePem);
  const long daysLeft =
      leaf ? (std::chrono::duration_cast<std::chrono::hours>(leaf->notAfter - Clock::now()).count() + 12) / 24 : 0;
  std::printf("%s: %s (%s); serving certificate valid for %ld more days\n", a.outDir.c_str(),
              std::string(certs::renewalActionName(r->action)).c_str(), r->reason.c_str(), daysLeft);
  return 0;
}

void printReport(const certs::EnsureReport& r) {
  std::string line = "certificates " + std::string(certs::renewalActionName(r.action)) + " (" + r.reason + ")";
  if (r.secretWritten) line += "; secret stored";
  if (r.secretConflict) line += "; lost a race on the secret, adopted the stored certificates";
  if (!r.patchedWebhooks.empty()) {
    line += "; caBundle set on";
    for (const std::string& w : r.patchedWebhooks) line += " " + w;
  }
  if (r.webhookConfigurationMissing) line += "; webhook configuration not found (not patched)";
  if (r.filesWritten) line += "; files written";
  std::fprintf(stdout, "%s\n", line.c_str());
  std::fflush(stdout);
}

int runEnsure(const Args& a) {
  auto api = certs::makeCertificateApi(a.kubeconfig);
  if (!api) {
    std::fprintf(stderr, "placer certs ensure: %s\n", api.error().message.c_str());
    return 1;
  }
  certs::EnsureOptions options;
  options.spec = a.spec;
  options.secretName = a.secretName;
  options.secretNamespace = a.secretNamespace;
  options.webhookConfiguration = a.webhookConfig;
  if (!a.outDir.empty()) options.outDir = a.outDir;

  for (;;) {
    auto r = certs::ensureInCluster(**api, options, Clock::now());
    if (r) {
      printReport(*r);
    } else {
      std::fprintf(stderr, "placer certs ensure: %s\n", r.error().message.c_str());
      if (a.interval.count() == 0) return 1;
    }
    if (a.interval.count() == 0) return 0;
    // A failed pass is retried sooner than the regular interval.
    std::this_thread::sleep_for(r ? a.interval : std::min<std::chrono::seconds>(a.interval, std::chrono::seconds(10)));
  }
}

}  // namespace

int runCerts(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "help" ||
      std::string_view(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  auto args = parseArgs(argc, argv);
  if (!args) {
    if (!args.error().message.empty()) std::fprintf(stderr, "placer certs: %s\n", args.error().message.c_str());
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (args->subcommand == "generate") return runGenerate(*args);
  if (args->subcommand == "ensure") return runEnsure(*args);
  std::fprintf(stderr, "placer certs: unknown subcommand \"%s\"\n", args->subcommand.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace placer
