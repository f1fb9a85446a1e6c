// Runs the hsdp binary built next to the tests and captures its output and exit status.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace hsdp::testing {

struct CliResult {
  int status = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs a shell command line (`prefix` may set the environment or a launcher such as mpirun)
/// and captures its stdout, stderr and exit status.
inline CliResult run_command(const std::string& command) {
  static int counter = 0;
  const std::string err_file = ::testing::TempDir() + "hsdp_cli_err_" + std::to_string(::getpid()) +
                                "_" + std::to_string(++counter);
  const std::string cmd = command + " 2>" + err_file;
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (FILE* f = std::fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.err.append(buf.data(), n);
    std::fclose(f);
    std::remove(err_file.c_str());
  }
  return r;
}

/// `hsdp ARGS` (the binary built next to the tests).
inline CliResult run_cli(const std::string& args) { return run_command(std::string(HSDP_CLI_PATH) + " " + args); }

}  // namespace hsdp::testing
