// The flatcheck command line, shared by its command files: the flag parser, the options
// every command reads, and one function per command (`cmd_<name>`; docs/cli.md).
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
#include <vector>

#include "core/runtime/cuda/device.h"

namespace flatcheck::cli {

// Bad usage (an unknown flag, a value out of range): exit 2 with the usage hint.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A small flag parser: --name VALUE, --name=VALUE, boolean --name, and positionals.
class Args {
 public:
  Args(int argc, char** argv, int start, std::vector<std::string> valued,
       std::vector<std::string> flags)
      : valued_(std::move(valued)), flags_(std::move(flags)) {
    for (int i = start; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--") {
        for (++i; i < argc; ++i) positional_.push_back(argv[i]);
        break;
      }
      if (a.size() > 1 && a[0] == '-' &&
          !(a.size() > 1 && std::isdigit(static_cast<unsigned char>(a[1])))) {
        std::string name = a, value;
        bool has_value = false;
        if (auto eq = a.find('='); eq != std::string::npos) {
          name = a.substr(0, eq);
          value = a.substr(eq + 1);
          has_value = true;
        }
        if (std::find(flags_.begin(), flags_.end(), name) != flags_.end()) {
          if (has_value) throw UsageError(name + " takes no value");
          set_.insert(name);
          continue;
        }
        if (std::find(valued_.begin(), valued_.end(), name) == valued_.end())
          throw UsageError("unknown option '" + name + "'");
        if (!has_value) {
          if (i + 1 >= argc) throw UsageError(name + " needs a value");
          value = argv[++i];
        }
        values_[name] = value;
        continue;
      }
      positional_.push_back(a);
    }
  }
  bool flag(const std::string& n) const { return set_.count(n) > 0; }
  bool has(const std::string& n) const { return values_.count(n) > 0; }
  std::string str(const std::string& n, const std::string& def = "") const {
    auto it = values_.find(n);
    return it == values_.end() ? def : it->second;
  }
  int64_t integer(const std::string& n, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
      throw UsageError(n + " expects an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], got '" + v + "'");
    return x;
  }
  uint64_t unsigned_int(const std::string& n, uint64_t def) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v.c_str(), &end, 0);
    if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0)
      throw UsageError(n + " expects a non-negative integer, got '" + v + "'");
    return x;
  }
  double number(const std::string& n, double def, double lo, double hi) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= lo && x <= hi))
      throw UsageError(n + " expects a number in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], got '" + v + "'");
    return x;
  }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::string> valued_, flags_;
  std::map<std::string, std::string> values_;
  std::set<std::string> set_;
  std::vector<std::string> positional_;
};

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

// x with `prec` digits after the point.
std::string fmt(double x, int prec = 1);

// The case files named by PATH arguments: files as given, folders' *.json files sorted.
std::vector<std::string> case_files(const std::vector<std::string>& paths);

// -o DIR of a command that writes files, created when missing.
std::string out_dir_option(const Args& a, const char* cmd);

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
