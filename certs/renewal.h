#pragma once
// When to keep, renew or rotate the webhook's certificates. One pure decision
// shared by `placer certs generate` (files) and `placer certs ensure` (a Secret):
// given what exists now and what is wanted, return what should exist.
//
// Rules (checked in this order):
//   - nothing usable exists (missing, unparsable, CA key does not match)  -> create a CA
//   - the CA has less left than a fresh leaf needs (leaf days + renewal margin,
//     capped at a third of the CA's lifetime)                               -> rotate the CA
//   - the leaf does not chain to the CA, its key does not match, its SANs or
//     key type differ from the wanted ones, or fewer than
//     min(30 days, a third of its lifetime) remain                         -> reissue the leaf
//   - otherwise                                                             -> keep everything
//
// Trust first, then serve. A new CA (created or rotated) goes into the trust
// bundle first, followed by every previous CA that is still valid; the leaf
// already served stays as long as it is otherwise fine, and is reissued by the
// new CA only once that CA has been in the bundle for `trustPropagation` (a
// later pass). So the API server has learnt the new caBundle before any
// replica serves a leaf the new CA signed, and clients holding the old bundle
// keep verifying the old leaf through the overlap. Previous CAs leave the
// bundle when they expire.
#include <optional>
#include <string>
#include <vector>

#include "certs/x509.h"
#include "scoring/result.h"

namespace placer::certs {

inline constexpr std::chrono::hours kRenewBefore{30 * 24};

struct CertificateSpec {
  std::string service;
  std::string ns;
  std::vector<std::string> extraDnsNames;  // beyond the four Service names
  std::vector<std::string> ipAddresses;
  int days = 365;     // serving certificate lifetime
  int caDays = 3650;  // CA lifetime
  KeyType keyType = KeyType::EcdsaP256;
  std::string caCommonName;  // empty: "placer-ca@<service>.<ns>"
  // How long a new CA is trusted (in the bundle) before a leaf it signed is
  // served. 0: switch at once (files consumed by a single reader).
  std::chrono::seconds trustPropagation{std::chrono::minutes(5)};

  std::vector<std::string> dnsNames() const;  // Service names, then extras
};

// What the webhook needs: its CA (with key, to sign the next leaf), its serving
// pair, and the bundle clients trust (current CA first, then previous CAs).
struct CertificateMaterial {
  PemPair ca;
  PemPair serving;
  std::string caBundle;
};

enum class RenewalAction { Kept, Created, ReissuedLeaf, RotatedCa };
std::string_view renewalActionName(RenewalAction action);

struct Renewal {
  RenewalAction action = RenewalAction::Kept;
  std::string reason;  // why, for logs: "serving certificate expires in 12 days"
  CertificateMaterial material;
};

// Decides at `now` and, unless the action is Kept, generates new material.
// Only errors of generation (or an invalid spec) are errors: damaged existing
// material is replaced, not reported.
Result<Renewal> renew(const std::optional<CertificateMaterial>& existing, const CertificateSpec& spec,
                      Clock::time_point now);

// Checks the spec on its own (names, lifetimes), as a command line would.
Outcome validateSpec(const CertificateSpec& spec);

}  // namespace placer::certs
