// The JSON file format (docs/format.md): module trees, programs (exported, partitioned,
// flattened, with engines) and the pieces the harness reuses (tensors, engines).
//
// Output is canonical: objects have sorted keys, one fixed indentation, and tensor bytes are
// base64 of little-endian float32, so save(load(s)) == s byte for byte for any s that save
// produced. The loader validates everything before building and throws InputError whose
// message starts with the JSON path of the offending value: "/module/graph/nodes/3/args/0: ...".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ir/ir.h"
#include "core/ir/engine.h"
#include "core/ir/program.h"

namespace flatcheck {

using Json = nlohmann::json;

inline constexpr int kFormatVersion = 1;

// Bounds on what the loader accepts; input past them is rejected, never allocated.
struct LoadLimits {
  size_t max_bytes = size_t{64} << 20;        // whole document (a 100,000-node module is ~8 MB)
  int max_json_depth = 64;                    // JSON nesting
  size_t max_json_values = size_t{1} << 22;   // JSON values in one document (4 M)
  int max_module_depth = 32;                  // module tree nesting
  size_t max_nodes = 100000;                  // over all graphs
  size_t max_inlined_nodes = 1000000;         // nodes once every module call is inlined
  size_t max_calls = 100000;                  // module calls in one run
  size_t max_run_elements = size_t{1} << 25;  // tensor elements one run produces (128 MB)
  size_t max_run_flops = size_t{1} << 31;     // multiply-adds of matmul and sum in one run
  size_t max_args = 4096;                     // per node
  int64_t max_tensor_elements = int64_t{1} << 22;
  int64_t max_total_elements = int64_t{1} << 24;
  size_t max_blob_bytes = size_t{16} << 20;  // one engine blob, decoded
  size_t max_name_length = 256;
};

// The limits a load uses when none are given: LoadLimits{} unless changed (the CLI's
// --limit KEY=VALUE). Set it before loading starts; it is not synchronized.
LoadLimits& default_load_limits();

// Sets one limit by name ("max_nodes", "max_calls", ...); false for an unknown name. The
// names are the LoadLimits members.
bool set_load_limit(LoadLimits& limits, const std::string& name, uint64_t value);
// The names set_load_limit knows, for help and errors.
std::vector<std::string> load_limit_names();

// Budget shared by one load (elements and nodes counted across the document).
struct LoadBudget {
  LoadLimits limits;
  int64_t elements = 0;
  size_t nodes = 0;
};

// Modules.
std::string save_module(const Module& m);
std::shared_ptr<Module> load_module(std::string_view text,
                                    const LoadLimits& limits = default_load_limits());

// Programs (exported, partitioned or flattened).
std::string save_program(const Program& p);
Program load_program(std::string_view text, const LoadLimits& limits = default_load_limits());

// Pieces, for formats that embed them (the harness's case files).
Json module_to_json(const Module& m);
std::shared_ptr<Module> module_from_json(const Json& j, const std::string& path, LoadBudget& b);
Json program_to_json(const Program& p);
Program program_from_json(const Json& j, const std::string& path, LoadBudget& b);
Json tensor_to_json(const Tensor& t);
Tensor tensor_from_json(const Json& j, const std::string& path, LoadBudget& b);
Json engine_to_json(const Engine& e);
Engine engine_from_json(const Json& j, const std::string& path, LoadBudget& b);

// Parses JSON text with the size and depth limits; throws InputError on bad syntax.
Json parse_json(std::string_view text, const LoadLimits& limits);
// The canonical text of a JSON value (2-space indentation, sorted keys, trailing newline).
std::string dump_canonical(const Json& j);

std::string base64_encode(std::string_view bytes);
// Throws InputError("<path>: ...") for characters outside the alphabet or bad padding.
std::string base64_decode(std::string_view text, const std::string& path);
uint64_t fnv1a64(std::string_view bytes);

// Reads a whole file; throws InputError naming the path when it cannot be read or is larger
// than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = size_t{64} << 20);

}  // namespace flatcheck
