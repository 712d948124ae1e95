// CPU targets in their short, canonical form, and which CPU targets can run
// code tuned for another (issue 16). LLVM knows which features a CPU name
// implies, so the canonical form is written here rather than in ir/target.h
// (pure data, no LLVM).
//
// Canonical form of an `llvm` target, the way TVM users write targets:
// -mcpu names the CPU; -mattr lists only the features whose state differs
// from what that CPU implies, and no more of them than it takes to reach the
// same feature set, leaving out system features no generated kernel can use
// (MWAITX, RDPRU, shadow stacks, XSAVE...: target_features.cc lists them) (a virtual machine that hides AVX-512 from a Zen 4 is
// "-mcpu=znver4 -mattr=-avx512f", not fifty lines of features); -mtriple is
// dropped when it is LLVM's default triple for this build. So "host" on a
// plain Zen 3 with two cores is "llvm -mcpu=znver3 -num-cores=2", and that
// is also what a user who types it gets. CUDA targets are returned as they
// are (ir::Target already normalizes them).
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace kiln::codegen {

// The canonical form (see above). A CPU name LLVM does not know for the
// triple is kept as it is, with -mattr unchanged: nothing can be implied.
// Throws ir::TargetError for a triple this LLVM cannot target.
ir::Target CanonicalTarget(const ir::Target& target);

// Every feature enabled for an `llvm` target (the CPU's implied features
// with -mattr applied, implications followed), sorted by name. Throws
// ir::TargetError for a CUDA target or an unknown triple.
std::vector<std::string> EnabledFeatures(const ir::Target& target);
// Whether `feature` ("avx512f") is among EnabledFeatures(target); false for
// CUDA targets. Unlike ir::Target::HasFeature it knows what -mcpu implies.
bool TargetHasFeature(const ir::Target& target, const std::string& feature);

// Whether a kernel tuned for `record` runs on `asking` (`kiln query --match
// compatible`): both `llvm`, the same triple and core count, and every
// feature `record` enables is enabled on `asking` (system features aside). The CPU names may differ
// (the tuning may then be less than optimal there, never wrong). When it
// returns false, *why (if given) says which condition failed.
bool CompatibleTarget(const ir::Target& record, const ir::Target& asking,
                      std::string* why = nullptr);

// Whether schedules rank alike on both targets as far as the vector units
// go: both `llvm`, the same triple, and the same state of each feature that
// sets the vector width or fused multiply-add (avx512f, avx2, avx, fma,
// sse4.2; neon, sve, sve2). `kiln tune` starts a run from a shipped cost
// model only when its training target and the tuning target agree so
// (search/prior_model.h): a model that learned 16-lane schedules misleads on
// an 8-lane CPU. Core counts may differ. When it returns false, *why (if
// given) says what differs.
bool SameVectorUnits(const ir::Target& a, const ir::Target& b, std::string* why = nullptr);

}  // namespace kiln::codegen
