// The `emit-torch` command: a case as a runnable PyTorch program.
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

int cmd_emit_torch(int argc, char** argv) {
  Args a(argc, argv, 2, "emit-torch");
  if (a.flag("--help")) {
    std::cout << command_help("emit-torch");
    return 0;
  }
  if (a.positional().empty()) throw UsageError("emit-torch needs at least one CASE file");
  std::string out = out_dir_option(a, "emit-torch");
  EmitOptions options;
  options.update_args = a.flag("--update-args");
  options.update_inputs = a.flag("--update-inputs");
  options.kwargs = a.flag("--kwargs");
  options.dict_outputs = a.flag("--dict-outputs");
  options.packed_args = a.flag("--packed-args");
  options.op_kwargs = a.flag("--op-kwargs");
  options.hostile_names = a.flag("--hostile-names");
  options.hostile_child_names = a.flag("--hostile-child-names");
  options.non_persistent_buffers = a.flag("--non-persistent-buffers");
  options.tensor_constants = a.flag("--tensor-constants");
  options.inplace_updates = a.flag("--inplace-updates");
  options.step_counters = a.flag("--step-counters");
  for (const auto& path : case_files(a.positional())) {
    Case c = load_case_file(path);
    std::string text;
    try {
      text = emit_torch(c, path, options);
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
    std::string stem = std::filesystem::path(path).stem().string();
    for (char& ch : stem)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
    std::string dst = out + "/" + stem + ".py";
    write_file_atomic(dst, text);
    std::cout << "emit-torch: " << path << " -> " << dst << "\n";
  }
  return 0;
}

}  // namespace flatcheck::cli
