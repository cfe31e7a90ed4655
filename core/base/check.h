// The two error channels (STYLE.md, habit 6).
//
// * Bad input (a malformed file, an unsupported op, an invalid graph) throws `InputError`,
//   whose message names the place (a JSON path such as /graph/nodes/12/args/0, or a node).
// * The operating system failing the harness (fork, pipe, a full disk) throws `SystemError`.
// * A broken internal invariant is `FLATCHECK_CHECK(cond) << "message"`, which prints the
//   condition, file, line and message, then aborts.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace flatcheck {

// Raised for invalid user input or an invalid program. `what()` names the place.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Raised when the operating system refuses what a run needs (a pipe, a fork, a write to a
// full disk) or a worker process fails outside any case: not the input's fault. The CLI exits
// 3 for it (docs/cli.md).
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Formats its stream, prints it and aborts when destroyed; use through FLATCHECK_CHECK.
namespace detail {
class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  template <class T>
  CheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  std::ostringstream os_;
};
struct Voidify {
  void operator&(CheckFailure&) {}
};
}  // namespace detail

}  // namespace flatcheck

// Aborts with a message when an internal invariant does not hold.
#define FLATCHECK_CHECK(cond)               \
  (cond) ? (void)0                          \
         : ::flatcheck::detail::Voidify() & \
               ::flatcheck::detail::CheckFailure(#cond, __FILE__, __LINE__)

// Throws InputError(msg) when `cond` is false. `msg` is any streamable expression chain.
#define FLATCHECK_INPUT(cond, msg)                        \
  do {                                                    \
    if (!(cond)) {                                        \
      std::ostringstream flatcheck_os_;                   \
      flatcheck_os_ << msg;                               \
      throw ::flatcheck::InputError(flatcheck_os_.str()); \
    }                                                     \
  } while (0)
