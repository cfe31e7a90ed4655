// The `validate` command: load files with full validation.
#include "harness/cli/cli.h"

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
#include "harness/backend_diff.h"
#include "harness/campaign.h"
#include "harness/dot.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/predicate.h"
#include "harness/torch_emit.h"

namespace flatcheck::cli {

int cmd_validate(int argc, char** argv) {
  Args a(argc, argv, 2, "validate");
  if (a.flag("--help") || a.positional().empty()) {
    std::cout << command_help("validate");
    return a.flag("--help") ? 0 : 2;
  }
  for (const auto& path : a.positional()) {
    std::string text = read_file(path, default_load_limits().max_bytes);
    std::string kind;
    try {
      kind = document_format(parse_doc(text, default_load_limits()).root());
      if (kind == "flatcheck-case")
        load_case(text);
      else if (kind == "flatcheck-module")
        load_module(text);
      else if (kind == "flatcheck-program")
        load_program(text);
      else
        throw InputError(
            "/format: expected \"flatcheck-case\", \"flatcheck-module\" or \"flatcheck-program\"");
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
    std::cout << "OK " << printable(path) << " (" << kind << ")\n";
  }
  return 0;
}

}  // namespace flatcheck::cli
