// kiln run / kiln tune with a cuda target on a machine without a usable GPU:
// a clear error naming why, a non-zero exit, no crash and nothing stored;
// --build-only still builds the candidates. Skipped where a GPU is present
// (there the commands measure for real).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "codegen/cuda/cuda_driver.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::testing::RunKiln;
using ::testing::HasSubstr;

bool HasGpu() {
  try {
    kiln::codegen::ProbeCudaDevice();
    return true;
  } catch (const kiln::codegen::CudaUnavailable&) {
    return false;
  }
}

const std::string kFast = " --number 1 --repeat 1 --min-repeat-ms 1";

class GpuCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (HasGpu()) GTEST_SKIP() << "this machine has a GPU; the no-GPU path is not reachable";
    db_ = (fs::temp_directory_path() / ("kiln_gpu_cli_" + std::to_string(::getpid()) + ".db")).string();
    fs::remove(db_);
  }
  void TearDown() override {
    if (!db_.empty()) fs::remove(db_);
  }
  std::string db_;
};

TEST_F(GpuCli, RunAndTuneSayThereIsNoGpuAndStoreNothing) {
  auto run = RunKiln("run --workload GMM:0 --target 'cuda -arch=sm_90'" + kFast);
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("kiln: error: cannot measure on 'cuda -arch=sm_90': this machine "
                                 "cannot run CUDA kernels: "));
  EXPECT_THAT(run.out, HasSubstr("the CUDA driver"));

  auto tune = RunKiln("tune --workload GMM:0 --trials 4 --target 'cuda -arch=sm_90' --db " + db_ + kFast);
  EXPECT_EQ(tune.code, 1) << tune.out;
  EXPECT_THAT(tune.out, HasSubstr("this machine cannot run CUDA kernels"));
  EXPECT_THAT(tune.out, HasSubstr("--build-only"));
  EXPECT_FALSE(fs::exists(db_)) << "a database was created for a run that measured nothing";

  // Several workloads (the task scheduler's path) stop the same way.
  auto tasks = RunKiln("tune -w GMM:0 -w SFM:0 --trials-per-task 2 --target 'cuda -arch=sm_90' --db " +
                       db_ + kFast);
  EXPECT_EQ(tasks.code, 1) << tasks.out;
  EXPECT_THAT(tasks.out, HasSubstr("this machine cannot run CUDA kernels"));
  EXPECT_FALSE(fs::exists(db_));

  // --build-only needs no GPU.
  auto build = RunKiln("tune --workload GMM:0 --target 'cuda -arch=sm_90' --build-only "
                       "--trials-per-iter 2 --seed 1");
  EXPECT_EQ(build.code, 0) << build.out;
  EXPECT_THAT(build.out, HasSubstr("2 of 2 candidates built and assembled for sm_90"));
}

// With the toolkit's stub library as the driver, the message says it is a stub.
TEST_F(GpuCli, TheStubDriverIsNamed) {
  const fs::path stub = fs::path(KILN_PTXAS).parent_path().parent_path() / "lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << "no stub driver at " << stub;
  ::setenv("KILN_LIBCUDA", stub.c_str(), 1);
  auto run = RunKiln("run --workload GMM:0 --target 'cuda -arch=sm_90'" + kFast);
  ::unsetenv("KILN_LIBCUDA");
  EXPECT_EQ(run.code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("stub library, not a real driver"));
}

}  // namespace
