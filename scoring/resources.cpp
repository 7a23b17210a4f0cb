#include "scoring/resources.h"

#include <string_view>

namespace placer {
namespace {

constexpr std::string_view kDefaultNamespacePrefix = "kubernetes.io/";
constexpr std::string_view kRequestsPrefix = "requests.";
constexpr std::string_view kHugePagesPrefix = "hugepages-";
constexpr std::string_view kAttachableVolumesPrefix = "attachable-volumes-";

bool isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// validation.IsDNS1123Subdomain: at most 253 characters, dot-separated labels of
// [a-z0-9]([-a-z0-9]*[a-z0-9])?.
bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !isLowerAlnum(label.front()) || !isLowerAlnum(label.back())) return false;
    for (char c : label)
      if (!isLowerAlnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// validation.IsQualifiedName: [prefix/]name, name at most 63 characters of
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], prefix a DNS-1123 subdomain.
bool isQualifiedName(std::string_view value) {
  std::string_view name = value;
  const size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) return false;
    if (!isDns1123Subdomain(value.substr(0, slash))) return false;
    name = value.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63) return false;
  if (!isAlnum(name.front()) || !isAlnum(name.back())) return false;
  for (char c : name)
    if (!isAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool isPrefixedNativeResource(std::string_view name) {
  return name.find(kDefaultNamespacePrefix) != std::string_view::npos;
}

// Unprefixed names are implicitly in the kubernetes.io/ namespace.
bool isNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || isPrefixedNativeResource(name);
}

bool isAttachableVolumeResourceName(std::string_view name) { return name.starts_with(kAttachableVolumesPrefix); }

}  // namespace

bool isExtendedResourceName(std::string_view name) {
  if (isNativeResource(name) || name.starts_with(kRequestsPrefix)) return false;
  // Must also be valid as the quota name "requests.<name>".
  std::string quotaName;
  quotaName.reserve(kRequestsPrefix.size() + name.size());
  quotaName.append(kRequestsPrefix).append(name);
  return isQualifiedName(quotaName);
}

bool isHugePageResourceName(std::string_view name) { return name.starts_with(kHugePagesPrefix); }

bool isScalarResourceName(std::string_view name) {
  return isExtendedResourceName(name) || isHugePageResourceName(name) || isPrefixedNativeResource(name) ||
         isAttachableVolumeResourceName(name);
}

}  // namespace placer
