#pragma once
// The `placer` command line: serve, explain, certs, version.

namespace placer {

// Returns the process exit code.
int runCli(int argc, char** argv);

}  // namespace placer
