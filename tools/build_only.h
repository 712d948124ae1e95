// kiln tune --build-only: sample a batch of candidates from the design space
// and build each for the target without measuring (no GPU needed for a cuda
// target: NVRTC and nvJitLink check every kernel for the arch).
#pragma once

#include <cstdint>

#include "ir/target.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

// Draws samples (as ReplayTrace does: until `candidates` pass the
// postprocessors, at most 64 draws per candidate), builds each that passed
// and prints it, then the counts, with the draws each postprocessor rejected;
// returns the exit code (0 when `candidates` candidates built).
int BuildOnly(const ResolvedWorkload& w, const ir::Target& target, int64_t candidates,
              uint64_t seed, bool as_json);

}  // namespace kiln::tools
