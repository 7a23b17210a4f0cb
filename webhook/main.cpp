// placer: a thin main over the libraries; see webhook/cli.h.
#include "webhook/cli.h"

int main(int argc, char** argv) { return placer::runCli(argc, argv); }

