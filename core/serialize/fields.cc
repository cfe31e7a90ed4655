// The format's shared reading helpers and field encodings (fields.h), and tensors.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/names.h"
#include "core/base/text.h"
#include "core/ir/analysis.h"
#include "core/ir/namespace.h"
#include "core/serialize/fields.h"
#include "core/serialize/serialize.h"

namespace flatcheck {

void JsonPath::append_to(std::string& out) const {
  if (parent_) parent_->append_to(out);
  switch (kind_) {
    case kWhole:
      out += text_;
      break;
    case kKey:
      out += '/';
      for (char c : text_) {  // JSON pointer escaping: ~ -> ~0, / -> ~1
        if (c == '~')
          out += "~0";
        else if (c == '/')
          out += "~1";
        else
          out += c;
      }
      break;
    case kIndex: {
      char digits[24];
      auto r = std::to_chars(digits, digits + sizeof digits, index_);
      out += '/';
      out.append(digits, r.ptr);
      break;
    }
  }
}

std::string JsonPath::str() const {
  std::string out;
  append_to(out);
  return out;
}

}  // namespace flatcheck

namespace flatcheck::serial {

// ------------------------------------------------------------------------- reading helpers

std::string describe(JsonRef v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

[[noreturn]] void fail(const JsonPath& path, const std::string& msg) {
  std::string text = (path.empty() ? std::string("/") : path.str()) + ": " + msg;
  // what() is a C string: a NUL from a quoted key or value would end the message there.
  for (size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at))
    text.replace(at, 1, "\\x00");
  throw InputError(text);
}

JsonRef as_object(JsonRef j, const JsonPath& path,
                  std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) fail(path, "expected an object, got " + describe(j));
  if (allowed.size() != 0)
    for (const auto& [k, _] : j.items())
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(key_path(path, k), "unknown key");
  return j;
}

JsonRef as_array(JsonRef j, const JsonPath& path, size_t max_size) {
  if (!j.is_array()) fail(path, "expected an array, got " + describe(j));
  if (j.size() > max_size)
    fail(path, "array of " + std::to_string(j.size()) + " entries is over the limit of " +
                   std::to_string(max_size));
  return j;
}

JsonRef member(JsonRef j, const char* key, const JsonPath& path) {
  auto it = j.find(key);
  if (!it) fail(path, std::string("missing key '") + key + "'");
  return *it;
}

namespace {

// The first control character of `s` as "U+001B", or "" when there is none; with `layout`,
// tab, newline and carriage return are not counted.
std::string control_in(std::string_view s, bool layout) {
  for (size_t i = 0; i < s.size(); ++i) {
    // Only these bytes can begin a control character (control_at): the rest are skipped here.
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != 0x7f && c != 0xC2) continue;
    int code = control_at(s, i, layout);
    if (code < 0) continue;
    char buf[8];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(code));
    return buf;
  }
  return "";
}

std::string checked_string(JsonRef j, const JsonPath& path, size_t max_len, bool layout) {
  if (!j.is_string()) fail(path, "expected a string, got " + describe(j));
  std::string_view s = j.str();
  if (s.size() > max_len) fail(path, "string longer than " + std::to_string(max_len));
  if (std::string c = control_in(s, layout); !c.empty())
    fail(path, "a string holding the control character " + c +
                   (layout ? "" : " (a document's strings hold none, outside a case's note)"));
  return std::string(s);
}

}  // namespace

std::string as_string(JsonRef j, const JsonPath& path, size_t max_len) {
  return checked_string(j, path, max_len, false);
}

std::string as_note(JsonRef j, const JsonPath& path, size_t max_len) {
  return checked_string(j, path, max_len, true);
}

void check_path(std::string_view key, const JsonPath& path, size_t max_len) {
  bool legal = !key.empty() && key.size() <= max_len;
  for (size_t start = 0; legal && start <= key.size();) {
    size_t dot = std::min(key.find('.', start), key.size());
    legal = is_module_name(key.substr(start, dot - start));
    start = dot + 1;
  }
  if (!legal)
    fail(path, "'" + std::string(key.substr(0, 80)) +
                   "' is not a legal path (letters, digits and '_' joined by '.', at most " +
                   std::to_string(max_len) + " characters)");
}

int64_t as_int(JsonRef j, const JsonPath& path, int64_t lo, int64_t hi) {
  if (!j.is_number_integer()) fail(path, "expected an integer, got " + describe(j));
  if (j.is_number_unsigned() && j.uint64() > static_cast<uint64_t>(hi))
    fail(path, "integer " + describe(j) + " out of range");
  int64_t v = j.int64();
  if (v < lo || v > hi)
    fail(path, "integer " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  return v;
}

void check_name(const std::string& name, const JsonPath& path) {
  if (!is_identifier(name)) fail(path, "'" + name + "' is not a legal node name");
}

void check_name(const std::string& name, const JsonPath& path, size_t max_length) {
  if (name.size() > max_length)
    fail(path, "a name of " + std::to_string(name.size()) + " characters, over the limit of " +
                   std::to_string(max_length));
  check_name(name, path);
}

void check_header(JsonRef j, const char* format) {
  as_object(j, "");
  std::string f = as_string(member(j, "format", ""), "/format", 64);
  if (f != format) fail("/format", "expected \"" + std::string(format) + "\", got \"" + f + "\"");
  int64_t v = as_int(member(j, "version", ""), "/version", 0, 1 << 20);
  if (v != kFormatVersion)
    fail("/version", "unsupported version " + std::to_string(v) + " (this build reads " +
                         std::to_string(kFormatVersion) + ")");
}

// ------------------------------------------------------------------------------- scalars

void write_float(JsonWriter& w, float f) {
  if (std::isfinite(f)) return w.value_double(static_cast<double>(f));
  w.begin_object();
  w.key("float");
  if (std::isinf(f)) {
    w.value(f > 0 ? "inf" : "-inf");
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "nan:0x%08x", float_bits(f));
    w.value(buf);
  }
  w.end();
}

float float_from_json(JsonRef j, const JsonPath& path) {
  if (j.is_number_float()) {
    double d = j.number();
    if (!std::isfinite(d) || std::fabs(d) > 3.4028234663852886e38)
      fail(path, "float " + describe(j) + " out of float32 range");
    return static_cast<float>(d);
  }
  as_object(j, path, {"float"});
  std::string s = as_string(member(j, "float", path), key_path(path, "float"), 32);
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  unsigned bits = 0;
  char tail = 0;
  if (s.rfind("nan:0x", 0) == 0 && s.size() == 14 &&
      std::sscanf(s.c_str() + 6, "%8x%c", &bits, &tail) == 1 && std::isnan(bits_float(bits)))
    return bits_float(bits);
  fail(key_path(path, "float"),
       "expected \"inf\", \"-inf\" or \"nan:0x<8 hex digits>\", got \"" + s + "\"");
}

void write_shape(JsonWriter& w, const Shape& s) {
  w.begin_array();
  for (int64_t d : s) w.value(d);
  w.end();
}

Shape shape_from_json(JsonRef j, const JsonPath& path, const LoadLimits& lim) {
  as_array(j, path, lim.max_rank);
  Shape s;
  int64_t n = 1;
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t d = as_int(j[i], idx_path(path, i), 0, lim.max_tensor_elements);
    s.push_back(d);
    n = d != 0 && n > lim.max_tensor_elements / d ? lim.max_tensor_elements + 1 : n * d;
    if (n > lim.max_tensor_elements)
      fail(path, "shape has more than " + std::to_string(lim.max_tensor_elements) + " elements");
  }
  return s;
}

void write_type(JsonWriter& w, const ValueType& t) {
  // The format's types are those type_from_json reads; a tuple (which no placeholder of a
  // traced program has) is refused here rather than written into a document the loader refuses.
  FLATCHECK_INPUT(t.is_static() || t.kind == ValueType::kTensor,
                  "save: a placeholder of type " << t
                                                 << " (the format has tensor, bool, int and "
                                                    "float placeholders)");
  w.begin_object();
  w.key("kind");
  w.value(value_kind_name(t.kind));
  if (t.kind == ValueType::kTensor) {
    w.key("shape");
    write_shape(w, t.shape);
  }
  w.end();
}

ValueType type_from_json(JsonRef j, const JsonPath& path, const LoadLimits& lim) {
  as_object(j, path, {"kind", "shape"});
  std::string k = as_string(member(j, "kind", path), key_path(path, "kind"), 16);
  if (k == "tensor")
    return ValueType::tensor(
        shape_from_json(member(j, "shape", path), key_path(path, "shape"), lim));
  if (k == "bool") return ValueType::scalar(ValueType::kBool);
  if (k == "int") return ValueType::scalar(ValueType::kInt);
  if (k == "float") return ValueType::scalar(ValueType::kFloat);
  fail(key_path(path, "kind"), "expected tensor, bool, int or float, got \"" + k + "\"");
}

// ------------------------------------------------------------------------------- tensors

std::string floats_to_le_bytes(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u = float_bits(v[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return out;
}

std::vector<float> le_bytes_to_floats(std::string_view s) {
  std::vector<float> v(s.size() / 4);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u |= uint32_t{static_cast<unsigned char>(s[i * 4 + b])} << (8 * b);
    v[i] = bits_float(u);
  }
  return v;
}

void write_arg(JsonWriter& w, const Arg& a) {
  if (auto p = std::get_if<Node*>(&a)) return w.value((*p)->name);
  if (auto b = std::get_if<bool>(&a)) return w.value(*b);
  if (auto i = std::get_if<int64_t>(&a)) return w.value(*i);
  if (auto f = std::get_if<float>(&a)) return write_float(w, *f);
  write_shape(w, std::get<std::vector<int64_t>>(a));
}

}  // namespace flatcheck::serial

namespace flatcheck {
using namespace serial;

void write_tensor(JsonWriter& w, const Tensor& t) {
  // Fault: values as decimal text with 6 significant digits.
  const bool short_floats = fault_on(Fault::kSerializeFloatShort);
  w.begin_object();
  if (!short_floats) {
    w.key("data");
    if (fault_on(Fault::kSerializeNanCanonical)) {
      // Fault: NaN payloads and the sign of zero are normalized on save.
      std::vector<float> d = t.data;
      for (float& f : d) {
        if (std::isnan(f))
          f = bits_float(0x7fc00000u);
        else if (f == 0.0f)
          f = 0.0f;
      }
      w.value_bytes(floats_to_le_bytes(d));
    } else {
      if constexpr (std::endian::native == std::endian::little)  // the floats are the bytes
        w.value_bytes({reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4});
      else
        w.value_bytes(floats_to_le_bytes(t.data));
    }
  }
  w.key("dtype");
  w.value("float32");
  w.key("shape");
  write_shape(w, t.shape);
  if (short_floats) {
    w.key("values");
    w.begin_array();
    for (float f : t.data) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(f));
      float g = std::strtof(buf, nullptr);
      write_float(w, std::isfinite(f) ? g : f);
    }
    w.end();
  }
  w.end();
}

Tensor tensor_from_json(JsonRef j, const JsonPath& path, LoadBudget& b) {
  as_object(j, path, {"dtype", "shape", "data", "values"});
  std::string dt = as_string(member(j, "dtype", path), key_path(path, "dtype"), 16);
  if (dt != "float32") fail(key_path(path, "dtype"), "unsupported dtype \"" + dt + "\"");
  Shape shape = shape_from_json(member(j, "shape", path), key_path(path, "shape"), b.limits);
  int64_t n = numel(shape);
  b.elements += n;
  if (b.elements > b.limits.max_total_elements)
    fail(path, "tensors hold more than " + std::to_string(b.limits.max_total_elements) +
                   " elements in the document");
  bool has_data = j.contains("data"), has_values = j.contains("values");
  if (has_data == has_values) fail(path, "expected exactly one of \"data\" or \"values\"");
  if (has_data) {
    JsonPath dp = key_path(path, "data");
    std::string text = as_string(j.at("data"), dp, static_cast<size_t>(n) * 16 + 8);
    std::string bytes = base64_decode(text, dp);
    if (bytes.size() != static_cast<size_t>(n) * 4)
      fail(dp,
           std::to_string(bytes.size()) + " bytes for " + std::to_string(n) + " float32 elements");
    return Tensor(std::move(shape), le_bytes_to_floats(bytes));
  }
  JsonPath vp = key_path(path, "values");
  JsonRef v = as_array(j.at("values"), vp, static_cast<size_t>(n));
  if (v.size() != static_cast<size_t>(n))
    fail(vp, std::to_string(v.size()) + " values for " + std::to_string(n) + " elements");
  std::vector<float> data;
  data.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    JsonRef x = v[i];
    if (x.is_number_integer())
      data.push_back(static_cast<float>(as_int(x, idx_path(vp, i), -(1 << 24), 1 << 24)));
    else
      data.push_back(float_from_json(x, idx_path(vp, i)));
  }
  return Tensor(std::move(shape), std::move(data));
}

}  // namespace flatcheck
