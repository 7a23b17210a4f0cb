#pragma once
// The webhook's certificates on disk, as `placer certs generate` writes them and
// `placer serve` reads them: DIR/ca.crt (the trust bundle: current CA first,
// then previous CAs still valid), DIR/ca.key, DIR/tls.crt, DIR/tls.key — the
// key names of a kubernetes.io/tls Secret plus the CA, so the same directory
// can be a mounted Secret.
//
// Writing is atomic per file (temporary file in DIR, fsync, rename), private
// keys are created with mode 0600 and certificates 0644; files whose content
// is unchanged are not rewritten. A reader that loads tls.crt and tls.key
// while a renewal is being written may see a new certificate with the old key
// for an instant (two renames): it should check that they match
// (checkKeyMatchesCertificate) and retry, keeping what it served before.
// tls.key is written before tls.crt so such a pair only appears in one order.

#include <filesystem>
#include <optional>

#include "certs/renewal.h"
#include "scoring/result.h"

namespace placer::certs {

inline constexpr const char* kCaCertFile = "ca.crt";
inline constexpr const char* kCaKeyFile = "ca.key";
inline constexpr const char* kServingCertFile = "tls.crt";
inline constexpr const char* kServingKeyFile = "tls.key";

// nullopt when none of the four files exists. A file that is missing reads as
// empty (renew() then replaces what it cannot use). An I/O error other than
// "does not exist" is an error.
Result<std::optional<CertificateMaterial>> readCertificateDir(const std::filesystem::path& dir);

// Creates DIR if needed and writes the four files atomically.
Outcome writeCertificateDir(const std::filesystem::path& dir, const CertificateMaterial& material);

// read → renew → write (write only when something changed).
Result<Renewal> ensureCertificateDir(const std::filesystem::path& dir, const CertificateSpec& spec,
                                     Clock::time_point now);

// Writes `content` to `path` atomically with `mode` (temporary file in the same
// directory, fsync, rename, fsync of the directory).
Outcome writeFileAtomically(const std::filesystem::path& path, std::string_view content, unsigned mode);

}  // namespace placer::certs
