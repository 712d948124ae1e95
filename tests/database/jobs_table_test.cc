// The farm's jobs table (schema version 2): stored, updated, listed, kept
// across reopening, and added to a version 1 file by the migration without
// touching its records.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "database/database.h"
#include "tests/database/schema_v3.h"

namespace kiln::database {
namespace {

namespace fs = std::filesystem;

class JobsTable : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("kiln_jobs_" + std::to_string(getpid()) + ".db")).string();
    Remove();
  }
  void TearDown() override { Remove(); }
  void Remove() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path_ + s);
  }
  std::string path_;
};

TEST_F(JobsTable, StoresUpdatesAndListsJobs) {
  {
    Database db = Database::Open(path_);
    EXPECT_EQ(db.CreateJob("{\"trials\":\"8\"}", 2, "queued"), 1);
    EXPECT_EQ(db.CreateJob("{}", 0, "queued"), 2);
    db.UpdateJob(1, "running", "");
    db.SetJobPool(1, "llvm -num-cores=1 | fp");
    EXPECT_THROW(db.UpdateJob(99, "done", ""), DatabaseError);
    EXPECT_THROW(db.SetJobPool(99, "x"), DatabaseError);
  }
  Database db = Database::Open(path_, Database::Mode::kReadOnly);
  std::vector<JobRow> jobs = db.Jobs();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, 1);
  EXPECT_EQ(jobs[0].spec, "{\"trials\":\"8\"}");
  EXPECT_EQ(jobs[0].state, "running");
  EXPECT_EQ(jobs[0].priority, 2);
  EXPECT_EQ(jobs[0].pool, "llvm -num-cores=1 | fp");
  EXPECT_GT(jobs[0].created, 0);
  EXPECT_EQ(jobs[1].state, "queued");
  EXPECT_FALSE(db.Job(3).has_value());
  EXPECT_EQ(db.Job(2)->spec, "{}");
  EXPECT_EQ(db.IntegrityCheck(), "ok");
}

TEST_F(JobsTable, AVersionOneFileIsMigrated) {
  {
    Database db = Database::Open(path_);
    db.CreateJob("{}", 0, "queued");
  }
  // Turn it back into a version 1 file: no jobs table, no version 3 columns,
  // user_version 1.
  sqlite3* s = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &s), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(s,
                         (std::string(testing::kDropVersion3) + "DROP TABLE jobs; PRAGMA user_version = 1;").c_str(),
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(s);
  {
    // Read-only, it is read as it is (records need no migration); the jobs
    // table it lacks is an error that says so, not a crash.
    Database ro = Database::Open(path_, Database::Mode::kReadOnly);
    EXPECT_EQ(ro.Size(), 0);
    EXPECT_THROW(ro.Jobs(), DatabaseError);
  }
  Database db = Database::Open(path_);
  EXPECT_TRUE(db.Jobs().empty());
  EXPECT_EQ(db.CreateJob("{}", 0, "queued", "alice"), 1);
  EXPECT_EQ(db.Job(1)->principal, "alice");
}

}  // namespace
}  // namespace kiln::database
