// libFuzzer target: bytes -> JSON loader (loader_fuzzer; with the structure-aware mutator of
// structure_mutator.cc, structure_fuzzer). Every input must end in a clean InputError or in a
// valid document; a valid case, module or program is then linted and run (bounded by the
// loader's limits). Anything else (a crash, another exception, a sanitizer report) is a bug,
// and so is a text that parse_doc's fast reader and nlohmann's parser read differently.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/check.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/case.h"

namespace {

flatcheck::LoadLimits fuzz_limits() {
  flatcheck::LoadLimits l;
  l.max_bytes = 1 << 20;
  l.max_nodes = 2000;
  l.max_tensor_elements = 1 << 14;
  l.max_total_elements = 1 << 16;
  l.max_blob_bytes = 1 << 18;
  l.max_inlined_nodes = 1 << 16;
  l.max_calls = 1 << 12;
  l.max_run_elements = 1 << 20;
  l.max_run_flops = 1 << 24;
  return l;
}

// What a reader makes of the text: its document's compact text, or its error.
template <class Parse>
std::string outcome(Parse parse) {
  try {
    return "document " + parse().root().dump();
  } catch (const flatcheck::InputError& e) {
    return std::string("error ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace flatcheck;
  // parse_doc's fast reader must agree with nlohmann's parser: the same document or error.
  if (outcome([&] { return parse_doc(text, fuzz_limits()); }) !=
      outcome([&] { return parse_doc_with_nlohmann(text, fuzz_limits()); }))
    __builtin_trap();
  // What the loader accepts runs (docs/hardening.md, round three): an InputError is a clean
  // refusal while loading, and a finding once the document has loaded.
  std::optional<Case> c;
  std::optional<Program> p;
  std::shared_ptr<Module> m;
  try {
    std::string format = document_format(parse_doc(text, fuzz_limits()).root());
    if (format == "flatcheck-case")
      c = load_case(text, fuzz_limits());
    else if (format == "flatcheck-program")
      p = load_program(text, fuzz_limits());
    else
      m = load_module(text, fuzz_limits());
  } catch (const InputError&) {
    return 0;
  }
  try {
    if (c) {
      run_module(*c->module, c->inputs);
      export_program(*c->module);  // the inliner, bounded by the expansion budget
    } else if (p) {
      std::vector<Tensor> in;
      for (const auto& s : p->sig.inputs)
        if (s.kind == InputSpec::kUserInput)
          in.push_back(Tensor::zeros(p->root->graph.find(s.name)->meta.val->shape));
      run_program(*p, in);
      std::string again = save_program(*p);
      (void)again;
    } else {
      std::string s = save_module(*m);
      if (save_module(*load_module(s, fuzz_limits())) != s) __builtin_trap();  // canonical
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "loaded, then refused: %s\n", e.what());
    __builtin_trap();
  }
  return 0;
}
