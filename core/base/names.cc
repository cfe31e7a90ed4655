#include "core/base/names.h"

namespace flatcheck {

std::string join_fqn(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  if (!out.empty()) out += '.';
  out += name;
  return out;
}

std::vector<std::string> split_fqn(std::string_view fqn) {
  std::vector<std::string> parts;
  if (fqn.empty()) return parts;
  size_t start = 0;
  while (true) {
    size_t dot = fqn.find('.', start);
    parts.emplace_back(fqn.substr(start, dot == std::string_view::npos ? fqn.npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string call_key(const std::string& fqn, int index) {
  return index == 0 ? fqn : fqn + "@" + std::to_string(index);
}

std::string origin_key(const std::string& key, const std::string& name) {
  return key.empty() ? name : key + "/" + name;
}

std::string strip_variants(std::string_view path) {
  std::string out;
  for (const auto& part : split_fqn(path)) out = join_fqn(out, part.substr(0, part.find('@')));
  return out;
}

bool is_variant_name(std::string_view name) {
  size_t at = name.find('@');
  return at != std::string_view::npos && at + 1 < name.size() &&
         name.find_first_not_of("0123456789", at + 1) == std::string_view::npos;
}

}  // namespace flatcheck
