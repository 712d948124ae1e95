// Resolving --target on the command line, in one place for every command, so
// that `kiln tune`, `kiln query` and `kiln compile` agree on what a target
// string means (users.md: a query that resolves the target differently from
// the tuner silently misses).
#pragma once

#include <string>

#include "ir/target.h"

namespace kiln::tools {

// "host" -> this machine as the LLVM backend detects it (CPU name, features,
// cores); anything else -> the normalized ir::Target. Throws
// std::runtime_error naming the --target value.
ir::Target ResolveTargetFlag(const std::string& spec);

// The measuring machine and toolchain, stored with every record so that a
// surprising number can be traced to where it was measured.
std::string MachineFingerprint(const ir::Target& target);

}  // namespace kiln::tools
