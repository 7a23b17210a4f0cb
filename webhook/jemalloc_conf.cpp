// jemalloc's options, read when it starts. Compiled into each executable that
// links the placer_jemalloc target (webhook/CMakeLists.txt): `placer` and the
// loadgens that host its servers, so that a loadgen measures the allocator
// placer runs with. Its memory is advised for transparent huge pages: see
// webhook/allocator.h.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always";
}
