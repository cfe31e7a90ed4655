// torch.fx's create_name, step for step (see namespace.h), with the upward scan for a free
// suffix answered by a per-base union-find instead of one lookup per number.
#include "core/ir/namespace.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_set>
#include <vector>

#include "core/base/faults.h"

namespace flatcheck {
namespace {

bool legal_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool ascii_digit(char c) {
  return c >= '0' && c <= '9';
}

int64_t to_int(std::string_view digits) {
  int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// Python 3.11: keyword.kwlist and builtins.__dict__ (with the names the site module adds),
// minus "None" (see is_reserved_name), plus torch.fx's custom builtins.
constexpr std::array<std::string_view, 195> kReserved = {
    // keywords
    "False", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
    "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
    // builtins
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError",
    "Exception", "ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError",
    "NotImplemented", "NotImplementedError", "OSError", "OverflowError",
    "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "RecursionError",
    "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration",
    "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError",
    "TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
    "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError",
    "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__", "__import__",
    "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "anext", "any",
    "ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod",
    "compile", "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate",
    "eval", "exec", "exit", "filter", "float", "format", "frozenset", "getattr", "globals",
    "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass", "iter",
    "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next", "object", "oct",
    "open", "ord", "pow", "print", "property", "quit", "range", "repr", "reversed", "round", "set",
    "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "vars",
    "zip",
    // torch.fx's custom builtins
    "inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"};

}  // namespace

// torch.fx's _name_regex on an identifier: "base_12" -> ("base", "12"). Suffixes of more than
// 18 digits stay part of the base (Python's integers are unbounded; ours are int64_t).
bool split_suffix(std::string_view s, std::string_view* base, std::string_view* digits) {
  size_t us = s.rfind('_');
  if (us == std::string_view::npos || us == 0 || us + 1 >= s.size()) return false;
  if (s.size() - us - 1 > 18) return false;
  for (size_t i = us + 1; i < s.size(); ++i)
    if (!ascii_digit(s[i])) return false;
  *base = s.substr(0, us);
  *digits = s.substr(us + 1);
  return true;
}

std::string snake_case(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 4);
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (std::isupper(static_cast<unsigned char>(c)) && i > 0 &&
        std::islower(static_cast<unsigned char>(s[i - 1])))
      out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string target_to_str(std::string_view target) {
  if (target.size() >= 4 && target.substr(0, 2) == "__" && target.substr(target.size() - 2) == "__")
    target = target.substr(2, target.size() - 4);
  return snake_case(target);
}

std::string export_mangle(std::string_view candidate) {
  std::string name(candidate);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    else if (!(c >= 'a' && c <= 'z') && !ascii_digit(c))
      c = '_';
  }
  return name;
}

std::string export_placeholder_name(const Namespace& ns, std::string_view candidate) {
  std::string name = export_mangle(candidate);
  if (!ns.contains(name)) return name;
  for (int64_t k = 1;; ++k)
    if (std::string s = name + "_" + std::to_string(k); !ns.contains(s)) return s;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || ascii_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), legal_char);
}

std::string sanitize_name(std::string_view s) {
  if (is_identifier(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size();) {
    if (legal_char(s[i])) {
      out += s[i++];
      continue;
    }
    out += '_';
    while (i < s.size() && !legal_char(s[i])) ++i;
  }
  if (out.empty()) return "_unnamed";
  if (ascii_digit(out[0])) out.insert(out.begin(), '_');
  return out;
}

bool is_reserved_name(std::string_view s) {
  static const std::unordered_set<std::string_view> set(kReserved.begin(), kReserved.end());
  return set.count(s) > 0;
}

Namespace::Table& Namespace::writable() {
  if (!table_)
    table_ = std::make_shared<Table>();
  else if (table_.use_count() > 1)
    table_ = std::make_shared<Table>(*table_);
  return *table_;
}

void Namespace::mark_used(Table& t, std::string name) {
  std::string_view base, digits;
  bool suffixed = split_suffix(name, &base, &digits);
  // "a_01" is not "a_1": only canonical suffixes enter the base's index.
  if (suffixed && !(digits.size() > 1 && digits[0] == '0')) {
    int64_t j = to_int(digits);
    auto it = t.taken.find(base);
    if (it == t.taken.end()) it = t.taken.try_emplace(std::string(base)).first;
    it->second.try_emplace(j, j + 1);
  }
  Entry& e = t.names.try_emplace(std::move(name)).first->second;
  if (!e.used) ++t.used;
  e.used = true;
}

bool Namespace::used_in(const Table& t, std::string_view name) {
  auto it = t.names.find(name);
  return it != t.names.end() && it->second.used;
}

int64_t Namespace::next_free(Table& t, std::string_view base, int64_t k) {
  auto it = t.taken.find(base);
  if (it == t.taken.end()) return k;
  auto& next = it->second;
  std::vector<int64_t> path;
  for (auto at = next.find(k); at != next.end(); at = next.find(k)) {
    path.push_back(k);
    k = at->second;
  }
  for (int64_t p : path) next[p] = k;
  return k;
}

std::string Namespace::create_name(std::string_view raw) {
  std::string candidate = sanitize_name(raw);
  Table& t = writable();

  if (fault_on(Fault::kNamespaceAppendSuffix)) {
    // Fault: on collision append "_1" to whatever the candidate is, without checking it.
    if (used_in(t, candidate) || is_reserved_name(candidate)) candidate += "_1";
    mark_used(t, candidate);
    return candidate;
  }

  std::string_view base_view, digits;
  bool has_num = split_suffix(candidate, &base_view, &digits);
  std::string base(has_num ? base_view : std::string_view(candidate));
  int64_t num = 0;
  auto known = t.names.find(candidate);
  bool used = known != t.names.end() && known->second.used;
  if (!has_num || used) {
    // torch.fx counts from the count of the candidate's *base* ("max" for "max_2"): current
    // PyTorch (#177217, torch 2.14); before it, the count of the candidate itself.
    auto counted = has_num ? t.names.find(base) : known;
    num = counted != t.names.end() && counted->second.counted ? counted->second.count : 0;
    if (is_reserved_name(candidate)) {
      ++num;
      candidate = base + "_" + std::to_string(num);
      used = used_in(t, candidate);
    }
  } else {
    num = to_int(digits);
  }
  if (used) {
    num = next_free(t, base, num + 1);
    candidate = base + "_" + std::to_string(num);
  }
  mark_used(t, candidate);
  Entry& b = t.names.try_emplace(std::move(base)).first->second;
  b.counted = true;
  b.count = num;
  return candidate;
}

bool Namespace::contains(std::string_view name) const {
  return table_ && used_in(*table_, name);
}

bool Namespace::reserve(const std::string& name) {
  if (contains(name)) return false;
  mark_used(writable(), name);
  return true;
}

void Namespace::release(const std::string& name) {
  Table& t = writable();
  if (auto it = t.names.find(name); it != t.names.end() && it->second.used) {
    it->second.used = false;
    --t.used;
  }
  std::string_view base_view, digits;
  if (!split_suffix(name, &base_view, &digits)) return;
  std::string base(base_view);
  int64_t num = to_int(digits);
  // Reset the counter too, so the next collision on this base hands the name out again.
  auto it = t.names.find(base);
  if (it != t.names.end() && it->second.counted && it->second.count >= num)
    it->second.count = num - 1;
  // Rebuild the base's suffix index without the released number.
  auto tk = t.taken.find(base);
  if (tk == t.taken.end()) return;
  std::vector<int64_t> keys;
  for (const auto& [j, _] : tk->second)
    if (j != num || (digits.size() > 1 && digits[0] == '0')) keys.push_back(j);
  tk->second.clear();
  for (int64_t j : keys) tk->second.emplace(j, j + 1);
}

}  // namespace flatcheck
