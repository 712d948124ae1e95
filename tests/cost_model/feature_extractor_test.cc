#include "cost_model/feature_extractor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>

#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"

namespace kiln::cost_model {
namespace {

// Matmul C[64, 32] += A[64, 16] * B[16, 32], with j split 4 × 8, loops
// reordered to i, j_0, k, j_1, i parallel and j_1 vectorized. Lowered for
// features it is (the init store C = 0 sits under `if k == 0`):
//   for i in T.parallel(64):
//     for j_0, k in T.grid(4, 16):
//       for j_1 in T.vectorized(8):
//         C[i, j_0 * 8 + j_1] = C[i, j_0 * 8 + j_1] + A[i, k] * B[k, j_0 * 8 + j_1]
ir::PrimFunc ScheduledMatmul() {
  ir::Schedule sch(ir::Matmul(64, 32, 16));
  ir::BlockRV c = sch.GetBlock("C");
  std::vector<ir::LoopRV> loops = sch.GetLoops(c);
  std::vector<ir::LoopRV> j = sch.Split(loops[1], {int64_t{4}, int64_t{8}});
  sch.Reorder({loops[0], j[0], loops[2], j[1]});
  sch.Parallel(loops[0]);
  sch.Vectorize(j[1]);
  return sch.func();
}

double Slog(double x) { return std::log2(std::fabs(x) + 1.0); }

TEST(FeatureExtractor, NamesCoverTheRow) {
  ASSERT_EQ(FeatureNames().size(), static_cast<size_t>(kNumFeatures));
  EXPECT_EQ(FeatureIndex("float_mad"), 0);
  EXPECT_EQ(FeatureIndex("B0.acc_read"), 57);
  EXPECT_EQ(FeatureIndex("arith_intensity_0"), 147);
  EXPECT_EQ(FeatureIndex("auto_unroll_max_step"), 163);
  EXPECT_THROW(FeatureIndex("no_such_feature"), std::out_of_range);
}

TEST(FeatureExtractor, FeaturesMdDocumentsEveryFeature) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/cost_model/FEATURES.md");
  ASSERT_TRUE(in) << "cost_model/FEATURES.md is missing";
  const std::regex row(R"(^\| (\d+) \| `([^`]+)` \|)");
  std::vector<std::string> documented(kNumFeatures);
  int seen = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    const int i = std::stoi(m[1].str());
    ASSERT_LT(i, kNumFeatures) << line;
    documented[static_cast<size_t>(i)] = m[2].str();
    ++seen;
  }
  EXPECT_EQ(seen, kNumFeatures);
  for (int i = 0; i < kNumFeatures; ++i) EXPECT_EQ(documented[static_cast<size_t>(i)], FeatureNames()[static_cast<size_t>(i)]) << i;
}

TEST(FeatureExtractor, GoldenMatmul) {
  const FeatureRows r = ExtractFeatures(ScheduledMatmul());
  // The init stores a constant: only the update store gives a row.
  ASSERT_EQ(r.rows, 1);
  auto f = [&](const std::string& name) { return r.row(0)[FeatureIndex(name)]; };
  auto expect = [&](const std::string& name, double raw) {
    EXPECT_NEAR(f(name), Slog(raw), 1e-4) << name << " should be slog(" << raw << ")";
  };
  // The update runs 64 * 4 * 16 * 8 = 32768 times.
  // C + A * B is one multiply-add per run (Kiln counts MADs; TVM leaves 0).
  expect("float_mad", 32768);
  expect("float_add_sub", 0);
  expect("float_mul", 0);
  // Index arithmetic j_0 * 8 + j_1 in the loads of C and B: two int MADs.
  expect("int_mad", 2 * 32768);
  // One vectorized loop of 8, one parallel loop of 64; positions are
  // "mixed" whenever such a loop exists (TVM's encoding), "none" otherwise.
  expect("vec_num", 1);
  expect("vec_prod", 8);
  expect("vec_len", 8);
  EXPECT_EQ(f("vec_pos_mixed"), 1.0f);
  EXPECT_EQ(f("unroll_pos_none"), 1.0f);
  expect("unroll_num", 0);
  expect("parallel_num", 1);
  expect("parallel_prod", 64);
  expect("parallel_len", 64);
  EXPECT_EQ(f("is_gpu"), 0.0f);
  expect("blockIdx_x_len", 1);

  // Buffers, sorted by cache lines, then bytes, then name. Every buffer is
  // "touched" 32768 × 4 bytes.
  //  B: innermost loop j_1 moves it with stride 1 → lines = 32768 * min(1, 4/64) = 2048.
  //  C: the same lines and bytes → after B by name.
  //  A: j_1 does not move it; k moves it with stride 1 → lines = 32768 / 8 * 4/64 = 256.
  expect("B0.bytes", 32768 * 4);
  EXPECT_EQ(f("B0.acc_read"), 1.0f);
  expect("B0.lines", 2048);
  expect("B0.unique_bytes", 16 * 32 * 4);  // all of B
  // B's rows are 32 floats = 128 contiguous bytes ≥ one 64-byte line: 2048 / 64.
  expect("B0.unique_lines", 32);
  // Loop i (outermost) does not move B: reused 64 times, 4 * 16 * 8 = 512
  // iterations apart, while one iteration of j_0's nest touches
  // C 32 + A 16 + B 512 elements = 2240 bytes.
  EXPECT_EQ(f("B0.reuse_loop_multiple_read"), 1.0f);
  expect("B0.reuse_ct", 64);
  expect("B0.reuse_dis_iter", 512);
  expect("B0.reuse_dis_bytes", 2240);
  expect("B0.bytes_d_reuse_ct", 32768.0 * 4 / 64);
  expect("B0.stride", 1);

  EXPECT_EQ(f("B1.acc_readwrite"), 1.0f);  // C
  expect("B1.lines", 2048);
  expect("B1.unique_bytes", 64 * 32 * 4);
  // k does not move C: reused 16 times, 8 iterations apart; one j_1 nest
  // touches C 8 + A 1 + B 8 = 17 elements = 68 bytes.
  expect("B1.reuse_ct", 16);
  expect("B1.reuse_dis_iter", 8);
  expect("B1.reuse_dis_bytes", 68);

  EXPECT_EQ(f("B2.acc_read"), 1.0f);  // A
  expect("B2.lines", 256);
  expect("B2.unique_bytes", 64 * 16 * 4);
  // j_1 (innermost) does not move A: reused 8 times, 1 iteration apart; the
  // distance in bytes is TVM's top-loop figure, one element per buffer (12).
  expect("B2.reuse_ct", 8);
  expect("B2.reuse_dis_iter", 1);
  expect("B2.reuse_dis_bytes", 12);
  expect("B2.stride", 0);  // the innermost loop does not move it
  // Only three buffers: the last two slots are zero padding.
  for (const char* name : {"B3.bytes", "B4.acc_read", "B4.stride"}) EXPECT_EQ(f(name), 0.0f) << name;

  // Arithmetic intensity, loops added inner → outer (flops = 2 per MAD):
  //   j_1: 16 flops / 68 B; k: 256 / 608 B; j_0: 1024 / 2240 B;
  //   i: 65536 flops / (C 2048 + A 1024 + B 512 elements) * 4 = 14336 B.
  // The last sample is the whole nest; the first (6553.6 flops) lies
  // between j_0 and i: 1024/2240 + (65536/14336 - 1024/2240) *
  // (6553.6 - 1024) / (65536 - 1024).
  expect("arith_intensity_9", 65536.0 / 14336);
  const double base = 1024.0 / 2240;
  expect("arith_intensity_0",
         base + (65536.0 / 14336 - base) * (6553.6 - 1024) / (65536 - 1024));

  // C is a parameter: allocated outside every loop.
  expect("alloc_size", 64 * 32 * 4);
  expect("alloc_prod", 64 * 32);
  expect("alloc_outer_prod", 1);
  expect("alloc_inner_prod", 32768);
  expect("outer_prod", 32768);
  expect("num_loops", 4);
  expect("auto_unroll_max_step", 0);
}

TEST(FeatureExtractor, RowsFollowTheFirstStoreToEachBuffer) {
  // matmul_relu: C = A * B, then D = max(C, 0); two rows, C's first.
  const FeatureRows r = ExtractFeatures(ir::MatmulRelu(16, 16, 16));
  ASSERT_EQ(r.rows, 2);
  EXPECT_GT(r.row(0)[FeatureIndex("float_mad")], 0.0f);
  EXPECT_EQ(r.row(1)[FeatureIndex("float_mad")], 0.0f);
  EXPECT_NEAR(r.row(1)[FeatureIndex("float_cmp")], Slog(16 * 16), 1e-4);  // max(C, 0)
}

TEST(FeatureExtractor, UnrollPragmaAndBatchOrder) {
  ir::Schedule sch(ir::Matmul(32, 32, 32));
  std::vector<ir::LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
  sch.Annotate(loops[0], "pragma_auto_unroll_max_step", int64_t{64});
  const ir::PrimFunc annotated = sch.func();
  const FeatureRows one = ExtractFeatures(annotated);
  EXPECT_NEAR(one.row(0)[FeatureIndex("auto_unroll_max_step")], Slog(64), 1e-4);

  const std::vector<ir::PrimFunc> programs = {ScheduledMatmul(), annotated, ir::MatmulRelu(8, 8, 8),
                                              ScheduledMatmul()};
  const std::vector<FeatureRows> serial = ExtractFeaturesBatch(programs, 1);
  const std::vector<FeatureRows> threaded = ExtractFeaturesBatch(programs, 3);
  ASSERT_EQ(serial.size(), programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    EXPECT_EQ(serial[i].values, threaded[i].values) << i;
    EXPECT_EQ(serial[i].values, ExtractFeatures(programs[i]).values) << i;
  }
  EXPECT_EQ(serial[0].values, serial[3].values);
}

}  // namespace
}  // namespace kiln::cost_model
