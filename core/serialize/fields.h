// Shared reading and writing helpers of the file format: JSON paths in errors, checked access
// to objects, arrays, strings and ints, and the scalar, shape, type and tensor encodings.
// Internal to core/serialize/.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/ir.h"
#include "core/serialize/serialize.h"

namespace flatcheck::serial {

std::string describe(const Json& v);
[[noreturn]] void fail(const std::string& path, const std::string& msg);
std::string key_path(const std::string& path, std::string_view key);
std::string idx_path(const std::string& path, size_t i);
const Json& as_object(const Json& j, const std::string& path, std::set<std::string> allowed = {});
const Json& as_array(const Json& j, const std::string& path, size_t max_size);
const Json& member(const Json& j, const char* key, const std::string& path);
std::string as_string(const Json& j, const std::string& path, size_t max_len);
int64_t as_int(const Json& j, const std::string& path, int64_t lo, int64_t hi);
void check_name(const std::string& name, const std::string& path);
void check_header(const Json& j, const char* format);
Json float_to_json(float f);
float float_from_json(const Json& j, const std::string& path);
Json shape_to_json(const Shape& s);
Shape shape_from_json(const Json& j, const std::string& path, const LoadLimits& lim);
Json type_to_json(const ValueType& t);
ValueType type_from_json(const Json& j, const std::string& path, const LoadLimits& lim);
std::string floats_to_le_bytes(const std::vector<float>& v);
std::vector<float> le_bytes_to_floats(std::string_view s);
Json arg_to_json(const Arg& a);

}  // namespace flatcheck::serial
