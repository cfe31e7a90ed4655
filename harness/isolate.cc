#include "harness/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/serialize/serialize.h"

namespace flatcheck {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGABRT:
      return "SIGABRT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGKILL:
      return "SIGKILL";
    case SIGTRAP:
      return "SIGTRAP";
    default:
      return "signal " + std::to_string(sig);
  }
}

StageSlot::StageSlot() {
  void* p = mmap(nullptr, 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  page_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  clear();
}

StageSlot::~StageSlot() {
  if (page_) munmap(page_, 64);
}

void StageSlot::set(const char* stage) {
  if (!page_) return;
  std::strncpy(page_, stage, 63);
  page_[63] = '\0';
}

std::string StageSlot::get() const {
  return page_ ? std::string(page_) : "unknown";
}

ChildStderr::ChildStderr() {
  char path[] = "/tmp/flatcheck-stderr-XXXXXX";
  fd_ = mkstemp(path);
  if (fd_ >= 0) unlink(path);
}

ChildStderr::~ChildStderr() {
  if (fd_ >= 0) close(fd_);
}

void ChildStderr::redirect() {
  if (fd_ >= 0) dup2(fd_, 2);
}

void ChildStderr::reset() {
  if (fd_ < 0) return;
  if (ftruncate(2, 0) != 0) return;
  lseek(2, 0, SEEK_SET);
}

std::string ChildStderr::tail(size_t max_bytes) const {
  if (fd_ < 0) return "";
  off_t size = lseek(fd_, 0, SEEK_END);
  if (size <= 0) return "";
  off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<size_t>(size - from), '\0');
  ssize_t n = pread(fd_, out.data(), out.size(), from);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string encode_result(const OracleResult& r) {
  const Coverage& c = r.coverage;
  Json j{{"cov",
          {c.nodes, c.calls, c.acc_partitions, c.fallback_partitions, c.renamed_nodes,
           c.specialized_fqns, c.buffer_mutations, c.paths}},
         {"ops", c.ops}};
  if (!r.backend.empty()) j["b"] = r.backend;
  if (r.failure)
    j["f"] = {r.failure->property, r.failure->stage, r.failure->op, r.failure->message,
              r.failure->first_divergence};
  return j.dump();
}

OracleResult decode_result(const std::string& line) {
  Json j = Json::parse(line);
  OracleResult r;
  auto v = j["cov"];
  Coverage& c = r.coverage;
  c.nodes = v[0];
  c.calls = v[1];
  c.acc_partitions = v[2];
  c.fallback_partitions = v[3];
  c.renamed_nodes = v[4];
  c.specialized_fqns = v[5];
  c.buffer_mutations = v[6];
  c.paths = v[7];
  c.ops = j["ops"].get<std::map<std::string, int>>();
  if (j.contains("b") && j["b"].is_string()) r.backend = j["b"].get<std::string>();
  if (j.contains("f")) {
    auto f = j["f"];
    r.failure = Failure{f[0], f[1], f[2], f[3], f[4]};
  }
  return r;
}

OracleResult check_case_isolated(const Case& c, const OracleOptions& o, double timeout_s) {
  StageSlot slot;
  ChildStderr err;
  int fds[2];
  if (pipe(fds) != 0) return check_case(c, o);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return check_case(c, o);
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the harness
    if (getppid() != parent) _exit(1);
    close(fds[0]);
    err.redirect();
    OracleOptions child = o;
    child.on_stage = [&slot](const char* s) { slot.set(s); };
    std::string line = encode_result(check_case(c, child)) + "\n";
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t w = write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    int pr = poll(&pfd, 1, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) {
      timed_out = true;
      break;
    }
    char buf[65536];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string stage = slot.get();
  if (timed_out) {
    OracleResult r;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g s", timeout_s);
    r.failure =
        Failure{"timeout", stage, "-", std::string("the case ran longer than ") + limit, ""};
    return r;
  }
  if (WIFSIGNALED(status) || out.empty() || out.back() != '\n') {
    OracleResult r;
    std::string sig = WIFSIGNALED(status) ? signal_name(WTERMSIG(status))
                                          : "exit " + std::to_string(WEXITSTATUS(status));
    std::string said = err.tail();
    r.failure = Failure{
        "crash", stage, sig,
        "the process died (" + sig + ") in stage " + stage + (said.empty() ? "" : ": " + said), ""};
    return r;
  }
  return decode_result(out.substr(0, out.size() - 1));
}

}  // namespace flatcheck
