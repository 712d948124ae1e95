// kiln query and kiln db *: exit codes, miss reasons, --help, export/import.
#include <gtest/gtest.h>

#include "tests/common/run_kiln.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "database/database.h"
#include "ir/workloads/suite.h"

namespace {

using Result = kiln::testing::KilnResult;
using kiln::testing::RunKiln;
using kiln::testing::TempFile;



class DbCli : public testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TempDir() + "kiln_dbcli_" + std::to_string(getpid()) + ".db";
    Clean();
    using namespace kiln::database;
    Database db = Database::Open(path_);
    WorkloadId w = db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 0));
    TuningRecord r;
    r.target = "llvm -mcpu=skylake-avx512";
    r.trace_json = "{\"insts\":[1]}";
    r.run_seconds = {0.5};
    r.verified = true;
    db.CommitRecord(w, r);
    r.trace_json = "{\"insts\":[2]}";
    r.run_seconds = {0.25};
    db.CommitRecord(w, r);
    r.target = "cuda -arch=sm_90";
    r.status = "run_crash";
    r.verified = false;
    db.CommitRecord(w, r);
    db.CommitWorkload(kiln::ir::MakeWorkload("GMM", 1));
  }
  void TearDown() override { Clean(); }
  void Clean() {
    for (const char* s : {"", "-wal", "-shm", ".jsonl", ".2"}) std::remove((path_ + s).c_str());
    for (const char* s : {"-wal", "-shm"}) std::remove((path_ + ".2" + s).c_str());
  }
  std::string Db() const { return " --db " + path_; }
  std::string path_;
};

TEST_F(DbCli, EverySubcommandHasHelp) {
  for (const char* sub : {"query", "db", "db stats", "db top", "db export", "db import", "db prune",
                          "db merge"}) {
    Result r = RunKiln(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub << ": " << r.out;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
}

TEST_F(DbCli, QueryHitsAndExplainsMisses) {
  Result hit = RunKiln("query" + Db() + " --workload GMM --target 'llvm -mcpu=skylake-avx512'");
  EXPECT_EQ(hit.code, 0) << hit.out;
  EXPECT_NE(hit.out.find("{\"insts\":[2]}"), std::string::npos) << hit.out;
  Result j = RunKiln("query" + Db() + " --workload GMM --target 'llvm -mcpu=skylake-avx512' --json");
  EXPECT_EQ(j.code, 0);
  EXPECT_NE(j.out.find("\"median_seconds\": 0.25"), std::string::npos) << j.out;

  Result unknown = RunKiln("query" + Db() + " --workload C1D --target 'llvm -mcpu=skylake-avx512'");
  EXPECT_EQ(unknown.code, 3);
  EXPECT_NE(unknown.out.find("unknown workload"), std::string::npos) << unknown.out;
  Result other = RunKiln("query" + Db() + " --workload GMM:1 --target 'llvm -mcpu=skylake-avx512'");
  EXPECT_EQ(other.code, 3);
  EXPECT_NE(other.out.find("nothing measured for this target"), std::string::npos) << other.out;
  Result wrong = RunKiln("query" + Db() + " --workload GMM --target 'llvm -mcpu=znver3'");
  EXPECT_EQ(wrong.code, 3);
  EXPECT_NE(wrong.out.find("nothing measured for this target"), std::string::npos);
  Result failed = RunKiln("query" + Db() + " --workload GMM --target 'cuda -arch=sm_90'");
  EXPECT_EQ(failed.code, 3);
  EXPECT_NE(failed.out.find("only failed or unverified"), std::string::npos) << failed.out;

  EXPECT_EQ(RunKiln("query --db /nonexistent.db --workload GMM --target llvm").code, 1);
  EXPECT_EQ(RunKiln("query" + Db() + " --workload GMM --target 'llvm -what=1'").code, 1);
}

TEST_F(DbCli, StatsTopExportImportPruneMerge) {
  Result st = RunKiln("db stats" + Db());
  EXPECT_EQ(st.code, 0);
  EXPECT_NE(st.out.find("records: 3 (2 ok and verified)"), std::string::npos) << st.out;
  Result top = RunKiln("db top" + Db() + " --workload GMM --target 'llvm -mcpu=skylake-avx512' -k 1");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("\"median_seconds\":0.25"), std::string::npos) << top.out;
  EXPECT_EQ(RunKiln("db export" + Db() + " -o " + path_ + ".jsonl").code, 0);
  Result imp = RunKiln("db import --db " + path_ + ".2 " + path_ + ".jsonl");
  EXPECT_EQ(imp.code, 0) << imp.out;
  EXPECT_NE(imp.out.find("imported 3"), std::string::npos) << imp.out;
  Result merge = RunKiln("db merge" + Db() + " " + path_ + ".2");
  EXPECT_EQ(merge.code, 0) << merge.out;
  EXPECT_NE(merge.out.find(": 0 new"), std::string::npos) << merge.out;
  Result prune = RunKiln("db prune" + Db() + " -k 1");
  EXPECT_EQ(prune.code, 0);
  EXPECT_NE(prune.out.find("deleted 2"), std::string::npos) << prune.out;
  EXPECT_NE(RunKiln("db import" + Db() + " " + path_).code, 0);  // not an export
  EXPECT_NE(RunKiln("db stats --db " + path_ + ".jsonl").code, 0);  // not a database
}

}  // namespace
