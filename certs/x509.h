#pragma once
// X.509 for the webhook, with OpenSSL: a self-signed CA, a serving certificate
// for the webhook Service's DNS names signed by it, and the inspection the
// renewal logic and the tests need (validity, SANs, key usage, chain check).
//
// Everything is PEM in, PEM out. Private keys are PKCS#8 ("BEGIN PRIVATE KEY").
// Failures (bad PEM, OpenSSL errors, a key that does not match its certificate)
// come back as Error values; nothing here throws or aborts on bad input.
//
// Thread-safety: every function is free-standing and re-entrant.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scoring/result.h"

namespace placer::certs {

enum class KeyType { EcdsaP256, Rsa2048 };

// Certificates are valid from this long before they are issued, for clocks
// that lag the issuer's.
inline constexpr std::chrono::minutes kCertificateBackdate{5};

// "ecdsa" / "rsa" (the --key-type values).
Result<KeyType> parseKeyType(std::string_view name);
std::string_view keyTypeName(KeyType type);

struct PemPair {
  std::string certificatePem;
  std::string privateKeyPem;
};

// A self-signed CA: basicConstraints CA:TRUE (critical), keyUsage keyCertSign +
// cRLSign + digitalSignature (critical), subject key identifier. Valid from five
// minutes before `issuedAt` (clock skew between nodes) for `days` days.
// `issuedAt` defaults to now; tests and renew() pass their own clock.
Result<PemPair> generateCa(std::string_view commonName, int days, KeyType type,
                           std::optional<std::chrono::system_clock::time_point> issuedAt = std::nullopt);

// A serving certificate signed by `ca`: subject CN = the first DNS name (or
// first IP), subjectAltName = every DNS name and IP address, basicConstraints
// CA:FALSE, keyUsage digitalSignature (+ keyEncipherment for RSA), extended
// key usage serverAuth, subject and authority key identifiers. Its validity
// never outlasts the CA's.
Result<PemPair> generateServingCert(const PemPair& ca, const std::vector<std::string>& dnsNames,
                                    const std::vector<std::string>& ipAddresses, int days, KeyType type,
                                    std::optional<std::chrono::system_clock::time_point> issuedAt = std::nullopt);

// The DNS names under which the API server reaches a Service:
// NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local.
std::vector<std::string> serviceDnsNames(std::string_view service, std::string_view ns);

using Clock = std::chrono::system_clock;

struct CertificateInfo {
  std::string subjectCommonName;
  std::string issuerCommonName;
  Clock::time_point notBefore;
  Clock::time_point notAfter;
  std::vector<std::string> dnsNames;     // subjectAltName DNS entries, in order
  std::vector<std::string> ipAddresses;  // subjectAltName IP entries, textual
  bool isCa = false;                     // basicConstraints CA:TRUE
  bool basicConstraintsCritical = false;
  bool keyUsageDigitalSignature = false;
  bool keyUsageKeyEncipherment = false;
  bool keyUsageKeyCertSign = false;
  bool extendedKeyUsageServerAuth = false;
  std::string subjectKeyId;    // hex, empty when absent
  std::string authorityKeyId;  // hex, empty when absent
  std::optional<KeyType> keyType;  // nullopt for key types placer does not generate
  std::string serialHex;
};

// Reads the first certificate of `pem`.
Result<CertificateInfo> inspectCertificate(std::string_view pem);

// Every certificate of a PEM bundle, each as its own PEM block, in order.
// Text outside the blocks is ignored; an unparsable block is an error.
Result<std::vector<std::string>> splitCertificates(std::string_view bundlePem);

// Verifies that the first certificate of `leafPem` chains to one of the
// certificates in `caBundlePem`, is valid at `at`, is usable for TLS server
// authentication and, when `dnsName` is given, carries that name.
Outcome verifyServingChain(std::string_view leafPem, std::string_view caBundlePem,
                           std::optional<std::string_view> dnsName = std::nullopt,
                           std::optional<Clock::time_point> at = std::nullopt);

// The private key is the one the certificate was issued for.
Outcome checkKeyMatchesCertificate(std::string_view certificatePem, std::string_view privateKeyPem);

}  // namespace placer::certs
