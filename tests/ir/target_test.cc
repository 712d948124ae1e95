#include "ir/target.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

TEST(Target, NormalizesOptionOrderAndFeatures) {
  Target a = Target::Parse("llvm -num-cores=2 -mcpu=skylake-avx512 -mattr=+fma,+avx2,+fma");
  Target b = Target::Parse("  llvm   -mattr=+avx2,+fma -mcpu skylake-avx512 -num-cores 2 ");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.ToString(), "llvm -mattr=+avx2,+fma -mcpu=skylake-avx512 -num-cores=2");
  EXPECT_EQ(Target::Parse(a.ToString()), a);
  EXPECT_TRUE(a.HasFeature("avx2"));
  EXPECT_FALSE(a.HasFeature("avx512f"));
}

TEST(Target, LaterFeatureSignWins) {
  Target t = Target::Parse("llvm -mattr=+avx512f,-avx512f");
  EXPECT_EQ(t.ToString(), "llvm -mattr=-avx512f");
  EXPECT_FALSE(t.HasFeature("avx512f"));
}

TEST(Target, DistinctTargetsDiffer) {
  EXPECT_FALSE(Target::Parse("llvm -num-cores=2") == Target::Parse("llvm -num-cores=4"));
  EXPECT_FALSE(Target::Parse("llvm") == Target::Parse("cuda -arch=sm_90"));
}

TEST(Target, Cuda) {
  Target t = Target::Parse("cuda -max_threads_per_block=512 -arch=sm_90");
  EXPECT_EQ(t.ToString(), "cuda -arch=sm_90 -max_threads_per_block=512");
  EXPECT_EQ(t.MaxThreadsPerBlock(), 512);
  EXPECT_EQ(t.WarpSize(), 32);
}

void ExpectError(const char* text, const char* fragment) {
  try {
    Target::Parse(text);
    ADD_FAILURE() << "parsed: " << text;
  } catch (const TargetError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Target, Refusals) {
  ExpectError("", "empty target");
  ExpectError("rocm", "unknown kind 'rocm'");
  ExpectError("llvm -num-cores=0", "-num-cores needs a positive integer");
  ExpectError("llvm -num-cores=2x", "-num-cores needs a positive integer");
  ExpectError("llvm -arch=sm_90", "unknown option -arch for kind 'llvm'");
  ExpectError("cuda", "needs -arch");
  ExpectError("cuda -arch=90", "-arch must look like sm_90");
  ExpectError("llvm -mcpu", "-mcpu has no value");
  ExpectError("llvm -mcpu=a -mcpu=b", "given twice");
  ExpectError("llvm mcpu=a", "expected an option");
  ExpectError("host", "resolved");
}

}  // namespace
}  // namespace kiln::ir
