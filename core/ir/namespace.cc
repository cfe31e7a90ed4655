#include "core/ir/namespace.h"

#include <array>
#include <cctype>

#include "core/faults.h"

namespace flatcheck {
namespace {

// Splits "base_12" into ("base", 12); returns false when there is no numeric suffix.
bool split_suffix(const std::string& s, std::string* base, int64_t* num) {
  size_t us = s.rfind('_');
  if (us == std::string::npos || us + 1 >= s.size()) return false;
  for (size_t i = us + 1; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  if (s.size() - us - 1 > 15) return false;  // too long to be a counter; treat as a base
  *base = s.substr(0, us);
  *num = std::stoll(s.substr(us + 1));
  return true;
}

}  // namespace

std::string snake_case(std::string_view s) {
  // torch.fx: insert '_' before an upper-case letter that follows a lower-case one, then lower.
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0 && std::islower(static_cast<unsigned char>(s[i - 1]))) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

std::string sanitize_name(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 1);
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty()) return "_unnamed";
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  return out;
}

bool is_reserved_name(std::string_view s) {
  static const std::array<std::string_view, 40> kReserved = {
      "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
      "while",   "with",     "yield",    "inf",    "nan",  "torch",  "self",   "print"};
  for (auto r : kReserved)
    if (r == s) return true;
  return false;
}

std::string Namespace::create_name(std::string_view raw) {
  std::string candidate = sanitize_name(raw);
  std::string base = candidate;
  int64_t num = 0;
  bool has_num = split_suffix(candidate, &base, &num);
  if (has_num) candidate = base + "_" + std::to_string(num);

  if (fault_on(Fault::kNamespaceAppendSuffix)) {
    // Fault: on collision append "_1" to whatever the candidate is, without checking it.
    if (used_.count(candidate) || is_reserved_name(candidate)) candidate += "_1";
    used_.insert(candidate);
    return candidate;
  }

  // As torch.fx: a suffix-less candidate resumes from the base's counter.
  if (!has_num || num == 0) num = base_count_[base];
  while (used_.count(candidate) || is_reserved_name(candidate)) {
    ++num;
    candidate = base + "_" + std::to_string(num);
  }
  used_.insert(candidate);
  base_count_[base] = num;
  return candidate;
}

bool Namespace::reserve(const std::string& name) {
  return used_.insert(name).second;
}

void Namespace::release(const std::string& name) {
  used_.erase(name);
  // Reset the counter too, so the next collision on this base hands the name out again.
  std::string base;
  int64_t num = 0;
  if (split_suffix(name, &base, &num)) {
    auto it = base_count_.find(base);
    if (it != base_count_.end() && it->second >= num) it->second = num - 1;
  }
}

}  // namespace flatcheck
