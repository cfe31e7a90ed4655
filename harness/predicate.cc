#include "harness/predicate.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/base/check.h"
#include "harness/campaign.h"

namespace flatcheck {

OracleResult check_with_predicate(const Case& c, const ExternalPredicate& p) {
  std::string path = (p.dir.empty() ? std::string(".") : p.dir) + "/candidate.json";
  write_file_atomic(path, save_case(c));
  std::string cmd = p.command;
  if (auto at = cmd.find("{}"); at != std::string::npos) {
    while ((at = cmd.find("{}")) != std::string::npos) cmd.replace(at, 2, "'" + path + "'");
  } else {
    cmd += " '" + path + "'";
  }
  pid_t pid = fork();
  if (pid < 0)
    throw SystemError(std::string("shrink --predicate: cannot start a process (") +
                      std::strerror(errno) + ")");
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout kills everything it started
    setenv("FLATCHECK_CASE", path.c_str(), 1);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(p.timeout_s);
  int status = 0;
  bool timed_out = false;
  while (true) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  OracleResult r;
  if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    r.failure = Failure{"predicate", "external", "-", "the command exited 0: " + p.command, "", ""};
  return r;
}

}  // namespace flatcheck
