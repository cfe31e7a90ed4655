// The pipeline's stages (core/base/stages.def), as an enum the whole tree shares: faults name
// the stage where they show, the oracle reports failures by stage, `show` prints one.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace flatcheck {

enum class Stage {
#define X(e, name, from, fn, doc) e,
#include "core/base/stages.def"
#undef X
};

// All stages in table order: the eager reference first, then the paths.
const std::vector<Stage>& all_stages();
// The paths only: every stage but the eager reference.
const std::vector<Stage>& path_stages();

std::string_view stage_name(Stage s);  // "flattened"
std::string_view stage_doc(Stage s);   // one line
Stage stage_input(Stage s);            // the stage it is built from (kEager for kEager)
std::optional<Stage> stage_by_name(std::string_view name);
// "eager, exported, ... or unflattened", for help and errors.
std::string_view stage_names_text();

}  // namespace flatcheck
