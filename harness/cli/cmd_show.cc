// The `show` command: a case or module file at every stage of the pipeline.
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
  std::string kind = document_format(parse_doc(text, default_load_limits()).root());
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

}  // namespace flatcheck::cli
