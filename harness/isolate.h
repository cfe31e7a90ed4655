// Process isolation, implemented once: checking cases in a forked worker, so that a crash (a
// signal, an abort, a sanitizer report) or a hang in the system under test becomes a finding
// instead of taking the harness down.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "harness/oracle.h"

namespace flatcheck {

// A batch of cases run in one forked worker process (the campaign's isolated mode; one case
// for check_case_isolated). Before each case the worker writes, into memory it shares with the
// coordinator, the case's text and index (no system call); it reports a failing case at once
// ("R <k> <result>"), passing ones a few at a time ("P <k>", flushed at least every 50 ms), and
// ends with the batch's coverage ("C <result>"). When it dies, every case before the one in
// flight that it did not report passed.
struct WorkerBatch {
  int64_t from = 0, to = 0;                // case indices [from, to)
  std::function<Case(int64_t)> make_case;  // runs in the worker
  std::function<bool(int64_t)> skip;       // indices already done (optional; both sides call it)
  std::function<bool()> stop;  // in the coordinator: true asks the worker to end the batch early
  bool record_case = false;    // the worker records each case's text before running it
  size_t case_capacity = size_t{64} << 20;  // bytes of shared memory for that text
  OracleOptions oracle;
  double timeout_s = 10;  // per case
  bool alone = false;     // a case re-run alone after a worker died (its death ends there)
};

// What the coordinator hears from a worker.
struct WorkerEvents {
  // Each case's result. A crash or hang comes with `case_text`, the case the worker recorded
  // before running it (null when not recorded: record_case off, or over case_capacity).
  std::function<void(int64_t k, const OracleResult& r, const std::string* case_text)> result;
  std::function<void(const OracleResult& coverage)> batch_done;
  // A worker died after case k had been reported (optional): the failure it is attributed to,
  // for a case already counted.
  std::function<void(int64_t k, const OracleResult& r)> death;
};

// Runs `batch` in a forked worker until it ends (early when `stop` says so), or until a case
// crashes (killed by a signal, an exit, a garbled message) or hangs past the timeout: that case is
// reported as a `crash:<stage>:<signal>` or `timeout:<stage>:-` result, the worker is killed, and
// the index after it is returned (the caller starts the next worker there). A worker that dies
// between cases has its death attributed to a case by re-running cases alone (`death`, `result`).
// Throws SystemError when no worker can be started.
int64_t run_worker_batch(const WorkerBatch& batch, const WorkerEvents& events);

// Case k of `batch` once more, alone in a fresh worker (generated there, like any case): the
// failure it gives alone, or none.
OracleResult run_alone(const WorkerBatch& batch, int64_t k);

// check_case(c) in a forked worker (a batch of one): a crash or hang becomes the failure.
OracleResult check_case_isolated(const Case& c, const OracleOptions& o, double timeout_s);

// "SIGSEGV" for 11, "signal 42" for unknown numbers.
std::string signal_name(int sig);

// One-line JSON encodings of an oracle result, for the pipe between worker and coordinator.
// decode_result gives nullopt for anything encode_result could not have written.
std::string encode_result(const OracleResult& r);
std::optional<OracleResult> decode_result(const std::string& line);

// One line of the worker protocol; nullopt for a garbled line.
struct WorkerMessage {
  char kind = 0;       // 'R' result, 'P' passed, 'C' coverage
  int64_t index = -1;  // the case index (R, P)
  OracleResult result;
};
std::optional<WorkerMessage> parse_worker_line(const std::string& line);

// A temporary file that becomes a forked child's stderr: what a crashing case printed (a failed
// check, a sanitizer report) ends up in its finding instead of on the terminal.
class ChildStderr {
 public:
  ChildStderr();
  ~ChildStderr();
  ChildStderr(const ChildStderr&) = delete;
  ChildStderr& operator=(const ChildStderr&) = delete;
  void redirect();                                  // in the child: stderr goes to the file
  void reset();                                     // in the child, before each case
  std::string tail(size_t max_bytes = 1500) const;  // in the parent

 private:
  int fd_ = -1;
};

// Memory shared with a forked worker (MAP_SHARED, made before the fork): the case in flight,
// its stage, and its text. Only the pages the text touches are ever allocated.
class InflightSlot {
 public:
  explicit InflightSlot(size_t text_capacity = 0);
  ~InflightSlot();
  InflightSlot(const InflightSlot&) = delete;
  InflightSlot& operator=(const InflightSlot&) = delete;
  // In the worker.
  void set_stage(const char* stage);
  bool set_text(std::string_view text);  // false (no text recorded) when over the capacity
  void start(int64_t k);                 // case k runs from now (its text, if any, is set)
  void finish();                         // the case in flight ended
  bool stop_requested() const;
  // In the coordinator.
  std::string stage() const;
  uint64_t changes() const;  // goes up at every start and finish
  void request_stop();       // the worker ends its batch after the case in flight
  // The case in flight: its index, or -1 between cases.
  int64_t running() const;
  // The last case started, in flight or finished (-1: none yet).
  int64_t last() const;
  std::optional<std::string> text() const;  // the in-flight case's text, when recorded

 private:
  struct Header;
  Header* h_ = nullptr;
  char* text_ = nullptr;
  size_t capacity_ = 0, bytes_ = 0;
};

}  // namespace flatcheck
