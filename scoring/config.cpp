#include "scoring/config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "scoring/yaml.h"

namespace placer {

using nlohmann::json;

namespace {

constexpr std::string_view kPlacerApiVersion = "placer.io/v1alpha1";
constexpr std::string_view kPlacerKind = "PlacerConfiguration";
constexpr std::string_view kSchedulerKind = "KubeSchedulerConfiguration";
constexpr std::string_view kSchedulerApiVersions[] = {"kubescheduler.config.k8s.io/v1",
                                                      "kubescheduler.config.k8s.io/v1beta3"};

std::string join(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
}

Outcome readString(const json& v, const std::string& where, std::string& out) {
  if (v.is_null()) return {};
  if (!v.is_string()) return fieldError(where, "must be a string");
  out = v.get<std::string>();
  return {};
}

Outcome readStrings(const json& v, const std::string& where, std::vector<std::string>& out) {
  if (v.is_null()) {
    out.clear();
    return {};
  }
  if (!v.is_array()) return fieldError(where, "must be a list of strings");
  std::vector<std::string> values;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return fieldError(indexedField(where, i), "must be a string");
    values.push_back(v[i].get<std::string>());
  }
  out = std::move(values);
  return {};
}

Outcome readBool(const json& v, const std::string& where, bool& out) {
  if (v.is_null()) return {};
  if (!v.is_boolean()) return fieldError(where, "must be true or false");
  out = v.get<bool>();
  return {};
}

template <class Int>
Outcome readInt(const json& v, const std::string& where, Int& out, int64_t min, int64_t max) {
  if (v.is_null()) return {};
  if (!v.is_number_integer()) return fieldError(where, "must be an integer");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max))
    return fieldError(where, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  int64_t n = v.get<int64_t>();
  if (n < min || n > max)
    return fieldError(where, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  out = static_cast<Int>(n);
  return {};
}

Outcome readListenAddress(const json& v, const std::string& where, std::string& out) {
  std::string value = out;
  if (auto r = readString(v, where, value); !r) return r;
  auto colon = value.rfind(':');
  if (colon == std::string::npos || colon + 1 == value.size())
    return fieldError(where, "must be host:port, e.g. \"0.0.0.0:8443\"");
  for (size_t i = colon + 1; i < value.size(); ++i)
    if (value[i] < '0' || value[i] > '9') return fieldError(where, "must be host:port, e.g. \"0.0.0.0:8443\"");
  if (value.size() - colon - 1 > 5 || std::stoi(value.substr(colon + 1)) > 65535)
    return fieldError(where, "port must be at most 65535");
  out = value;
  return {};
}

Outcome decodeWebhook(const json& v, const std::string& where, PlacerSettings& s) {
  if (v.is_null()) return {};
  if (!v.is_object()) return fieldError(where, "must be an object");
  for (const auto& [key, value] : v.items()) {
    std::string at = join(where, key);
    Outcome r;
    if (key == "listen")
      r = readListenAddress(value, at, s.webhookListen);
    else if (key == "tlsCertFile")
      r = readString(value, at, s.tlsCertFile);
    else if (key == "tlsKeyFile")
      r = readString(value, at, s.tlsKeyFile);
    else if (key == "maxRequestBytes")
      r = readInt(value, at, s.maxRequestBytes, 1024, int64_t{1} << 30);
    else if (key == "workerThreads")
      r = readInt(value, at, s.workerThreads, 1, 1024);
    else if (key == "maxConnections")
      r = readInt(value, at, s.maxConnections, 1, 1000000);
    else if (key == "maxQueuedRequests")
      r = readInt(value, at, s.maxQueuedRequests, 0, 1000000);
    else
      r = fieldError(at, "unknown field");
    if (!r) return r;
  }
  return {};
}

Outcome decodeExtender(const json& v, const std::string& where, PlacerSettings& s) {
  if (v.is_null()) return {};
  if (!v.is_object()) return fieldError(where, "must be an object");
  for (const auto& [key, value] : v.items()) {
    std::string at = join(where, key);
    Outcome r;
    if (key == "enabled")
      r = readBool(value, at, s.extenderEnabled);
    else if (key == "listen")
      r = readListenAddress(value, at, s.extenderListen);
    else if (key == "tlsCertFile")
      r = readString(value, at, s.extenderTlsCertFile);
    else if (key == "tlsKeyFile")
      r = readString(value, at, s.extenderTlsKeyFile);
    else if (key == "tokenFile")
      r = readString(value, at, s.extenderTokenFile);
    else
      r = fieldError(at, "unknown field");
    if (!r) return r;
  }
  return {};
}

Outcome decodeMetrics(const json& v, const std::string& where, PlacerSettings& s) {
  if (v.is_null()) return {};
  if (!v.is_object()) return fieldError(where, "must be an object");
  for (const auto& [key, value] : v.items()) {
    std::string at = join(where, key);
    Outcome r = key == "listen" ? readListenAddress(value, at, s.metricsListen) : fieldError(at, "unknown field");
    if (!r) return r;
  }
  return {};
}

Outcome readDuration(const json& v, const std::string& where, std::chrono::milliseconds& out) {
  if (v.is_null()) return {};
  if (!v.is_string()) return fieldError(where, "must be a duration string such as \"15s\"");
  auto d = parseGoDuration(v.get<std::string>());
  if (!d) return fieldError(where, d.error().message);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms.count() <= 0) return fieldError(where, "must be at least 1ms");
  out = ms;
  return {};
}

// kube-scheduler's LeaderElectionConfiguration keys (resourceLock is always
// leases; resourceNamespace is ownNamespace), and placer's forwarding.
Outcome decodeLeaderElection(const json& v, const std::string& where, LeaderElectionSettings& s) {
  if (v.is_null()) return {};
  if (!v.is_object()) return fieldError(where, "must be an object");
  for (const auto& [key, value] : v.items()) {
    std::string at = join(where, key);
    Outcome r;
    if (key == "leaderElect")
      r = readBool(value, at, s.leaderElect);
    else if (key == "resourceName")
      r = readString(value, at, s.resourceName);
    else if (key == "leaseDuration")
      r = readDuration(value, at, s.leaseDuration);
    else if (key == "renewDeadline")
      r = readDuration(value, at, s.renewDeadline);
    else if (key == "retryPeriod")
      r = readDuration(value, at, s.retryPeriod);
    else if (key == "forwardServerName")
      r = readString(value, at, s.forwardServerName);
    else if (key == "forwardCAFile")
      r = readString(value, at, s.forwardCAFile);
    else if (key == "forwardTimeout")
      r = readDuration(value, at, s.forwardTimeout);
    else
      r = fieldError(at, "unknown field");
    if (!r) return r;
  }
  if (s.resourceName.empty()) return fieldError(join(where, "resourceName"), "must not be empty");
  // client-go's NewLeaderElector checks, with its JitterFactor of 1.2.
  if (s.leaseDuration <= s.renewDeadline)
    return fieldError(join(where, "leaseDuration"), "must be greater than renewDeadline");
  if (s.renewDeadline.count() * 10 <= s.retryPeriod.count() * 12)
    return fieldError(join(where, "renewDeadline"), "must be greater than 1.2 x retryPeriod");
  return {};
}

Result<PlacerConfiguration> decodeSchedulerConfiguration(const json& doc) {
  PlacerConfiguration config;
  auto profiles = doc.find("profiles");
  if (profiles == doc.end() || profiles->is_null() || (profiles->is_array() && profiles->empty())) {
    config.profile = Profile::defaults();
    return config;
  }
  if (!profiles->is_array()) return fieldError("profiles", "must be a list");
  auto profile = Profile::fromJson((*profiles)[0], builtinPlugins(), "profiles[0]");
  if (!profile) return profile.error();
  config.profile = *profile;
  return config;
}

Result<PlacerConfiguration> decodePlacerConfiguration(const json& doc) {
  PlacerConfiguration config;
  PlacerSettings& s = config.settings;
  const json* profile = nullptr;
  std::string profilePath;
  for (const auto& [key, value] : doc.items()) {
    const std::string& at = key;
    Outcome r;
    if (key == "apiVersion" || key == "kind") {
      continue;
    } else if (key == "schedulerNames") {
      r = readStrings(value, at, s.schedulerNames);
      if (r && s.schedulerNames.empty()) r = fieldError(at, "must name at least one scheduler");
    } else if (key == "fallbackSchedulerName") {
      r = readString(value, at, s.fallbackSchedulerName);
    } else if (key == "reservationTTL") {
      if (!value.is_null()) {
        if (!value.is_string()) return fieldError(at, "must be a duration string such as \"30s\"");
        auto d = parseGoDuration(value.get<std::string>());
        if (!d) return fieldError(at, d.error().message);
        if (d->count() <= 0) return fieldError(at, "must be positive");
        s.reservationTtl = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
        if (s.reservationTtl.count() == 0) return fieldError(at, "must be at least 1ms");
      }
    } else if (key == "excludedNamespaces") {
      r = readStrings(value, at, s.excludedNamespaces);
    } else if (key == "ownNamespace") {
      r = readString(value, at, s.ownNamespace);
    } else if (key == "placePodsWithBoundVolumes") {
      r = readBool(value, at, s.placePodsWithBoundVolumes);
    } else if (key == "webhook") {
      r = decodeWebhook(value, at, s);
    } else if (key == "extender") {
      r = decodeExtender(value, at, s);
    } else if (key == "metrics") {
      r = decodeMetrics(value, at, s);
    } else if (key == "leaderElection") {
      r = decodeLeaderElection(value, at, s.leaderElection);
    } else if (key == "profile") {
      if (profile != nullptr) return fieldError(at, "give either profile or profiles, not both");
      profile = &value;
      profilePath = "profile";
    } else if (key == "profiles") {
      if (profile != nullptr) return fieldError(at, "give either profile or profiles, not both");
      if (value.is_null()) continue;
      if (!value.is_array()) return fieldError(at, "must be a list");
      if (value.empty()) continue;
      profile = &value[0];
      profilePath = "profiles[0]";
    } else {
      r = fieldError(at, "unknown field");
    }
    if (!r) return r.error();
  }
  if (profile == nullptr || profile->is_null()) {
    config.profile = Profile::defaults();
  } else {
    auto built = Profile::fromJson(*profile, builtinPlugins(), profilePath);
    if (!built) return built.error();
    config.profile = *built;
  }
  return config;
}

}  // namespace

Result<std::chrono::nanoseconds> parseGoDuration(std::string_view text) {
  auto invalid = [&] { return Error{"invalid duration \"" + std::string(text) + "\""}; };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t total = 0;
  while (!s.empty()) {
    uint64_t whole = 0;
    size_t digits = 0;
    bool overflow = false;
    while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
      if (whole > (kMax - 9) / 10) overflow = true;
      whole = whole * 10 + static_cast<uint64_t>(s[0] - '0');
      s.remove_prefix(1);
      ++digits;
    }
    uint64_t fraction = 0, scale = 1;
    size_t fractionDigits = 0;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
        if (scale < 1000000000000000000ULL) {  // further digits cannot matter at nanosecond precision
          fraction = fraction * 10 + static_cast<uint64_t>(s[0] - '0');
          scale *= 10;
        }
        s.remove_prefix(1);
        ++fractionDigits;
      }
    }
    if (digits == 0 && fractionDigits == 0) return invalid();
    if (overflow) return invalid();
    size_t unitLength = 0;
    while (unitLength < s.size() && s[unitLength] != '.' && (s[unitLength] < '0' || s[unitLength] > '9'))
      ++unitLength;
    std::string_view unit = s.substr(0, unitLength);
    s.remove_prefix(unitLength);
    uint64_t ns;
    if (unit == "ns")
      ns = 1;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
      ns = 1000;
    else if (unit == "ms")
      ns = 1000000;
    else if (unit == "s")
      ns = 1000000000ULL;
    else if (unit == "m")
      ns = 60ULL * 1000000000ULL;
    else if (unit == "h")
      ns = 3600ULL * 1000000000ULL;
    else if (unit.empty())
      return Error{"missing unit in duration \"" + std::string(text) + "\""};
    else
      return Error{"unknown unit \"" + std::string(unit) + "\" in duration \"" + std::string(text) + "\""};
    if (whole > kMax / ns) return invalid();
    uint64_t value = whole * ns;
    // The fraction in this unit, rounded down like Go.
    long double extra = static_cast<long double>(fraction) * static_cast<long double>(ns) / static_cast<long double>(scale);
    value += static_cast<uint64_t>(extra);
    if (value > kMax || total > kMax - value) return invalid();
    total += value;
  }
  int64_t signedTotal = static_cast<int64_t>(total);
  return std::chrono::nanoseconds(negative ? -signedTotal : signedTotal);
}

Result<PlacerConfiguration> configurationFromJson(const json& document) {
  try {
    if (document.is_null()) {
      PlacerConfiguration config;
      config.profile = Profile::defaults();
      return config;
    }
    if (!document.is_object()) return Error{"configuration: must be an object with apiVersion and kind"};
    std::string kind, apiVersion;
    if (auto k = document.find("kind"); k != document.end()) {
      if (!k->is_string()) return fieldError("kind", "must be a string");
      kind = k->get<std::string>();
    }
    if (auto a = document.find("apiVersion"); a != document.end()) {
      if (!a->is_string()) return fieldError("apiVersion", "must be a string");
      apiVersion = a->get<std::string>();
    }
    if (kind == kSchedulerKind) {
      bool known = false;
      for (std::string_view v : kSchedulerApiVersions) known = known || apiVersion == v;
      if (!known)
        return fieldError("apiVersion", "\"" + apiVersion + "\" is not supported for KubeSchedulerConfiguration (use " +
                                            std::string(kSchedulerApiVersions[0]) + ")");
      return decodeSchedulerConfiguration(document);
    }
    if (kind == kPlacerKind) {
      if (apiVersion != kPlacerApiVersion)
        return fieldError("apiVersion", "\"" + apiVersion + "\" is not supported for PlacerConfiguration (use " +
                                            std::string(kPlacerApiVersion) + ")");
      return decodePlacerConfiguration(document);
    }
    if (kind.empty())
      return fieldError("kind", "Required value: PlacerConfiguration or KubeSchedulerConfiguration");
    return fieldError("kind", "\"" + kind + "\" is not PlacerConfiguration or KubeSchedulerConfiguration");
  } catch (const std::exception& e) {
    return Error{std::string("configuration: ") + e.what()};
  }
}

Result<PlacerConfiguration> parseConfiguration(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::exception& e) {
      return Error{std::string("invalid JSON: ") + e.what()};
    }
    return configurationFromJson(doc);
  }
  if (first == std::string_view::npos) return configurationFromJson(json(nullptr));
  auto doc = parseYaml(text);
  if (!doc) return Error{"invalid YAML: " + doc.error().message};
  return configurationFromJson(*doc);
}

Result<PlacerConfiguration> loadConfigurationFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot read: " + std::strerror(errno)};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read"};
  auto config = parseConfiguration(buffer.str());
  if (!config) return Error{path + ": " + config.error().message};
  return config;
}

}  // namespace placer
