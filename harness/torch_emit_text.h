// The fixed Python text of an emit-torch program (harness/torch_emit.h): the prelude (imports,
// tensor and float decoding, the branch op, the no-op recorder `_R` the bridge replaces) and the
// `__main__` that runs the eager program against flatcheck's results bit for bit.
#pragma once

namespace flatcheck {

extern const char* const kTorchPrelude;
extern const char* const kTorchMain;

}  // namespace flatcheck
