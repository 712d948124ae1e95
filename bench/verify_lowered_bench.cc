// What VerifyLowered costs next to a whole CPU build: for candidates drawn
// by ReplayTrace from each suite workload's design space (config 0), the
// CPU seconds of lowering, of VerifyLowered on the result, and of the whole
// BuildObject (which lowers, verifies, emits and compiles). The ratio says
// whether the check can run on every build (codegen/llvm_backend.cc runs it
// always). Figures only: never asserted.
//
// Usage: verify_lowered_bench [candidates per workload (4)]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/llvm_backend.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"
#include "ir/workloads/suite.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"
#include "support/thread_cpu_time.h"

int main(int argc, char** argv) {
  using namespace kiln;
  const int per_workload = argc > 1 ? std::max(1, std::atoi(argv[1])) : 4;
  const ir::Target cpu = codegen::ResolveTarget("llvm -mcpu=skylake-avx512 -num-cores=4");
  double lower = 0, verify = 0, build = 0;
  int n = 0;
  for (const std::string& name : ir::SuiteNames()) {
    search::ReplayTrace strategy(search::MakeDefaultTuneContext(ir::MakeWorkload(name, 0), cpu, 7));
    for (const search::Candidate& c : strategy.NextBatch(per_workload)) {
      double t0 = support::ThreadCpuSeconds();
      ir::PrimFunc lowered = ir::transform::Lower(c.scheduled);
      double t1 = support::ThreadCpuSeconds();
      const size_t issues = ir::transform::VerifyLowered(lowered).size();
      double t2 = support::ThreadCpuSeconds();
      codegen::BuildObject(c.scheduled, cpu);
      double t3 = support::ThreadCpuSeconds();
      if (issues) std::printf("%s: %zu issue(s) in the lowered form\n", name.c_str(), issues);
      lower += t1 - t0;
      verify += t2 - t1;
      build += t3 - t2;
      ++n;
    }
  }
  std::printf("%d candidates: lower %.1f ms, VerifyLowered %.2f ms, BuildObject %.1f ms per "
              "candidate\nVerifyLowered / BuildObject = %.2f%%\n",
              n, 1e3 * lower / n, 1e3 * verify / n, 1e3 * build / n, 100 * verify / build);
  return 0;
}
