// Lowering of hand-written schedules, checking the specific properties the
// backends rely on: a cache under a parallel loop is allocated per iteration
// and sized to one tile; an imperfect split's predicate guards the body;
// storage alignment becomes padded strides; vectorized loops survive when
// their body is straight-line; auto-unroll replicates small loops.
#include <gtest/gtest.h>

#include <functional>

#include "ir/op.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "lower_test_util.h"

namespace kiln::ir {
namespace {

using transform::Lower;

// Calls fn on every statement of the tree, with the loops enclosing it.
void Walk(const Stmt& s, std::vector<const ForNode*>& loops,
          const std::function<void(const Stmt&, const std::vector<const ForNode*>&)>& fn) {
  if (!s.defined()) return;
  fn(s, loops);
  if (const auto* f = s.as<ForNode>()) {
    loops.push_back(f);
    Walk(f->body, loops, fn);
    loops.pop_back();
  } else if (const auto* q = s.as<SeqStmtNode>()) {
    for (const auto& x : q->seq) Walk(x, loops, fn);
  } else if (const auto* i = s.as<IfThenElseNode>()) {
    Walk(i->then_case, loops, fn);
    Walk(i->else_case, loops, fn);
  } else if (const auto* r = s.as<BlockRealizeNode>()) {
    Walk(r->block->body, loops, fn);
  }
}

void Walk(const PrimFunc& f,
          const std::function<void(const Stmt&, const std::vector<const ForNode*>&)>& fn) {
  std::vector<const ForNode*> loops;
  Walk(f.body, loops, fn);
}

// The allocations of a lowered function: buffer name -> (flat size, whether
// a parallel loop encloses the allocation).
struct AllocInfo {
  int64_t size = -1;
  bool under_parallel = false;
};
std::map<std::string, AllocInfo> Allocations(const PrimFunc& f) {
  std::map<std::string, AllocInfo> out;
  Walk(f, [&](const Stmt& s, const std::vector<const ForNode*>& loops) {
    const auto* r = s.as<BlockRealizeNode>();
    if (!r) return;
    for (const auto& b : r->block->alloc_buffers) {
      AllocInfo info;
      AsConstInt(b.shape()[0], &info.size);
      for (const auto* l : loops) info.under_parallel |= l->for_kind == ForKind::kParallel;
      out[b.name()] = info;
    }
  });
  return out;
}

int CountLoops(const PrimFunc& f, ForKind kind) {
  int n = 0;
  Walk(f, [&](const Stmt& s, const std::vector<const ForNode*>&) {
    if (const auto* l = s.as<ForNode>()) n += l->for_kind == kind;
  });
  return n;
}

// GMM 16^3 tiled 4x4, the accumulator cached in "local" per tile, the tile
// loop parallel, the inner column loop vectorized, the init decomposed.
Schedule TiledGmm() {
  Schedule sch(BatchMatmulNKKM(1, 16, 16, 16));
  BlockRV z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);  // b, i, j, k
  auto is = sch.Split(loops[1], {int64_t{4}, int64_t{4}});
  auto js = sch.Split(loops[2], {int64_t{4}, int64_t{4}});
  sch.Reorder({is[0], js[0], loops[3], is[1], js[1]});
  BlockRV local = sch.CacheWrite(z, 0, "local");
  sch.ReverseComputeAt(local, js[0], true);
  LoopRV tile = sch.Fuse({is[0], js[0]});
  sch.Parallel(tile);
  sch.Vectorize(js[1]);
  sch.DecomposeReduction(z, loops[3]);
  return sch;
}

TEST(LowerSchedule, CacheUnderParallelLoopIsPerIterationAndTileSized) {
  Schedule sch = TiledGmm();
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_TRUE(testing::RoundTrips(lowered));
  auto allocs = Allocations(lowered);
  ASSERT_EQ(allocs.count("Z_local"), 1u) << ToText(lowered);
  EXPECT_EQ(allocs["Z_local"].size, 16) << ToText(lowered);
  EXPECT_TRUE(allocs["Z_local"].under_parallel) << ToText(lowered);
  EXPECT_EQ(CountLoops(lowered, ForKind::kParallel), 1);
  EXPECT_GE(CountLoops(lowered, ForKind::kVectorized), 1) << ToText(lowered);
}

TEST(LowerSchedule, ImperfectSplitKeepsItsPredicate) {
  Schedule sch(BatchMatmulNKKM(1, 10, 6, 4));
  BlockRV z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);
  auto is = sch.Split(loops[1], {std::monostate{}, int64_t{4}});  // 10 = 3 x 4, guarded
  BlockRV cache = sch.CacheRead(z, 0, "local");
  sch.ComputeAt(cache, is[0], true);
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_TRUE(testing::RoundTrips(lowered));
  int guards = 0;
  Walk(lowered, [&](const Stmt& s, const std::vector<const ForNode*>&) {
    guards += s.as<IfThenElseNode>() != nullptr;
  });
  EXPECT_GE(guards, 1) << ToText(lowered);
  auto allocs = Allocations(lowered);
  ASSERT_EQ(allocs.count("X_local"), 1u) << ToText(lowered);
  EXPECT_LT(allocs["X_local"].size, 40) << ToText(lowered);
}

// A convolution's padding computed under the parallel row loop: each
// iteration pads the rows its outputs need, and neighbouring iterations
// share two of them (the 3x3 window's halo). Each iteration writes every
// padded element it reads, so the padded buffer is allocated per iteration
// (4 of the 10 padded rows) and the loop stays parallel. Before, the buffer
// stayed shared and the loop ran on one thread.
TEST(LowerSchedule, PaddingComputedUnderAParallelLoopIsPerIteration) {
  Schedule sch(Conv2dNHWC(1, 8, 8, 2, 4, 3, /*stride=*/1, /*padding=*/1));
  BlockRV conv = sch.GetBlock("conv2d_nhwc");
  auto loops = sch.GetLoops(conv);  // n, h, w, co, rh, rw, rc
  auto hs = sch.Split(loops[1], {int64_t{4}, int64_t{2}});
  sch.Parallel(hs[0]);
  sch.ComputeAt(sch.GetBlock("PadInput"), hs[0], true);
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_TRUE(testing::RoundTrips(lowered));
  auto allocs = Allocations(lowered);
  ASSERT_EQ(allocs.count("PadInput"), 1u) << ToText(lowered);
  EXPECT_TRUE(allocs["PadInput"].under_parallel) << ToText(lowered);
  EXPECT_EQ(allocs["PadInput"].size, 4 * 10 * 2) << ToText(lowered);
  EXPECT_EQ(CountLoops(lowered, ForKind::kParallel), 1) << ToText(lowered);
}

TEST(LowerSchedule, StorageAlignPadsTheStride) {
  Schedule sch(BatchMatmulNKKM(1, 8, 8, 8));
  BlockRV z = sch.GetBlock("Z");
  BlockRV cache = sch.CacheRead(z, 1, "shared");
  sch.StorageAlign(cache, 0, 1, 8, 1);  // stride of dim 1 (k rows of Y) % 8 == 1
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  auto allocs = Allocations(lowered);
  ASSERT_EQ(allocs.count("Y_shared"), 1u) << ToText(lowered);
  // (1, 8, 8) with dim-1 stride padded from 8 to 9: 7*9 + 7 + 1 elements.
  EXPECT_EQ(allocs["Y_shared"].size, 71) << ToText(lowered);
}

TEST(LowerSchedule, AutoUnrollReplicatesSmallLoops) {
  Schedule sch(BatchMatmulNKKM(1, 4, 4, 4));
  BlockRV z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);
  sch.Annotate(loops[0], "pragma_auto_unroll_max_step", int64_t{8});
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  // A step is a store executed; k's body stores twice (the guarded init and
  // the update). Only k (8 steps) fits in 8: i and j stay loops (b, a unit
  // loop, is simplified away) and k is replicated.
  int loops_left = 0;
  Walk(lowered, [&](const Stmt& s, const std::vector<const ForNode*>&) {
    loops_left += s.as<ForNode>() != nullptr;
  });
  EXPECT_EQ(loops_left, 2) << ToText(lowered);
}

TEST(LowerSchedule, ImplicitAutoUnrollMarksInsteadOfReplicating) {
  Schedule sch(BatchMatmulNKKM(1, 4, 4, 4));
  auto loops = sch.GetLoops(sch.GetBlock("Z"));
  sch.Annotate(loops[0], "pragma_auto_unroll_max_step", int64_t{32});
  sch.Annotate(loops[0], "pragma_unroll_explicit", int64_t{0});
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_EQ(CountLoops(lowered, ForKind::kUnrolled), 2) << ToText(lowered);  // j 32, k 8 steps
}

TEST(LowerSchedule, VectorizedLoopWithAnInnerLoopIsDemoted) {
  Schedule sch(BatchMatmulNKKM(1, 4, 4, 4));
  auto loops = sch.GetLoops(sch.GetBlock("Z"));
  sch.Vectorize(loops[2]);  // j, with k inside
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_EQ(CountLoops(lowered, ForKind::kVectorized), 0) << ToText(lowered);
}

TEST(LowerSchedule, NestedParallelBecomesSerial) {
  Schedule sch(BatchMatmulNKKM(1, 4, 4, 4));
  auto loops = sch.GetLoops(sch.GetBlock("Z"));
  sch.Parallel(loops[1]);
  sch.Parallel(loops[2]);
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::SameAsLowered(sch.func(), lowered));
  EXPECT_TRUE(testing::IsLowered(lowered));
  EXPECT_EQ(CountLoops(lowered, ForKind::kParallel), 1) << ToText(lowered);
}

TEST(LowerSchedule, DumpTiledGmm) {
  if (getenv("KILN_DUMP")) std::cout << ToText(Lower(TiledGmm().func()));
}

// A full-size multi-level tiling lowers (no interpretation: too large), and
// the per-tile accumulator is allocated inside the parallel loop.
TEST(LowerSchedule, FullSizeTiledGmmLowers) {
  Schedule sch(BatchMatmulNKKM(1, 1024, 1024, 1024));
  BlockRV z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);
  auto is = sch.Split(loops[1], {int64_t{32}, int64_t{4}, int64_t{8}});
  auto js = sch.Split(loops[2], {int64_t{16}, int64_t{4}, int64_t{16}});
  sch.Reorder({is[0], js[0], is[1], js[1], loops[3], is[2], js[2]});
  BlockRV local = sch.CacheWrite(z, 0, "local");
  sch.ReverseComputeAt(local, js[1], true);
  LoopRV tile = sch.Fuse({is[0], js[0]});
  sch.Parallel(tile);
  sch.Vectorize(js[2]);
  sch.DecomposeReduction(z, loops[3]);
  PrimFunc lowered = Lower(sch.func());
  EXPECT_TRUE(testing::IsLowered(lowered));
  auto allocs = Allocations(lowered);
  ASSERT_EQ(allocs.count("Z_local"), 1u) << ToText(lowered);
  EXPECT_EQ(allocs["Z_local"].size, 8 * 16) << ToText(lowered);
  EXPECT_TRUE(allocs["Z_local"].under_parallel);
}

TEST(LowerSchedule, PrintAfterEachPassNamesEveryPass) {
  std::vector<std::string> seen;
  Lower(TiledGmm().func(), [&](const std::string& pass, const PrimFunc& f) {
    seen.push_back(pass);
    EXPECT_TRUE(testing::RoundTrips(f)) << "after " << pass;
  });
  std::vector<std::string> expected;
  for (const auto& p : transform::LoweringPipeline()) expected.push_back(p.name);
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace kiln::ir
