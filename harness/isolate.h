// Process isolation, implemented once: checking cases in a forked worker, so that a crash (a
// signal, an abort, a sanitizer report) or a hang in the system under test becomes a finding
// instead of taking the harness down.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "harness/oracle.h"

namespace flatcheck {

// A batch of cases run in one forked worker process (the campaign's isolated mode; one case
// for check_case_isolated). The worker announces each case before it runs ("S <k>"), reports
// it ("R <k> <result>" or "P <k>") and ends with the batch's coverage ("C <result>").
struct WorkerBatch {
  int64_t from = 0, to = 0;                // case indices [from, to)
  std::function<Case(int64_t)> make_case;  // runs in the worker
  std::function<bool(int64_t)> skip;       // in the worker: indices already done (optional)
  std::string inflight;  // the worker writes each case here before it runs ("" for none)
  OracleOptions oracle;
  double timeout_s = 10;  // per case
};

// What the coordinator hears from a worker.
struct WorkerEvents {
  // Each case's result; a crash or hang comes with `inflight` (the file holding the case).
  std::function<void(int64_t k, const OracleResult& r, const std::string* inflight)> result;
  std::function<void(const OracleResult& coverage)> batch_done;
};

// Runs `batch` in a forked worker until it ends, or until a case crashes (killed by a signal,
// an exit, a garbled message) or hangs past the timeout: that case is reported as a
// `crash:<stage>:<signal>` or `timeout:<stage>:-` result, the worker is killed, and the index
// after it is returned (the caller starts the next worker there). Throws SystemError when no
// worker can be started or one fails outside any case.
int64_t run_worker_batch(const WorkerBatch& batch, const WorkerEvents& events);

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
  char kind = 0;       // 'S' started, 'R' result, 'P' passed, 'C' coverage
  int64_t index = -1;  // the case index (S, R, P)
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

// A page shared with forked children where a child writes the stage it is in.
class StageSlot {
 public:
  StageSlot();
  ~StageSlot();
  StageSlot(const StageSlot&) = delete;
  StageSlot& operator=(const StageSlot&) = delete;
  void set(const char* stage);  // in the child
  std::string get() const;      // in the parent
  void clear() { set("start"); }

 private:
  char* page_;
};

}  // namespace flatcheck
