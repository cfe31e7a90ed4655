// The `generate` command: the cases a campaign checks, as case files.
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

int cmd_generate(int argc, char** argv) {
  Args a(argc, argv, 2, "generate");
  if (a.flag("--help")) {
    std::cout << command_help("generate");
    return 0;
  }
  if (!a.positional().empty()) throw UsageError("generate takes no positional arguments");
  if (!a.has("--seed")) throw UsageError("generate needs --seed S");
  uint64_t seed = a.unsigned_int("--seed", 1);
  int64_t count = a.integer("--count", 1, 1, 10000000);
  GenOptions g;
  g.max_nodes = static_cast<int>(a.integer("--max-nodes", 20, 2, 500));
  std::string out = out_dir_option(a, "generate");
  for (int64_t i = 0; i < count; ++i) {
    Case c = generate_case_for_seed(case_seed(seed, i), g);
    c.note = "flatcheck generate --seed " + std::to_string(seed) + ", case " + std::to_string(i);
    write_file_atomic(out + "/case-" + std::to_string(seed) + "-" + std::to_string(i) + ".json",
                      save_case(c));
  }
  std::cout << "generate: wrote " << count << " case file" << (count == 1 ? "" : "s") << " to "
            << out << "\n";
  return 0;
}

}  // namespace flatcheck::cli
