// Schema version 3's provenance columns (database/schema.cc): a record's
// provenance round-trips, and a version 2 file (no such columns) is read as
// it is when opened read-only and migrated when opened read-write.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "database/database.h"
#include "ir/workloads/suite.h"
#include "tests/database/schema_v3.h"

namespace kiln::database {
namespace {

namespace fs = std::filesystem;

class ProvenanceSchema : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ =
        (fs::temp_directory_path() / ("kiln_prov_" + std::to_string(getpid()) + ".db")).string();
    TearDown();
  }
  void TearDown() override {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path_ + s);
  }
  TuningRecord Record(const std::string& source) {
    TuningRecord r;
    r.target = "llvm -num-cores=2";
    r.trace_json = "[[], []]";
    r.run_seconds = {0.25, 0.5};
    r.provenance.source = source;
    if (!source.empty()) r.provenance.source_run_seconds = {0.25, 0.5};
    return r;
  }
  std::string path_;
};

TEST_F(ProvenanceSchema, ProvenanceRoundTrips) {
  Database db = Database::Open(path_);
  WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
  ASSERT_TRUE(db.CommitRecord(w, Record("tvm")));
  std::vector<TuningRecord> all;
  db.ForEachRecord([&](WorkloadId, const TuningRecord& r) { all.push_back(r); });
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].provenance.source, "tvm");
  EXPECT_EQ(all[0].provenance.source_run_seconds, (std::vector<double>{0.25, 0.5}));
}

TEST_F(ProvenanceSchema, AVersionTwoFileIsReadAndMigrated) {
  {
    Database db = Database::Open(path_);
    WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
    TuningRecord r = Record("");
    r.verified = true;
    ASSERT_TRUE(db.CommitRecord(w, r));
  }
  sqlite3* s = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &s), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(s,
                         (std::string(testing::kDropVersion3) + "PRAGMA user_version = 2;").c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(s);
  {
    Database ro = Database::Open(path_, Database::Mode::kReadOnly);
    WorkloadId w = *ro.FindWorkload(ir::MakeWorkload("GMM", 0));
    auto best = ro.Best(w, "llvm -num-cores=2");
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->provenance.source, "");
    EXPECT_TRUE(best->provenance.source_run_seconds.empty());
  }
  Database db = Database::Open(path_);
  WorkloadId w = *db.FindWorkload(ir::MakeWorkload("GMM", 0));
  TuningRecord other = Record("tvm");
  other.trace_json = R"([[["GetBlock", [], ["Z", "main"], ["b0"]]], []])";
  ASSERT_TRUE(db.CommitRecord(w, other));
  EXPECT_EQ(db.Size(), 2);
}

}  // namespace
}  // namespace kiln::database
