// Targets people can type (issue 16): `kiln target`, a query in the short
// form against a database written by Kiln 0.1.0 (whose `host` was a long
// feature list), and `--match compatible` through the CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "database/database.h"
#include "ir/workloads/suite.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::database::Database;
using kiln::testing::RunKiln;
using nlohmann::json;

// Written by `kiln tune --workload GMM:0 --target host --trials 4` of Kiln
// 0.1.0 on a Zen 3 VM: 4 records under 'llvm -mattr=+64bit,...,+xsaves
// -mcpu=znver3 -mtriple=x86_64-pc-linux-gnu -num-cores=2'.
const fs::path kOldDb = fs::path(KILN_SOURCE_DIR) / "tests/data/db/kiln-0.1.0-host-znver3.db";
const char* kShort = "llvm -mcpu=znver3 -num-cores=2";

class TargetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_target_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "old.db").string();
    fs::copy_file(kOldDb, db_, fs::copy_options::overwrite_existing);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
};

TEST_F(TargetCli, PrintsTheCanonicalForm) {
  auto r = RunKiln("target 'llvm -mcpu=znver3 -mattr=+avx2,+fma,-rdpru -mtriple=x86_64-pc-linux-gnu "
                   "-num-cores=2'", false);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, std::string(kShort) + "\n");
  r = RunKiln("target host --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["target"].get<std::string>().find("-mtriple"), std::string::npos);
  EXPECT_FALSE(j["features"].empty());
  r = RunKiln("target 'llvm -bogus=1'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("bogus"), std::string::npos) << r.out;
}

TEST_F(TargetCli, ShortFormAnswersFromAnOldDatabaseThenItIsRewritten) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stored target names an x86-64 triple";
#endif
  // Read-only: the lookup compares canonical forms.
  auto r = RunKiln("query --db " + db_ + " --workload GMM:0 --target '" + kShort + "' --json --why",
                   false);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["hit"].get<bool>());
  EXPECT_TRUE(j["exact"].get<bool>());
  EXPECT_EQ(j["target"], kShort);
  EXPECT_NE(j["record_target"].get<std::string>().find("-mattr=+64bit"), std::string::npos);
  EXPECT_EQ(j["records_this_target"], 4);
  {
    Database db = Database::Open(db_, Database::Mode::kReadOnly);
    EXPECT_EQ(db.Targets().size(), 1u);
    EXPECT_NE(db.Targets()[0], kShort) << "a read-only query must not rewrite";
  }
  // A read-write command migrates the stored target once, losing nothing.
  r = RunKiln("db prune -k 100 --db " + db_);
  ASSERT_EQ(r.code, 0) << r.out;
  {
    Database db = Database::Open(db_, Database::Mode::kReadOnly);
    EXPECT_EQ(db.Targets(), std::vector<std::string>{kShort});
    EXPECT_EQ(db.Size(), 4);
    EXPECT_EQ(db.IntegrityCheck(), "ok");
  }
  r = RunKiln("query --db " + db_ + " --workload GMM:0 --target '" + kShort + "'", false);
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(TargetCli, CompatibleMatchIsOptInAndSaysWhereTheRecordCameFrom) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the stored target names an x86-64 triple";
#endif
  // Zen 4 has every feature of Zen 3; Haswell lacks some (sha, ...).
  const std::string zen4 = "'llvm -mcpu=znver4 -num-cores=2'";
  auto r = RunKiln("query --db " + db_ + " --workload GMM:0 --target " + zen4);
  EXPECT_EQ(r.code, 3) << r.out;
  r = RunKiln("query --db " + db_ + " --workload GMM:0 --target " + zen4 +
              " --match compatible --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_FALSE(j["exact"].get<bool>());
  EXPECT_NE(j["note"].get<std::string>().find("znver3"), std::string::npos) << j.dump();
  r = RunKiln("query --db " + db_ + " --workload GMM:0 --target 'llvm -mcpu=znver4 -num-cores=4' "
              "--match compatible --why");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("core"), std::string::npos) << r.out;
  r = RunKiln("query --db " + db_ + " --workload GMM:0 --target 'llvm -mcpu=haswell -num-cores=2' "
              "--match compatible");
  EXPECT_EQ(r.code, 3) << r.out;
  r = RunKiln("query --db " + db_ + " --workload GMM:0 --target host --match fuzzy");
  EXPECT_NE(r.code, 0);
}

}  // namespace
