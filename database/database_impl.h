// Database::Impl, the state behind a Database handle, shared by the files
// that implement it: database/sqlite_connection.cc (opening, statements,
// transactions), database/schema.cc (format check and migrations),
// database/database.cc (workloads, records, peers), database/jobs.cc (farm
// jobs) and database/json_lines.cc (export, import, merge). Private to
// database/: nothing outside it includes this header.
#pragma once

#include <sqlite3.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "database/database.h"

namespace kiln::database {

// The record columns ReadRecord reads, in order. A file older than version 3
// opened read-only reads them through a view with their defaults (Open).
inline constexpr const char* kRecordColumns =
    "w.hash, t.target, t.fingerprint, r.trace_json, r.trace_hash, r.run_seconds, "
    "r.median_seconds, r.status, r.message, r.verified, r.args, r.host, r.kiln_version, "
    "r.seed, r.job_id, r.timestamp, r.workload_id, r.stale, r.machine_load, r.wide_spread, "
    "r.provenance, r.source_run_seconds";
// Columns of kRecordColumns, for the queries that select more after them.
inline constexpr int kRecordColumnCount = 22;

inline std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

struct Database::Impl {
  sqlite3* db = nullptr;
  std::string path;
  bool read_only = false;
  int schema_version = kSchemaVersion;  // what the file holds (older only read-only)
  std::string commit_principal;  // stored with every record this handle commits
  int txn_depth = 0;
  std::unordered_map<std::string, sqlite3_stmt*> statements;
  // Parsed workloads by hash, so structural equality checks parse once.
  mutable std::unordered_map<std::string, std::vector<std::pair<WorkloadId, ir::PrimFunc>>> parsed;
  std::map<std::pair<std::string, std::string>, int64_t> target_ids;

  ~Impl();

  [[noreturn]] void Fail(const std::string& what, int rc) const;
  void Exec(const char* sql);

  // A cached prepared statement, reset and unbound on scope exit.
  class Stmt {
   public:
    Stmt(Impl* impl, sqlite3_stmt* s) : impl_(impl), s_(s) {}
    ~Stmt() {
      sqlite3_reset(s_);
      sqlite3_clear_bindings(s_);
    }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    sqlite3_stmt* get() const { return s_; }
    Stmt& Bind(int i, int64_t v) { return Check(sqlite3_bind_int64(s_, i, v)); }
    Stmt& Bind(int i, double v) { return Check(sqlite3_bind_double(s_, i, v)); }
    Stmt& Bind(int i, const std::string& v) {
      return Check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    }
    // True while there is a row.
    bool Step() {
      int rc = sqlite3_step(s_);
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      impl_->Fail("query failed", rc);
    }

   private:
    Stmt& Check(int rc) {
      if (rc != SQLITE_OK) impl_->Fail("bind failed", rc);
      return *this;
    }
    Impl* impl_;
    sqlite3_stmt* s_;
  };

  Stmt Prepare(const std::string& sql);
  // Transactions nest: only the outermost Begin/Commit reach SQLite.
  void Begin();
  void Commit();
  void Rollback();

  // Schema (database/schema.cc): the file's user_version, and the format
  // check and migrations run on open.
  int UserVersion();
  void CheckAndMigrate();

  // Workloads and records (database/database.cc).
  const std::vector<std::pair<WorkloadId, ir::PrimFunc>>& Candidates(const std::string& hash);
  std::optional<WorkloadId> Find(const ir::PrimFunc& f);
  int64_t TargetId(const std::string& target, const std::string& fingerprint);
  bool Insert(WorkloadId workload, const TuningRecord& in);
  TuningRecord ReadRecord(sqlite3_stmt* s, WorkloadId* workload);
};

}  // namespace kiln::database
