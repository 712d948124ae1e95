// kiln db import|export --format tvm (tools/tvm_db_commands.cc): TVM's own
// MetaSchedule database imports with a summary, the records stay unverified
// (no tuned result), and the export writes both of TVM's files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::testing::RunKiln;

class TvmDbCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_tvm_cli_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "k.db").string();
    data_ = std::string(KILN_SOURCE_DIR) + "/tests/data/tvm/metaschedule_gmm/";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_, data_;
};

TEST_F(TvmDbCli, ImportsExportsAndKeepsRecordsUnverified) {
  auto r = RunKiln("db import --format tvm " + data_ + "database_workload.json " + data_ +
                   "database_tuning_record.json --db " + db_);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("imported 16 new record(s) of 16 from TVM"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 trace(s) that do not replay"), std::string::npos) << r.out;
  // Unverified: no tuned result until `kiln db verify`.
  auto q = RunKiln("query --db " + db_ + " --workload GMM:0 --target 'llvm -num-cores=2' --why");
  EXPECT_EQ(q.code, 3) << q.out;
  EXPECT_NE(q.out.find("unverified"), std::string::npos) << q.out;
  auto e = RunKiln("db export --format tvm " + (dir_ / "out").string() + " --db " + db_);
  ASSERT_EQ(e.code, 0) << e.out;
  EXPECT_NE(e.out.find("wrote 1 workload(s) and 16 record(s)"), std::string::npos) << e.out;
  std::ifstream records(dir_ / "out" / "database_tuning_record.json");
  std::string line;
  int n = 0;
  while (std::getline(records, line)) ++n;
  EXPECT_EQ(n, 16);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "database_workload.json"));
}

TEST_F(TvmDbCli, WrongArgumentsAreClearErrors) {
  auto one = RunKiln("db import --format tvm " + data_ + "database_workload.json --db " + db_);
  EXPECT_NE(one.code, 0);
  EXPECT_NE(one.out.find("takes two files"), std::string::npos) << one.out;
  auto missing = RunKiln("db import --format tvm nope.json nope2.json --db " + db_);
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("nope.json: cannot read"), std::string::npos) << missing.out;
  auto no_dir = RunKiln("db export --format tvm --db " + db_);
  EXPECT_NE(no_dir.code, 0);
  EXPECT_NE(no_dir.out.find("needs a directory"), std::string::npos) << no_dir.out;
}

}  // namespace
