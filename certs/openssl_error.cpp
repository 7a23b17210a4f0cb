#include "certs/openssl_error.h"

#include <openssl/err.h>

namespace placer::certs {

std::string takeOpensslError(std::string_view whenEmpty) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return std::string(whenEmpty);
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

}  // namespace placer::certs
