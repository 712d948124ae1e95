// The kiln CLI end to end: exit codes, --help everywhere, and the documented
// pipelines (kiln show W | kiln check -).
#include <gtest/gtest.h>

#include "tests/common/run_kiln.h"

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace {

using Result = kiln::testing::KilnResult;
using kiln::testing::RunKiln;
using kiln::testing::TempFile;



// Runs kiln with `input` on its standard input.
Result RunKilnWithInput(const std::string& args, const std::string& input) {
  TempFile file(input);
  if (!file.ok()) return {-1, "could not create a temporary file"};
  return RunKiln(args + " < " + file.path());
}

std::string Kiln() { return std::string(KILN_BINARY_DIR) + "/tools/kiln"; }

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"workloads", "show", "check", "hash", "schedule"}) {
    Result r = RunKiln(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub << ": " << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_EQ(RunKiln("--help").code, 0);
  EXPECT_NE(RunKiln("").code, 0);              // a subcommand is required
  EXPECT_NE(RunKiln("no-such-command").code, 0);
}

TEST(Cli, WorkloadsListsTheSuite) {
  Result r = RunKiln("workloads");
  ASSERT_EQ(r.code, 0);
  for (const char* w : {"C1D:0", "GMM:3", "SFM:3", "TBG:3", "GEMV:0", "RMS:0", "ATTN_SFM:0"}) {
    EXPECT_NE(r.out.find(w), std::string::npos) << w;
  }
  Result j = RunKiln("workloads --json");
  ASSERT_EQ(j.code, 0);
  EXPECT_NE(j.out.find("\"flops\": 2147483648"), std::string::npos);
}

TEST(Cli, ShowPipesIntoCheck) {
  Result r = RunKiln("show GMM:3 | " + Kiln() + " check -");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("-: ok"), std::string::npos) << r.out;
}

TEST(Cli, CheckReportsFileLineColumnAndFails) {
  Result r = RunKilnWithInput(
      "check -", "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n    A[0] = B[0]\n");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("<stdin>:3:12: error: undefined"), std::string::npos) << r.out;
  Result missing = RunKiln("check /nonexistent/file.py");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("cannot read '/nonexistent/file.py'"), std::string::npos) << missing.out;
}

TEST(Cli, HashIsStableAndMatchesTheTextFile) {
  Result a = RunKiln("hash GMM:3");
  Result b = RunKiln(std::string("hash ") + KILN_SOURCE_DIR + "/configs/workloads/GMM_3.py");
  ASSERT_EQ(a.code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.size(), 17u);  // 16 hex digits and a newline
  Result bad = RunKiln("hash NOPE:1");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("NOPE"), std::string::npos) << bad.out;
  Result badidx = RunKiln("hash GMM:x");
  EXPECT_EQ(badidx.code, 1);
}

TEST(Cli, ScheduleAppliesAndResamplesTraces) {
  const std::string trace = std::string(KILN_SOURCE_DIR) + "/tests/data/traces/gmm_tiles.json";
  Result r = RunKiln("schedule --workload GMM:0 --trace " + trace);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("@T.prim_func"), std::string::npos);
  Result a = RunKiln("schedule --workload GMM:0 --trace " + trace + " --random --seed 5");
  Result b = RunKiln("schedule --workload GMM:0 --trace " + trace + " --random --seed 5");
  EXPECT_EQ(a.code, 0) << a.out;
  EXPECT_EQ(a.out, b.out);  // same seed, same decisions
  EXPECT_NE(a.out.find("def apply_trace(sch):"), std::string::npos);
  Result bad = RunKilnWithInput("schedule --workload GMM:0 --trace -", "[[[\"Nope\",[],[],[]]]]");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.out.find("unknown instruction kind 'Nope'"), std::string::npos) << bad.out;
}

}  // namespace

namespace {

TEST(Cli, WorkloadSpecsWithShapesOfOnesOwn) {
  Result r = RunKiln("hash 'C2D(1, 56, 56, 64, 256, 1, 1, 0)' --json");
  EXPECT_EQ(r.code, 0) << r.out;
  r = RunKiln("show 'C2D(1,224,224,3,64,7,2,3)'");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, RunKiln("show C2D:0").out);
  for (const char* bad : {"'C2D(1,56)'", "'C2D(1,56,56,64,256,1,1,x)'", "'C2D(1,56,56,64,256,1,1,0'",
                          "'(1,2)'", "'GEMV(1,0,4096)'"}) {
    r = RunKiln(std::string("show ") + bad);
    EXPECT_EQ(r.code, 1) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("kiln: error: "), std::string::npos) << bad << ": " << r.out;
  }
}

// The model slices shipped in configs/jobs/ name only workloads that build.
TEST(Cli, ShippedJobFilesNameWorkloadsThatBuild) {
  for (const char* file : {"resnet50_conv2d_nhwc.json", "llama_decoder_layer.json"}) {
    std::ifstream in(std::string(KILN_SOURCE_DIR) + "/configs/jobs/" + file);
    ASSERT_TRUE(in) << file;
    const nlohmann::json job = nlohmann::json::parse(in);
    ASSERT_FALSE(job["workloads"].empty()) << file;
    for (const auto& w : job["workloads"]) {
      const std::string spec = w["spec"];
      EXPECT_EQ(RunKiln("hash '" + spec + "'").code, 0) << file << ": " << spec;
      EXPECT_GE(w["weight"].get<double>(), 1) << file << ": " << spec;
    }
  }
}

}  // namespace
