// kiln lower end to end: the lowered program it prints parses back and is in
// lowered form; --trace schedules first; --print-after-all shows every pass;
// bad input is a clear error with a non-zero exit code.
#include <gtest/gtest.h>

#include "tests/common/run_kiln.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include <fstream>
#include <unistd.h>

#include "ir/text/parser.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "ir/transform/lower.h"
#include "ir/transform/verify_lowered.h"

namespace {

using Result = kiln::testing::KilnResult;
using kiln::testing::RunKiln;
using kiln::testing::TempFile;



TEST(LowerCli, PrintsAParsableLoweredProgram) {
  Result r = RunKiln("lower --workload GMM", /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  kiln::ir::PrimFunc f = kiln::ir::ParseFunc(r.out);
  EXPECT_TRUE(kiln::ir::transform::VerifyLowered(f).empty()) << r.out;
  EXPECT_EQ(r.out.find("T.block(\"Z\")"), std::string::npos) << r.out;  // no compute block left
}

TEST(LowerCli, TraceSchedulesBeforeLowering) {
  // A trace that tiles GMM, caches the accumulator per tile and parallelizes.
  kiln::ir::Schedule sch(kiln::ir::MakeWorkload("GMM", 0));
  auto z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);
  auto is = sch.Split(loops[1], {std::monostate{}, int64_t{8}});
  auto js = sch.Split(loops[2], {std::monostate{}, int64_t{8}});
  sch.Reorder({is[0], js[0], is[1], js[1]});
  auto local = sch.CacheWrite(z, 0, "local");
  sch.ReverseComputeAt(local, js[0], true);
  sch.Parallel(is[0]);
  TempFile trace(sch.trace().AsJSONString());
  ASSERT_TRUE(trace.ok());
  Result plain = RunKiln("lower --workload GMM", false);
  Result traced = RunKiln("lower --workload GMM --trace " + trace.path(), false);
  ASSERT_EQ(traced.code, 0) << traced.out;
  EXPECT_NE(plain.out, traced.out);
  EXPECT_NE(traced.out.find("T.parallel"), std::string::npos) << traced.out;
  EXPECT_NE(traced.out.find("Z_local = T.alloc_buffer((64,)"), std::string::npos) << traced.out;
  kiln::ir::PrimFunc f = kiln::ir::ParseFunc(traced.out);
  EXPECT_TRUE(kiln::ir::transform::VerifyLowered(f).empty()) << traced.out;
}

TEST(LowerCli, PrintAfterAllShowsEveryPass) {
  Result r = RunKiln("lower --workload GMM --print-after-all", false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("# input"), std::string::npos);
  for (const auto& p : kiln::ir::transform::LoweringPipeline()) {
    EXPECT_NE(r.out.find("# after " + p.name + "\n"), std::string::npos) << p.name;
  }
}

TEST(LowerCli, BadInputIsAClearError) {
  Result r = RunKiln("lower --workload NO_SUCH_WORKLOAD");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("NO_SUCH_WORKLOAD"), std::string::npos) << r.out;
  r = RunKiln("lower --workload GMM --trace /nonexistent/trace.json");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("/nonexistent/trace.json"), std::string::npos) << r.out;
  EXPECT_NE(RunKiln("lower").code, 0);  // --workload is required
  EXPECT_EQ(RunKiln("lower --help").code, 0);
}

}  // namespace

namespace {

// A GPU schedule of GMM (batch 1, 128x128x128 at config 0): a 16x16 output
// tile per block, one element per thread.
std::string GpuGmmTrace() {
  kiln::ir::Schedule sch(kiln::ir::MakeWorkload("GMM", 0));
  auto z = sch.GetBlock("Z");
  auto loops = sch.GetLoops(z);
  auto is = sch.Split(loops[1], {std::monostate{}, int64_t{16}});
  auto js = sch.Split(loops[2], {std::monostate{}, int64_t{16}});
  sch.Reorder({is[0], js[0], is[1], js[1]});
  sch.Bind(sch.Fuse({loops[0], is[0], js[0]}), "blockIdx.x");
  sch.Bind(sch.Fuse({is[1], js[1]}), "threadIdx.x");
  return sch.trace().AsJSONString();
}

TEST(LowerCli, CudaTargetAddsTheGpuPassesAndEmitsCuda) {
  TempFile trace(GpuGmmTrace());
  ASSERT_TRUE(trace.ok());
  const std::string base = "lower --workload GMM --trace " + trace.path() +
                           " --target 'cuda -arch=sm_90'";
  Result all = RunKiln(base + " --print-after-all", false);
  ASSERT_EQ(all.code, 0) << all.out;
  kiln::ir::Target sm90 = kiln::ir::Target::Parse("cuda -arch=sm_90");
  for (const auto& p : kiln::ir::transform::LoweringPipeline(sm90)) {
    EXPECT_NE(all.out.find("# after " + p.name + "\n"), std::string::npos) << p.name;
  }
  Result cuda = RunKiln(base + " --emit cuda", false);
  ASSERT_EQ(cuda.code, 0) << cuda.out;
  EXPECT_NE(cuda.out.find("extern \"C\" __global__ void __launch_bounds__(256) main_kernel0("),
            std::string::npos)
      << cuda.out;
  EXPECT_NE(cuda.out.find("// launch main_kernel0<<<dim3(64, 1, 1), dim3(256, 1, 1), 0>>>"),
            std::string::npos)
      << cuda.out;
  // The CUDA C needs a cuda target, and an unbound schedule is no GPU program.
  Result cpu = RunKiln("lower --workload GMM --trace " + trace.path() + " --emit cuda");
  EXPECT_NE(cpu.code, 0);
  EXPECT_NE(cpu.out.find("--emit cuda needs a cuda --target"), std::string::npos) << cpu.out;
  Result unbound = RunKiln("lower --workload GMM --target 'cuda -arch=sm_90' --emit cuda");
  EXPECT_NE(unbound.code, 0);
  EXPECT_NE(unbound.out.find("not bound to GPU threads"), std::string::npos) << unbound.out;
}

}  // namespace
