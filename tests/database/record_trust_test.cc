// The schema version 3 columns (issue 22): `stale` and the noise figures are
// stored and read back, UpdateMeasurement rewrites what a re-measure
// changes, stale records never count as best, and a version 2 file is read
// as it is read-only (the new columns as their defaults) and migrated
// read-write.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "database/database.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"
#include "tests/database/schema_v3.h"

namespace kiln::database {
namespace {

namespace fs = std::filesystem;
constexpr const char* kTarget = "llvm -num-cores=2";

class RecordTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("kiln_trust_" + std::to_string(getpid()) + ".db")).string();
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path_ + s);
  }
  static TuningRecord Record(int n, double secs) {
    TuningRecord r;
    r.workload_hash = ir::StructuralHashHex(ir::Matmul(16, 16, 16));
    r.target = kTarget;
    r.fingerprint = "fp";
    r.trace_json = "{\"n\":" + std::to_string(n) + "}";
    r.run_seconds = {secs, secs * 1.5};
    r.status = kStatusOk;
    r.verified = true;
    return r;
  }
  std::string path_;
};

TEST_F(RecordTrust, NoiseFiguresAndStaleAreStoredAndStaleNeverCountsAsBest) {
  Database db = Database::Open(path_);
  const WorkloadId w = db.CommitWorkload(ir::Matmul(16, 16, 16));
  TuningRecord fast = Record(1, 1e-3);
  fast.machine_load = 0.75;
  fast.wide_spread = true;
  ASSERT_TRUE(db.CommitRecord(w, fast));
  ASSERT_TRUE(db.CommitRecord(w, Record(2, 2e-3)));
  std::optional<TuningRecord> best = db.Best(w, kTarget);
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->machine_load, 0.75);
  EXPECT_TRUE(best->wide_spread);
  EXPECT_FALSE(best->stale);

  best->stale = true;
  ASSERT_TRUE(db.UpdateMeasurement(w, *best));
  EXPECT_EQ(db.Best(w, kTarget)->trace_json, "{\"n\":2}");
  EXPECT_EQ(db.TopK(w, kTarget, 10).size(), 1u);
  EXPECT_EQ(db.Stats().usable_records, 1);
  EXPECT_EQ(db.ExplainMiss(w, kTarget).usable_this_target, 1);
  // Prune keeps the best usable records: the stale one goes.
  EXPECT_EQ(db.Prune(5), 1);
  EXPECT_EQ(db.Size(), 1);

  // A re-measure rewrites times, median and noise; an unknown record is not there.
  TuningRecord again = *db.Best(w, kTarget);
  again.run_seconds = {3e-3, 3e-3, 3e-3};
  again.machine_load = 0.1;
  ASSERT_TRUE(db.UpdateMeasurement(w, again));
  EXPECT_DOUBLE_EQ(db.Best(w, kTarget)->median_seconds, 3e-3);
  EXPECT_EQ(db.Best(w, kTarget)->run_seconds.size(), 3u);
  EXPECT_DOUBLE_EQ(db.Best(w, kTarget)->machine_load, 0.1);
  EXPECT_FALSE(db.UpdateMeasurement(w, Record(9, 1)));
  TuningRecord other_machine = again;
  other_machine.fingerprint = "another machine";
  EXPECT_FALSE(db.UpdateMeasurement(w, other_machine));

  // The JSON lines export carries the new fields, and import reads them back.
  fast.trace_json = "{\"n\":3}";
  fast.stale = true;
  ASSERT_TRUE(db.CommitRecord(w, fast));
  std::stringstream lines;
  db.ExportJsonLines(lines);
  Database copy = Database::InMemory();
  ASSERT_EQ(copy.ImportJsonLines(lines), 2);
  int stale = 0;
  copy.ForEachRecord([&](WorkloadId, const TuningRecord& r) {
    if (r.stale) {
      ++stale;
      EXPECT_DOUBLE_EQ(r.machine_load, 0.75);
      EXPECT_TRUE(r.wide_spread);
    }
  });
  EXPECT_EQ(stale, 1);
}

TEST_F(RecordTrust, AVersionTwoFileIsReadAsItIsAndMigrated) {
  {
    Database db = Database::Open(path_);
    const WorkloadId w = db.CommitWorkload(ir::Matmul(16, 16, 16));
    ASSERT_TRUE(db.CommitRecord(w, Record(1, 1e-3)));
  }
  // Back to version 2: the records table without the version 3 columns.
  sqlite3* s = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &s), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(s,
                         (std::string(testing::kDropVersion3) + "PRAGMA user_version = 2;").c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(s);
  {
    Database ro = Database::Open(path_, Database::Mode::kReadOnly);
    const WorkloadId w = *ro.FindWorkload(ir::Matmul(16, 16, 16));
    std::optional<TuningRecord> best = ro.Best(w, kTarget);
    ASSERT_TRUE(best.has_value());
    EXPECT_FALSE(best->stale);
    EXPECT_DOUBLE_EQ(best->machine_load, -1);
    EXPECT_EQ(ro.Stats().usable_records, 1);
  }
  // Still version 2 on disk: read-only opening wrote nothing.
  ASSERT_EQ(sqlite3_open(path_.c_str(), &s), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 2);
  sqlite3_finalize(st);
  sqlite3_close(s);

  Database db = Database::Open(path_);
  const WorkloadId w = *db.FindWorkload(ir::Matmul(16, 16, 16));
  TuningRecord best = *db.Best(w, kTarget);
  EXPECT_DOUBLE_EQ(best.machine_load, -1);
  best.stale = true;
  ASSERT_TRUE(db.UpdateMeasurement(w, best));
  EXPECT_FALSE(db.Best(w, kTarget).has_value());
  EXPECT_EQ(db.IntegrityCheck(), "ok");
}

}  // namespace
}  // namespace kiln::database
