// Runs the built flatcheck binary from a test and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace flatcheck {

struct CliRun {
  int code;         // exit code, or 128 + signal
  std::string out;  // stdout and stderr together
};

// `prefix` is prepended to the shell command (e.g. "ulimit -v 2000000; ").
inline CliRun run_cli(const std::string& args, const std::string& prefix = "") {
  std::string cmd = prefix + std::string(FLATCHECK_BIN) + " " + args + " 2>&1";
  CliRun r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace flatcheck
