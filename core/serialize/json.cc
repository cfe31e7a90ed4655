// JSON text: the canonical writer of a DOM, base64, checksums, file reading, and the load limits
// by name. The strict parser is in json_doc.cc.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
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
#include "core/ir/analysis.h"
#include "core/serialize/fields.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
using namespace serial;

LoadLimits& default_load_limits() {
  static LoadLimits limits;
  return limits;
}

namespace {

template <class T>
bool assign_limit(T& field, uint64_t v, T hard_max) {
  if (v > static_cast<uint64_t>(hard_max)) return false;
  field = static_cast<T>(v);
  return true;
}

}  // namespace

const LoadLimits& hard_load_limits() {
  static const LoadLimits hard = [] {
    LoadLimits l;
#define X(type, field, value_, hard_max, doc) l.field = hard_max;
#include "core/serialize/limits.def"
#undef X
    return l;
  }();
  return hard;
}

bool set_load_limit(LoadLimits& limits, const std::string& name, uint64_t value) {
#define X(type, field, value_, hard_max, doc) \
  if (name == #field) return assign_limit<type>(limits.field, value, hard_max);
#include "core/serialize/limits.def"
#undef X
  return false;
}

std::vector<std::string> load_limit_names() {
  return {
#define X(type, field, value_, hard_max, doc) #field,
#include "core/serialize/limits.def"
#undef X
  };
}

namespace {

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of each byte in the alphabet; 0xff for a byte outside it.
constexpr std::array<uint8_t, 256> kBase64Values = [] {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = 0xff;
  for (uint8_t i = 0; i < 64; ++i) t[static_cast<unsigned char>(kBase64[i])] = i;
  return t;
}();

}  // namespace

std::string base64_encode(std::string_view in) {
  std::string out;
  base64_append(out, in);
  return out;
}

void base64_append(std::string& out, std::string_view in) {
  size_t at = out.size();
  out.resize(at + (in.size() + 2) / 3 * 4);
  char* o = out.data() + at;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    *o++ = kBase64[v >> 18];
    *o++ = kBase64[(v >> 12) & 63];
    *o++ = kBase64[(v >> 6) & 63];
    *o++ = kBase64[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (i + 1 < in.size()) v |= uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    *o++ = kBase64[v >> 18];
    *o++ = kBase64[(v >> 12) & 63];
    *o++ = i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
}

std::string base64_decode(std::string_view in, const JsonPath& path) {
  if (in.size() % 4 != 0)
    fail(path, "base64 length " + std::to_string(in.size()) + " is not a multiple of 4");
  auto val = [&](char c, size_t pos) -> uint32_t {
    uint8_t v = kBase64Values[static_cast<unsigned char>(c)];
    if (v == 0xff) fail(path, "invalid base64 character at offset " + std::to_string(pos));
    return v;
  };
  std::string out(in.size() / 4 * 3, '\0');
  char* o = out.data();
  for (size_t i = 0; i < in.size(); i += 4) {
    bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    uint32_t v = (val(in[i], i) << 18) | (val(in[i + 1], i + 1) << 12);
    if (pad < 2) v |= val(in[i + 2], i + 2) << 6;
    if (pad < 1) v |= val(in[i + 3], i + 3);
    *o++ = static_cast<char>(v >> 16);
    if (pad < 2) *o++ = static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) *o++ = static_cast<char>(v & 0xff);
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

namespace {

constexpr size_t kInlineWidth = 100;

// A rendered value: on one line when it is a scalar or a container of one-line values that
// fits in kInlineWidth characters, else indented over several lines. Each value is rendered
// once, bottom-up (linear in the document).
struct Rendered {
  bool one_line;
  std::string text;
};

Rendered render(const Json& j, int indent) {
  if (!j.is_structured()) return {true, j.dump()};
  std::vector<std::pair<std::string, Rendered>> items;
  bool all_one_line = true;
  size_t width = 2;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = j.is_object() ? Json(it.key()).dump() + ": " : "";
    Rendered r = render(*it, indent + 1);
    all_one_line &= r.one_line;
    width += key.size() + r.text.size() + 2;
    items.emplace_back(std::move(key), std::move(r));
  }
  const char* open = j.is_array() ? "[" : "{";
  const char* close = j.is_array() ? "]" : "}";
  if (all_one_line && width <= kInlineWidth + 2) {
    std::string s = open;
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : "") + items[i].first + items[i].second.text;
    return {true, s + close};
  }
  std::string pad(static_cast<size_t>(indent + 1), ' ');
  std::string s = std::string(open) + "\n";
  for (size_t i = 0; i < items.size(); ++i)
    s += (i ? ",\n" : "") + pad + items[i].first + items[i].second.text;
  s += "\n" + std::string(static_cast<size_t>(indent), ' ') + close;
  return {false, s};
}

}  // namespace

// Objects and arrays that fit on a line stay on one line (a node, a shape, a signature entry);
// the rest is indented by one space a level. Keys are sorted (nlohmann's default map).
std::string dump_canonical(const Json& j) {
  return render(j, 0).text + "\n";
}

std::string read_file(const std::string& path, size_t max_bytes) {
  // Opened without blocking (a FIFO would wait for a writer), then refused unless it is a
  // regular file; the limit is checked on the bytes read, not on what stat reports.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw InputError(path + ": not a regular file");
  }
  std::string s;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      throw InputError(path + ": cannot read file (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    if (s.size() + static_cast<size_t>(n) > max_bytes) {
      close(fd);
      throw InputError(path + ": file is over the limit of " + std::to_string(max_bytes) +
                       " bytes");
    }
    s.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return s;
}

}  // namespace flatcheck
