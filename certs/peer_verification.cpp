#include "certs/peer_verification.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "certs/openssl_error.h"

namespace placer::certs {

Outcome addCaBundle(SSL_CTX* context, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509_STORE* store = SSL_CTX_get_cert_store(context);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    X509_free(cert);
    ++added;
  }
  ERR_clear_error();  // the loop ends with a "no start line" error
  BIO_free(bio);
  if (added == 0) return Error{"certificate authority: no PEM certificate found"};
  return {};
}

Outcome verifyPeerName(SSL_CTX* context, const std::string& name) {
  if (name.empty()) return Error{"no server name to verify"};
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(context);
  // An address parses as one; anything else is a DNS name.
  if (X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) == 1) return {};
  ERR_clear_error();
  if (X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) == 1) return {};
  return Error{"server name " + name + ": " + takeOpensslError("unknown OpenSSL error")};
}

}  // namespace placer::certs
