// show, generate, emit-torch, example and validate.
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

// ------------------------------------------------------------------------------ show

int cmd_show(int argc, char** argv) {
  Args a(argc, argv, 2, "show");
  if (a.flag("--help")) {
    std::cout << command_help("show");
    return 0;
  }
  if (a.positional().size() != 1) throw UsageError("show needs exactly one FILE");
  apply_inject(a);
  std::string stage = a.str("--stage", "all"), format = a.str("--format", "text");
  if (stage != "all" && !stage_by_name(stage))
    throw UsageError("--stage expects " + std::string(stage_names_text()) + ", got '" + stage +
                     "'");
  if (format != "text" && format != "dot" && format != "json")
    throw UsageError("--format expects text, dot or json, got '" + format + "'");
  if (stage == "all" && format != "text")
    throw UsageError("--format " + format + " needs one --stage");
  const std::string& path = a.positional()[0];
  std::string text = read_file(path, default_load_limits().max_bytes);
  Json head = parse_json(text, default_load_limits());
  std::string kind = document_format(head);
  Case c;
  if (kind == "flatcheck-case") {
    c = load_case(text);
  } else if (kind == "flatcheck-module") {
    c.module = load_module(text);
  } else {
    throw InputError(path + ": /format: expected \"flatcheck-case\" or \"flatcheck-module\"");
  }
  Pipeline pipeline(c.module, c.config);
  for (Stage st : all_stages()) {
    std::string name(stage_name(st));
    if (stage != "all" && stage != name) continue;
    if (stage == "all") std::cout << "==== " << name << " " << std::string(60, '=') << "\n";
    const Artifact& art = pipeline.build(st);
    const Module& m = art.program ? *art.program->root : *art.module;
    if (format == "dot")
      write_dot(std::cout, m, name + ": " + path);
    else if (format == "json")
      std::cout << (art.program ? save_program(*art.program) : save_module(m));
    else if (art.program)
      std::cout << *art.program;
    else
      std::cout << m;
  }
  return 0;
}

// ------------------------------------------------------------------------------ generate,
// emit-torch

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

int cmd_emit_torch(int argc, char** argv) {
  Args a(argc, argv, 2, "emit-torch");
  if (a.flag("--help")) {
    std::cout << command_help("emit-torch");
    return 0;
  }
  if (a.positional().empty()) throw UsageError("emit-torch needs at least one CASE file");
  std::string out = out_dir_option(a, "emit-torch");
  for (const auto& path : case_files(a.positional())) {
    Case c = load_case_file(path);
    std::string text;
    try {
      text = emit_torch(c, path);
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

// ------------------------------------------------------------------------------ example

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
    if (out.empty())
      std::cout << text;
    else
      write_file_atomic(out, text);
    return 0;
  }
  throw UsageError("unknown example '" + a.positional()[0] +
                   "' (run 'flatcheck example' for the list)");
}

// ------------------------------------------------------------------------------ validate

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
      Json head = parse_json(text, default_load_limits());
      kind = document_format(head);
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
    std::cout << "OK " << path << " (" << kind << ")\n";
  }
  return 0;
}

}  // namespace flatcheck::cli
