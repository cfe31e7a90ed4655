// Fingerprints: a structural digest of a module tree or a program, computed from the objects in
// memory (no text is written). The oracle takes one of every pass's input before the later
// passes run and compares it with one taken after, to find a pass that wrote to its input.
//
// A fingerprint covers everything a pass could edit, more than a saved file (a module file keeps
// the types of placeholders only): per module its type, parameters and buffers
// (names, shapes, bits, and which are shared with an earlier one), engines (every field but the
// process-local id), graph (per live node in order: op, target, op code, name, every argument,
// with node arguments by position, and the whole meta: type, nn_module_stack, origin) and
// children (names, and which modules are shared); per program also its signature, state and
// module types. Two fingerprints differ when any of these do (up to the digest's collisions);
// a deep copy (clone_module, clone_program) has its original's fingerprint.
#pragma once

#include "core/base/digest.h"
#include "core/ir/ir.h"
#include "core/ir/program.h"

namespace flatcheck {

// Without `types`, the nodes' types (meta.val) are left out: what a module file keeps of a tree
// whose types are partly unset (a generated module no call reaches is untyped; loaded, it is
// typed at defaults).
Digest fingerprint_module(const Module& m, bool types = true);
Digest fingerprint_program(const Program& p);

}  // namespace flatcheck
