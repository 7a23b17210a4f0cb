#pragma once
// The `placer` command line: serve, explain, check, certs, version. Each subcommand
// lives in its own file (serve_command.cpp, explain_command.cpp, certs_command.cpp)
// and receives the arguments after its name.

namespace placer {

// Returns the process exit code.
int runCli(int argc, char** argv);

int runServe(int argc, char** argv);    // webhook/serve_command.cpp
int runExplain(int argc, char** argv);  // webhook/explain_command.cpp
int runCerts(int argc, char** argv);    // webhook/certs_command.cpp
int runCheck(int argc, char** argv);    // webhook/check_command.cpp

}  // namespace placer
