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
#include <filesystem>
#include <optional>

#include "core/base/check.h"
#include "core/serialize/serialize.h"
#include "harness/campaign.h"

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
         {"ops", c.ops},
         {"reach", c.reach}};
  if (!r.backend.empty()) j["b"] = r.backend;
  if (r.failure)
    j["f"] = {r.failure->property,         r.failure->stage, r.failure->op, r.failure->message,
              r.failure->first_divergence, r.failure->module};
  return j.dump();
}

std::optional<OracleResult> decode_result(const std::string& line) {
  try {
    Json j = Json::parse(line);
    OracleResult r;
    const Json& v = j.at("cov");
    if (!v.is_array() || v.size() != 8) return std::nullopt;
    Coverage& c = r.coverage;
    int* fields[] = {&c.nodes,
                     &c.calls,
                     &c.acc_partitions,
                     &c.fallback_partitions,
                     &c.renamed_nodes,
                     &c.specialized_fqns,
                     &c.buffer_mutations,
                     &c.paths};
    for (size_t i = 0; i < 8; ++i) *fields[i] = v[i].get<int>();
    c.ops = j.at("ops").get<std::map<std::string, int>>();
    const Json& reach = j.at("reach");
    if (!reach.is_array() || reach.size() != c.reach.size()) return std::nullopt;
    for (size_t i = 0; i < c.reach.size(); ++i) c.reach[i] = reach[i].get<int>();
    if (j.contains("b")) r.backend = j["b"].get<std::string>();
    if (j.contains("f")) {
      const Json& f = j["f"];
      if (!f.is_array() || f.size() != 6) return std::nullopt;
      r.failure =
          Failure{f[0].get<std::string>(), f[1].get<std::string>(), f[2].get<std::string>(),
                  f[3].get<std::string>(), f[4].get<std::string>(), f[5].get<std::string>()};
    }
    return r;
  } catch (const std::exception&) {  // not JSON, or a field of the wrong type
    return std::nullopt;
  }
}

std::optional<WorkerMessage> parse_worker_line(const std::string& line) {
  if (line.size() < 2 || line[1] != ' ' ||
      std::string_view("SRPC").find(line[0]) == std::string_view::npos)
    return std::nullopt;
  WorkerMessage m;
  m.kind = line[0];
  std::string rest = line.substr(2);
  if (m.kind != 'C') {
    size_t sp = rest.find(' ');
    std::string num = rest.substr(0, sp);
    if (num.empty() || num.size() > 18 || num.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    m.index = std::stoll(num);
    if ((m.kind == 'R') != (sp != std::string::npos)) return std::nullopt;
    rest = sp == std::string::npos ? "" : rest.substr(sp + 1);
  }
  if (m.kind == 'R' || m.kind == 'C') {
    auto r = decode_result(rest);
    if (!r) return std::nullopt;
    m.result = std::move(*r);
  }
  return m;
}

namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    left -= static_cast<size_t>(w);
  }
  return true;
}

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

// Exit codes of a worker that fails outside any case.
constexpr int kExitPipe = 3, kExitInflight = 4;

// The worker: runs the batch's cases, announcing each (S) before it runs and reporting it (R
// or P) after; ends with the batch's coverage (C).
[[noreturn]] void worker_main(const WorkerBatch& batch, int out_fd, StageSlot& slot,
                              ChildStderr& err, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives its coordinator (kill -9 too)
  if (getppid() != parent) _exit(1);
  signal(SIGINT, SIG_IGN);  // the coordinator stops the campaign; a batch in flight ends normally
  err.redirect();
  OracleOptions oo = batch.oracle;
  oo.on_stage = [&slot](const char* s) { slot.set(s); };
  OracleResult batch_cov;  // sent once at the end: a crash loses coverage, never a finding
  int in_fd = -1;
  if (!batch.inflight.empty()) {
    std::filesystem::create_directories(std::filesystem::path(batch.inflight).parent_path());
    in_fd = open(batch.inflight.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (in_fd < 0) _exit(kExitInflight);
  }
  for (int64_t k = batch.from; k < batch.to; ++k) {
    if (batch.skip && batch.skip(k)) continue;
    slot.clear();
    err.reset();
    Case c = batch.make_case(k);
    if (in_fd >= 0) {
      // The case is complete on disk before it runs: one write, then the length.
      std::string text = save_case(c, /*compact=*/true);
      if (pwrite(in_fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
          ftruncate(in_fd, static_cast<off_t>(text.size())) != 0)
        _exit(kExitInflight);
    }
    if (!write_all(out_fd, "S " + std::to_string(k) + "\n")) _exit(kExitPipe);
    OracleResult r = check_case(c, oo);
    batch_cov.backend = r.backend;
    add_coverage(batch_cov.coverage, r.coverage);
    r.coverage = Coverage{};
    std::string msg =
        r.failure ? "R " + std::to_string(k) + " " + encode_result(r) : "P " + std::to_string(k);
    if (!write_all(out_fd, msg + "\n")) _exit(kExitPipe);
  }
  if (!write_all(out_fd, "C " + encode_result(batch_cov) + "\n")) _exit(kExitPipe);
  _exit(0);
}

// What the coordinator read from a worker until it exited, hung or sent a garbled line.
struct WorkerRead {
  int64_t started = -1, resolved = -1;
  bool timed_out = false;
  std::string garbled;  // the first garbled line, cut to 120 characters
};

WorkerRead read_worker(int fd, const WorkerBatch& batch, const WorkerEvents& events) {
  WorkerRead w;
  w.resolved = batch.from - 1;
  auto case_start = Clock::now();
  std::string buf;
  while (w.garbled.empty()) {
    double left =
        batch.timeout_s - std::chrono::duration<double>(Clock::now() - case_start).count();
    bool running = w.started > w.resolved;
    if (running && left <= 0) {
      w.timed_out = true;
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    int pr = poll(&pfd, 1, running ? std::max(1, static_cast<int>(left * 1000)) : 1000);
    if (pr <= 0) continue;  // EINTR or a poll timeout: the loop checks the deadline
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t nl;
    while (w.garbled.empty() && (nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      auto m = parse_worker_line(line);
      if (!m || (m->kind != 'C' && (m->index < batch.from || m->index >= batch.to))) {
        w.garbled = line.substr(0, 120);
      } else if (m->kind == 'S') {
        w.started = m->index;
        case_start = Clock::now();
      } else if (m->kind == 'C') {
        events.batch_done(m->result);
      } else {
        events.result(m->index, m->result, nullptr);
        w.resolved = m->index;
      }
    }
  }
  return w;
}

}  // namespace

int64_t run_worker_batch(const WorkerBatch& batch, const WorkerEvents& events) {
  StageSlot slot;
  ChildStderr err;
  int fds[2];
  if (pipe(fds) != 0)
    throw SystemError(std::string("cannot create a pipe for a worker process (") +
                      std::strerror(errno) + ")");
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    throw SystemError(std::string("cannot fork a worker process (") + std::strerror(e) + ")");
  }
  if (pid == 0) {
    close(fds[0]);
    worker_main(batch, fds[1], slot, err, parent);
  }
  close(fds[1]);
  WorkerRead w = read_worker(fds[0], batch, events);
  close(fds[0]);
  if (w.timed_out || !w.garbled.empty()) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (w.started > w.resolved) {  // the case in flight crashed, hung or garbled the protocol
    OracleResult r;
    std::string stage = slot.get();
    if (w.timed_out) {
      r.failure =
          Failure{"timeout", stage, "-", "the case ran longer than " + fmt_seconds(batch.timeout_s),
                  "",        ""};
    } else {
      std::string sig = !w.garbled.empty()    ? "garbled"
                        : WIFSIGNALED(status) ? signal_name(WTERMSIG(status))
                                              : "exit " + std::to_string(WEXITSTATUS(status));
      std::string said = !w.garbled.empty() ? "it sent '" + w.garbled + "'" : err.tail();
      r.failure = Failure{"crash",
                          stage,
                          sig,
                          "the worker process died (" + sig + ") in stage " + stage +
                              (said.empty() ? "" : ": " + said),
                          "",
                          ""};
    }
    events.result(w.started, r, batch.inflight.empty() ? nullptr : &batch.inflight);
    return w.started + 1;
  }
  if (!w.garbled.empty())
    throw SystemError("a worker process sent a garbled message outside any case: '" + w.garbled +
                      "'");
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitInflight)
    throw SystemError(batch.inflight + ": a worker could not write its in-flight case (" +
                      "disk full or not writable)");
  if (w.resolved + 1 < batch.to && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    throw SystemError("a worker process failed outside any case (status " + std::to_string(status) +
                      ")");
  return batch.to;
}

OracleResult check_case_isolated(const Case& c, const OracleOptions& o, double timeout_s) {
  WorkerBatch batch;
  batch.from = 0;
  batch.to = 1;
  batch.make_case = [&c](int64_t) { return clone_case(c); };
  batch.oracle = o;
  batch.timeout_s = timeout_s;
  OracleResult out;
  bool reported = false;
  WorkerEvents events;
  events.result = [&](int64_t, const OracleResult& r, const std::string*) {
    out.failure = r.failure;
    reported = true;
  };
  events.batch_done = [&](const OracleResult& cov) {
    out.coverage = cov.coverage;
    out.backend = cov.backend;
  };
  run_worker_batch(batch, events);
  FLATCHECK_CHECK(reported) << "an isolated case ended without a result";
  return out;
}

}  // namespace flatcheck
