#include "webhook/allocator.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace placer {
namespace {

using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);

// jemalloc's mallctl when jemalloc serves malloc (linked into the executable),
// else null. Looked up at run time so that the libraries need not link it.
Mallctl mallctlOfProcess() {
  static const Mallctl found = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  return found;
}

}  // namespace

void releaseFreeMemory() {
  if (Mallctl mallctl = mallctlOfProcess()) {
    // MALLCTL_ARENAS_ALL (4096): every arena at once.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return;
  }
  malloc_trim(0);
}

}  // namespace placer
