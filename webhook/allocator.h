#pragma once
#include <string>
// The process's allocator. The `placer` executable and the loadgens that host
// its servers link jemalloc, with its defaults (webhook/CMakeLists.txt): an
// initial sync builds a view of ~240 MB out of millions of small blocks from
// several decode threads, and glibc's per-thread arenas made that ~10-15%
// more CPU and more memory. Transparent huge pages (jemalloc's thp:always)
// were tried and taken back: with them the admissions' p99 at 400/s was
// 7-11.5 ms instead of 2.2-3.3 ms, for no measurable gain in the sync
// (RESULTS.md, issue 15, session 13). Tests, the engine's benchmarks and
// sanitizer builds keep glibc's malloc; the code below works with either.
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
