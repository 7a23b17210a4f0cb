#include "certs/x509.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <ctime>
#include <memory>

#include "certs/openssl_error.h"

namespace placer::certs {
namespace {

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const {
    Free(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

constexpr long kBackdateSeconds = std::chrono::seconds(kCertificateBackdate).count();
constexpr int kMaxDays = 100 * 365;

// "what: <the OpenSSL error>", or just `what` when the queue is empty.
std::string opensslError(std::string_view what) {
  std::string m(what);
  if (std::string detail = takeOpensslError(""); !detail.empty()) m.append(": ").append(detail);
  return m;
}

Error fail(std::string_view what) { return Error{opensslError(what)}; }

BioPtr memoryBio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::string bioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

// The first PEM block of `pem` read by `read` (PEM_read_bio_X509, ...);
// errors begin with `what`.
template <class Ptr, class Read>
Result<Ptr> readPem(std::string_view pem, Read read, const std::string& what) {
  ERR_clear_error();
  BioPtr bio = memoryBio(pem);
  if (!bio) return fail(what + ": out of memory");
  Ptr object(read(bio.get(), nullptr, nullptr, nullptr));
  if (!object) return fail(what + ": not a PEM " + what);
  return object;
}

Result<X509Ptr> readCertificate(std::string_view pem) {
  return readPem<X509Ptr>(pem, PEM_read_bio_X509, "certificate");
}

Result<KeyPtr> readPrivateKey(std::string_view pem) {
  return readPem<KeyPtr>(pem, PEM_read_bio_PrivateKey, "private key");
}

Result<KeyPtr> generateKey(KeyType type) {
  ERR_clear_error();
  EVP_PKEY* key = nullptr;
  switch (type) {
    case KeyType::EcdsaP256:
      key = EVP_EC_gen("P-256");
      break;
    case KeyType::Rsa2048:
      key = EVP_RSA_gen(2048);
      break;
  }
  if (key == nullptr) return fail("private key: generation failed");
  return KeyPtr(key);
}

Result<std::string> keyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return fail("private key: PEM encoding failed");
  }
  return bioString(bio.get());
}

Result<std::string> certificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) return fail("certificate: PEM encoding failed");
  return bioString(bio.get());
}

// A random positive 127-bit serial, as RFC 5280 asks (unique, at most 20 octets).
Outcome setRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return fail("certificate: no randomness for the serial");
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero, never with a leading zero octet stripped to fewer bits
  BnPtr bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) {
    return fail("certificate: serial");
  }
  return {};
}

Outcome addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return fail(std::string("certificate: extension ") + OBJ_nid2sn(nid) + " = " + value);
  }
  return {};
}

Outcome setSubjectCommonName(X509* cert, std::string_view cn) {
  X509_NAME* name = X509_get_subject_name(cert);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.data()),
                                 static_cast<int>(cn.size()), -1, 0) != 1) {
    return fail("certificate: subject common name");
  }
  return {};
}

Clock::time_point toTimePoint(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return Clock::time_point{};
  return Clock::from_time_t(timegm(&tm));
}

std::string hex(const ASN1_OCTET_STRING* s) {
  if (s == nullptr) return {};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  const unsigned char* d = ASN1_STRING_get0_data(s);
  for (int i = 0; i < ASN1_STRING_length(s); ++i) {
    out.push_back(kDigits[d[i] >> 4]);
    out.push_back(kDigits[d[i] & 0xf]);
  }
  return out;
}

std::string commonName(const X509_NAME* name) {
  int idx = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (idx < 0) return {};
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, idx));
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

std::string ipText(const ASN1_OCTET_STRING* ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  const unsigned char* d = ASN1_STRING_get0_data(ip);
  int n = ASN1_STRING_length(ip);
  if (n == 4) inet_ntop(AF_INET, d, buf, sizeof buf);
  if (n == 16) inet_ntop(AF_INET6, d, buf, sizeof buf);
  return buf;
}

bool isIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

Outcome setValidity(X509* cert, int days, std::optional<Clock::time_point> issuedAt) {
  time_t at = Clock::to_time_t(issuedAt.value_or(Clock::now()));
  if (X509_time_adj_ex(X509_getm_notBefore(cert), 0, -kBackdateSeconds, &at) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert), days, 0, &at) == nullptr) {
    return fail("certificate: validity");
  }
  return {};
}

Outcome checkDays(int days) {
  if (days <= 0 || days > kMaxDays) {
    return fieldError("days", "must be between 1 and " + std::to_string(kMaxDays));
  }
  return {};
}

}  // namespace

Result<KeyType> parseKeyType(std::string_view name) {
  if (name == "ecdsa") return KeyType::EcdsaP256;
  if (name == "rsa") return KeyType::Rsa2048;
  return fieldError("key-type", "must be ecdsa or rsa, not \"" + std::string(name) + "\"");
}

std::string_view keyTypeName(KeyType type) { return type == KeyType::Rsa2048 ? "rsa" : "ecdsa"; }

std::vector<std::string> serviceDnsNames(std::string_view service, std::string_view ns) {
  std::string s(service);
  std::string n(ns);
  return {s, s + "." + n, s + "." + n + ".svc", s + "." + n + ".svc.cluster.local"};
}

namespace {

// A new v3 certificate with a random serial and `days` of validity from
// issuedAt (now when unset); the caller sets names, key and extensions.
Result<X509Ptr> newCertificate(int days, std::optional<Clock::time_point> issuedAt) {
  X509Ptr cert(X509_new());
  if (!cert) return fail("certificate: out of memory");
  X509_set_version(cert.get(), X509_VERSION_3);
  if (Outcome o = setRandomSerial(cert.get()); !o) return o.error();
  if (Outcome o = setValidity(cert.get(), days, issuedAt); !o) return o.error();
  return cert;
}

// Signs `cert` with `signer` and returns it with its own private key, as PEM.
Result<PemPair> signedPair(X509* cert, EVP_PKEY* signer, EVP_PKEY* key, const char* what) {
  if (X509_sign(cert, signer, EVP_sha256()) == 0) return fail(std::string("certificate: signing") + what);
  auto certPem = certificatePem(cert);
  if (!certPem) return certPem.error();
  auto privPem = keyPem(key);
  if (!privPem) return privPem.error();
  return PemPair{std::move(*certPem), std::move(*privPem)};
}

}  // namespace

Result<PemPair> generateCa(std::string_view commonName, int days, KeyType type,
                           std::optional<Clock::time_point> issuedAt) {
  if (Outcome o = checkDays(days); !o) return o.error();
  if (commonName.empty()) return fieldError("commonName", "must not be empty");
  auto key = generateKey(type);
  if (!key) return key.error();
  auto created = newCertificate(days, issuedAt);
  if (!created) return created.error();
  X509Ptr cert = std::move(*created);
  if (Outcome o = setSubjectCommonName(cert.get(), commonName); !o) return o.error();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  X509_set_pubkey(cert.get(), key->get());
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                            std::pair{NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                            std::pair{NID_subject_key_identifier, "hash"},
                            std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    if (Outcome o = addExtension(cert.get(), cert.get(), nid, value); !o) return o.error();
  }
  return signedPair(cert.get(), key->get(), key->get(), " the CA");
}

Result<PemPair> generateServingCert(const PemPair& ca, const std::vector<std::string>& dnsNames,
                                    const std::vector<std::string>& ipAddresses, int days, KeyType type,
                                    std::optional<Clock::time_point> issuedAt) {
  if (Outcome o = checkDays(days); !o) return o.error();
  if (dnsNames.empty() && ipAddresses.empty()) return fieldError("dnsNames", "at least one name is needed");
  std::string san;
  for (const std::string& dns : dnsNames) {
    if (dns.empty() || dns.find_first_of(", \t\r\n") != std::string::npos) {
      return fieldError("dnsNames", "invalid DNS name \"" + dns + "\"");
    }
    san.append(san.empty() ? "" : ",").append("DNS:").append(dns);
  }
  for (const std::string& ip : ipAddresses) {
    if (!isIpAddress(ip)) return fieldError("ipAddresses", "invalid IP address \"" + ip + "\"");
    san.append(san.empty() ? "" : ",").append("IP:").append(ip);
  }
  auto caCert = readCertificate(ca.certificatePem);
  if (!caCert) return Error{"ca." + caCert.error().message};
  auto caKey = readPrivateKey(ca.privateKeyPem);
  if (!caKey) return Error{"ca." + caKey.error().message};
  if (X509_check_private_key(caCert->get(), caKey->get()) != 1) {
    ERR_clear_error();
    return fieldError("ca", "private key does not match the CA certificate");
  }
  auto key = generateKey(type);
  if (!key) return key.error();

  auto created = newCertificate(days, issuedAt);
  if (!created) return created.error();
  X509Ptr cert = std::move(*created);
  // A leaf that outlives its CA would fail verification after the CA expires anyway.
  if (ASN1_TIME_compare(X509_get0_notAfter(cert.get()), X509_get0_notAfter(caCert->get())) > 0) {
    X509_set1_notAfter(cert.get(), X509_get0_notAfter(caCert->get()));
  }
  const std::string& cn = dnsNames.empty() ? ipAddresses.front() : dnsNames.front();
  if (Outcome o = setSubjectCommonName(cert.get(), cn); !o) return o.error();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(caCert->get()));
  X509_set_pubkey(cert.get(), key->get());
  const char* keyUsage =
      type == KeyType::Rsa2048 ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature";
  for (auto [nid, value] : {std::pair<int, std::string>{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair<int, std::string>{NID_key_usage, keyUsage},
                            std::pair<int, std::string>{NID_ext_key_usage, "serverAuth"},
                            std::pair<int, std::string>{NID_subject_alt_name, san},
                            std::pair<int, std::string>{NID_subject_key_identifier, "hash"},
                            std::pair<int, std::string>{NID_authority_key_identifier, "keyid:always"}}) {
    if (Outcome o = addExtension(cert.get(), caCert->get(), nid, value); !o) return o.error();
  }
  return signedPair(cert.get(), caKey->get(), key->get(), "");
}

Result<CertificateInfo> inspectCertificate(std::string_view pem) {
  auto cert = readCertificate(pem);
  if (!cert) return cert.error();
  X509* c = cert->get();
  CertificateInfo info;
  info.subjectCommonName = commonName(X509_get_subject_name(c));
  info.issuerCommonName = commonName(X509_get_issuer_name(c));
  info.notBefore = toTimePoint(X509_get0_notBefore(c));
  info.notAfter = toTimePoint(X509_get0_notAfter(c));

  NamesPtr names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(c, NID_subject_alt_name, nullptr, nullptr)));
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
      if (gn->type == GEN_DNS) {
        const ASN1_IA5STRING* s = gn->d.dNSName;
        info.dnsNames.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                   static_cast<size_t>(ASN1_STRING_length(s)));
      } else if (gn->type == GEN_IPADD) {
        info.ipAddresses.push_back(ipText(gn->d.iPAddress));
      }
    }
  }

  // X509_get_extension_flags caches the parsed extensions (and X509_check_ca needs them).
  const uint32_t flags = X509_get_extension_flags(c);
  info.isCa = (flags & EXFLAG_CA) != 0;
  int bcIndex = X509_get_ext_by_NID(c, NID_basic_constraints, -1);
  info.basicConstraintsCritical = bcIndex >= 0 && X509_EXTENSION_get_critical(X509_get_ext(c, bcIndex)) == 1;
  const uint32_t ku = X509_get_key_usage(c);  // all bits set when the extension is absent
  if ((flags & EXFLAG_KUSAGE) != 0) {
    info.keyUsageDigitalSignature = (ku & KU_DIGITAL_SIGNATURE) != 0;
    info.keyUsageKeyEncipherment = (ku & KU_KEY_ENCIPHERMENT) != 0;
    info.keyUsageKeyCertSign = (ku & KU_KEY_CERT_SIGN) != 0;
  }
  info.extendedKeyUsageServerAuth =
      (flags & EXFLAG_XKUSAGE) != 0 && (X509_get_extended_key_usage(c) & XKU_SSL_SERVER) != 0;
  info.subjectKeyId = hex(X509_get0_subject_key_id(c));
  info.authorityKeyId = hex(X509_get0_authority_key_id(c));

  if (EVP_PKEY* pub = X509_get0_pubkey(c)) {
    if (EVP_PKEY_is_a(pub, "EC") && EVP_PKEY_get_bits(pub) == 256) info.keyType = KeyType::EcdsaP256;
    if (EVP_PKEY_is_a(pub, "RSA") && EVP_PKEY_get_bits(pub) == 2048) info.keyType = KeyType::Rsa2048;
  }
  if (BnPtr serial{ASN1_INTEGER_to_BN(X509_get0_serialNumber(c), nullptr)}) {
    char* h = BN_bn2hex(serial.get());
    if (h != nullptr) {
      info.serialHex = h;
      OPENSSL_free(h);
    }
  }
  ERR_clear_error();
  return info;
}

Result<std::vector<std::string>> splitCertificates(std::string_view bundlePem) {
  static constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  static constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = bundlePem.find(kBegin, pos)) != std::string_view::npos) {
    size_t end = bundlePem.find(kEnd, pos);
    if (end == std::string_view::npos) return fieldError("bundle", "unterminated certificate block");
    std::string block(bundlePem.substr(pos, end + kEnd.size() - pos));
    block.push_back('\n');
    auto cert = readCertificate(block);
    if (!cert) return Error{"bundle[" + std::to_string(out.size()) + "]: " + cert.error().message};
    out.push_back(std::move(block));
    pos = end + kEnd.size();
  }
  return out;
}

Outcome verifyServingChain(std::string_view leafPem, std::string_view caBundlePem,
                           std::optional<std::string_view> dnsName, std::optional<Clock::time_point> at) {
  auto leaf = readCertificate(leafPem);
  if (!leaf) return leaf.error();
  auto cas = splitCertificates(caBundlePem);
  if (!cas) return cas.error();
  if (cas->empty()) return fieldError("bundle", "no CA certificate");
  StorePtr store(X509_STORE_new());
  if (!store) return fail("verify: out of memory");
  for (const std::string& pem : *cas) {
    auto ca = readCertificate(pem);
    if (!ca) return ca.error();
    if (X509_STORE_add_cert(store.get(), ca->get()) != 1) ERR_clear_error();  // duplicates are fine
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf->get(), nullptr) != 1) {
    return fail("verify: context");
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  if (dnsName) {
    std::string host(*dnsName);
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  }
  if (at) X509_VERIFY_PARAM_set_time(param, Clock::to_time_t(*at));
  int ok = X509_verify_cert(ctx.get());
  ERR_clear_error();
  if (ok != 1) {
    return Error{std::string("verify: ") + X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()))};
  }
  return {};
}

Outcome checkKeyMatchesCertificate(std::string_view certificatePem, std::string_view privateKeyPem) {
  auto cert = readCertificate(certificatePem);
  if (!cert) return cert.error();
  auto key = readPrivateKey(privateKeyPem);
  if (!key) return key.error();
  if (X509_check_private_key(cert->get(), key->get()) != 1) {
    ERR_clear_error();
    return Error{"private key does not match the certificate"};
  }
  return {};
}

}  // namespace placer::certs
