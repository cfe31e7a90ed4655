#include "core/base/stage.h"

#include <string>

namespace flatcheck {
namespace {

struct StageRow {
  Stage stage;
  std::string_view name;
  Stage input;
  std::string_view doc;
};

constexpr StageRow kRows[] = {
#define X(e, name, from, fn, doc) {Stage::e, name, Stage::from, doc},
#include "core/base/stages.def"
#undef X
};

const StageRow& row(Stage s) {
  return kRows[static_cast<size_t>(s)];
}

}  // namespace

const std::vector<Stage>& all_stages() {
  static const std::vector<Stage> v = [] {
    std::vector<Stage> out;
    for (const auto& r : kRows) out.push_back(r.stage);
    return out;
  }();
  return v;
}

const std::vector<Stage>& path_stages() {
  static const std::vector<Stage> v(all_stages().begin() + 1, all_stages().end());
  return v;
}

std::string_view stage_name(Stage s) {
  return row(s).name;
}
std::string_view stage_doc(Stage s) {
  return row(s).doc;
}
Stage stage_input(Stage s) {
  return row(s).input;
}

std::optional<Stage> stage_by_name(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.stage;
  return std::nullopt;
}

std::string_view stage_names_text() {
  static const std::string text = [] {
    std::string out;
    for (size_t i = 0; i < std::size(kRows); ++i)
      out += std::string(i == 0                      ? ""
                         : i + 1 == std::size(kRows) ? " or "
                                                     : ", ") +
             std::string(kRows[i].name);
    return out;
  }();
  return text;
}

}  // namespace flatcheck
