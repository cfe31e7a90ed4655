// The `faults` command: list the injectable faults.
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

int cmd_faults(int argc, char** argv) {
  Args a(argc, argv, 2, "faults");
  if (a.flag("--help")) {
    std::cout << command_help("faults");
    return 0;
  }
  for (const auto& f : all_faults()) {
    std::cout << f.name;
    if (a.flag("--verbose")) std::cout << "\t" << stage_name(f.stage) << "\t" << f.doc;
    std::cout << "\n";
  }
  return 0;
}

// K campaigns with fault `f` switched on until each finds its first failure; prints the
// fault's table row and returns it as JSON.

}  // namespace flatcheck::cli
