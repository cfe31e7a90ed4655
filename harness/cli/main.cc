// The flatcheck command line (DESIGN §5).
//
//   flatcheck fuzz | replay | shrink | show | faults | detect | help
//
// Exit codes: 0 nothing found / all passed, 1 a failure found (its minimized repro written),
// 2 bad usage or bad input, 3 a system failure (SystemError: fork, pipe, a full disk).
#include "harness/cli/cli.h"

#include "core/base/text.h"

#include <unistd.h>

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
#include "harness/allocator.h"
#include "harness/backend_diff.h"
#include "harness/campaign.h"
#include "harness/dot.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/predicate.h"
#include "harness/torch_emit.h"

namespace flatcheck::cli {
namespace {

// --limit KEY=VALUE[,KEY=VALUE...], accepted by every command and taken out of argv before
// the command parses its own flags: the load limits (docs/hardening.md) for every file read.
std::vector<char*> take_limits(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string spec;
    if (a == "--limit") {
      if (i + 1 >= argc) throw UsageError("--limit needs KEY=VALUE");
      spec = argv[++i];
    } else if (a.rfind("--limit=", 0) == 0) {
      spec = a.substr(8);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    size_t start = 0;
    while (start <= spec.size()) {
      size_t comma = spec.find(',', start);
      std::string item = spec.substr(start, comma == std::string::npos ? comma : comma - start);
      size_t eq = item.find('=');
      std::string key = item.substr(0, eq),
                  value = eq == std::string::npos ? "" : item.substr(eq + 1);
      bool digits = !value.empty() && value.size() <= 19 &&
                    value.find_first_not_of("0123456789") == std::string::npos;
      if (eq == std::string::npos || !digits ||
          !set_load_limit(default_load_limits(), key, std::stoull(value))) {
        std::string names;
        LoadLimits probe;
        for (const auto& n : load_limit_names()) names += (names.empty() ? "" : ", ") + n;
        bool known = set_load_limit(probe, key, 0);
        throw UsageError(known ? "--limit expects KEY=VALUE with VALUE a decimal no larger than " +
                                     key + "'s hard maximum (docs/hardening.md); got '" + item + "'"
                               : "--limit expects KEY=VALUE with KEY one of " + names + "; got '" +
                                     item + "'");
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return rest;
}

int dispatch(int argc, char** argv) {
  std::vector<char*> args = take_limits(argc, argv);
  args.push_back(nullptr);
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  if (argc < 2) {
    std::cerr << main_usage();
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << main_usage();
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "flatcheck " << kVersion << "\nallocator: " << allocator_description() << "\n";
    return 0;
  }
  if (cmd == "fuzz") return cmd_fuzz(argc, argv);
  if (cmd == "replay") return cmd_replay(argc, argv);
  if (cmd == "shrink") return cmd_shrink(argc, argv);
  if (cmd == "show") return cmd_show(argc, argv);
  if (cmd == "faults") return cmd_faults(argc, argv);
  if (cmd == "detect") return cmd_detect(argc, argv);
  if (cmd == "example") return cmd_example(argc, argv);
  if (cmd == "compare-backends") return cmd_compare_backends(argc, argv);
  if (cmd == "generate") return cmd_generate(argc, argv);
  if (cmd == "emit-torch") return cmd_emit_torch(argc, argv);
  if (cmd == "validate") return cmd_validate(argc, argv);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

std::string printable(const std::string& s) {
  return printable_text(s, /*keep_layout=*/false);  // one line per error
}

}  // namespace flatcheck::cli

int main(int argc, char** argv) {
  using flatcheck::cli::printable;
  try {
    return flatcheck::cli::dispatch(argc, argv);
  } catch (const flatcheck::cli::UsageError& e) {
    std::cerr << "flatcheck: " << printable(e.what()) << "\nRun 'flatcheck --help' for usage.\n";
    return 2;
  } catch (const flatcheck::InputError& e) {
    std::cerr << "flatcheck: error: " << printable(e.what()) << "\n";
    return 2;
  } catch (const flatcheck::SystemError& e) {
    std::cerr << "flatcheck: system error: " << printable(e.what()) << "\n";
    return 3;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "flatcheck: error: " << printable(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "flatcheck: error: out of memory\n";
    return 2;
  }
}
