// The generator's own type and shape derivation: every node's value type in an eager module
// tree, from torch's documented shape rules (broadcasting, matmul, sum, reshape, transpose, cat,
// chunk), written without the core's type inference or shape rules (core/ir/analysis.cc,
// core/ops/ops.cc). The generator types the cases it builds with it, so a wrong inference in the
// core breaks no case; the oracle compares the core's inference with it on every case
// (property `types`).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "core/ir/ir.h"

namespace flatcheck {

// Torch's broadcasting of two shapes (align right; equal, or one of them 1); nullopt when they
// do not broadcast.
std::optional<Shape> gen_broadcast(const Shape& a, const Shape& b);

// Every node of `root`'s tree (each module object once), typed. Placeholders keep the type they
// were created with. A node whose type the rules cannot derive is left out, with `*why` saying
// which (the first one).
std::unordered_map<const Node*, ValueType> derive_types(const Module& root,
                                                        std::string* why = nullptr);

// derive_types, written into meta.val. Throws std::logic_error when a node cannot be typed: the
// generator built something it did not mean to.
void annotate_types(Module& root);

}  // namespace flatcheck
