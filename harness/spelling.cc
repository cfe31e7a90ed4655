// Re-spelling documents, and the canonical layout checked from docs/format.md's rule
// (harness/spelling.h). Neither uses the core's writer, escaper, base64 or checksum.
#include "harness/spelling.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace flatcheck {
namespace {

using Json = nlohmann::json;

struct Rng {
  uint64_t s;
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  bool one_in(int n) { return below(n) == 0; }
};

// ----------------------------------------------------------------- base64 and FNV-1a, by hand

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64_encode(const std::string& in) {
  std::string out;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    for (int k = 3; k >= 0; --k) out += kB64[(v >> (6 * k)) & 63];
  }
  size_t left = in.size() - i;
  if (left) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (left == 2) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += left == 2 ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> b64_decode(const std::string& in) {
  if (in.size() % 4) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      const char* at = c == '=' ? nullptr : std::strchr(kB64, c);
      if (c == '=') {
        ++pad;
      } else if (!at || !c || pad) {
        return std::nullopt;
      }
      v = (v << 6) | (at ? static_cast<uint32_t>(at - kB64) : 0);
    }
    if (pad > 2 || (pad && i + 4 != in.size())) return std::nullopt;
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 255);
    if (pad < 1) out += static_cast<char>(v & 255);
  }
  return out;
}

std::string fnv_hex(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// ------------------------------------------------------------------------------ respelling

// The significant digits (no trailing zeros, "0" for zero) and the exponent of the first
// digit, from 17 significant digits: enough for any double to read back as itself.
void decimal_digits(double d, std::string& digits, int& exp10) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.16e", std::fabs(d));
  std::string s = buf;
  size_t e = s.find('e');
  digits = s.substr(0, 1) + s.substr(2, e - 2);
  exp10 = std::atoi(s.c_str() + e + 1);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

class Speller {
 public:
  explicit Speller(uint64_t seed) : r_{seed} {
    layout_ = r_.below(3);  // 0 compact, 1 indented, 2 random whitespace
    shuffle_ = !r_.one_in(4);
    floats_ = !r_.one_in(4);
    escapes_ = !r_.one_in(3);
    zero_ = !r_.one_in(3);
  }

  std::string how() const {
    static const char* layouts[] = {"compact", "indented", "randomly spaced"};
    std::string s = layouts[layout_];
    if (shuffle_) s += ", keys shuffled";
    if (floats_) s += ", floats re-spelled";
    if (escapes_) s += ", \\u escapes";
    if (zero_) s += ", 0 as -0";
    return s;
  }

  void value(const Json& j, int depth) {
    switch (j.type()) {
      case Json::value_t::object:
        return object(j, depth);
      case Json::value_t::array:
        return array(j, depth);
      case Json::value_t::string:
        return string(j.get_ref<const std::string&>());
      case Json::value_t::boolean:
        out += j.get<bool>() ? "true" : "false";
        return;
      case Json::value_t::null:
        out += "null";
        return;
      case Json::value_t::number_float:
        return number(j.get<double>());
      case Json::value_t::number_unsigned:
        if (j.get<uint64_t>() == 0 && zero_ && r_.one_in(2)) {
          out += "-0";
          return;
        }
        out += std::to_string(j.get<uint64_t>());
        return;
      default:
        if (j.get<int64_t>() == 0 && zero_ && r_.one_in(2)) {
          out += "-0";
          return;
        }
        out += std::to_string(j.get<int64_t>());
        return;
    }
  }

  std::string out;

 private:
  void space() {
    if (layout_ != 2) return;
    static const char ws[] = {' ', '\t', '\n', '\r'};
    for (int n = r_.below(3); n > 0; --n) out += ws[r_.below(4)];
  }
  void newline(int depth) {
    if (layout_ == 1) {
      out += '\n';
      out.append(static_cast<size_t>(2 * depth), ' ');
    }
    space();
  }

  void object(const Json& j, int depth) {
    std::vector<std::pair<std::string, const Json*>> members;
    for (auto it = j.begin(); it != j.end(); ++it) members.emplace_back(it.key(), &it.value());
    if (shuffle_)
      for (size_t i = members.size(); i > 1; --i)
        std::swap(members[i - 1], members[static_cast<size_t>(r_.below(static_cast<int>(i)))]);
    out += '{';
    bool blob = members.size() == 2 && j.contains("blob") && j.contains("checksum") &&
                j["blob"].is_string() && j["checksum"].is_string();
    std::optional<std::string> engine;
    if (blob) engine = b64_decode(j["blob"].get<std::string>());
    std::string respelled_engine;
    if (engine) {
      try {
        Speller inner(r_.next());
        inner.value(Json::parse(*engine), 0);
        respelled_engine = inner.out + "\n";
      } catch (const Json::exception&) {
        engine.reset();  // not a JSON document inside: left as it is
      }
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      newline(depth + 1);
      string(members[i].first);
      space();
      out += layout_ == 1 ? ": " : ":";
      space();
      if (engine && members[i].first == "blob")
        string(b64_encode(respelled_engine));
      else if (engine && members[i].first == "checksum")
        string(fnv_hex(respelled_engine));
      else
        value(*members[i].second, depth + 1);
      space();
    }
    if (!members.empty()) newline(depth);
    out += '}';
  }

  void array(const Json& j, int depth) {
    out += '[';
    for (size_t i = 0; i < j.size(); ++i) {
      if (i) out += ',';
      newline(depth + 1);
      value(j[i], depth + 1);
      space();
    }
    if (!j.empty()) newline(depth);
    out += ']';
  }

  void u_escape(uint32_t unit) {
    char buf[8];
    std::snprintf(buf, sizeof buf, r_.one_in(2) ? "\\u%04x" : "\\u%04X", unit);
    out += buf;
  }

  void string(const std::string& s) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      if (i + len > s.size()) len = s.size() - i;
      uint32_t cp = len == 1 ? c : c & (0x7f >> len);
      for (size_t k = 1; k < len; ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
      bool escape = escapes_ && r_.one_in(3);
      if (cp == '"' || cp == '\\' || cp < 0x20) {
        static const std::pair<char, const char*> shorts[] = {
            {'"', "\\\""}, {'\\', "\\\\"}, {'\b', "\\b"}, {'\f', "\\f"},
            {'\n', "\\n"}, {'\r', "\\r"},  {'\t', "\\t"}};
        const char* short_form = nullptr;
        for (auto& [ch, e] : shorts)
          if (cp == static_cast<unsigned char>(ch)) short_form = e;
        if (short_form && !escape)
          out += short_form;
        else
          u_escape(cp);
      } else if (!escape) {
        out.append(s, i, len);
      } else if (cp == '/' && r_.one_in(2)) {
        out += "\\/";
      } else if (cp > 0xffff) {
        uint32_t v = cp - 0x10000;
        u_escape(0xd800 + (v >> 10));
        u_escape(0xdc00 + (v & 0x3ff));
      } else {
        u_escape(cp);
      }
      i += len;
    }
    out += '"';
  }

  // The same double in another decimal form: the point moved, the exponent adjusted (written
  // with `e` or `E`, an optional `+`, leading zeros), trailing zeros added.
  void number(double d) {
    std::string digits;
    int exp10 = 0;
    decimal_digits(d, digits, exp10);
    if (std::signbit(d)) out += '-';
    if (!floats_ || r_.one_in(3)) {
      out += digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "e" +
             std::to_string(exp10);
      return;
    }
    bool zero = digits == "0";
    int before = zero ? r_.below(2) : r_.below(static_cast<int>(digits.size()) + 3);
    int e = exp10 + 1 - before;  // value = 0.<digits> * 10^(exp10 + 1)
    std::string head = before == 0 ? "0" : digits.substr(0, static_cast<size_t>(before));
    if (before > static_cast<int>(digits.size())) head.append(before - digits.size(), '0');
    std::string tail = before < static_cast<int>(digits.size()) ? digits.substr(before) : "";
    tail.append(static_cast<size_t>(r_.below(3)), '0');
    if (tail.empty()) tail = "0";
    out += head + "." + tail;
    if (e != 0 || r_.one_in(3)) {
      out += r_.one_in(2) ? 'e' : 'E';
      if (e >= 0 && r_.one_in(2)) out += '+';
      if (e < 0) out += '-';
      out.append(static_cast<size_t>(r_.below(2)), '0');
      out += std::to_string(std::abs(e));
    }
  }

  Rng r_;
  int layout_;
  bool shuffle_, floats_, escapes_, zero_;
};

// ------------------------------------------------------------------ the canonical layout

constexpr size_t kWidth = 100;

struct Tok {
  enum Kind { kScalar, kArray, kObject } kind = kScalar;
  std::string raw;                // a scalar's text
  std::vector<std::string> keys;  // raw keys (objects)
  std::vector<Tok> items;         // values
};

class LayoutChecker {
 public:
  explicit LayoutChecker(std::string_view t) : t_(t) {}

  std::optional<std::string> run() {
    try {
      Tok root = parse();
      skip_ws();
      if (at_ != t_.size()) fail("text after the document");
      std::string want = render(root, 0) + "\n";
      if (want == t_) return std::nullopt;
      size_t i = 0, line = 1;
      while (i < want.size() && i < t_.size() && want[i] == t_[i]) line += want[i++] == '\n';
      size_t b = want.rfind('\n', i == 0 ? 0 : i - 1);
      b = b == std::string::npos ? 0 : b + 1;
      size_t e = want.find('\n', i);
      return "line " + std::to_string(line) + ": the layout rule gives `" +
             want.substr(b, std::min<size_t>(e - b, 120)) + "`";
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    size_t line = 1 + static_cast<size_t>(std::count(t_.begin(), t_.begin() + at_, '\n'));
    throw std::runtime_error("line " + std::to_string(line) + ": " + what);
  }
  void skip_ws() {
    while (at_ < t_.size() &&
           (t_[at_] == ' ' || t_[at_] == '\n' || t_[at_] == '\t' || t_[at_] == '\r'))
      ++at_;
  }
  char peek() {
    skip_ws();
    if (at_ >= t_.size()) fail("unexpected end");
    return t_[at_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }

  Tok parse() {
    char c = peek();
    Tok tok;
    if (c == '{' || c == '[') {
      tok.kind = c == '{' ? Tok::kObject : Tok::kArray;
      ++at_;
      char close = c == '{' ? '}' : ']';
      std::string prev_key;
      bool first = true;
      while (peek() != close) {
        if (!first) expect(',');
        std::string key;
        if (tok.kind == Tok::kObject) {
          key = string_token();
          std::string decoded = decode(key);
          if (!first && !(prev_key < decoded))
            fail("key " + key + " is not after the previous key in byte order");
          prev_key = decoded;
          expect(':');
        }
        first = false;
        tok.keys.push_back(key);
        tok.items.push_back(parse());
      }
      ++at_;
      return tok;
    }
    tok.raw = c == '"' ? string_token() : scalar_token();
    return tok;
  }

  // A string as the rule spells it: only `\"`, `\\`, `\b \f \n \r \t` and `\u00xx` (lower-case
  // hex) for the other characters below 0x20; everything else as itself.
  std::string string_token() {
    skip_ws();
    size_t b = at_;
    expect('"');
    while (at_ < t_.size() && t_[at_] != '"') {
      unsigned char c = static_cast<unsigned char>(t_[at_]);
      if (c < 0x20) fail("a raw control character in a string");
      if (c == '\\') {
        char e = at_ + 1 < t_.size() ? t_[at_ + 1] : 0;
        if (std::string_view("\"\\bfnrt").find(e) != std::string_view::npos && e) {
          at_ += 2;
          continue;
        }
        if (e != 'u' || at_ + 6 > t_.size()) fail("an escape the rule does not write");
        std::string hex(t_.substr(at_ + 2, 4));
        unsigned v = 0;
        if (hex.find_first_not_of("0123456789abcdef") != std::string::npos ||
            std::sscanf(hex.c_str(), "%4x", &v) != 1 || v >= 0x20 ||
            std::string_view("\b\f\n\r\t").find(static_cast<char>(v)) != std::string_view::npos)
          fail("\\u" + hex + ": the rule writes only other control characters as \\u00xx");
        at_ += 6;
        continue;
      }
      ++at_;
    }
    if (at_ >= t_.size()) fail("an unterminated string");
    ++at_;
    return std::string(t_.substr(b, at_ - b));
  }

  static std::string decode(const std::string& raw) {  // a canonical string's bytes
    std::string out;
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      if (raw[i] != '\\') {
        out += raw[i];
        continue;
      }
      char e = raw[++i];
      if (e == 'u') {
        out += static_cast<char>(std::strtol(raw.substr(i + 1, 4).c_str(), nullptr, 16));
        i += 4;
      } else {
        out += e == 'b'   ? '\b'
               : e == 'f' ? '\f'
               : e == 'n' ? '\n'
               : e == 'r' ? '\r'
               : e == 't' ? '\t'
                          : e;
      }
    }
    return out;
  }

  std::string scalar_token() {
    size_t b = at_;
    while (at_ < t_.size() &&
           std::string_view(",]} \n\t\r").find(t_[at_]) == std::string_view::npos)
      ++at_;
    std::string s(t_.substr(b, at_ - b));
    if (s == "true" || s == "false" || s == "null") return s;
    if (s.find_first_of(".eE") == std::string::npos) {
      size_t d = s[0] == '-' ? 1 : 0;
      if (s.size() == d || s.find_first_not_of("0123456789", d) != std::string::npos ||
          (s[d] == '0' && s.size() > d + 1) || s == "-0")
        fail("integer `" + s + "`: the rule writes -?(0|[1-9][0-9]*), never -0");
      return s;
    }
    std::string want = canonical_float(s);
    if (want != s) fail("float `" + s + "`: the rule writes `" + want + "`");
    return s;
  }

  // The rule's spelling of the double that `s` reads as: the fewest significant digits that read
  // back as it; with n the position of the decimal point after the first digit of those k
  // digits, plain `ddd000.0` when k <= n <= 15, `dd.ddd` when 0 < n <= 15, `0.000ddd` when
  // -4 < n <= 0, else `d.ddde+XX` (`de+XX` for one digit; sign always, two exponent digits at
  // least).
  std::string canonical_float(const std::string& s) {
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(d)) fail("not a number: `" + s + "`");
    std::string digits;
    int exp10 = 0;
    for (int p = 1; p <= 17; ++p) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*e", p - 1, std::fabs(d));
      if (std::strtod(buf, nullptr) != std::fabs(d)) continue;
      std::string b = buf;
      size_t e = b.find('e');
      digits = b.substr(0, 1) + (p > 1 ? b.substr(2, e - 2) : "");
      exp10 = std::atoi(b.c_str() + e + 1);
      break;
    }
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    int k = static_cast<int>(digits.size()), n = exp10 + 1;
    std::string out = std::signbit(d) ? "-" : "";
    if (k <= n && n <= 15) {
      out += digits + std::string(static_cast<size_t>(n - k), '0') + ".0";
    } else if (0 < n && n <= 15) {
      out += digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
    } else if (-4 < n && n <= 0) {
      out += "0." + std::string(static_cast<size_t>(-n), '0') + digits;
    } else {
      out += digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + "e" +
             (n - 1 < 0 ? "-" : "+");
      std::string x = std::to_string(std::abs(n - 1));
      out += (x.size() < 2 ? "0" : "") + x;
    }
    return out;
  }

  static std::string one_line(const Tok& t) {
    if (t.kind == Tok::kScalar) return t.raw;
    std::string s(1, t.kind == Tok::kObject ? '{' : '[');
    for (size_t i = 0; i < t.items.size(); ++i) {
      if (i) s += ", ";
      if (t.kind == Tok::kObject) s += t.keys[i] + ": ";
      s += one_line(t.items[i]);
    }
    return s + (t.kind == Tok::kObject ? '}' : ']');
  }

  // The rule: a container whose one-line form (", " and ": " separators) is at most 100
  // characters is written so; any other has each item on its own line, indented one space
  // more than the line of its opening bracket, and the closing bracket on its own line.
  // one_line(t).size() when it is at most `limit`; otherwise some size over `limit` (the count
  // stops there, so that render does not write out every container's one-line form: quadratic
  // in the depth).
  static size_t one_line_size(const Tok& t, size_t limit) {
    if (t.kind == Tok::kScalar) return t.raw.size();
    size_t n = 2;  // the brackets
    for (size_t i = 0; i < t.items.size() && n <= limit; ++i) {
      // ", " before every item but the first, and an object's key with ": "
      if (i) n += 2;
      if (t.kind == Tok::kObject) n += t.keys[i].size() + 2;
      n += one_line_size(t.items[i], limit);
    }
    return n;
  }

  static std::string render(const Tok& t, size_t depth) {
    if (t.kind == Tok::kScalar || one_line_size(t, kWidth) <= kWidth) return one_line(t);
    std::string s(1, t.kind == Tok::kObject ? '{' : '[');
    for (size_t i = 0; i < t.items.size(); ++i) {
      s += i ? ",\n" : "\n";
      s.append(depth + 1, ' ');
      if (t.kind == Tok::kObject) s += t.keys[i] + ": ";
      s += render(t.items[i], depth + 1);
    }
    s += "\n";
    s.append(depth, ' ');
    return s + (t.kind == Tok::kObject ? '}' : ']');
  }

  std::string_view t_;
  size_t at_ = 0;
};

}  // namespace

Respelled respell(std::string_view doc, uint64_t seed) {
  Json j;
  try {
    j = Json::parse(doc);
  } catch (const Json::exception& e) {
    throw std::invalid_argument(std::string("respell: not a JSON document: ") + e.what());
  }
  Speller s(seed);
  s.value(j, 0);
  if (!s.out.empty() && s.out.back() != '\n') s.out += '\n';
  return {std::move(s.out), s.how() + ", seed " + std::to_string(seed)};
}

std::optional<std::string> canonical_layout_breach(std::string_view text) {
  return LayoutChecker(text).run();
}

}  // namespace flatcheck
