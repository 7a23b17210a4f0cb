#include "webhook/serving_certificate.h"

#include <ctime>
#include <fstream>
#include <sstream>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "certs/openssl_error.h"
#include "webhook/log.h"

namespace placer {

struct ServingCertificate::LoadedPair {
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // intermediates after the leaf, may be empty
  EVP_PKEY* key = nullptr;
  std::string certPem;
  std::chrono::system_clock::time_point notAfter;

  ~LoadedPair() {
    if (leaf) X509_free(leaf);
    if (chain) sk_X509_pop_free(chain, X509_free);
    if (key) EVP_PKEY_free(key);
  }
};

namespace {

Result<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open"};
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Error{path + ": read failed"};
  return s.str();
}

Result<std::shared_ptr<const ServingCertificate::LoadedPair>> parsePair(std::string_view certPem,
                                                                         std::string_view keyPem) {
  ERR_clear_error();
  auto pair = std::make_shared<ServingCertificate::LoadedPair>();
  pair->certPem = std::string(certPem);
  {
    BIO* bio = BIO_new_mem_buf(certPem.data(), int(certPem.size()));
    pair->leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (pair->leaf) {
      pair->chain = sk_X509_new_null();
      while (X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) sk_X509_push(pair->chain, extra);
      ERR_clear_error();  // the loop ends on "no start line"
    }
    BIO_free(bio);
  }
  if (!pair->leaf) return Error{"certificate: no PEM certificate (" + certs::takeOpensslError("no detail") + ")"};
  std::tm notAfter{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(pair->leaf), &notAfter) != 1)
    return Error{"certificate: unreadable notAfter (" + certs::takeOpensslError("no detail") + ")"};
  pair->notAfter = std::chrono::system_clock::from_time_t(timegm(&notAfter));
  {
    BIO* bio = BIO_new_mem_buf(keyPem.data(), int(keyPem.size()));
    pair->key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
  }
  if (!pair->key) return Error{"key: no PEM private key (" + certs::takeOpensslError("no detail") + ")"};
  if (X509_check_private_key(pair->leaf, pair->key) != 1) {
    ERR_clear_error();
    return Error{"key: does not match the certificate"};
  }
  return std::shared_ptr<const ServingCertificate::LoadedPair>(std::move(pair));
}

}  // namespace

Result<std::unique_ptr<ServingCertificate>> ServingCertificate::fromFiles(std::string certFile,
                                                                          std::string keyFile) {
  std::unique_ptr<ServingCertificate> cert(new ServingCertificate());
  cert->certFile_ = std::move(certFile);
  cert->keyFile_ = std::move(keyFile);
  Result<bool> loaded = cert->reload();
  if (!loaded) return loaded.error();
  return cert;
}

Result<std::unique_ptr<ServingCertificate>> ServingCertificate::fromPem(std::string_view certPem,
                                                                        std::string_view keyPem) {
  auto pair = parsePair(certPem, keyPem);
  if (!pair) return pair.error();
  std::unique_ptr<ServingCertificate> cert(new ServingCertificate());
  cert->current_ = std::move(*pair);
  cert->generation_ = 1;
  return cert;
}

ServingCertificate::~ServingCertificate() { stopPolling(); }

Result<bool> ServingCertificate::reload() {
  if (certFile_.empty()) return false;
  auto certPem = readFile(certFile_);
  if (!certPem) return certPem.error();
  auto keyPem = readFile(keyFile_);
  if (!keyPem) return keyPem.error();
  std::string content = *certPem + '\0' + *keyPem;
  {
    std::lock_guard lock(mutex_);
    if (current_ && content == loadedContent_) return false;
  }
  auto pair = parsePair(*certPem, *keyPem);
  std::lock_guard lock(mutex_);
  if (!pair) {
    Error e{certFile_ + ", " + keyFile_ + ": " + pair.error().message};
    if (content != rejectedContent_ && current_) {
      rejectedContent_ = content;
      logEvent(LogLevel::Warning, "serving certificate not reloaded; the previous one keeps serving",
               {{"error", e.message}});
    }
    return e;
  }
  current_ = std::move(*pair);
  loadedContent_ = std::move(content);
  rejectedContent_.clear();
  ++generation_;
  if (generation_ > 1)
    logEvent(LogLevel::Info, "serving certificate reloaded",
             {{"certFile", certFile_}, {"generation", generation_}});
  return true;
}

void ServingCertificate::startPolling(std::chrono::milliseconds interval) {
  if (certFile_.empty() || poller_.joinable()) return;
  stopping_ = false;
  poller_ = std::thread([this, interval] {
    std::unique_lock lock(pollMutex_);
    while (!pollWake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      (void)reload();  // failures are logged by reload() and leave the old pair in place
      lock.lock();
    }
  });
}

void ServingCertificate::stopPolling() {
  {
    std::lock_guard lock(pollMutex_);
    stopping_ = true;
  }
  pollWake_.notify_all();
  if (poller_.joinable()) poller_.join();
}

bool ServingCertificate::install(SSL* ssl) const {
  std::shared_ptr<const LoadedPair> pair;
  {
    std::lock_guard lock(mutex_);
    pair = current_;
  }
  if (!pair) return false;
  // Each call takes its own references; the pair may be replaced meanwhile.
  if (SSL_use_certificate(ssl, pair->leaf) != 1) return false;
  if (SSL_use_PrivateKey(ssl, pair->key) != 1) return false;
  if (sk_X509_num(pair->chain) > 0 && SSL_set1_chain(ssl, pair->chain) != 1) return false;
  return true;
}

uint64_t ServingCertificate::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

std::string ServingCertificate::certificatePem() const {
  std::lock_guard lock(mutex_);
  return current_ ? current_->certPem : std::string();
}

std::chrono::system_clock::time_point ServingCertificate::notAfter() const {
  std::lock_guard lock(mutex_);
  return current_ ? current_->notAfter : std::chrono::system_clock::time_point();
}

}  // namespace placer
