#include "ir/workloads/suite.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>

#include "ir/flops.h"
#include "ir/op.h"
#include "ir/structural_hash.h"
#include "tests/workloads/block_walk.h"

namespace kiln::ir {
namespace {

using Shape = std::vector<int64_t>;
using Args = std::vector<std::pair<std::string, Shape>>;

std::vector<int64_t> ParseParams(const std::string& s) {
  std::vector<int64_t> out;
  std::string num;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      num += c;
    } else if (!num.empty()) {
      out.push_back(std::stoll(num));
      num.clear();
    }
  }
  return out;
}

int64_t Out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// The parameters each workload should have, derived from its config tuple.
Args ExpectedArgs(const std::string& name, const std::vector<int64_t>& p) {
  if (name == "C1D") {
    return {{"inputs", {p[0], p[1], p[2]}},
            {"weight", {p[4], p[2], p[3]}},
            {"conv1d_nlc", {p[0], Out(p[1], p[4], p[5], p[6], 1), p[3]}}};
  }
  if (name == "C2D" || name == "GRP" || name == "DIL") {
    int64_t dil = p.size() > 8 ? p[8] : 1, groups = p.size() > 9 ? p[9] : 1;
    int64_t oh = Out(p[1], p[5], p[6], p[7], dil), ow = Out(p[2], p[5], p[6], p[7], dil);
    return {{"inputs", {p[0], p[1], p[2], p[3]}},
            {"weight", {p[5], p[5], p[3] / groups, p[4]}},
            {"conv2d_nhwc", {p[0], oh, ow, p[4]}}};
  }
  if (name == "C3D") {
    return {{"inputs", {p[0], p[1], p[2], p[3], p[4]}},
            {"weight", {p[6], p[6], p[6], p[4], p[5]}},
            {"conv3d_ndhwc",
             {p[0], Out(p[1], p[6], p[7], p[8], 1), Out(p[2], p[6], p[7], p[8], 1),
              Out(p[3], p[6], p[7], p[8], 1), p[5]}}};
  }
  if (name == "GMM") {
    return {{"X", {p[0], p[1], p[3]}}, {"Y", {p[0], p[3], p[2]}}, {"Z", {p[0], p[1], p[2]}}};
  }
  if (name == "DEP") {
    return {{"placeholder", {p[0], p[1], p[2], p[3]}},
            {"placeholder_1", {1, p[4], p[4], p[3]}},
            {"depth_conv2d_nhwc",
             {p[0], Out(p[1], p[4], p[5], p[6], 1), Out(p[2], p[4], p[5], p[6], 1), p[3]}}};
  }
  if (name == "T2D") {
    int64_t oh = (p[1] - 1) * p[6] - 2 * p[7] + p[5], ow = (p[2] - 1) * p[6] - 2 * p[7] + p[5];
    return {{"inputs", {p[0], p[1], p[2], p[3]}},
            {"weight", {p[5], p[5], p[3], p[4]}},
            {"conv2d_transpose_nhwc", {p[0], oh, ow, p[4]}}};
  }
  if (name == "CAP") {
    int64_t oh = (p[1] + 2 * p[7] - p[5]) / p[6] + 1, ow = (p[2] + 2 * p[7] - p[5]) / p[6] + 1;
    return {{"inputs", {p[0], p[1], p[2], 4, 4, p[3]}},
            {"weight", {p[5], p[5], 4, 4, p[3], p[4]}},
            {"conv2d_capsule_nhwijc", {p[0], oh, ow, 4, 4, p[4]}}};
  }
  if (name == "NRM") return {{"A", {p[0], p[1], p[2]}}, {"D", {p[0]}}};
  if (name == "SFM") return {{"A", {p[0], p[1]}}, {"T_softmax_norm", {p[0], p[1]}}};
  if (name == "CBR") {
    int64_t oh = Out(p[1], p[5], p[6], p[7], 1), ow = Out(p[2], p[5], p[6], p[7], 1);
    return {{"data", {p[0], p[1], p[2], p[3]}},
            {"kernel", {p[5], p[5], p[3], p[4]}},
            {"bias", {p[4]}},
            {"bn_offset", {p[4]}},
            {"bn_scale", {p[4]}},
            {"compute", {p[0], oh, ow, p[4]}}};
  }
  if (name == "TBG") {
    return {{"query", {p[0], p[1], p[2], p[3]}},
            {"value", {p[0], p[1], p[2], p[3]}},
            {"C", {p[0], p[2], p[1], p[1]}}};
  }
  if (name == "matmul") return {{"A", {p[0], p[2]}}, {"B", {p[2], p[1]}}, {"C", {p[0], p[1]}}};
  if (name == "matmul_relu") {
    return {{"A", {p[0], p[2]}}, {"B", {p[2], p[1]}}, {"compute", {p[0], p[1]}}};
  }
  if (name == "conv2d_nchw") {
    return {{"X", {p[0], p[3], p[1], p[2]}},
            {"W", {p[4], p[3], p[5], p[6]}},
            {"conv2d_nchw",
             {p[0], p[4], Out(p[1], p[5], p[7], p[8], 1), Out(p[2], p[6], p[7], p[8], 1)}}};
  }
  if (name == "GEMV") {
    return {{"A", {p[0], p[2]}}, {"B", {p[1], p[2]}}, {"NT_matmul", {p[0], p[1]}}};
  }
  if (name == "RMS") {
    return {{"data", {p[0], p[1]}}, {"weight", {p[1]}}, {"T_rms_norm", {p[0], p[1]}}};
  }
  if (name == "ATTN_SFM") {
    return {{"A", {p[0], p[1], p[2]}}, {"T_softmax_norm", {p[0], p[1], p[2]}}};
  }
  ADD_FAILURE() << "no expectation for " << name;
  return {};
}

TEST(Suite, ListsTheTvmConfigsAndTheExtras) {
  auto configs = SuiteConfigs();
  std::map<std::string, int> count;
  for (const auto& c : configs) count[c.name]++;
  for (const char* n : {"C1D", "C2D", "C3D", "GMM", "GRP", "DIL", "DEP", "T2D", "CAP", "NRM", "SFM",
                        "CBR", "TBG"}) {
    EXPECT_EQ(count[n], 4) << n;
  }
  for (const char* n : {"matmul", "matmul_relu", "conv2d_nchw", "GEMV", "RMS", "ATTN_SFM"}) {
    EXPECT_EQ(count[n], 1) << n;
  }
  EXPECT_EQ(configs.size(), 13u * 4 + 6);
  EXPECT_EQ(configs.front().name, "C1D");
  EXPECT_EQ(configs.front().params, "(1, 256, 64, 128, 3, 2, 1)");
  for (const auto& c : configs) {
    std::string key = c.name + ":" + std::to_string(c.index);
    if (key == "GMM:3") {
      EXPECT_EQ(c.params, "(1, 1024, 1024, 1024)");
    } else if (key == "GRP:0") {
      EXPECT_EQ(c.params, "(1, 56, 56, 64, 128, 3, 2, 1, 1, 4)");
    } else if (key == "T2D:3") {
      EXPECT_EQ(c.params, "(1, 32, 32, 64, 3, 4, 2, 1)");
    }
  }
  EXPECT_EQ(SuiteNames().size(), 19u);
}

TEST(Suite, EveryConfigBuildsWithItsStatedShapesAndPositiveFlops) {
  for (const auto& c : SuiteConfigs()) {
    SCOPED_TRACE(c.name + ":" + std::to_string(c.index));
    WorkloadInfo info = DescribeWorkload(c.name, c.index);
    EXPECT_EQ(info.name, c.name);
    EXPECT_EQ(info.index, c.index);
    EXPECT_EQ(info.params, c.params);
    EXPECT_EQ(info.args, ExpectedArgs(c.name, ParseParams(c.params)));
    EXPECT_GT(info.flops, 0);
    PrimFunc f = MakeWorkload(c.name, c.index);
    EXPECT_EQ(f.params.size(), info.args.size());
    EXPECT_EQ(EstimateFlops(f), info.flops);
    // Block names are unique: schedules address blocks by name.
    std::set<std::string> names;
    for (const auto& n : testing::BlockNames(f)) EXPECT_TRUE(names.insert(n).second) << n;
  }
}

// te.create_prim_func's shape for every block of every workload.
TEST(Suite, EveryBlockHasCreatePrimFuncStructure) {
  for (const auto& c : SuiteConfigs()) {
    SCOPED_TRACE(c.name + ":" + std::to_string(c.index));
    PrimFunc f = MakeWorkload(c.name, c.index);
    for (const auto& site : testing::Blocks(f)) {
      const BlockNode& b = *site.block;
      SCOPED_TRACE(b.name);
      ASSERT_EQ(b.iter_vars.size(), site.loops.size());
      bool reduce_seen = false;
      for (size_t i = 0; i < b.iter_vars.size(); ++i) {
        const IterVar& iv = b.iter_vars[i];
        EXPECT_EQ(iv.var.name(), "v_" + site.loops[i]->loop_var.name());
        EXPECT_TRUE(site.realize->iter_values[i].same_as(site.loops[i]->loop_var));
        EXPECT_TRUE(iv.dom.extent.same_as(site.loops[i]->extent));
        bool reduce = iv.iter_type == IterType::kCommReduce;
        EXPECT_TRUE(reduce || !reduce_seen) << "spatial axis after a reduce axis";
        reduce_seen = reduce_seen || reduce;
      }
      EXPECT_EQ(b.init.has_value(), reduce_seen);
      ASSERT_EQ(b.writes.size(), 1u);
      for (const auto& r : b.reads) {
        EXPECT_FALSE(reduce_seen && r.buffer.same_as(b.writes[0].buffer));
        for (const auto& range : r.region) {
          int64_t extent = 0;
          EXPECT_TRUE(AsConstInt(range.extent, &extent) && extent == 1);
        }
      }
    }
  }
}

TEST(Suite, BlockStructureMatchesTvm) {
  using V = std::vector<std::string>;
  EXPECT_EQ(testing::BlockNames(MakeWorkload("C1D", 0)), (V{"PadInput", "conv1d_nlc"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("C2D", 1)), (V{"PadInput", "conv2d_nhwc"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("GMM", 0)), (V{"Z"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("NRM", 0)), (V{"C", "D"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("SFM", 0)),
            (V{"T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("matmul_relu", 0)), (V{"C", "compute"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("conv2d_nchw", 0)), (V{"pad_temp", "conv2d_nchw"}));
  EXPECT_EQ(testing::BlockNames(MakeWorkload("RMS", 0)),
            (V{"T_multiply_red", "rsqrt", "T_rms_norm"}));

  // C2D:0 loops: n, h, w, co then rh, rw, rc; reads the padded input and weight.
  PrimFunc c2d = MakeWorkload("C2D", 0);
  auto blocks = testing::Blocks(c2d);
  const auto& conv = blocks[1];
  std::vector<std::string> loops;
  for (const auto* l : conv.loops) loops.push_back(l->loop_var.name());
  EXPECT_EQ(loops, (V{"n", "h", "w", "co", "rh", "rw", "rc"}));
  ASSERT_EQ(conv.block->reads.size(), 2u);
  EXPECT_EQ(conv.block->reads[0].buffer.name(), "PadInput");
  EXPECT_EQ(conv.block->reads[1].buffer.name(), "weight");
  int64_t pad_h = 0;
  ASSERT_TRUE(AsConstInt(blocks[0].block->writes[0].buffer.shape()[1], &pad_h));
  EXPECT_EQ(pad_h, 230);
}

TEST(Suite, FlopsFollowTvmsCounting) {
  EXPECT_EQ(DescribeWorkload("GMM", 3).flops, 2147483648.0);
  EXPECT_EQ(DescribeWorkload("matmul", 0).flops, 2.0 * 1024 * 1024 * 1024);
  // The padding stage costs nothing: its condition is comparisons, its value loads.
  EXPECT_EQ(DescribeWorkload("C2D", 0).flops, 2.0 * 112 * 112 * 64 * 7 * 7 * 3);
  // conv + bias + scale + offset + relu.
  double conv = 2.0 * 112 * 112 * 64 * 7 * 7 * 3, elems = 112.0 * 112 * 64;
  EXPECT_EQ(DescribeWorkload("CBR", 0).flops, conv + 4 * elems);
  // max (1) + exp's subtraction (1) + sum (1) + division (1) per element.
  EXPECT_EQ(DescribeWorkload("SFM", 0).flops, 4.0 * 256 * 256);
  // Square-and-add per element, then sqrt (a call: not counted).
  EXPECT_EQ(DescribeWorkload("NRM", 0).flops, 2.0 * 256 * 256);
  // Two multiplications per element, plus one divide and one add per row.
  EXPECT_EQ(DescribeWorkload("RMS", 0).flops, 2.0 * 4096 + 2.0 * 4096 + 2.0);
  EXPECT_EQ(DescribeWorkload("GEMV", 0).flops, 2.0 * 4096 * 4096);
  // TBG: transposes are copies.
  EXPECT_EQ(DescribeWorkload("TBG", 0).flops, 2.0 * 12 * 128 * 128 * 64);
}

TEST(Suite, UnknownNamesAndIndicesAreClearErrors) {
  try {
    MakeWorkload("NOPE", 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("NOPE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GMM"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ATTN_SFM"), std::string::npos) << msg;
  }
  try {
    DescribeWorkload("GMM", 4);
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("0..3"), std::string::npos) << msg;
  }
  EXPECT_THROW(MakeWorkload("GEMV", 1), std::invalid_argument);
  EXPECT_THROW(MakeWorkload("C2D", -1), std::invalid_argument);
  EXPECT_THROW(Conv2dNHWC(1, 4, 4, 3, 8, 7), std::invalid_argument);  // kernel > input
  EXPECT_THROW(Conv2dNHWC(1, 8, 8, 6, 8, 3, 1, 1, 1, 4), std::invalid_argument);
  EXPECT_THROW(BatchMatmulNKKM(1, 0, 4, 4), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::ir

namespace kiln::ir {
namespace {

TEST(Suite, FamiliesTakeShapesOfOnesOwn) {
  // A suite config spelled out builds the same program.
  EXPECT_EQ(StructuralHash(MakeWorkloadWithParams("C2D", {1, 224, 224, 3, 64, 7, 2, 3})),
            StructuralHash(MakeWorkload("C2D", 0)));
  // A ResNet-50 layer the configs do not hold.
  PrimFunc f = MakeWorkloadWithParams("C2D", {1, 56, 56, 64, 256, 1, 1, 0});
  EXPECT_DOUBLE_EQ(EstimateFlops(f), 2.0 * 56 * 56 * 64 * 256);
  try {
    MakeWorkloadWithParams("C2D", {1, 56, 56});
    FAIL() << "a wrong parameter count must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("takes 8 parameters"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MakeWorkloadWithParams("NOPE", {1}), std::invalid_argument);
  EXPECT_THROW(MakeWorkloadWithParams("GEMV", {1, 0, 4096}), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::ir
