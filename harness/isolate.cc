#include "harness/isolate.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
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
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return "signal " + std::to_string(sig);
  }
}

struct InflightSlot::Header {
  std::atomic<uint64_t> changes{0};
  std::atomic<int64_t> running{-1};
  std::atomic<int64_t> last{-1};  // the last case started (kept after it finishes)
  std::atomic<uint64_t> text_len{0};
  std::atomic<int> has_text{0};
  std::atomic<int> stop{0};
  char stage[64] = {};
};

InflightSlot::InflightSlot(size_t text_capacity) {
  // The header, then the text. MAP_NORESERVE: untouched pages of a large capacity cost nothing.
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bytes_ = page + (text_capacity + page - 1) / page * page;
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw SystemError(std::string("cannot map memory shared with a worker process (") +
                      std::strerror(errno) + ")");
  static_assert(sizeof(Header) <= 4096);
  h_ = new (p) Header;
  text_ = static_cast<char*>(p) + page;
  capacity_ = text_capacity;
  set_stage("start");
}

InflightSlot::~InflightSlot() {
  h_->~Header();
  munmap(h_, bytes_);
}

void InflightSlot::set_stage(const char* stage) {
  std::strncpy(h_->stage, stage, sizeof h_->stage - 1);
  h_->stage[sizeof h_->stage - 1] = '\0';
}

bool InflightSlot::set_text(std::string_view text) {
  if (text.size() > capacity_) {
    h_->has_text.store(0, std::memory_order_release);
    return false;
  }
  std::memcpy(text_, text.data(), text.size());
  h_->text_len.store(text.size(), std::memory_order_relaxed);
  h_->has_text.store(1, std::memory_order_release);
  return true;
}

void InflightSlot::start(int64_t k) {
  h_->last.store(k, std::memory_order_release);
  h_->running.store(k, std::memory_order_release);
  h_->changes.fetch_add(1, std::memory_order_release);
}

void InflightSlot::finish() {
  h_->running.store(-1, std::memory_order_release);
  h_->has_text.store(0, std::memory_order_release);
  set_stage("start");
  h_->changes.fetch_add(1, std::memory_order_release);
}

std::string InflightSlot::stage() const {
  char buf[sizeof h_->stage];
  std::memcpy(buf, h_->stage, sizeof buf);
  buf[sizeof buf - 1] = '\0';
  return buf;
}

bool InflightSlot::stop_requested() const {
  return h_->stop.load(std::memory_order_acquire);
}

void InflightSlot::request_stop() {
  h_->stop.store(1, std::memory_order_release);
}

uint64_t InflightSlot::changes() const {
  return h_->changes.load(std::memory_order_acquire);
}

int64_t InflightSlot::running() const {
  return h_->running.load(std::memory_order_acquire);
}

int64_t InflightSlot::last() const {
  return h_->last.load(std::memory_order_acquire);
}

std::optional<std::string> InflightSlot::text() const {
  if (!h_->has_text.load(std::memory_order_acquire)) return std::nullopt;
  size_t n = h_->text_len.load(std::memory_order_relaxed);
  if (n > capacity_) return std::nullopt;
  return std::string(text_, n);
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
  off_t at = lseek(2, 0, SEEK_CUR);  // one cheap call; truncated only when something was written
  if (at <= 0 || ftruncate(2, 0) != 0) return;
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
           c.specialized_fqns, c.buffer_mutations, c.paths, c.flat_nodes, c.case_roundtrips}},
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
    if (!v.is_array() || v.size() != 10) return std::nullopt;
    Coverage& c = r.coverage;
    int* fields[] = {&c.nodes,
                     &c.calls,
                     &c.acc_partitions,
                     &c.fallback_partitions,
                     &c.renamed_nodes,
                     &c.specialized_fqns,
                     &c.buffer_mutations,
                     &c.paths,
                     &c.flat_nodes,
                     &c.case_roundtrips};
    for (size_t i = 0; i < 10; ++i) *fields[i] = v[i].get<int>();
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
      std::string_view("RPC").find(line[0]) == std::string_view::npos)
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

// Exit code of a worker that cannot write to its coordinator.
constexpr int kExitPipe = 3;

// A worker's lines to its coordinator, a few per write: a failure at once (after every pass
// before it), passes once 50 ms have gone by since the last write or 4 KiB are waiting.
class Outbox {
 public:
  explicit Outbox(int fd) : fd_(fd), last_(Clock::now()) {}
  void add(const std::string& line, bool now) {
    buf_ += line;
    buf_ += '\n';
    if (now || buf_.size() >= 4096 || Clock::now() - last_ >= std::chrono::milliseconds(50))
      flush();
  }

 private:
  void flush() {
    if (!write_all(fd_, buf_)) _exit(kExitPipe);
    buf_.clear();
    last_ = Clock::now();
  }
  int fd_;
  Clock::time_point last_;
  std::string buf_;
};

// The worker: runs the batch's cases, recording each in the shared slot before it runs.
[[noreturn]] void worker_main(const WorkerBatch& batch, int out_fd, InflightSlot& slot,
                              ChildStderr& err, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives its coordinator (kill -9 too)
  if (getppid() != parent) _exit(1);
  signal(SIGINT, SIG_IGN);  // the coordinator stops the campaign; a batch in flight ends normally
  err.redirect();
  OracleOptions oo = batch.oracle;
  oo.on_stage = [&slot](const char* s) { slot.set_stage(s); };
  OracleResult batch_cov;  // sent once at the end: a crash loses coverage, never a finding
  Outbox out(out_fd);
  for (int64_t k = batch.from; k < batch.to; ++k) {
    if (slot.stop_requested()) break;
    if (batch.skip && batch.skip(k)) continue;
    err.reset();
    // Generating the case is part of it: a crash there is this case's (stage "generate"),
    // with no text to keep. The text is complete in shared memory before the case runs.
    slot.set_stage("generate");
    slot.start(k);
    Case c = batch.make_case(k);
    if (batch.record_case) slot.set_text(save_case(c, /*compact=*/true));
    slot.set_stage("start");
    OracleResult r = check_case(c, oo);
    slot.finish();
    batch_cov.backend = r.backend;
    add_coverage(batch_cov.coverage, r.coverage);
    r.coverage = Coverage{};
    if (r.failure)
      out.add("R " + std::to_string(k) + " " + encode_result(r), /*now=*/true);
    else
      out.add("P " + std::to_string(k), /*now=*/false);
  }
  out.add("C " + encode_result(batch_cov), /*now=*/true);
  _exit(0);
}

// What the coordinator read from a worker until it exited, hung or sent a garbled line.
struct WorkerRead {
  int64_t resolved = -1;  // the last case reported
  bool timed_out = false;
  int64_t hung = -1;    // the case in flight when it timed out
  std::string garbled;  // the first garbled line, cut to 120 characters
};

// Reads the worker's lines until it exits; a case that stays in flight (the slot does not
// change) for longer than the timeout is a hang. The slot is looked at on every line and at
// least every tenth of the timeout (at most every 100 ms).
WorkerRead read_worker(int fd, const WorkerBatch& batch, InflightSlot& slot,
                       const WorkerEvents& events) {
  WorkerRead w;
  w.resolved = batch.from - 1;
  const int tick_ms = static_cast<int>(std::clamp(batch.timeout_s * 100, 1.0, 100.0));
  uint64_t seen = slot.changes();
  auto since = Clock::now();
  std::string buf;
  while (w.garbled.empty()) {
    if (batch.stop && batch.stop()) slot.request_stop();
    uint64_t changes = slot.changes();
    if (changes != seen) {
      seen = changes;
      since = Clock::now();
    }
    if (slot.running() >= 0 &&
        std::chrono::duration<double>(Clock::now() - since).count() > batch.timeout_s) {
      w.timed_out = true;
      w.hung = slot.running();
      break;
    }
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, tick_ms) <= 0) continue;  // EINTR or a tick: the loop checks the slot
    char chunk[65536];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    size_t at = 0, nl;
    while (w.garbled.empty() && (nl = buf.find('\n', at)) != std::string::npos) {
      std::string line = buf.substr(at, nl - at);
      at = nl + 1;
      auto m = parse_worker_line(line);
      if (!m || (m->kind != 'C' && (m->index <= w.resolved || m->index >= batch.to))) {
        w.garbled = line.substr(0, 120);
      } else if (m->kind == 'C') {
        events.batch_done(m->result);
      } else {
        events.result(m->index, m->result, nullptr);
        w.resolved = m->index;
      }
    }
    buf.erase(0, at);
  }
  return w;
}

}  // namespace

OracleResult run_alone(const WorkerBatch& batch, int64_t k) {
  WorkerBatch one = batch;
  one.from = k;
  one.to = k + 1;
  one.record_case = false;
  one.stop = nullptr;
  one.skip = nullptr;
  one.alone = true;
  OracleResult out;
  WorkerEvents ev;
  ev.result = [&](int64_t, const OracleResult& r, const std::string*) { out.failure = r.failure; };
  ev.batch_done = [](const OracleResult&) {};
  run_worker_batch(one, ev);
  return out;
}

namespace {

// The worker died between cases (heap damage surfacing in a destructor or the next allocation,
// a signal from outside, a garbled line): every case it finished since its last report is re-run
// alone, in its own process. One that fails alone is the finding; when none does, the death goes
// to the last case it started, labelled as not reproducing alone (reported again when it was
// reported already: `events.death`). The batch goes on after the last case started.
int64_t attribute_death(const WorkerBatch& batch, const WorkerEvents& events, const WorkerRead& w,
                        int64_t last, int status) {
  std::string how = !w.garbled.empty()    ? "garbled"
                    : WIFSIGNALED(status) ? signal_name(WTERMSIG(status))
                                          : "exit " + std::to_string(WEXITSTATUS(status));
  auto alone = [&](int64_t k) { return run_alone(batch, k); };
  auto unexplained = [&] {
    return Failure{"crash",
                   "between-cases",
                   how,
                   "[did not reproduce alone] the worker process died (" + how +
                       ") after this case ended" +
                       (w.garbled.empty() ? "" : ": it sent '" + w.garbled + "'"),
                   "",
                   ""};
  };
  if (last <= w.resolved || batch.alone) {
    // Nothing unreported ran: the death follows a reported case (or a case run alone).
    int64_t k = std::max<int64_t>(last, batch.from);
    if (k >= batch.from && k < batch.to) {
      OracleResult r;
      r.failure = batch.alone ? std::optional<Failure>(unexplained()) : alone(k).failure;
      if (!r.failure) r.failure = unexplained();
      if (events.death) events.death(k, r);
    }
    return std::max(w.resolved, last) + 1;
  }
  bool found = false;
  for (int64_t k = w.resolved + 1; k <= last && k < batch.to; ++k) {
    if (batch.skip && batch.skip(k)) continue;
    OracleResult r = alone(k);
    if (r.failure) {
      r.failure->message =
          "re-run alone after its worker died between cases (" + how + "): " + r.failure->message;
      found = true;
    } else if (k == last && !found) {
      r.failure = unexplained();
    }
    events.result(k, r, nullptr);
  }
  return last + 1;
}

}  // namespace

int64_t run_worker_batch(const WorkerBatch& batch, const WorkerEvents& events) {
  InflightSlot slot(batch.record_case ? batch.case_capacity : 0);
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
  WorkerRead w = read_worker(fds[0], batch, slot, events);
  close(fds[0]);
  if (w.timed_out || !w.garbled.empty()) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The slot as the worker left it. A hung case that ended just as it was killed is still the
  // finding (its text is gone with it: the case is generated again from its seed).
  int64_t running = slot.running();
  if (w.timed_out && running < 0) running = w.hung;
  if (running > w.resolved && running < batch.to) {  // it crashed, hung or garbled the protocol
    // The cases before it that it ran and did not report passed (their lines were waiting).
    for (int64_t k = w.resolved + 1; k < running; ++k)
      if (!(batch.skip && batch.skip(k))) events.result(k, OracleResult{}, nullptr);
    OracleResult r;
    std::string stage = slot.stage();
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
    // A death while generating the case leaves no text to keep, and the coordinator would
    // have to generate it again itself: first it is generated (and run) once more, alone. A
    // worker killed from outside passes then, and the death is labelled as not repeating.
    if (stage == "generate" && !batch.alone) {
      OracleResult again = run_alone(batch, running);
      if (!again.failure) {
        r.failure->message = "[did not reproduce alone: a second run passed] " + r.failure->message;
      } else if (again.failure->stage != "generate") {  // generated alone, it fails elsewhere
        again.failure->message = "re-run alone after its worker died while generating it (" +
                                 r.failure->op + "): " + again.failure->message;
        r = again;
      }
    }
    std::optional<std::string> text =
        running == slot.running() ? slot.text() : std::optional<std::string>{};
    events.result(running, r, text ? &*text : nullptr);
    return running + 1;
  }
  bool died = !w.garbled.empty() || !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (died && w.resolved + 1 < batch.to)
    return attribute_death(batch, events, w, slot.last(), status);
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
