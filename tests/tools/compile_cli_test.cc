// kiln compile: the object it writes links into a plain C++ program (with the
// Kiln runtime) and computes what the interpreter computes; a miss is loud,
// and an error with --require-tuned.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "codegen/llvm_backend.h"
#include "database/database.h"
#include "ir/interpreter.h"
#include "ir/ndarray.h"
#include "ir/schedule/schedule.h"
#include "ir/workloads/suite.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::testing::RunKiln;

int Sh(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kDriver = R"cc(
#include <cstdio>
#include <cstdlib>
#include "gmm.h"
int main(int argc, char** argv) {
  const size_t n = 128 * 128;
  float* buf[3];
  for (int i = 0; i < 3; ++i) buf[i] = static_cast<float*>(std::aligned_alloc(64, n * sizeof(float)));
  for (int i = 0; i < 2; ++i) {
    FILE* f = std::fopen(argv[1 + i], "rb");
    if (!f || std::fread(buf[i], sizeof(float), n, f) != n) return 2;
    std::fclose(f);
  }
  void* args[3] = {buf[0], buf[1], buf[2]};
  if (kiln_gmm(args) != 0) return 3;
  FILE* out = std::fopen(argv[3], "wb");
  if (!out || std::fwrite(buf[2], sizeof(float), n, out) != n) return 4;
  std::fclose(out);
  return 0;
}
)cc";

class CompileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_compile_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "kiln.db").string();
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // A database holding one verified record of GMM:0 on this host.
  void CommitTunedGmm() {
    auto db = kiln::database::Database::Open(db_);
    auto id = db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 0));
    kiln::database::TuningRecord r;
    r.target = kiln::codegen::HostTarget().ToString();
    r.fingerprint = "test";
    r.trace_json = ReadFile(std::string(KILN_SOURCE_DIR) + "/tests/data/traces/gmm_tiles.json");
    r.run_seconds = {1e-3};
    r.verified = true;
    ASSERT_TRUE(db.CommitRecord(id, r));
  }
  // Links `obj` (symbol kiln_gmm, GMM:0) into kDriver with the Kiln runtime,
  // runs it on random inputs and compares its output with the interpreter's.
  void LinkRunAndCompare(const std::string& obj) {
    std::ofstream(dir_ / "driver.cc") << kDriver;
    std::string exe = (dir_ / "driver").string();
    ASSERT_EQ(Sh("c++ -std=c++17 -I" + dir_.string() + " " + (dir_ / "driver.cc").string() + " " +
                 obj + " " KILN_BINARY_DIR "/codegen/libkiln_runtime.a -lpthread -lm -o " + exe +
                 " > " + (dir_ / "cc.log").string() + " 2>&1"),
              0)
        << ReadFile((dir_ / "cc.log").string());

    kiln::ir::PrimFunc gmm = kiln::ir::MakeWorkload("GMM", 0);
    std::vector<kiln::ir::NDArray> args = kiln::ir::MakeRandomArgs(gmm, 7);
    for (int i = 0; i < 2; ++i) {
      std::ofstream f(dir_ / ("in" + std::to_string(i)), std::ios::binary);
      f.write(static_cast<const char*>(args[i].data()), static_cast<std::streamsize>(args[i].nbytes()));
    }
    ASSERT_EQ(Sh(exe + " " + (dir_ / "in0").string() + " " + (dir_ / "in1").string() + " " +
                 (dir_ / "out").string()),
              0);
    kiln::ir::Interpret(gmm, args);
    std::string got = ReadFile((dir_ / "out").string());
    ASSERT_EQ(got.size(), args[2].nbytes());
    const float* z = reinterpret_cast<const float*>(got.data());
    for (int64_t i = 0; i < args[2].size(); ++i) {
      double want = args[2].GetAsDouble(i);
      ASSERT_NEAR(z[i], want, 1e-4 * (1 + std::fabs(want))) << "element " << i;
    }
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(CompileCli, TunedObjectLinksIntoAProgramAndMatchesTheInterpreter) {
  CommitTunedGmm();
  std::string obj = (dir_ / "gmm.o").string(), hdr = (dir_ / "gmm.h").string();
  auto r = RunKiln("compile --db " + db_ + " --workload GMM:0 --target host --symbol kiln_gmm -o " +
                   obj + " --header " + hdr + " --require-tuned");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("tuned"), std::string::npos) << r.out;
  std::string header = ReadFile(hdr);
  EXPECT_NE(header.find("int32_t kiln_gmm(void* const* args);"), std::string::npos) << header;
  EXPECT_NE(header.find("Tuned: trace"), std::string::npos) << header;

  LinkRunAndCompare(obj);
}

// The whole pipeline on this machine: `kiln tune --target host` stores
// records, `kiln query --target host` finds the best, and `kiln compile
// --target host --require-tuned` emits it as an object a C++ program links
// (the tuned schedule usually has parallel loops: libkiln_runtime.a serves them).
TEST_F(CompileCli, KilnTuneOnHostThenQueryAndCompileTheBest) {
  auto tune = RunKiln("tune --workload GMM:0 --target host --trials 8 --trials-per-iter 4 --db " + db_ +
                      " --number 1 --repeat 1 --min-repeat-ms 1");
  ASSERT_EQ(tune.code, 0) << tune.out;
  auto query = RunKiln("query --db " + db_ + " --workload GMM:0 --target host --json",
                       /*with_stderr=*/false);
  ASSERT_EQ(query.code, 0) << query.out;
  EXPECT_TRUE(nlohmann::json::parse(query.out)["hit"].get<bool>()) << query.out;
  std::string obj = (dir_ / "gmm.o").string(), hdr = (dir_ / "gmm.h").string();
  auto r = RunKiln("compile --db " + db_ + " --workload GMM:0 --target host --symbol kiln_gmm -o " +
                   obj + " --header " + hdr + " --require-tuned");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(ReadFile(hdr).find("Tuned: trace"), std::string::npos);
  LinkRunAndCompare(obj);
}

TEST_F(CompileCli, MissIsLoudAndRequireTunedFails) {
  kiln::database::Database::Open(db_);  // an empty database
  std::string obj = (dir_ / "x.o").string();
  auto strict = RunKiln("compile --db " + db_ + " --workload GMM:0 -o " + obj + " --require-tuned");
  EXPECT_EQ(strict.code, 3) << strict.out;
  EXPECT_NE(strict.out.find("no tuned record"), std::string::npos) << strict.out;
  EXPECT_FALSE(fs::exists(obj));

  auto loose = RunKiln("compile --db " + db_ + " --workload GMM:0 -o " + obj + " --header " +
                       (dir_ / "x.h").string());
  EXPECT_EQ(loose.code, 0) << loose.out;
  EXPECT_NE(loose.out.find("UNSCHEDULED"), std::string::npos) << loose.out;
  EXPECT_GT(fs::file_size(obj), 0u);
  EXPECT_NE(ReadFile((dir_ / "x.h").string()).find("UNTUNED"), std::string::npos);
}

TEST_F(CompileCli, BadInputsFailWithAClearMessage) {
  auto missing = RunKiln("compile --db " + (dir_ / "none.db").string() + " --workload GMM:0 -o x.o");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;
  kiln::database::Database::Open(db_);
  auto bad_target =
      RunKiln("compile --db " + db_ + " --workload GMM:0 --target 'llvm -bogus=1' -o x.o");
  EXPECT_EQ(bad_target.code, 1);
  EXPECT_NE(bad_target.out.find("--target"), std::string::npos) << bad_target.out;
  auto unwritable = RunKiln("compile --db " + db_ + " --workload GMM:0 -o /nonexistent-dir/x.o");
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_NE(unwritable.out.find("cannot write"), std::string::npos) << unwritable.out;
}

// --target cuda: PTX (which ptxas accepts for sm_90), a cubin and a C header
// whose launch table matches the kernel; no GPU is needed. An untuned
// workload is refused: the unscheduled program binds no thread.
TEST_F(CompileCli, CudaTargetWritesPtxCubinAndLaunchHeader) {
  const std::string target = "cuda -arch=sm_90";
  {
    auto db = kiln::database::Database::Open(db_);
    kiln::ir::PrimFunc w = kiln::ir::MakeWorkload("GMM", 0);  // 1 x 128 x 128 x 128
    auto id = db.CommitWorkload(w);
    kiln::ir::Schedule sch(w);
    kiln::ir::BlockRV z = sch.GetBlock("Z");
    std::vector<kiln::ir::LoopRV> l = sch.GetLoops(z);  // b, i, j, k
    kiln::ir::LoopRV fused = sch.Fuse({l[0], l[1], l[2]});
    std::vector<kiln::ir::LoopRV> parts = sch.Split(fused, {std::monostate{}, int64_t{128}});
    sch.Bind(parts[0], "blockIdx.x");
    sch.Bind(parts[1], "threadIdx.x");
    kiln::database::TuningRecord r;
    r.target = target;
    r.fingerprint = "test";
    r.trace_json = sch.trace().AsJSONString();
    r.run_seconds = {1e-5};
    r.verified = true;
    ASSERT_TRUE(db.CommitRecord(id, r));
  }
  const std::string ptx = (dir_ / "gmm.ptx").string(), cubin = (dir_ / "gmm.cubin").string(),
                    header = (dir_ / "gmm.h").string();
  auto r = RunKiln("compile --db " + db_ + " -w GMM:0 --target '" + target + "' -o " + ptx +
                   " --cubin " + cubin + " --header " + header + " --symbol kiln_gmm");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 kernel launch(es)"), std::string::npos) << r.out;
  EXPECT_NE(ReadFile(ptx).find(".visible .entry kiln_gmm_kernel0("), std::string::npos);
  EXPECT_EQ(ReadFile(cubin).substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(Sh(std::string(KILN_PTXAS) + " -arch=sm_90 " + ptx + " -o " + (dir_ / "ptxas.cubin").string()), 0);
  const std::string h = ReadFile(header);
  EXPECT_NE(h.find("#define KILN_GMM_NUM_ARGS 3"), std::string::npos) << h;
  EXPECT_NE(h.find("#define KILN_GMM_NUM_LAUNCHES 1"), std::string::npos) << h;
  // 128 x 128 outputs, 128 threads per block: 128 blocks.
  EXPECT_NE(h.find("{\"kiln_gmm_kernel0\", {128, 1, 1}, {128, 1, 1}, 0, 3, {0, 1, 2}}"),
            std::string::npos) << h;
  EXPECT_NE(h.find("kiln_gmm_buffer_bytes[KILN_GMM_NUM_BUFFERS] = {65536, 65536, 65536}"),
            std::string::npos) << h;
  // The header is valid C.
  std::ofstream((dir_ / "use.c").string()) << "#include \"gmm.h\"\nint main(void) { return "
                                              "(int)kiln_gmm_launches[0].grid[0] - 128; }\n";
  EXPECT_EQ(Sh("cc -std=c99 -Wall -Werror -I" + dir_.string() + " " + (dir_ / "use.c").string() +
               " -o " + (dir_ / "use").string() + " && " + (dir_ / "use").string()),
            0);

  auto untuned = RunKiln("compile --db " + db_ + " -w GMM:1 --target '" + target + "' -o " + ptx);
  EXPECT_EQ(untuned.code, 1) << untuned.out;
  EXPECT_NE(untuned.out.find("is no GPU program"), std::string::npos) << untuned.out;
  auto cpu_cubin = RunKiln("compile --db " + db_ + " -w GMM:0 -o " + ptx + " --cubin " + cubin);
  EXPECT_EQ(cpu_cubin.code, 1) << cpu_cubin.out;
  EXPECT_NE(cpu_cubin.out.find("--cubin needs a cuda --target"), std::string::npos) << cpu_cubin.out;
}

}  // namespace
