#include "certs/renewal.h"

#include <algorithm>

namespace placer::certs {
namespace {

using Days = std::chrono::duration<long, std::ratio<86400>>;

// Whole days left, rounded down, for messages.
long daysLeft(const CertificateInfo& info, Clock::time_point now) {
  return std::chrono::duration_cast<Days>(info.notAfter - now).count();
}

Clock::duration lifetime(const CertificateInfo& info) { return info.notAfter - info.notBefore; }

// The leaf's margin: 30 days, or a third of its lifetime when that is shorter
// (a 10-day certificate is renewed with 3 days left, not on every run).
Clock::duration leafMargin(const CertificateInfo& info) {
  return std::min<Clock::duration>(kRenewBefore, lifetime(info) / 3);
}

bool isRfc1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

std::string caCommonName(const CertificateSpec& spec) {
  return spec.caCommonName.empty() ? "placer-ca@" + spec.service + "." + spec.ns : spec.caCommonName;
}

// The reason the existing material cannot be kept at all, or nullopt.
std::optional<std::string> unusableCa(const CertificateMaterial& m, Clock::time_point now) {
  auto info = inspectCertificate(m.ca.certificatePem);
  if (!info) return "CA certificate unreadable (" + info.error().message + ")";
  if (!info->isCa) return "CA certificate is not a CA";
  if (Outcome o = checkKeyMatchesCertificate(m.ca.certificatePem, m.ca.privateKeyPem); !o) {
    return "CA key unusable (" + o.error().message + ")";
  }
  if (info->notAfter <= now) return "CA certificate expired";
  return std::nullopt;
}

std::optional<std::string> caNeedsRotation(const CertificateMaterial& m, const CertificateSpec& spec,
                                           Clock::time_point now) {
  auto info = inspectCertificate(m.ca.certificatePem);
  if (!info) return "CA certificate unreadable";
  const Clock::duration wanted = std::chrono::hours(24) * spec.days + kRenewBefore;
  const Clock::duration margin = std::min<Clock::duration>(wanted, lifetime(*info) / 3);
  if (info->notAfter - now < margin) {
    return "CA certificate expires in " + std::to_string(daysLeft(*info, now)) + " days";
  }
  return std::nullopt;
}

// What is wrong with `serving` as a leaf verifying against `bundle`, or nullopt.
std::optional<std::string> leafProblem(const PemPair& serving, const std::string& bundle, const CertificateSpec& spec,
                                       Clock::time_point now) {
  auto info = inspectCertificate(serving.certificatePem);
  if (!info) return "serving certificate unreadable (" + info.error().message + ")";
  if (Outcome o = verifyServingChain(serving.certificatePem, bundle, std::nullopt, now); !o) {
    return "serving certificate does not chain to the CA (" + o.error().message + ")";
  }
  if (Outcome o = checkKeyMatchesCertificate(serving.certificatePem, serving.privateKeyPem); !o) {
    return "serving key unusable (" + o.error().message + ")";
  }
  std::vector<std::string> have = info->dnsNames;
  std::vector<std::string> want = spec.dnsNames();
  std::sort(have.begin(), have.end());
  std::sort(want.begin(), want.end());
  std::vector<std::string> haveIps = info->ipAddresses;
  std::vector<std::string> wantIps = spec.ipAddresses;
  std::sort(haveIps.begin(), haveIps.end());
  std::sort(wantIps.begin(), wantIps.end());
  if (have != want || haveIps != wantIps) return "serving certificate names differ from the wanted ones";
  if (info->keyType != spec.keyType) {
    return "serving key type is not " + std::string(keyTypeName(spec.keyType));
  }
  if (info->notAfter - now < leafMargin(*info)) {
    return "serving certificate expires in " + std::to_string(daysLeft(*info, now)) + " days";
  }
  return std::nullopt;
}

// Whether the bundle's first CA (the one that signs) has been trusted long
// enough for a leaf it signs to be served.
bool caHasPropagated(const CertificateMaterial& m, const CertificateSpec& spec, Clock::time_point now) {
  auto info = inspectCertificate(m.ca.certificatePem);
  return info && now - (info->notBefore + kCertificateBackdate) >= spec.trustPropagation;
}

// The new CA first, then each CA of `previous` that is still valid at `now`,
// without duplicates.
std::string bundleWith(const std::string& newCaPem, const std::string& previousBundle, Clock::time_point now) {
  std::string bundle = newCaPem;
  auto newInfo = inspectCertificate(newCaPem);
  auto previous = splitCertificates(previousBundle);
  if (!previous || !newInfo) return bundle;
  std::vector<std::string> seen{newInfo->serialHex};
  for (const std::string& pem : *previous) {
    auto info = inspectCertificate(pem);
    if (!info || !info->isCa || info->notAfter <= now) continue;
    if (std::find(seen.begin(), seen.end(), info->serialHex) != seen.end()) continue;
    seen.push_back(info->serialHex);
    if (!bundle.empty() && bundle.back() != '\n') bundle.push_back('\n');
    bundle += pem;
  }
  return bundle;
}

// The bundle of kept material: its current CA must be first (it signs the leaf
// the server presents); previous CAs that have expired are dropped.
std::string normalisedBundle(const CertificateMaterial& m, Clock::time_point now) {
  return bundleWith(m.ca.certificatePem, m.caBundle, now);
}

}  // namespace

std::vector<std::string> CertificateSpec::dnsNames() const {
  std::vector<std::string> names = serviceDnsNames(service, ns);
  for (const std::string& extra : extraDnsNames) {
    if (std::find(names.begin(), names.end(), extra) == names.end()) names.push_back(extra);
  }
  return names;
}

std::string_view renewalActionName(RenewalAction action) {
  switch (action) {
    case RenewalAction::Kept:
      return "kept";
    case RenewalAction::Created:
      return "created";
    case RenewalAction::ReissuedLeaf:
      return "reissued";
    case RenewalAction::RotatedCa:
      return "rotated-ca";
  }
  return "unknown";
}

Outcome validateSpec(const CertificateSpec& spec) {
  if (!isRfc1123Label(spec.service)) return fieldError("service", "must be a DNS label (RFC 1123)");
  if (!isRfc1123Label(spec.ns)) return fieldError("namespace", "must be a DNS label (RFC 1123)");
  if (spec.days < 1 || spec.days > 3650) return fieldError("days", "must be between 1 and 3650");
  if (spec.caDays < spec.days || spec.caDays > 36500) {
    return fieldError("ca-days", "must be at least days and at most 36500");
  }
  return {};
}

Result<Renewal> renew(const std::optional<CertificateMaterial>& existing, const CertificateSpec& spec,
                      Clock::time_point now) {
  if (Outcome o = validateSpec(spec); !o) return o.error();
  Renewal out;
  std::optional<std::string> reason;

  const bool newCa = !existing || (reason = unusableCa(*existing, now)) || (reason = caNeedsRotation(*existing, spec, now));
  if (newCa) {
    out.action = !existing || unusableCa(*existing, now) ? RenewalAction::Created : RenewalAction::RotatedCa;
    out.reason = existing ? *reason : "no certificates yet";
    auto ca = generateCa(caCommonName(spec), spec.caDays, spec.keyType, now);
    if (!ca) return ca.error();
    out.material.ca = std::move(*ca);
    // An unusable CA's bundle may still hold valid CAs (and trust the leaf served now).
    const std::string previous = existing ? existing->caBundle : std::string();
    out.material.caBundle = bundleWith(out.material.ca.certificatePem, previous, now);
    // Trust first: keep serving the current leaf while the new CA propagates.
    if (existing && spec.trustPropagation.count() > 0 &&
        !leafProblem(existing->serving, out.material.caBundle, spec, now)) {
      out.material.serving = existing->serving;
      return out;
    }
  } else {
    out.material.ca = existing->ca;
    out.material.caBundle = normalisedBundle(*existing, now);
    reason = leafProblem(existing->serving, out.material.ca.certificatePem, spec, now);
    if (!reason) {
      out.action = RenewalAction::Kept;
      out.reason = "valid";
      out.material.serving = existing->serving;
      return out;
    }
    // Signed by a previous CA that is still trusted: keep it until the current CA has propagated.
    if (!leafProblem(existing->serving, out.material.caBundle, spec, now) && !caHasPropagated(*existing, spec, now)) {
      out.action = RenewalAction::Kept;
      out.reason = "valid; waiting for the new CA to propagate before reissuing";
      out.material.serving = existing->serving;
      return out;
    }
    out.action = RenewalAction::ReissuedLeaf;
    out.reason = *reason;
  }
  auto leaf = generateServingCert(out.material.ca, spec.dnsNames(), spec.ipAddresses, spec.days, spec.keyType, now);
  if (!leaf) return leaf.error();
  out.material.serving = std::move(*leaf);
  return out;
}

}  // namespace placer::certs
