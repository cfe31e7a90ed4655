// Hand-built programs: the two seed bugs' examples and the quick-start example.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/ir.h"

namespace flatcheck {

// PyTorch #137013. Child N(x, b) returns x + 1 if b else x + 2; M computes
// x+3 -> n(., True) -> +4 -> n(., second_flag) -> +5. On ones(1) it returns 16 for
// second_flag = false (the two calls specialize differently) and 15 for true.
std::shared_ptr<Module> unflatten_example(bool second_flag = false);

// Torch-TensorRT #4360. With relu in the fallback set, the partitioner makes engine 0 with one
// output (named `getitem` before the split), a relu fallback reading it, and engine 2 with two
// outputs, read in the parent through freshly minted `getitem`, `getitem_1`. Inlining then names
// engine 0's new getitem `getitem_2`, so matching the relu's input by name picks engine 2's
// `getitem`, defined later. Input: one f32[4, 4].
std::shared_ptr<Module> graph_break_example();

// A small model with a child called twice, a parameter and a buffer update.
std::shared_ptr<Module> quickstart_example();

}  // namespace flatcheck
