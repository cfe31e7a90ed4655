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

#include "core/ir/engine.h"  // kMaxSlots, kMaxArenaFloats
#include "core/ir/ir.h"
#include "core/ir/program.h"
#include "core/serialize/json_doc.h"
#include "core/serialize/json_path.h"
#include "core/serialize/writer.h"

namespace flatcheck {

using Json = nlohmann::json;

inline constexpr int kFormatVersion = 1;

// Bounds on what the loader accepts (core/serialize/limits.def); input past them is rejected,
// never allocated.
struct LoadLimits {
#define X(type, name, value, hard_max, doc) type name = value;
#include "core/serialize/limits.def"
#undef X
};

// The hard maxima of limits.def: what `--limit` may set at most, and the limits under which the
// pipeline reads back the documents it wrote itself.
const LoadLimits& hard_load_limits();

// The limits a load uses when none are given: LoadLimits{} unless changed (the CLI's
// --limit KEY=VALUE). Set it before loading starts; it is not synchronized.
LoadLimits& default_load_limits();

// Sets one limit by name ("max_nodes", "max_calls", ...); false for an unknown name or a value
// above the limit's hard maximum. The names are the LoadLimits members.
bool set_load_limit(LoadLimits& limits, const std::string& name, uint64_t value);
// The names set_load_limit knows, for help and errors.
std::vector<std::string> load_limit_names();

// Budget shared by one load (elements and nodes counted across the document).
struct LoadBudget {
  LoadLimits limits;
  int64_t elements = 0;
  size_t nodes = 0;
};

// Modules. `compact`: nlohmann's one-line form of the same document, not the canonical file
// text.
std::string save_module(const Module& m, bool compact = false);
std::shared_ptr<Module> load_module(std::string_view text,
                                    const LoadLimits& limits = default_load_limits());

// Programs (exported, partitioned or flattened); `compact` as for modules.
std::string save_program(const Program& p, bool compact = false);
Program load_program(std::string_view text, const LoadLimits& limits = default_load_limits());

// Pieces, for formats that embed them (the harness's case files). The writers write one value
// at the writer's position.
void write_module(JsonWriter& w, const Module& m);
std::shared_ptr<Module> module_from_json(JsonRef j, const JsonPath& path, LoadBudget& b);
Program program_from_json(JsonRef j, const JsonPath& path, LoadBudget& b);
void write_tensor(JsonWriter& w, const Tensor& t);
Tensor tensor_from_json(JsonRef j, const JsonPath& path, LoadBudget& b);
void write_engine(JsonWriter& w, const Engine& e);
Engine engine_from_json(JsonRef j, const JsonPath& path, LoadBudget& b);

// Parsing (parse_doc) and reading (JsonRef): core/serialize/json_doc.h.

// The canonical text of a JSON value: sorted keys, one space of indentation per level, arrays
// of scalars on one line when they fit, a trailing newline.
std::string dump_canonical(const Json& j);

std::string base64_encode(std::string_view bytes);
// Appends base64_encode(bytes) to `out`.
void base64_append(std::string& out, std::string_view bytes);
// Throws InputError("<path>: ...") for characters outside the alphabet or bad padding.
std::string base64_decode(std::string_view text, const JsonPath& path);
uint64_t fnv1a64(std::string_view bytes);

// Reads a whole file; throws InputError naming the path when it cannot be read or is larger
// than `max_bytes`.
std::string read_file(const std::string& path, size_t max_bytes = size_t{64} << 20);

}  // namespace flatcheck
