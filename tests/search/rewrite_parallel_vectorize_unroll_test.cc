// RewriteParallelVectorizeUnroll (search/postproc/rewrite_parallel_vectorize_unroll.cc)
// on a loop two blocks share: a matmul tiled as MultiLevelTiling does on CPU,
// its cache-write block computed under the outer tiles. The first block's
// leading loops are fused and parallelized; the cache-write block then
// starts with that parallel loop and keeps it as it is (TVM fuses the one
// loop again and parallelizes the copy: the same program, checked twice).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../schedule/schedule_test_util.h"
#include "ir/op.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
#include "ir/workloads/suite.h"
#include "search/annotations.h"
#include "search/postproc.h"

namespace kiln::search {
namespace {

using ir::testing::SameResult;
using ir::testing::WellFormed;

// Z = X · Y (32³) tiled i 4 × 8, j 2 × 16, the write-back of Z computed
// under j0, and the root annotated as ParallelizeVectorizeUnroll leaves it.
ir::Schedule TiledWithWriteBack(const ir::PrimFunc& f) {
  ir::Schedule sch(f, /*seed=*/1);
  ir::BlockRV z = sch.GetBlock("Z");
  std::vector<ir::LoopRV> l = sch.GetLoops(z);  // b, i, j, k
  std::vector<ir::LoopRV> i = sch.Split(l[1], {int64_t{4}, int64_t{8}});
  std::vector<ir::LoopRV> j = sch.Split(l[2], {int64_t{2}, int64_t{16}});
  sch.Reorder({l[0], i[0], j[0], l[3], i[1], j[1]});
  ir::BlockRV write_back = sch.CacheWrite(z, 0, "global");
  sch.ReverseComputeAt(write_back, j[0], /*preserve_unit_loops=*/true);
  ir::BlockRV root = sch.GetBlock("root");
  sch.Annotate(root, ann::kParallel, int64_t{64});
  sch.Annotate(root, ann::kVectorize, int64_t{64});
  return sch;
}

size_t CountAfterPostproc(const ir::Trace& t, const std::string& kind) {
  const auto& insts = t.insts();
  return static_cast<size_t>(
      std::count_if(insts.begin() + static_cast<std::ptrdiff_t>(t.PostprocIndex()), insts.end(),
                    [&](const ir::Instruction& inst) { return inst.kind == kind; }));
}

TEST(RewriteParallelVectorizeUnroll, SharedParallelLoopIsParallelizedOnce) {
  const ir::PrimFunc f = ir::BatchMatmulNKKM(1, 32, 32, 32);
  ir::Schedule sch = TiledWithWriteBack(f);
  sch.EnterPostproc();
  std::string why;
  ASSERT_TRUE(MakeRewriteParallelVectorizeUnroll()->Apply(&sch, &why)) << why;
  EXPECT_TRUE(SameResult(f, sch.func()));
  EXPECT_TRUE(WellFormed(sch.func()));

  // One parallel loop (b, i0 and j0 fused), which both blocks start with.
  EXPECT_EQ(CountAfterPostproc(sch.trace(), "Parallel"), 1u) << sch.trace().AsPython();
  std::vector<ir::BlockRV> blocks = sch.GetChildBlocks(sch.GetBlock("root"));
  ASSERT_EQ(blocks.size(), 2u);
  const ir::ForNode& outer_z = sch.Get(sch.GetLoops(blocks[0]).front());
  const ir::ForNode& outer_wb = sch.Get(sch.GetLoops(blocks[1]).front());
  EXPECT_EQ(&outer_z, &outer_wb);
  EXPECT_EQ(outer_z.for_kind, ir::ForKind::kParallel);
  EXPECT_TRUE(ir::IsConstInt(outer_z.extent, 8));
  // Each block's innermost loop (16 contiguous columns) is vectorized.
  EXPECT_EQ(CountAfterPostproc(sch.trace(), "Vectorize"), 2u);
  for (ir::BlockRV b : blocks) {
    EXPECT_EQ(sch.Get(sch.GetLoops(b).back()).for_kind, ir::ForKind::kVectorized);
  }

  // The recorded trace replays to the same program.
  ir::Schedule again(f, /*seed=*/1);
  sch.trace().ApplyToSchedule(&again, /*remove_postproc=*/false);
  EXPECT_TRUE(ir::StructuralEqual(again.func(), sch.func()));
}

}  // namespace
}  // namespace kiln::search
