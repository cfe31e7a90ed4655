// The flatcheck command line, shared by its command files: the flag parser, the options
// every command reads, and one function per command (`cmd_<name>`, in cmd_<name>.cc; docs/cli.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/cuda/device.h"
#include "harness/ci_report.h"

namespace flatcheck::cli {

// Bad usage (an unknown flag, a value out of range): exit 2 with the usage hint.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One command of the flag table (harness/cli/flags.def).
struct CommandSpec {
  const char* id;        // fuzz, compare_backends
  const char* name;      // fuzz, compare-backends
  const char* synopsis;  // after the name
  const char* doc;       // what it does
  const char* footer;    // printed after the flags ("" for none)
};
// One flag of a command. A flag with an empty `meta` is a switch.
struct FlagSpec {
  const char* command;  // the command's id
  const char* name;     // --cases, -o
  const char* alias;    // --out for -o; "" for none
  const char* meta;     // N, FILE; "" for a switch
  const char* help;
};
// The table, in declaration order.
const std::vector<CommandSpec>& command_specs();
// A command's flags (--help not included); empty for an unknown command.
std::vector<FlagSpec> flags_of(std::string_view command);
// `flatcheck COMMAND --help`, generated from the table.
std::string command_help(std::string_view command);
// `flatcheck --help`, generated from the table.
std::string main_usage();

// The flag parser over the table: --name VALUE, --name=VALUE, switches and positionals.
// A flag not declared for the command, a switch given a value or a missing value is a
// UsageError; an alias is stored under its flag's name. Numbers are strict: decimal, the whole
// token, no sign where none is allowed, no leading zeros (`010` is neither octal nor ten).
class Args {
 public:
  Args(int argc, char** argv, int start, std::string_view command);
  bool flag(const std::string& n) const { return set_.count(n) > 0; }
  bool has(const std::string& n) const { return values_.count(n) > 0; }
  std::string str(const std::string& n, const std::string& def = "") const {
    auto it = values_.find(n);
    return it == values_.end() ? def : it->second;
  }
  int64_t integer(const std::string& n, int64_t def, int64_t lo, int64_t hi) const;
  uint64_t unsigned_int(const std::string& n, uint64_t def) const;
  double number(const std::string& n, double def, double lo, double hi) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> set_;
  std::vector<std::string> positional_;
};

// Strict decimal parsing of a whole token (the rules of Args); false when `text` is not one.
bool parse_decimal(std::string_view text, int64_t& out);
bool parse_decimal(std::string_view text, uint64_t& out);

// True when stderr is a terminal (progress lines are drawn only there).
bool stderr_tty();

// Set by SIGINT: the campaign stops claiming cases, finishes, prints its summary, saves state.
extern std::atomic<bool> g_interrupted;

// --inject FAULT: switches the fault on for this process.
void apply_inject(const Args& a);

// --device: cpu, or cuda when this build has the CUDA runtime and a device is present
// (otherwise exit 2 with the reason, before any case runs).
Device device_option(const Args& a, const char* fallback = "cpu");

// "cpu", or "cuda (NVIDIA H100 80GB HBM3)": the backend that ran, for every report.
std::string backend_label(const std::string& backend);

// `s` safe to print on a terminal: control characters (C0, DEL, C1) as \xNN or \u00NN, so an
// error quoting a hostile file or argument cannot move the cursor or recolour the screen.
std::string printable(const std::string& s);

// x with `prec` digits after the point.
std::string fmt(double x, int prec = 1);

// The case files named by PATH arguments: files as given, folders' *.json files sorted.
std::vector<std::string> case_files(const std::vector<std::string>& paths);

// -o DIR of a command that writes files, created when missing.
std::string out_dir_option(const Args& a, const char* cmd);

// flatcheck's version (the CMake project's).
constexpr const char* kVersion = FLATCHECK_VERSION;

// An output FILE given by `flag`, checked before the work that ends by writing it: a name is
// given (UsageError), its folder can be created and written, and it is not a folder (InputError).
void check_output_file(const std::string& path, const std::string& flag);

// --sarif FILE and --junit FILE, checked before a run starts: a name is given, its folder can be
// created and written, and it is not a folder (InputError otherwise), so a long campaign never
// ends unable to write its report.
void check_ci_report_paths(const Args& a);

// --sarif FILE and --junit FILE of fuzz and replay: each written when given (docs/cli.md).
void write_ci_reports(const Args& a, const std::string& suite, const std::vector<ReportItem>& items,
                      double seconds, int argc, char** argv);

// The commands; each returns the process exit code (0 passed, 1 found, 2 bad input).
int cmd_fuzz(int argc, char** argv);
int cmd_replay(int argc, char** argv);
int cmd_shrink(int argc, char** argv);
int cmd_show(int argc, char** argv);
int cmd_faults(int argc, char** argv);
int cmd_detect(int argc, char** argv);
int cmd_compare_backends(int argc, char** argv);
int cmd_generate(int argc, char** argv);
int cmd_emit_torch(int argc, char** argv);
int cmd_example(int argc, char** argv);
int cmd_validate(int argc, char** argv);

}  // namespace flatcheck::cli
