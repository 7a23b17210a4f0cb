// placer: a thin main over the libraries; see webhook/cli.h.
#include "webhook/cli.h"

int main(int argc, char** argv) { return placer::runCli(argc, argv); }

// jemalloc's options, read when it starts (when the executable links it, as
// webhook/CMakeLists.txt does outside sanitizer builds; otherwise unused). Its
// memory is advised for transparent huge pages: see webhook/allocator.h.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always";
}
