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

namespace {

// Decimal digits without leading zeros ("" for 0), so counts of any length compare.
std::string strip_zeros(std::string_view digits) {
  size_t i = 0;
  while (i < digits.size() && digits[i] == '0') ++i;
  return std::string(digits.substr(i));
}

bool count_less(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::string plus_one(std::string digits) {
  for (size_t i = digits.size(); i-- > 0;) {
    if (digits[i] != '9') {
      ++digits[i];
      return digits;
    }
    digits[i] = '0';
  }
  return "1" + digits;
}

}  // namespace

std::string ExportPlaceholderNames::name(const Namespace& ns, std::string_view candidate) {
  std::string name = export_mangle(candidate);
  if (ns.contains(name)) name += "_" + plus_one(count_[name]);
  // re.match(r"(.*)_(\d+)", name): the last '_' followed by a digit, then its digit run.
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] != '_' || i + 1 >= name.size() || !ascii_digit(name[i + 1])) continue;
    size_t end = i + 1;
    while (end < name.size() && ascii_digit(name[end])) ++end;
    std::string n = strip_zeros(std::string_view(name).substr(i + 1, end - i - 1));
    std::string& count = count_[name.substr(0, i)];
    if (count_less(count, n)) count = n;
    break;
  }
  return name;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || ascii_digit(s[0])) return false;
  return std::all_of(s.begin(), s.end(), legal_char);
}

bool is_module_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), legal_char);
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

namespace {
// The first empty slot on `h`'s probe sequence in a power-of-two table with room to spare.
template <class T, class Empty>
size_t free_slot(const std::vector<T>& slots, size_t h, Empty empty) {
  const size_t mask = slots.size() - 1;
  size_t i = h & mask;
  while (!empty(slots[i])) i = (i + 1) & mask;
  return i;
}
}  // namespace

uint32_t Namespace::Table::find(std::string_view s, size_t h) const {
  if (slots.empty()) return kNone;
  const size_t mask = slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t at = slots[i];
    if (at == 0) return kNone;
    const Item& it = items[at - 1];
    if (it.hash == h && it.text == s) return at - 1;
  }
}

uint32_t Namespace::Table::intern(std::string_view s, size_t h) {
  if (uint32_t at = find(s, h); at != kNone) return at;
  auto empty = [](uint32_t at) { return at == 0; };
  if (2 * (items.size() + 1) > slots.size()) {
    // Grow to keep the load at most one half, then place every item again.
    slots.assign(std::max<size_t>(16, 2 * slots.size()), 0);
    for (size_t k = 0; k < items.size(); ++k)
      slots[free_slot(slots, items[k].hash, empty)] = static_cast<uint32_t>(k + 1);
  }
  items.push_back({std::string(s), h, {}});
  slots[free_slot(slots, h, empty)] = static_cast<uint32_t>(items.size());
  return static_cast<uint32_t>(items.size() - 1);
}

namespace {
size_t taken_hash(uint32_t base, int64_t j) {
  uint64_t x = (static_cast<uint64_t>(base) << 40) ^ static_cast<uint64_t>(j);
  x *= 0x9e3779b97f4a7c15u;
  return static_cast<size_t>(x ^ (x >> 29));
}
}  // namespace

Namespace::Taken* Namespace::Table::find_taken(uint32_t base, int64_t j) {
  if (taken.empty()) return nullptr;
  const size_t mask = taken.size() - 1;
  for (size_t i = taken_hash(base, j) & mask;; i = (i + 1) & mask) {
    Taken& t = taken[i];
    if (t.base == 0) return nullptr;
    if (t.base == base + 1 && t.j == j) return &t;
  }
}

void Namespace::Table::add_taken(uint32_t base, int64_t j, int64_t next) {
  if (find_taken(base, j)) return;
  auto empty = [](const Taken& t) { return t.base == 0; };
  if (2 * (taken_count + 1) > taken.size()) {
    std::vector<Taken> old(std::max<size_t>(16, 2 * taken.size()));
    old.swap(taken);
    for (const Taken& t : old)
      if (!empty(t)) taken[free_slot(taken, taken_hash(t.base - 1, t.j), empty)] = t;
  }
  taken[free_slot(taken, taken_hash(base, j), empty)] = {base + 1, j, next};
  ++taken_count;
}

Namespace::Table& Namespace::writable() {
  if (!table_)
    table_ = std::make_shared<Table>();
  else if (table_.use_count() > 1)
    table_ = std::make_shared<Table>(*table_);
  return *table_;
}

void Namespace::mark_used(Table& t, std::string_view name) {
  std::string_view base, digits;
  bool suffixed = split_suffix(name, &base, &digits);
  // "a_01" is not "a_1": only canonical suffixes enter the base's index.
  if (suffixed && !(digits.size() > 1 && digits[0] == '0'))
    mark_used(t, name, Table::hash_of(name), t.intern(base), to_int(digits));
  else
    mark_used(t, name, Table::hash_of(name), Table::kNone, -1);
}

void Namespace::mark_used(Table& t, std::string_view name, size_t h, uint32_t base_item,
                          int64_t j) {
  if (j >= 0) t.add_taken(base_item, j, j + 1);
  Entry& e = t.items[t.intern(name, h)].e;
  if (!e.used) ++t.used;
  e.used = true;
}

bool Namespace::used_in(const Table& t, std::string_view name) {
  uint32_t at = t.find(name);
  return at != Table::kNone && t.items[at].e.used;
}

int64_t Namespace::next_free(Table& t, uint32_t b, int64_t k) {
  // Find the root, then point every suffix on the way at it (two passes: no path stored).
  int64_t root = k;
  for (Taken* at = t.find_taken(b, root); at; at = t.find_taken(b, root)) root = at->next;
  for (Taken* at = t.find_taken(b, k); at && at->next != root; at = t.find_taken(b, k)) {
    k = at->next;
    at->next = root;
  }
  return root;
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

  // Each string is hashed once: the candidate (again only when it changes) and its base.
  std::string_view base_view, digits;
  bool has_num = split_suffix(candidate, &base_view, &digits);
  std::string base(has_num ? base_view : std::string_view(candidate));
  size_t h = Table::hash_of(candidate);
  const size_t base_hash = has_num ? Table::hash_of(base) : h;
  int64_t num = 0;
  uint32_t known = t.find(candidate, h);
  bool used = known != Table::kNone && t.items[known].e.used;
  // The name handed out is "<base>_<num>" unless it is the candidate itself without a suffix.
  bool suffixed = has_num;
  if (!has_num || used) {
    // torch.fx counts from the count of the candidate's *base* ("max" for "max_2"): current
    // PyTorch (#177217, torch 2.14); before it, the count of the candidate itself.
    uint32_t counted = has_num ? t.find(base, base_hash) : known;
    num = counted != Table::kNone && t.items[counted].e.counted ? t.items[counted].e.count : 0;
    if (is_reserved_name(candidate)) {
      ++num;
      candidate = base + "_" + std::to_string(num);
      h = Table::hash_of(candidate);
      used = used_in(t, candidate);
      suffixed = true;
    }
  } else {
    num = to_int(digits);
  }
  uint32_t b = t.intern(base, base_hash);
  if (used) {
    num = next_free(t, b, num + 1);
    candidate = base + "_" + std::to_string(num);
    h = Table::hash_of(candidate);
    suffixed = true;
  }
  // The name's split is the base's and num unless it has none or a suffix mark_used does not
  // index ("a_01", or more than 18 digits).
  std::string_view split_base, split_digits;
  bool indexed = suffixed && split_suffix(candidate, &split_base, &split_digits) &&
                 !(split_digits.size() > 1 && split_digits[0] == '0');
  mark_used(t, candidate, h, b, indexed ? to_int(split_digits) : -1);
  Entry& e = t.items[b].e;
  e.counted = true;
  e.count = num;
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
  if (uint32_t at = t.find(name); at != Table::kNone && t.items[at].e.used) {
    t.items[at].e.used = false;
    --t.used;
  }
  std::string_view base_view, digits;
  if (!split_suffix(name, &base_view, &digits)) return;
  int64_t num = to_int(digits);
  uint32_t b = t.find(base_view);
  if (b == Table::kNone) return;
  // Reset the counter too, so the next collision on this base hands the name out again.
  Entry& e = t.items[b].e;
  if (e.counted && e.count >= num) e.count = num - 1;
  // Rebuild the suffix index: the base's suffixes without the released number, each pointing
  // at the next; every other base's as it was.
  std::vector<Taken> old;
  old.swap(t.taken);
  t.taken_count = 0;
  bool canonical = !(digits.size() > 1 && digits[0] == '0');
  for (const Taken& tk : old) {
    if (tk.base == 0) continue;
    if (tk.base != b + 1)
      t.add_taken(tk.base - 1, tk.j, tk.next);
    else if (tk.j != num || !canonical)
      t.add_taken(b, tk.j, tk.j + 1);
  }
}

}  // namespace flatcheck
