#include "certs/cert_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace placer::certs {
namespace {

namespace fs = std::filesystem;

Error ioError(const fs::path& path, std::string_view what, int err) {
  return fieldError(path.string(), std::string(what) + ": " + std::strerror(err));
}

// nullopt when the file does not exist.
Result<std::optional<std::string>> readFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return ioError(path, "cannot open", errno);
  }
  std::string content;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ioError(path, "cannot read", err);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
    if (content.size() > (1u << 20)) {
      ::close(fd);
      return fieldError(path.string(), "larger than 1 MiB, not a certificate file");
    }
  }
  ::close(fd);
  return std::optional<std::string>(std::move(content));
}

Outcome writeAll(int fd, std::string_view content, const fs::path& path) {
  while (!content.empty()) {
    ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ioError(path, "cannot write", errno);
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

}  // namespace

Outcome writeFileAtomically(const fs::path& path, std::string_view content, unsigned mode) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return ioError(path, "cannot create temporary file", errno);
  // mkstemp creates 0600; set the final mode before any byte is written.
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    return ioError(path, "cannot set mode", err);
  }
  Outcome written = writeAll(fd, content, path);
  if (written && ::fsync(fd) != 0) written = ioError(path, "cannot sync", errno);
  if (::close(fd) != 0 && written) written = ioError(path, "cannot close", errno);
  if (written && ::rename(tmpl.c_str(), path.c_str()) != 0) written = ioError(path, "cannot rename", errno);
  if (!written) {
    ::unlink(tmpl.c_str());
    return written;
  }
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);  // best effort: the rename is durable once the directory is
    ::close(dirFd);
  }
  return {};
}

Result<std::optional<CertificateMaterial>> readCertificateDir(const fs::path& dir) {
  CertificateMaterial m;
  bool any = false;
  for (auto [name, field] : {std::pair{kCaCertFile, &m.caBundle}, std::pair{kCaKeyFile, &m.ca.privateKeyPem},
                             std::pair{kServingCertFile, &m.serving.certificatePem},
                             std::pair{kServingKeyFile, &m.serving.privateKeyPem}}) {
    auto content = readFile(dir / name);
    if (!content) return content.error();
    if (*content) {
      any = true;
      *field = std::move(**content);
    }
  }
  if (!any) return std::optional<CertificateMaterial>{};
  // The CA that signs is the first of the bundle.
  if (auto certs = splitCertificates(m.caBundle); certs && !certs->empty()) m.ca.certificatePem = certs->front();
  return std::optional<CertificateMaterial>(std::move(m));
}

Outcome writeCertificateDir(const fs::path& dir, const CertificateMaterial& material) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fieldError(dir.string(), "cannot create directory: " + ec.message());
  // Keys before certificates (see the header); tls.key right before tls.crt.
  for (auto [name, content, mode] :
       {std::tuple{kCaKeyFile, &material.ca.privateKeyPem, 0600u}, std::tuple{kCaCertFile, &material.caBundle, 0644u},
        std::tuple{kServingKeyFile, &material.serving.privateKeyPem, 0600u},
        std::tuple{kServingCertFile, &material.serving.certificatePem, 0644u}}) {
    const fs::path path = dir / name;
    auto current = readFile(path);
    if (current && *current && **current == *content) {
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 0777) == mode) continue;
    }
    if (Outcome o = writeFileAtomically(path, *content, mode); !o) return o;
  }
  return {};
}

Result<Renewal> ensureCertificateDir(const fs::path& dir, const CertificateSpec& spec, Clock::time_point now) {
  auto existing = readCertificateDir(dir);
  if (!existing) return existing.error();
  auto renewal = renew(*existing, spec, now);
  if (!renewal) return renewal.error();
  // Kept material is still written when the files differ from it (an expired
  // CA dropped from ca.crt, a key file with a loose mode).
  if (Outcome o = writeCertificateDir(dir, renewal->material); !o) return o.error();
  return renewal;
}

}  // namespace placer::certs
