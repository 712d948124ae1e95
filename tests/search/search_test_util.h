// Shared pieces of the search tests: reduced instances of the suite (small
// enough for the interpreter), and a context builder.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/target.h"
#include "ir/workloads/suite.h"
#include "search/tune_context.h"
#include "tests/common/reduced_suite.h"

namespace kiln::search::testing {

using kiln::testing::ReducedCase;
using kiln::testing::ReducedSuite;

// TVM's CPU space tests run on aws/cpu/c5.9xlarge: 18 cores.
inline constexpr const char* kParityTarget = "llvm -num-cores=18";

inline TuneContext Context(ir::PrimFunc f, const std::string& target = kParityTarget,
                           int64_t seed = 1, int threads = 1) {
  return MakeDefaultTuneContext(std::move(f), ir::Target::Parse(target), seed, threads);
}

}  // namespace kiln::search::testing
