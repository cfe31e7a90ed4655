// The `example` command: the built-in examples as case files.
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

struct Example {
  const char* name;
  const char* note;
  std::function<Case()> make;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> ex = {
      {"graph-break",
       "Torch-TensorRT #4360: relu fallback between a one-output engine and a two-output engine "
       "whose "
       "getitems take the names the relu's input had; flatten must wire fallback inputs by "
       "position",
       [] {
         Case c;
         c.module = graph_break_example();
         Tensor x({4, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, -0.5f, 3, 2, 1, 0, -1});
         c.inputs = {x};
         c.config.fallback_ops = {"relu"};
         c.config.min_block_size = 5;
         return c;
       }},
      {"unflatten-specialized",
       "PyTorch #137013: n(x, True) then n(x, False); unflatten must make n and n@1 and return 16",
       [] {
         Case c;
         c.module = unflatten_example(false);
         c.inputs = {Tensor::full({1}, 1.0f)};
         return c;
       }},
      {"unflatten-same-flag",
       "PyTorch #137013, both calls with the same flag: one module n, result 15",
       [] {
         Case c;
         c.module = unflatten_example(true);
         c.inputs = {Tensor::full({1}, 1.0f)};
         return c;
       }},
      {"quickstart",
       "a child called twice with different static scales, a parameter, and a buffer updated in "
       "place",
       [] {
         Case c;
         c.module = quickstart_example();
         c.inputs = {Tensor({2, 2}, {1, 2, 3, 4})};
         c.config.fallback_ops = {"relu"};
         c.config.min_block_size = 2;
         return c;
       }},
  };
  return ex;
}

int cmd_example(int argc, char** argv) {
  Args a(argc, argv, 2, "example");
  if (a.flag("--help") || a.positional().empty()) {
    std::cout << command_help("example") << "\nexamples:\n";
    for (const auto& e : examples())
      std::cout << "  " << std::left << std::setw(24) << e.name << e.note << "\n";
    return a.flag("--help") ? 0 : 2;
  }
  if (a.positional().size() != 1) throw UsageError("example takes one NAME");
  for (const auto& e : examples()) {
    if (a.positional()[0] != e.name) continue;
    Case c = e.make();
    c.note = e.note;
    std::string text = save_case(c);
    std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
    if (out.empty()) {
      std::cout << text;
    } else {
      check_output_file(out, "-o");
      write_file_atomic(out, text);
    }
    return 0;
  }
  throw UsageError("unknown example '" + a.positional()[0] +
                   "' (run 'flatcheck example' for the list)");
}

}  // namespace flatcheck::cli
