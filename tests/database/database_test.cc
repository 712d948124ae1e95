// The tuning database: exact lookups, idempotent commits, resume counts,
// prune / merge / export / import, and clear errors for foreign files.
#include "database/database.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ir/workloads/suite.h"

namespace kiln::database {
namespace {

std::string TempPath(const std::string& tag) {
  return testing::TempDir() + "kiln_db_" + tag + "_" + std::to_string(getpid()) + ".db";
}

void Remove(const std::string& p) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((p + suffix).c_str());
}

TuningRecord Rec(const std::string& target, int i, double secs, const std::string& status = "ok",
                 bool verified = true) {
  TuningRecord r;
  r.target = target;
  r.fingerprint = "test-cpu";
  r.trace_json = "{\"insts\": [" + std::to_string(i) + "]}";
  r.run_seconds = {secs * 1.1, secs, secs * 0.9};
  r.status = status;
  r.verified = verified;
  r.args = {{"float32", {128, 128}}};
  r.provenance = {"host-a", "0.1.0", 7, "job-1", 1700000000, "", {}};
  return r;
}

const char* kCpu = "llvm -mcpu=skylake-avx512";
const char* kGpu = "cuda -arch=sm_90";

TEST(Database, CommitIsIdempotentAndTopKIsVerifiedOnly) {
  Database db = Database::InMemory();
  WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
  EXPECT_EQ(db.CommitWorkload(ir::MakeWorkload("GMM", 0)), w);
  EXPECT_TRUE(db.CommitRecord(w, Rec(kCpu, 1, 3.0)));
  EXPECT_FALSE(db.CommitRecord(w, Rec(kCpu, 1, 3.0)));  // replay
  EXPECT_TRUE(db.CommitRecord(w, Rec(kCpu, 2, 1.0, "ok", /*verified=*/false)));
  EXPECT_TRUE(db.CommitRecord(w, Rec(kCpu, 3, 0.5, "wrong_result")));
  EXPECT_TRUE(db.CommitRecord(w, Rec(kCpu, 4, 2.0)));
  EXPECT_EQ(db.Size(), 4);
  auto top = db.TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_DOUBLE_EQ(top[0].median_seconds, 2.0);
  EXPECT_DOUBLE_EQ(top[1].median_seconds, 3.0);
  EXPECT_EQ(top[0].trace_json, "{\"insts\":[4]}");
  EXPECT_EQ(top[0].args, Rec(kCpu, 4, 2.0).args);
  EXPECT_EQ(top[0].provenance, Rec(kCpu, 4, 2.0).provenance);
  // Resume support: failures count as measured.
  EXPECT_EQ(db.CountRecords(w, kCpu), 4);
  auto hashes = db.MeasuredTraceHashes(w, kCpu);
  EXPECT_EQ(hashes.size(), 4u);
  EXPECT_TRUE(db.HasRecord(w, kCpu, TraceHash(CanonicalTraceJson("{\"insts\":[3]}"))));
  EXPECT_FALSE(db.HasRecord(w, kCpu, TraceHash(CanonicalTraceJson("{\"insts\":[9]}"))));
  EXPECT_THROW(db.CommitRecord(w, Rec(kCpu, 5, 1.0, "great")), DatabaseError);
  EXPECT_THROW(db.CommitRecord(w, Rec("llvm -bogus=1", 5, 1.0)), DatabaseError);
}

TEST(Database, TwoTargetsNeverCross) {
  Database db = Database::InMemory();
  WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
  db.CommitRecord(w, Rec(kCpu, 1, 5.0));
  db.CommitRecord(w, Rec(kGpu, 2, 0.001));
  auto cpu = db.TopK(w, kCpu, 5);
  auto gpu = db.TopK(w, kGpu, 5);
  ASSERT_EQ(cpu.size(), 1u);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(cpu[0].target, NormalizeTarget(kCpu));
  EXPECT_EQ(gpu[0].target, NormalizeTarget(kGpu));
  EXPECT_FALSE(db.Best(w, "llvm -mcpu=znver3").has_value());
  // A different spelling of the same target is the same target.
  EXPECT_EQ(db.TopK(w, "llvm   -mcpu=skylake-avx512", 5).size(), 1u);
  MissReason m = db.ExplainMiss(w, "llvm -mcpu=znver3");
  EXPECT_TRUE(m.workload_known);
  EXPECT_EQ(m.records_this_target, 0);
  EXPECT_EQ(m.other_targets.size(), 2u);
  EXPECT_NE(m.Explain().find("nothing measured for this target"), std::string::npos);
}

TEST(Database, DifferentWorkloadsAreSeparate) {
  Database db = Database::InMemory();
  WorkloadId a = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
  WorkloadId b = db.CommitWorkload(ir::MakeWorkload("GMM", 1));
  EXPECT_NE(a, b);
  db.CommitRecord(a, Rec(kCpu, 1, 1.0));
  EXPECT_TRUE(db.TopK(b, kCpu, 1).empty());
  EXPECT_FALSE(db.HasWorkload(ir::MakeWorkload("C1D", 0)));
  EXPECT_TRUE(db.HasWorkload(ir::MakeWorkload("GMM", 1)));
}

TEST(Database, PruneKeepsBestKPerWorkloadAndTarget) {
  Database db = Database::InMemory();
  WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
  std::vector<TuningRecord> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(Rec(kCpu, i, 10.0 - i));
  batch.push_back(Rec(kCpu, 100, 0.1, "timeout"));
  EXPECT_EQ(db.CommitRecords(w, batch), 11u);
  EXPECT_EQ(db.CommitRecords(w, batch), 0u);
  db.CommitRecord(w, Rec(kGpu, 1, 1.0));
  EXPECT_EQ(db.Prune(3), 8);
  EXPECT_EQ(db.Size(), 4);
  auto top = db.TopK(w, kCpu, 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_DOUBLE_EQ(top[0].median_seconds, 1.0);
  EXPECT_EQ(db.TopK(w, kGpu, 10).size(), 1u);
}

TEST(Database, ExportImportAndMergeRoundTrip) {
  std::string a_path = TempPath("a"), b_path = TempPath("b");
  Remove(a_path);
  Remove(b_path);
  std::string exported;
  {
    Database a = Database::Open(a_path);
    WorkloadId w = a.CommitWorkload(ir::MakeWorkload("GMM", 0));
    a.CommitRecord(w, Rec(kCpu, 1, 2.0));
    a.CommitRecord(w, Rec(kGpu, 2, 1.0, "run_crash", false));
    std::ostringstream out;
    a.ExportJsonLines(out);
    exported = out.str();
  }
  Database mem = Database::InMemory();
  std::istringstream in(exported);
  EXPECT_EQ(mem.ImportJsonLines(in), 2);
  std::istringstream again(exported);
  EXPECT_EQ(mem.ImportJsonLines(again), 0);
  std::ostringstream out2;
  mem.ExportJsonLines(out2);
  EXPECT_EQ(out2.str(), exported);
  {
    Database b = Database::Open(b_path);
    WorkloadId w = b.CommitWorkload(ir::MakeWorkload("GMM", 0));
    b.CommitRecord(w, Rec(kCpu, 3, 1.5));
    EXPECT_EQ(b.Merge(a_path), 2);
    EXPECT_EQ(b.Merge(a_path), 0);
    EXPECT_EQ(b.Size(), 3);
    EXPECT_DOUBLE_EQ(b.Best(w, kCpu)->median_seconds, 1.5);
  }
  std::istringstream bad("{\"kiln_tuning_db\":1}\n{\"type\":\"record\",\"workload\":9}\n");
  try {
    mem.ImportJsonLines(bad);
    FAIL();
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  Remove(a_path);
  Remove(b_path);
}

std::string OpenError(const std::string& path, Database::Mode mode = Database::Mode::kReadWrite) {
  try {
    Database::Open(path, mode);
  } catch (const DatabaseError& e) {
    return e.what();
  }
  return "";
}

TEST(Database, ForeignCorruptAndNewerFilesAreRefused) {
  std::string p = TempPath("foreign");
  Remove(p);
  {
    std::ofstream f(p);
    f << "this is not a database at all, just some text that is long enough\n";
  }
  EXPECT_NE(OpenError(p).find("not a valid SQLite database"), std::string::npos) << OpenError(p);
  Remove(p);
  {
    sqlite3* s;
    sqlite3_open(p.c_str(), &s);
    sqlite3_exec(s, "CREATE TABLE songs(x); INSERT INTO songs VALUES (1);", nullptr, nullptr, nullptr);
    sqlite3_close(s);
  }
  EXPECT_NE(OpenError(p).find("not a Kiln tuning database"), std::string::npos) << OpenError(p);
  Remove(p);
  { Database db = Database::Open(p); }
  {
    sqlite3* s;
    sqlite3_open(p.c_str(), &s);
    sqlite3_exec(s, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(s);
  }
  EXPECT_NE(OpenError(p).find("newer Kiln"), std::string::npos) << OpenError(p);
  Remove(p);
  // A real database with its pages overwritten: an error, never a crash.
  {
    Database db = Database::Open(p);
    WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
    std::vector<TuningRecord> batch;
    for (int i = 0; i < 500; ++i) batch.push_back(Rec(kCpu, i, 1.0 + i));
    db.CommitRecords(w, batch);
  }
  {
    sqlite3* s;  // checkpoint the WAL into the main file, then damage it
    sqlite3_open(p.c_str(), &s);
    sqlite3_exec(s, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE", nullptr, nullptr,
                 nullptr);
    sqlite3_close(s);
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    std::string junk(8192, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  try {
    Database db = Database::Open(p);
    WorkloadId w = db.CommitWorkload(ir::MakeWorkload("GMM", 0));
    db.TopK(w, kCpu, 10);
    EXPECT_NE(db.IntegrityCheck(), "ok");
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  Remove(p);
}

}  // namespace
}  // namespace kiln::database
