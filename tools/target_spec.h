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

// Throws std::runtime_error when candidates for `target` cannot be measured
// here: for a cuda target, when this machine has no usable GPU (the message
// of codegen::CudaUnavailable says why) or its GPU is older than the arch.
void RequireMeasurableTarget(const ir::Target& target);

// The measuring machine and toolchain, stored with every record so that a
// surprising number can be traced to where it was measured. For a cuda
// target: the target, Kiln's version, the GPU (name, arch), the driver
// release and the CUDA version it supports, and NVRTC's version.
std::string MachineFingerprint(const ir::Target& target);

}  // namespace kiln::tools
