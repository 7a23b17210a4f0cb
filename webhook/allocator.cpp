#include "webhook/allocator.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>
#include <cstdint>

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

AllocatorFigures allocatorFigures() {
  constexpr double kMb = 1048576.0;
  if (Mallctl mallctl = mallctlOfProcess()) {
    // jemalloc's statistics are a snapshot taken when the epoch advances.
    uint64_t epoch = 1;
    size_t length = sizeof(epoch);
    mallctl("epoch", &epoch, &length, &epoch, length);
    size_t allocated = 0, resident = 0;
    length = sizeof(size_t);
    mallctl("stats.allocated", &allocated, &length, nullptr, 0);
    length = sizeof(size_t);
    mallctl("stats.resident", &resident, &length, nullptr, 0);
    const double heldFree = resident > allocated ? double(resident - allocated) : 0.0;
    return {"jemalloc", double(allocated) / kMb, heldFree / kMb};
  }
  const struct mallinfo2 m = mallinfo2();
  return {"glibc", double(m.uordblks + m.hblkhd) / kMb, double(m.fordblks) / kMb};
}

}  // namespace placer
