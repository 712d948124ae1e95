// Per-program feature extraction time (cost_model/feature_extractor.h) on
// design-space candidates of GMM:3 and C2D:0 sampled by ReplayTrace, on one
// thread and on two. The search budget is 15 ms per trial for sampling,
// mutation, features and prediction together. Figures only: never asserted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cost_model/feature_extractor.h"
#include "ir/target.h"
#include "ir/transform/passes.h"
#include "ir/workloads/suite.h"
#include "search/replay_trace.h"
#include "search/tune_context.h"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const int n = argc > 1 ? std::atoi(argv[1]) : 128;
  for (const auto& [name, index] : {std::pair<std::string, int>{"GMM", 3}, {"C2D", 0}}) {
    kiln::search::TuneContext ctx = kiln::search::MakeDefaultTuneContext(
        kiln::ir::MakeWorkload(name, index), kiln::ir::Target::Parse("llvm -num-cores=2"), 7, 1);
    kiln::search::ReplayTrace replay(ctx);
    std::vector<kiln::ir::PrimFunc> programs;
    for (kiln::search::Candidate& c : replay.NextBatch(n)) programs.push_back(std::move(c.scheduled));
    // Where one thread's time goes: each lowering pass, then the whole extraction.
    {
      using namespace kiln::ir::transform;
      double t[5] = {0, 0, 0, 0, 0};
      for (const kiln::ir::PrimFunc& p : programs) {
        auto a = Clock::now();
        kiln::ir::PrimFunc f = PlanBufferAllocationAtLca(p);
        auto b = Clock::now();
        f = BlocksToLoops(f);
        auto c = Clock::now();
        f = CompactBufferAllocation(f);
        auto d = Clock::now();
        f = Simplify(f);
        auto e = Clock::now();
        (void)kiln::cost_model::ExtractFeatures(p);
        auto g = Clock::now();
        t[0] += std::chrono::duration<double>(b - a).count();
        t[1] += std::chrono::duration<double>(c - b).count();
        t[2] += std::chrono::duration<double>(d - c).count();
        t[3] += std::chrono::duration<double>(e - d).count();
        t[4] += std::chrono::duration<double>(g - e).count();
      }
      const double k = 1e3 / static_cast<double>(programs.size());
      std::printf("%s:%d  ms/program: plan_buffer_allocation_at_lca %.3f, blocks_to_loops %.3f, "
                  "compact %.3f, simplify %.3f; ExtractFeatures (lowering included) %.3f\n",
                  name.c_str(), index, t[0] * k, t[1] * k, t[2] * k, t[3] * k, t[4] * k);
    }
    int64_t rows = 0;
    for (int threads : {1, 2}) {
      const auto t0 = Clock::now();
      std::vector<kiln::cost_model::FeatureRows> f =
          kiln::cost_model::ExtractFeaturesBatch(programs, threads);
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      rows = 0;
      for (const auto& r : f) rows += r.rows;
      std::printf("%s:%d  %zu programs  %.2f rows/program  %d thread(s): %.3f ms/program\n",
                  name.c_str(), index, programs.size(),
                  static_cast<double>(rows) / static_cast<double>(programs.size()), threads,
                  1e3 * secs / static_cast<double>(programs.size()));
    }
  }
  return 0;
}
