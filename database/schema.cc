// The tuning database's schema: the format marker that makes a file Kiln's,
// the migrations from each schema version to the next (database/FORMAT.md),
// and the check run on open.
#include <sqlite3.h>

#include <string>
#include <vector>

#include "database/database.h"
#include "database/database_impl.h"

namespace kiln::database {

namespace {

// Marks a file as Kiln's: any other SQLite file is refused, never modified.
constexpr const char* kFormatKey = "format";
constexpr const char* kFormatValue = "kiln-tuning-db";

// migrations[v] takes the schema from version v to v + 1.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> m = {
      R"sql(
CREATE TABLE kiln_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO kiln_meta VALUES ('format', 'kiln-tuning-db');
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX workloads_by_hash ON workloads(hash);
CREATE TABLE targets(
  id INTEGER PRIMARY KEY, target TEXT NOT NULL, fingerprint TEXT NOT NULL,
  UNIQUE(target, fingerprint));
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  target_id INTEGER NOT NULL REFERENCES targets(id),
  trace_hash TEXT NOT NULL, trace_json TEXT NOT NULL,
  run_seconds TEXT NOT NULL, median_seconds REAL NOT NULL,
  status TEXT NOT NULL, message TEXT NOT NULL, verified INTEGER NOT NULL,
  args TEXT NOT NULL, host TEXT NOT NULL, kiln_version TEXT NOT NULL,
  seed INTEGER NOT NULL, job_id TEXT NOT NULL, timestamp INTEGER NOT NULL,
  UNIQUE(workload_id, target_id, trace_hash));
CREATE INDEX records_best ON records(workload_id, target_id, median_seconds)
  WHERE status = 'ok' AND verified = 1;
)sql",
      // Version 2: the farm's jobs (rpc/farm/coordinator.h), so that a
      // restarted coordinator resumes them. `spec` is the job as the farm
      // stores it (kiln.v1.TuningJob in Protobuf's JSON mapping); the
      // database only keeps it.
      R"sql(
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY, spec TEXT NOT NULL, state TEXT NOT NULL,
  priority INTEGER NOT NULL, pool TEXT NOT NULL, message TEXT NOT NULL,
  created INTEGER NOT NULL, updated INTEGER NOT NULL);
CREATE INDEX jobs_by_state ON jobs(state);
)sql",
      // Version 3: trust in a measurement (issue 22) and where a record came
      // from. `stale`: a re-measure (`kiln db verify --mark-stale`,
      // search/verify_records.h) no longer reproduces the stored time, so the
      // record never counts as best. `machine_load` / `wide_spread`: the noise
      // figures of the measurement (search/measure.h). `provenance`: '' for
      // Kiln's own measurements, 'tvm' for one imported from a MetaSchedule
      // database (database/tvm_import.h), with `source_run_seconds`, the run
      // seconds the source reported. records_best is rebuilt to leave stale
      // records out. `peers`: the time another implementation takes for a
      // workload on a target (PeerFigure in database/database.h), which
      // `kiln report` sets the best record against. `principal`: the farm
      // principal (rpc/farm/auth_file.h) that submitted a job and whose job
      // committed a record; '' outside the farm and for older rows.
      R"sql(
ALTER TABLE records ADD COLUMN stale INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN machine_load REAL NOT NULL DEFAULT -1;
ALTER TABLE records ADD COLUMN wide_spread INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN provenance TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN source_run_seconds TEXT NOT NULL DEFAULT '[]';
DROP INDEX records_best;
CREATE INDEX records_best ON records(workload_id, target_id, median_seconds)
  WHERE status = 'ok' AND verified = 1 AND stale = 0;
CREATE TABLE peers(
  workload_id INTEGER NOT NULL REFERENCES workloads(id), target TEXT NOT NULL,
  name TEXT NOT NULL, seconds REAL NOT NULL, note TEXT NOT NULL, timestamp INTEGER NOT NULL,
  UNIQUE(workload_id, target, name));
ALTER TABLE records ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN principal TEXT NOT NULL DEFAULT '';
)sql",
  };
  return m;
}

}  // namespace

int Database::Impl::UserVersion() {
  Stmt s = Prepare("PRAGMA user_version");
  s.Step();
  return sqlite3_column_int(s.get(), 0);
}

void Database::Impl::CheckAndMigrate() {
  // Reading the schema is the first access to the file: a non-SQLite file
  // fails here with SQLITE_NOTADB.
  int64_t tables = 0;
  bool has_meta = false;
  {
    Stmt s = Prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
    while (s.Step()) {
      ++tables;
      if (ColumnText(s.get(), 0) == "kiln_meta") has_meta = true;
    }
  }
  int version = UserVersion();
  if (tables > 0 && !has_meta) {
    throw DatabaseError(path + ": an SQLite database but not a Kiln tuning database "
                               "(no kiln_meta table)");
  }
  if (has_meta) {
    Stmt s = Prepare("SELECT value FROM kiln_meta WHERE key = ?");
    s.Bind(1, std::string(kFormatKey));
    if (!s.Step() || ColumnText(s.get(), 0) != kFormatValue) {
      throw DatabaseError(path + ": not a Kiln tuning database (kiln_meta has no format marker)");
    }
  }
  if (version > kSchemaVersion) {
    throw DatabaseError(path + ": written by a newer Kiln (schema version " +
                        std::to_string(version) + "; this binary reads up to " +
                        std::to_string(kSchemaVersion) + "); upgrade Kiln to use it");
  }
  schema_version = version;
  if (version == kSchemaVersion) return;
  // An older file opened read-only is read as it is: migrations since
  // version 1 only add tables (version 2: the farm's jobs) or columns that
  // a view stands in for (version 3; its peers table is looked for), and query,
  // compile and the C API read records, so a build pipeline keeps reading
  // a database that a newer Kiln has not written yet.
  if (read_only && version >= 1) {
    // Version 3's columns, as their defaults, through a view that shadows
    // the table for this connection only (the file is not written).
    if (version < 3) {
      Exec("CREATE TEMP VIEW records AS SELECT *, 0 AS stale, -1.0 AS machine_load, "
           "0 AS wide_spread, '' AS provenance, '[]' AS source_run_seconds, '' AS principal "
           "FROM main.records");
    }
    if (version == 2) Exec("CREATE TEMP VIEW jobs AS SELECT *, '' AS principal FROM main.jobs");
    return;
  }
  if (read_only) {
    throw DatabaseError(path + (tables == 0 ? ": empty file, not a Kiln tuning database"
                                            : ": schema version " + std::to_string(version) +
                                                  " needs a migration; open it read-write once"));
  }
  Begin();
  try {
    for (int v = UserVersion(); v < kSchemaVersion; ++v) {
      Exec(Migrations()[v]);
      Exec(("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
    }
    Commit();
  } catch (...) {
    Rollback();
    throw;
  }
  schema_version = kSchemaVersion;
}

}  // namespace kiln::database
