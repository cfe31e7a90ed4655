// Process isolation: checking a case in a forked child, so that a crash (a signal, an abort, a
// sanitizer report) or a hang in the system under test becomes a finding instead of taking
// the harness down.
#pragma once

#include <string>

#include "harness/oracle.h"

namespace flatcheck {

// Runs check_case(c) in a forked child. A child killed by a signal gives the failure
// `crash:<stage>:<signal>` (SIGABRT, SIGSEGV, ...); one that runs past `timeout_s` is killed and
// gives `timeout:<stage>:-`, where <stage> is the stage the child had reached.
OracleResult check_case_isolated(const Case& c, const OracleOptions& o, double timeout_s);

// "SIGSEGV" for 11, "signal 42" for unknown numbers.
std::string signal_name(int sig);

// One-line JSON encodings of an oracle result, for the pipe between worker and coordinator.
std::string encode_result(const OracleResult& r);
OracleResult decode_result(const std::string& line);

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
