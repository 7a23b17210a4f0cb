#pragma once
#include <string>
// The process's allocator. The `placer` executable and the loadgens that host
// its servers link jemalloc (see webhook/CMakeLists.txt and jemalloc_conf.cpp):
// an initial sync builds a view of ~240 MB out of millions of small blocks, and
// on this kind of machine every 4 KB page faulted in costs tens of
// microseconds; jemalloc backs its memory with transparent huge pages
// (thp:always), glibc's malloc cannot for its threads' arenas. Tests, the
// engine's benchmarks and sanitizer builds keep glibc's malloc; the code below
// works with either.
//
// Thread-safety: callable from any thread.

namespace placer {

// Gives memory that is free but still held by the allocator back to the
// system: jemalloc's arenas are purged (mallctl "arena.<all>.purge"), glibc's
// trimmed (malloc_trim). Called after a burst that freed much at once (a
// list's decode buffers, a snapshot's decode, a huge request).
void releaseFreeMemory();

// What the allocator holds, for benchmarks and diagnostics.
struct AllocatorFigures {
  std::string allocator;  // "jemalloc" or "glibc"
  double inUseMb = 0;     // bytes handed out and not yet freed
  double heldFreeMb = 0;  // free, but still resident in the allocator's memory
};
AllocatorFigures allocatorFigures();

}  // namespace placer
