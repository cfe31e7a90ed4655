// Shared reading and writing helpers of every JSON document flatcheck reads (modules,
// programs, engines, case files, campaign state): errors that start with the JSON path,
// checked access to objects, arrays, strings and ints, and the scalar, shape, type and tensor
// encodings.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ir.h"
#include "core/serialize/json_doc.h"
#include "core/serialize/json_path.h"
#include "core/serialize/serialize.h"
#include "core/serialize/writer.h"

namespace flatcheck::serial {

// A value for an error message: its JSON text, cut to 60 characters.
std::string describe(JsonRef v);
// Throws InputError("<path>: <msg>") ("/" for the document itself).
[[noreturn]] void fail(const JsonPath& path, const std::string& msg);
// "/a" + "b" -> "/a/b"; idx_path: "/a" + 3 -> "/a/3". The step refers to `path` (json_path.h).
inline JsonPath key_path(const JsonPath& path, std::string_view key) {
  return JsonPath(path, key);
}
inline JsonPath idx_path(const JsonPath& path, size_t i) {
  return JsonPath(path, i);
}
JsonPath key_path(JsonPath&& path, std::string_view key) = delete;  // name the parent first
JsonPath idx_path(JsonPath&& path, size_t i) = delete;
// `j` must be an object; with `allowed`, every key must be in it.
JsonRef as_object(JsonRef j, const JsonPath& path,
                  std::initializer_list<std::string_view> allowed = {});
// `j` must be an array of at most `max_size` entries.
JsonRef as_array(JsonRef j, const JsonPath& path, size_t max_size);
// The member `key` of the object `j`; missing is an error at `path`.
JsonRef member(JsonRef j, const char* key, const JsonPath& path);
// A string of at most `max_len` bytes, with no control character (C0, DEL or C1): every
// string a document holds is printed somewhere (show, errors, reports).
std::string as_string(JsonRef j, const JsonPath& path, size_t max_len);
// The same, where tab, newline and carriage return are text (a case's free-text note).
std::string as_note(JsonRef j, const JsonPath& path, size_t max_len);
// A dotted path of letters, digits and '_' ("a.0.w"): state names and module FQNs as keys.
void check_path(std::string_view key, const JsonPath& path, size_t max_len);
// An integer in [lo, hi].
int64_t as_int(JsonRef j, const JsonPath& path, int64_t lo, int64_t hi);
// A legal identifier (names of nodes, modules, state).
void check_name(const std::string& name, const JsonPath& path);
// The same, and at most `max_length` characters (LoadLimits::max_name_length).
void check_name(const std::string& name, const JsonPath& path, size_t max_length);
// {"format": <format>, "version": 1} at the top of a document.
void check_header(JsonRef j, const char* format);
// Floats: JSON numbers when finite and exact, else {"float": "inf" | "-inf" | "nan:0x<bits>"}.
void write_float(JsonWriter& w, float f);
float float_from_json(JsonRef j, const JsonPath& path);
// Shapes (at most max_rank dimensions, at most max_tensor_elements elements).
void write_shape(JsonWriter& w, const Shape& s);
Shape shape_from_json(JsonRef j, const JsonPath& path, const LoadLimits& lim);
// Value types of meta.val.
void write_type(JsonWriter& w, const ValueType& t);
ValueType type_from_json(JsonRef j, const JsonPath& path, const LoadLimits& lim);
// Tensor bytes: little-endian float32.
std::string floats_to_le_bytes(const std::vector<float>& v);
std::vector<float> le_bytes_to_floats(std::string_view s);
// A node argument: a node reference by name, a bool, an int, a float or an int list.
void write_arg(JsonWriter& w, const Arg& a);

}  // namespace flatcheck::serial
