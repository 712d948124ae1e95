// The lookups: get_block, get_loops, get_child_blocks, get_producers,
// get_consumers, and what happens to handles of removed blocks and loops.
#include <gtest/gtest.h>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "schedule_test_util.h"

namespace kiln::ir {
namespace {

std::vector<std::string> Names(const Schedule& sch, const std::vector<BlockRV>& blocks) {
  std::vector<std::string> out;
  for (BlockRV b : blocks) out.push_back(sch.NameOf(b));
  return out;
}

using Strings = std::vector<std::string>;

TEST(GetBlockLoop, ProducersAndConsumersFollowTheDataflow) {
  Schedule sch(SoftmaxMN(4, 8));
  BlockRV exp = sch.GetBlock("T_softmax_exp");
  EXPECT_EQ(Names(sch, sch.GetProducers(exp)), Strings({"T_softmax_maxelem"}));
  EXPECT_EQ(Names(sch, sch.GetConsumers(exp)), Strings({"T_softmax_expsum", "T_softmax_norm"}));
  BlockRV norm = sch.GetBlock("T_softmax_norm");
  EXPECT_EQ(Names(sch, sch.GetProducers(norm)), Strings({"T_softmax_exp", "T_softmax_expsum"}));
  EXPECT_TRUE(sch.GetConsumers(norm).empty());
  EXPECT_TRUE(sch.GetProducers(sch.GetBlock("T_softmax_maxelem")).empty());
  EXPECT_EQ(Names(sch, sch.GetChildBlocks(sch.GetBlock("root"))),
            Strings({"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"}));
  // Lookups are pure: the program is untouched.
  EXPECT_TRUE(StructuralEqual(sch.func(), SoftmaxMN(4, 8)));
  EXPECT_TRUE(testing::ReplaysExactly(SoftmaxMN(4, 8), sch));
}

TEST(GetBlockLoop, HandlesToRemovedThingsFailLoudly) {
  const PrimFunc f = Conv2dNHWC(1, 6, 6, 2, 2, 3, 1, 1);
  Schedule sch(f);
  BlockRV pad = sch.GetBlock("PadInput");
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("conv2d_nhwc"));
  sch.ComputeInline(pad);
  KILN_EXPECT_SCHEDULE_ERROR(sch.GetLoops(pad), "block 'PadInput' no longer exists");
  sch.Fuse({loops[0], loops[1]});
  KILN_EXPECT_SCHEDULE_ERROR(sch.Parallel(loops[0]), "loop n no longer exists");
  KILN_EXPECT_SCHEDULE_ERROR(sch.GetBlock("PadInput"), "no block named 'PadInput'");
  KILN_EXPECT_SCHEDULE_ERROR(sch.GetBlock("conv2d_nhwc", "other"), "no function named 'other'");
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
}

TEST(GetBlockLoop, LoopsStopAtTheEnclosingBlock) {
  const PrimFunc f = BatchMatmulNKKM(1, 8, 8, 8);
  Schedule sch(f);
  BlockRV z = sch.GetBlock("Z");
  std::vector<LoopRV> loops = sch.GetLoops(z);
  ASSERT_EQ(loops.size(), 4u);
  sch.Blockize(loops[2]);
  // Z now sits inside Z_o: only the loops between them are Z's.
  EXPECT_EQ(sch.GetLoops(sch.GetBlock("Z")).size(), 2u);
  EXPECT_EQ(sch.GetLoops(sch.GetBlock("Z_o")).size(), 2u);
  EXPECT_EQ(Names(sch, sch.GetChildBlocks(sch.GetBlock("Z_o"))), Strings({"Z_init", "Z"}));  // the reduction init became its own block
  EXPECT_TRUE(testing::SameResult(f, sch.func()));
}

}  // namespace
}  // namespace kiln::ir
