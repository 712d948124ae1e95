// Shared pieces of the search tests: reduced instances of the suite (small
// enough for the interpreter), a context builder, a trace comparison and a
// runner that builds nothing.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "ir/schedule/trace.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "ir/workloads/suite.h"
#include "search/measure.h"
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

// Indices (below EnterPostproc) whose decisions differ between a and b.
inline std::vector<size_t> ChangedDecisions(const ir::Trace& a, const ir::Trace& b) {
  std::vector<size_t> out;
  const size_t end = std::min(a.PostprocIndex(), b.PostprocIndex());
  for (size_t i = 0; i < end; ++i) {
    if (a.GetDecision(i) != b.GetDecision(i)) out.push_back(i);
  }
  return out;
}

// A runner that builds nothing: a candidate's "time" is 1 to 2 ms, spread by
// its program's structural hash, so whole tuning runs repeat exactly.
class HashRunner : public Runner {
 public:
  std::vector<MeasureResult> Measure(const MeasureTask&,
                                     const std::vector<MeasureCandidate>& batch) override {
    std::vector<MeasureResult> out;
    for (const MeasureCandidate& c : batch) {
      MeasureResult r;
      r.status = MeasureStatus::kOk;
      r.verified = true;
      const uint64_t h = ir::StructuralHash(c.scheduled);
      r.run_secs = {1e-3 * (1.0 + static_cast<double>(h % 1000) / 1000.0)};
      out.push_back(r);
      ++measured;
    }
    return out;
  }
  int measured = 0;
};

}  // namespace kiln::search::testing
