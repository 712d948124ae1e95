// kiln run: builds, verifies and times one schedule in the isolated runner.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/common/run_kiln.h"

namespace {

using kiln::testing::RunKiln;
using nlohmann::json;

const std::string kFast = " --number 1 --repeat 2 --min-repeat-ms 1";

TEST(RunCli, UnscheduledProgramIsVerifiedAndTimed) {
  auto r = RunKiln("run --workload GMM:0 --target host --json" + kFast, /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_TRUE(j["verified"].get<bool>());
  EXPECT_EQ(j["run_secs"].size(), 2u);
  EXPECT_GT(j["median_secs"].get<double>(), 0);
  EXPECT_GT(j["gflops"].get<double>(), 0);
}

TEST(RunCli, TraceScheduleIsVerifiedAndPrinted) {
  auto r = RunKiln("run --workload GMM:0 --trace " KILN_SOURCE_DIR
                   "/tests/data/traces/gmm_tiles.json" + kFast);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
}

TEST(RunCli, BadInputsFailClearly) {
  auto bad_trace = RunKiln("run --workload GMM:0 --trace " KILN_SOURCE_DIR
                           "/tests/data/traces/regression_huge_number.json" + kFast);
  EXPECT_EQ(bad_trace.code, 1) << bad_trace.out;
  EXPECT_NE(bad_trace.out.find("kiln: error"), std::string::npos) << bad_trace.out;
  auto bad_target = RunKiln("run --workload GMM:0 --target 'cuda -arch=sm_90'" + kFast);
  EXPECT_NE(bad_target.code, 0) << bad_target.out;
  auto bad_number = RunKiln("run --workload GMM:0 --number 0");
  EXPECT_NE(bad_number.code, 0) << bad_number.out;
  auto bad_workload = RunKiln("run --workload NOPE" + kFast);
  EXPECT_EQ(bad_workload.code, 1) << bad_workload.out;
}

}  // namespace
