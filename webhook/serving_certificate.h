#pragma once
// The certificate and key a TLS listener serves, read from PEM files and
// reloaded without restart when the files' content changes.
//
// cert-manager and the kubelet rotate a mounted Secret by swapping a symlinked
// directory, so a change is detected by content (the bytes read through the
// paths), never by mtime. A pair that does not parse, or whose key does not
// match its certificate (a rotation caught half-way), is refused and logged
// once; the pair already loaded keeps serving and the next poll tries again.
//
// The listener installs the current pair on every new connection from an
// OpenSSL certificate callback, so the first handshake after a reload serves
// the new certificate; connections already established keep theirs.
//
// Thread-safety: install() may be called from any number of handshake threads
// at once; reload() and the poller may run concurrently with them. start() and
// stop() belong to one owning thread.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <openssl/ssl.h>

#include "scoring/result.h"

namespace placer {

class ServingCertificate {
 public:
  // Reads both files now; fails (naming the file) if they are unusable.
  static Result<std::unique_ptr<ServingCertificate>> fromFiles(std::string certFile, std::string keyFile);
  // From PEM text that never changes (demo mode, tests).
  static Result<std::unique_ptr<ServingCertificate>> fromPem(std::string_view certPem, std::string_view keyPem);
  ~ServingCertificate();

  // Re-reads the files. Returns true when a new pair was installed, false when
  // the content is unchanged; an error (the old pair stays) when the new
  // content is not a valid pair.
  Result<bool> reload();

  // Polls the files every `interval` on a thread of its own until stop().
  void startPolling(std::chrono::milliseconds interval);
  void stopPolling();

  // Puts the current pair (certificate, chain, key) on a new connection.
  bool install(SSL* ssl) const;

  // Number of pairs installed so far (1 after construction); for logs and tests.
  uint64_t generation() const;
  // The certificate PEM currently served.
  std::string certificatePem() const;
  // When the certificate currently served expires.
  std::chrono::system_clock::time_point notAfter() const;

  struct LoadedPair;

 private:
  ServingCertificate() = default;

  std::string certFile_;
  std::string keyFile_;

  mutable std::mutex mutex_;
  std::shared_ptr<const LoadedPair> current_;
  std::string loadedContent_;    // cert + key bytes of current_
  std::string rejectedContent_;  // last refused content, so it is logged once
  uint64_t generation_ = 0;

  std::mutex pollMutex_;
  std::condition_variable pollWake_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace placer
