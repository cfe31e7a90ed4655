// The flag parser and the options every command reads.
#include "harness/cli/cli.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/cuda/device.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/backend_diff.h"
#include "harness/campaign.h"
#include "harness/dot.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/predicate.h"
#include "harness/torch_emit.h"

namespace flatcheck::cli {

bool stderr_tty() {
  return isatty(fileno(stderr)) != 0;
}

// Set by SIGINT: the campaign stops claiming cases, finishes, prints its summary, saves state.
std::atomic<bool> g_interrupted{false};

void apply_inject(const Args& a) {
  if (!a.has("--inject")) return;
  auto f = fault_by_name(a.str("--inject"));
  if (!f) throw UsageError("unknown fault '" + a.str("--inject") + "' (see 'flatcheck faults')");
  set_active_fault(*f);
}

// --device: cpu, or cuda when this build has the CUDA runtime and a device is present
// (otherwise exit 2 with the reason, before any case runs).
Device device_option(const Args& a, const char* fallback) {
  std::string name = a.str("--device", fallback);
  auto d = device_by_name(name);
  if (!d) throw UsageError("--device expects cpu or cuda, got '" + name + "'");
  std::string why;
  if (*d == Device::kCuda && !cuda_available(&why)) throw InputError("--device cuda: " + why);
  return *d;
}

// "cpu", or "cuda (NVIDIA H100 80GB HBM3)": the backend that ran, for every report.
std::string backend_label(const std::string& backend) {
  if (backend == "cuda") {
    std::string dev = cuda_device_name();
    return dev.empty() ? backend : backend + " (" + dev + ")";
  }
  return backend.empty() ? "none (no case ran)" : backend;
}

std::string fmt(double x, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << x;
  return os.str();
}

std::vector<std::string> case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".json")
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      throw InputError(p + ": no such file or folder");
    }
  }
  return out;
}

std::string out_dir_option(const Args& a, const char* cmd) {
  std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
  if (out.empty()) throw UsageError(std::string(cmd) + " needs -o DIR");
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw InputError(out + ": cannot create the output folder" +
                     (ec ? " (" + ec.message() + ")" : ""));
  return out;
}

void check_output_file(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError(flag + " needs a file name");
  fs::path p(path);
  fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw InputError(path + ": " + flag + " names a file in a folder flatcheck cannot create (" +
                     (ec ? ec.message() : std::string("it exists and is not a folder")) + ")");
  if (fs::is_directory(p, ec)) throw InputError(path + ": " + flag + " names a folder");
  std::string probe = (dir / (".write-probe-" + std::to_string(getpid()))).string();
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw InputError(path + ": " + flag + " names a file in a folder flatcheck cannot write (" +
                     std::strerror(errno) + ")");
  close(fd);
  unlink(probe.c_str());
}

void check_ci_report_paths(const Args& a) {
  for (const char* flag : {"--sarif", "--junit"})
    if (a.has(flag)) check_output_file(a.str(flag), flag);
}

void write_ci_reports(const Args& a, const std::string& suite, const std::vector<ReportItem>& items,
                      double seconds, int argc, char** argv) {
  std::string command_line = "flatcheck";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  if (a.has("--sarif")) {
    if (a.str("--sarif").empty()) throw UsageError("--sarif needs a file name");
    write_file_atomic(a.str("--sarif"), sarif_report(items, kVersion, command_line));
  }
  if (a.has("--junit")) {
    if (a.str("--junit").empty()) throw UsageError("--junit needs a file name");
    write_file_atomic(a.str("--junit"), junit_report(suite, items, seconds));
  }
}

}  // namespace flatcheck::cli
