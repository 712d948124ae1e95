// Replays per second of a GMM multi-level-tiling trace (the "SSRSRS"
// structure MetaSchedule's CPU rules produce, with write caching and the
// parallel/vectorize/unroll annotations, then the postprocessing it implies)
// on one core. Goal: at least 5,000 replays/s. Figures only: never asserted.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "ir/text/printer.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"

namespace {

using namespace kiln::ir;

Trace MultiLevelTilingTrace(const PrimFunc& gmm) {
  Schedule sch(gmm, /*seed=*/42);
  BlockRV block = sch.GetBlock("Z");
  std::vector<LoopRV> loops = sch.GetLoops(block);  // b, i, j, k
  std::vector<std::vector<LoopRV>> tiles;
  for (int axis = 0; axis < 4; ++axis) {
    int n = axis == 3 ? 2 : 4;  // spatial: S S S S... reduce: R R
    auto factors = sch.SamplePerfectTile(loops[axis], n, 64);
    tiles.push_back(sch.Split(loops[axis], {factors.begin(), factors.end()}));
  }
  // SSRSRS: s0 s1 r0 s2 r1 s3 over the spatial tiles b, i, j and reduce tile k.
  std::vector<LoopRV> order;
  for (int level : {0, 1}) {
    for (int axis = 0; axis < 3; ++axis) order.push_back(tiles[axis][level]);
  }
  order.push_back(tiles[3][0]);
  for (int axis = 0; axis < 3; ++axis) order.push_back(tiles[axis][2]);
  order.push_back(tiles[3][1]);
  for (int axis = 0; axis < 3; ++axis) order.push_back(tiles[axis][3]);
  sch.Reorder(order);
  BlockRV write = sch.CacheWrite(block, 0, "global");
  sch.ReverseComputeAt(write, order[5], /*preserve_unit_loops=*/true);
  sch.Annotate(block, "meta_schedule.parallel", int64_t{32});
  sch.Annotate(block, "meta_schedule.vectorize", int64_t{64});
  ExprRV unroll = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
  sch.Annotate(block, "meta_schedule.unroll_explicit", unroll);
  sch.EnterPostproc();
  // What RewriteParallelVectorizeUnroll would do with those annotations.
  BlockRV b = sch.GetBlock("Z");
  std::vector<LoopRV> l = sch.GetLoops(b);
  LoopRV fused = sch.Fuse({l[0], l[1], l[2]});
  sch.Parallel(fused);
  sch.Unannotate(b, "meta_schedule.parallel");
  sch.Unannotate(b, "meta_schedule.vectorize");
  sch.Annotate(l[3], "pragma_auto_unroll_max_step", unroll);
  BlockRV w = sch.GetBlock("Z_global");
  std::vector<LoopRV> wl = sch.GetLoops(w);
  sch.Vectorize(wl.back());
  return sch.trace();
}

}  // namespace

// Optional arguments: replays per timed round (500) and timed rounds (5),
// small values for profiling under valgrind; or --print: the trace JSON and
// the scheduled program.
int main(int argc, char** argv) {
  const PrimFunc gmm = MakeWorkload("GMM", 3);
  const Trace trace = Trace::FromJSONString(MultiLevelTilingTrace(gmm).AsJSONString());
  const std::string json = trace.AsJSONString();
  if (argc > 1 && std::string(argv[1]) == "--print") {
    Schedule sch(gmm, 1);
    trace.ApplyToSchedule(&sch, false);
    std::printf("%s\n%s\n", json.c_str(), ToText(sch.func()).c_str());
    return 0;
  }
  const int per_round = argc > 1 ? std::max(1, std::atoi(argv[1])) : 500;
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  size_t sink = 0;
  double replay = kiln::bench::BestSeconds(rounds, [&] {
    for (int i = 0; i < per_round; ++i) {
      Schedule sch(gmm, 1);
      trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
      sink += sch.trace().size();
    }
  });
  double parse_and_replay = kiln::bench::BestSeconds(rounds, [&] {
    for (int i = 0; i < per_round; ++i) {
      Schedule sch(gmm, 1);
      Trace::FromJSONString(json).ApplyToSchedule(&sch, false);
      sink += sch.trace().size();
    }
  });
  double fresh = kiln::bench::BestSeconds(rounds, [&] {
    for (int i = 0; i < per_round; ++i) {
      Schedule sch(gmm, i + 1);
      trace.WithoutDecisions().ApplyToSchedule(&sch, false);
      sink += sch.trace().size();
    }
  });
  std::printf("GMM:3 multi-level-tiling trace: %zu instructions, %zu decisions\n", trace.size(),
              trace.decisions().size());
  std::printf("  replay with decisions:     %8.0f replays/s  (%.1f us each)\n",
              per_round / replay, replay / per_round * 1e6);
  std::printf("  parse JSON + replay:       %8.0f replays/s\n", per_round / parse_and_replay);
  std::printf("  replay, fresh decisions:   %8.0f replays/s\n", per_round / fresh);
  std::printf("  goal 5000/s: %s (ratio %.2f)\n", per_round / replay >= 5000 ? "met" : "NOT met",
              per_round / replay / 5000.0);
  return sink == 1 ? 1 : 0;
}
