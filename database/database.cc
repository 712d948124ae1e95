#include "database/database.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <unordered_map>

#include "database/record_json.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "ir/target.h"

namespace kiln::database {

namespace {

using nlohmann::json;

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

// The record columns ReadRecord reads, in order. A file older than version 3
// opened read-only reads them through a view with their defaults (Open).
constexpr const char* kRecordColumns =
    "w.hash, t.target, t.fingerprint, r.trace_json, r.trace_hash, r.run_seconds, "
    "r.median_seconds, r.status, r.message, r.verified, r.args, r.host, r.kiln_version, "
    "r.seed, r.job_id, r.timestamp, r.workload_id, r.stale, r.machine_load, r.wide_spread, "
    "r.provenance, r.source_run_seconds";
// Columns of kRecordColumns, for the queries that select more after them.
constexpr int kRecordColumnCount = 22;

std::string ColumnText(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}

}  // namespace

std::string NormalizeTarget(const std::string& target) {
  try {
    return ir::Target::Parse(target).ToString();
  } catch (const ir::TargetError& e) {
    throw DatabaseError("target '" + target + "': " + e.what());
  }
}

std::string MissReason::Explain() const {
  if (!workload_known) return "unknown workload: the database has no structurally equal workload";
  if (records_this_target == 0) {
    std::string s = "workload known (" + std::to_string(records_any_target) +
                    " record(s) on any target) but nothing measured for this target";
    if (!other_targets.empty()) {
      s += "; targets with records:";
      for (const auto& t : other_targets) s += " '" + t + "'";
    }
    return s;
  }
  if (usable_this_target == 0) {
    return "only failed or unverified records for this target (" +
           std::to_string(records_this_target) + " record(s))";
  }
  return "hit";
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

  ~Impl() {
    for (auto& [sql, s] : statements) sqlite3_finalize(s);
    if (db) sqlite3_close_v2(db);
  }

  [[noreturn]] void Fail(const std::string& what, int rc) const {
    std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    int code = rc & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      throw DatabaseError(path + ": not a valid SQLite database or corrupt (" + detail + ")");
    }
    throw DatabaseError(path + ": " + what + ": " + detail);
  }

  void Exec(const char* sql) {
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errstr(rc);
      sqlite3_free(err);
      int code = rc & 0xff;
      if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
        throw DatabaseError(path + ": not a valid SQLite database or corrupt (" + msg + ")");
      }
      throw DatabaseError(path + ": " + msg);
    }
  }

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

  Stmt Prepare(const std::string& sql) {
    auto it = statements.find(sql);
    if (it == statements.end()) {
      sqlite3_stmt* s = nullptr;
      int rc = sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr);
      if (rc != SQLITE_OK) Fail("prepare failed", rc);
      it = statements.emplace(sql, s).first;
    }
    return Stmt(this, it->second);
  }

  void Begin() {
    // IMMEDIATE takes the write lock up front, so concurrent writers wait on
    // the busy timeout instead of failing with a deadlock mid-transaction.
    if (txn_depth++ == 0) Exec("BEGIN IMMEDIATE");
  }
  void Commit() {
    if (--txn_depth == 0) Exec("COMMIT");
  }
  void Rollback() {
    if (--txn_depth == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  }

  int UserVersion() {
    Stmt s = Prepare("PRAGMA user_version");
    s.Step();
    return sqlite3_column_int(s.get(), 0);
  }

  void CheckAndMigrate() {
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

  const std::vector<std::pair<WorkloadId, ir::PrimFunc>>& Candidates(const std::string& hash) {
    auto it = parsed.find(hash);
    if (it != parsed.end()) return it->second;
    std::vector<std::pair<WorkloadId, ir::PrimFunc>> found;
    Stmt s = Prepare("SELECT id, text FROM workloads WHERE hash = ? ORDER BY id");
    s.Bind(1, hash);
    while (s.Step()) {
      WorkloadId id = sqlite3_column_int64(s.get(), 0);
      try {
        found.emplace_back(id, ir::ParseFunc(ColumnText(s.get(), 1), "workload " + std::to_string(id)));
      } catch (const std::exception& e) {
        throw DatabaseError(path + ": stored workload " + std::to_string(id) +
                            " does not parse: " + e.what());
      }
    }
    return parsed.emplace(hash, std::move(found)).first->second;
  }

  std::optional<WorkloadId> Find(const ir::PrimFunc& f) {
    for (const auto& [id, g] : Candidates(ir::StructuralHashHex(f))) {
      if (ir::StructuralEqual(f, g)) return id;
    }
    return std::nullopt;
  }

  int64_t TargetId(const std::string& target, const std::string& fingerprint) {
    auto key = std::make_pair(target, fingerprint);
    if (auto it = target_ids.find(key); it != target_ids.end()) return it->second;
    {
      Stmt s = Prepare("INSERT OR IGNORE INTO targets(target, fingerprint) VALUES (?, ?)");
      s.Bind(1, target).Bind(2, fingerprint);
      s.Step();
    }
    Stmt s = Prepare("SELECT id FROM targets WHERE target = ? AND fingerprint = ?");
    s.Bind(1, target).Bind(2, fingerprint);
    if (!s.Step()) throw DatabaseError(path + ": target row vanished");
    int64_t id = sqlite3_column_int64(s.get(), 0);
    // Cached only once the row is durable: an id inside a rolled back
    // transaction would dangle.
    if (txn_depth == 0) target_ids.emplace(key, id);
    return id;
  }

  bool Insert(WorkloadId workload, const TuningRecord& in) {
    if (read_only) throw DatabaseError(path + ": opened read-only");
    if (!IsKnownStatus(in.status)) {
      throw DatabaseError("record status '" + in.status + "' is not one of ok, build_error, "
                          "run_crash, timeout, wrong_result, infra_error");
    }
    std::string target = NormalizeTarget(in.target);
    std::string trace;
    try {
      trace = CanonicalTraceJson(in.trace_json);
    } catch (const std::exception& e) {
      throw DatabaseError(std::string("record ") + e.what());
    }
    std::string trace_hash = TraceHash(trace);
    int64_t target_id = TargetId(target, in.fingerprint);
    Stmt s = Prepare(
        "INSERT OR IGNORE INTO records(workload_id, target_id, trace_hash, trace_json, "
        "run_seconds, median_seconds, status, message, verified, args, host, kiln_version, "
        "seed, job_id, timestamp, stale, machine_load, wide_spread, provenance, "
        "source_run_seconds, principal) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.Bind(1, workload).Bind(2, target_id).Bind(3, trace_hash).Bind(4, trace);
    s.Bind(5, json(in.run_seconds).dump()).Bind(6, Median(in.run_seconds));
    s.Bind(7, in.status).Bind(8, in.message).Bind(9, int64_t{in.verified ? 1 : 0});
    s.Bind(10, ArgsToJson(in.args).dump()).Bind(11, in.provenance.host);
    s.Bind(12, in.provenance.kiln_version).Bind(13, static_cast<int64_t>(in.provenance.seed));
    s.Bind(14, in.provenance.job_id).Bind(15, in.provenance.timestamp);
    s.Bind(16, int64_t{in.stale ? 1 : 0}).Bind(17, in.machine_load);
    s.Bind(18, int64_t{in.wide_spread ? 1 : 0});
    s.Bind(19, in.provenance.source).Bind(20, json(in.provenance.source_run_seconds).dump());
    s.Bind(21, commit_principal);
    s.Step();
    return sqlite3_changes(db) > 0;
  }

  TuningRecord ReadRecord(sqlite3_stmt* s, WorkloadId* workload) {
    TuningRecord r;
    r.workload_hash = ColumnText(s, 0);
    r.target = ColumnText(s, 1);
    r.fingerprint = ColumnText(s, 2);
    r.trace_json = ColumnText(s, 3);
    r.trace_hash = ColumnText(s, 4);
    r.run_seconds = json::parse(ColumnText(s, 5)).get<std::vector<double>>();
    r.median_seconds = sqlite3_column_double(s, 6);
    r.status = ColumnText(s, 7);
    r.message = ColumnText(s, 8);
    r.verified = sqlite3_column_int(s, 9) != 0;
    r.args = ArgsFromJson(json::parse(ColumnText(s, 10)));
    r.provenance.host = ColumnText(s, 11);
    r.provenance.kiln_version = ColumnText(s, 12);
    r.provenance.seed = static_cast<uint64_t>(sqlite3_column_int64(s, 13));
    r.provenance.job_id = ColumnText(s, 14);
    r.provenance.timestamp = sqlite3_column_int64(s, 15);
    if (workload) *workload = sqlite3_column_int64(s, 16);
    r.stale = sqlite3_column_int(s, 17) != 0;
    r.machine_load = sqlite3_column_double(s, 18);
    r.wide_spread = sqlite3_column_int(s, 19) != 0;
    r.provenance.source = ColumnText(s, 20);
    r.provenance.source_run_seconds =
        json::parse(ColumnText(s, 21)).get<std::vector<double>>();
    return r;
  }
};

Database::Database(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::Open(const std::string& path, Mode mode) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->read_only = mode == Mode::kReadOnly;
  int flags = impl->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) impl->Fail("cannot open", rc);
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, 10000);
  if (!impl->read_only) {
    // WAL: readers never block the writer, and a commit is durable once
    // its frames are in the log (NORMAL sync is safe against a killed process).
    impl->Exec("PRAGMA journal_mode = WAL");
    impl->Exec("PRAGMA synchronous = NORMAL");
  }
  impl->Exec("PRAGMA foreign_keys = ON");
  impl->CheckAndMigrate();
  return Database(std::move(impl));
}

Database Database::InMemory() { return Open(":memory:"); }

const std::string& Database::path() const { return impl_->path; }

WorkloadId Database::CommitWorkload(const ir::PrimFunc& func) {
  if (impl_->read_only) throw DatabaseError(impl_->path + ": opened read-only");
  std::string hash = ir::StructuralHashHex(func);
  WorkloadId id = 0;
  Transaction([&] {
    // Re-read under the write lock: another process may have added it.
    impl_->parsed.erase(hash);
    if (auto found = impl_->Find(func)) {
      id = *found;
      return;
    }
    Impl::Stmt s = impl_->Prepare("INSERT INTO workloads(hash, text) VALUES (?, ?)");
    s.Bind(1, hash).Bind(2, ir::ToText(func));
    s.Step();
    id = sqlite3_last_insert_rowid(impl_->db);
  });
  impl_->parsed.erase(hash);
  return id;
}

std::optional<WorkloadId> Database::FindWorkload(const ir::PrimFunc& func) const {
  return impl_->Find(func);
}

std::vector<WorkloadId> Database::FindWorkloadsByHash(const std::string& hash_hex) const {
  std::vector<WorkloadId> ids;
  Impl::Stmt s = impl_->Prepare("SELECT id FROM workloads WHERE hash = ? ORDER BY id");
  s.Bind(1, hash_hex);
  while (s.Step()) ids.push_back(sqlite3_column_int64(s.get(), 0));
  return ids;
}

std::string Database::WorkloadText(WorkloadId id) const {
  Impl::Stmt s = impl_->Prepare("SELECT text FROM workloads WHERE id = ?");
  s.Bind(1, id);
  if (!s.Step()) throw DatabaseError(impl_->path + ": no workload " + std::to_string(id));
  return ColumnText(s.get(), 0);
}

std::string Database::WorkloadHash(WorkloadId id) const {
  Impl::Stmt s = impl_->Prepare("SELECT hash FROM workloads WHERE id = ?");
  s.Bind(1, id);
  if (!s.Step()) throw DatabaseError(impl_->path + ": no workload " + std::to_string(id));
  return ColumnText(s.get(), 0);
}

void Database::Transaction(const std::function<void()>& fn) {
  impl_->Begin();
  try {
    fn();
  } catch (...) {
    impl_->Rollback();
    if (impl_->txn_depth == 0) impl_->target_ids.clear();
    throw;
  }
  impl_->Commit();
}

bool Database::CommitRecord(WorkloadId workload, const TuningRecord& record) {
  bool added = false;
  Transaction([&] { added = impl_->Insert(workload, record); });
  return added;
}

size_t Database::CommitRecords(WorkloadId workload, const std::vector<TuningRecord>& records) {
  size_t added = 0;
  Transaction([&] {
    for (const auto& r : records) added += impl_->Insert(workload, r) ? 1 : 0;
  });
  return added;
}

std::vector<TuningRecord> Database::TopK(WorkloadId workload, const std::string& target,
                                         int k) const {
  std::vector<TuningRecord> out;
  if (k <= 0) return out;
  // One index range per target row (usually one fingerprint): with a single
  // target_id the records_best index yields rows already in median order, so
  // the query reads k rows instead of sorting every record of the workload.
  std::vector<int64_t> target_ids;
  {
    Impl::Stmt s = impl_->Prepare("SELECT id FROM targets WHERE target = ? ORDER BY id");
    s.Bind(1, NormalizeTarget(target));
    while (s.Step()) target_ids.push_back(sqlite3_column_int64(s.get(), 0));
  }
  std::vector<std::pair<int64_t, TuningRecord>> found;  // (record id, record)
  for (int64_t tid : target_ids) {
    Impl::Stmt s = impl_->Prepare(
        std::string("SELECT ") + kRecordColumns +
        ", r.id FROM records r JOIN targets t ON t.id = r.target_id JOIN workloads w ON w.id = "
        "r.workload_id WHERE r.workload_id = ? AND r.target_id = ? AND r.status = 'ok' AND "
        "r.verified = 1 AND r.stale = 0 ORDER BY r.median_seconds, r.id LIMIT ?");
    s.Bind(1, workload).Bind(2, tid).Bind(3, int64_t{k});
    while (s.Step()) {
      int64_t id = sqlite3_column_int64(s.get(), kRecordColumnCount);
      found.emplace_back(id, impl_->ReadRecord(s.get(), nullptr));
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.second.median_seconds != b.second.median_seconds) {
      return a.second.median_seconds < b.second.median_seconds;
    }
    return a.first < b.first;
  });
  for (auto& [id, r] : found) {
    if (static_cast<int>(out.size()) == k) break;
    out.push_back(std::move(r));
  }
  return out;
}

bool Database::UpdateMeasurement(WorkloadId workload, const TuningRecord& record) {
  if (impl_->read_only) throw DatabaseError(impl_->path + ": opened read-only");
  std::string trace_hash = record.trace_hash;
  if (trace_hash.empty()) {
    try {
      trace_hash = TraceHash(CanonicalTraceJson(record.trace_json));
    } catch (const std::exception& e) {
      throw DatabaseError(std::string("record ") + e.what());
    }
  }
  if (!IsKnownStatus(record.status)) {
    throw DatabaseError("record status '" + record.status + "' is not a known status");
  }
  bool changed = false;
  Transaction([&] {
    Impl::Stmt s = impl_->Prepare(
        "UPDATE records SET run_seconds = ?, median_seconds = ?, status = ?, message = ?, "
        "verified = ?, stale = ?, machine_load = ?, wide_spread = ? WHERE workload_id = ? AND "
        "trace_hash = ? AND target_id = (SELECT id FROM targets WHERE target = ? AND "
        "fingerprint = ?)");
    s.Bind(1, json(record.run_seconds).dump()).Bind(2, Median(record.run_seconds));
    s.Bind(3, record.status).Bind(4, record.message).Bind(5, int64_t{record.verified ? 1 : 0});
    s.Bind(6, int64_t{record.stale ? 1 : 0}).Bind(7, record.machine_load);
    s.Bind(8, int64_t{record.wide_spread ? 1 : 0}).Bind(9, workload).Bind(10, trace_hash);
    s.Bind(11, NormalizeTarget(record.target)).Bind(12, record.fingerprint);
    s.Step();
    changed = sqlite3_changes(impl_->db) > 0;
  });
  return changed;
}

std::optional<TuningRecord> Database::Best(WorkloadId workload, const std::string& target) const {
  auto top = TopK(workload, target, 1);
  if (top.empty()) return std::nullopt;
  return top.front();
}

std::vector<std::string> Database::Targets() const {
  std::vector<std::string> out;
  Impl::Stmt s = impl_->Prepare("SELECT DISTINCT target FROM targets ORDER BY target");
  while (s.Step()) out.push_back(ColumnText(s.get(), 0));
  return out;
}

int64_t Database::RenameTarget(const std::string& from, const std::string& to) {
  if (impl_->read_only) throw DatabaseError(impl_->path + ": opened read-only");
  const std::string old_norm = NormalizeTarget(from), new_norm = NormalizeTarget(to);
  if (old_norm == new_norm) return 0;
  int64_t changed = 0;
  Transaction([&] {
    std::vector<std::pair<int64_t, std::string>> rows;  // (id, fingerprint)
    {
      Impl::Stmt s = impl_->Prepare("SELECT id, fingerprint FROM targets WHERE target = ?");
      s.Bind(1, old_norm);
      while (s.Step()) rows.emplace_back(sqlite3_column_int64(s.get(), 0), ColumnText(s.get(), 1));
    }
    for (const auto& [id, fingerprint] : rows) {
      std::optional<int64_t> existing;
      {
        Impl::Stmt s = impl_->Prepare("SELECT id FROM targets WHERE target = ? AND fingerprint = ?");
        s.Bind(1, new_norm).Bind(2, fingerprint);
        if (s.Step()) existing = sqlite3_column_int64(s.get(), 0);
      }
      if (existing) {
        // Same machine under both spellings: move the records over; a trace
        // the new row already holds stays there once.
        {
          Impl::Stmt s = impl_->Prepare("UPDATE OR IGNORE records SET target_id = ? WHERE target_id = ?");
          s.Bind(1, *existing).Bind(2, id);
          s.Step();
        }
        {
          Impl::Stmt s = impl_->Prepare("DELETE FROM records WHERE target_id = ?");
          s.Bind(1, id);
          s.Step();
        }
        Impl::Stmt s = impl_->Prepare("DELETE FROM targets WHERE id = ?");
        s.Bind(1, id);
        s.Step();
      } else {
        Impl::Stmt s = impl_->Prepare("UPDATE targets SET target = ? WHERE id = ?");
        s.Bind(1, new_norm).Bind(2, id);
        s.Step();
      }
      ++changed;
    }
  });
  impl_->target_ids.clear();
  return changed;
}

MissReason Database::ExplainMiss(WorkloadId workload, const std::string& target) const {
  MissReason m;
  m.workload_known = workload > 0;
  if (!m.workload_known) return m;
  std::string norm = NormalizeTarget(target);
  Impl::Stmt s = impl_->Prepare(
      "SELECT t.target, count(*), sum(r.status = 'ok' AND r.verified = 1 AND r.stale = 0) FROM records r "
      "JOIN targets t ON t.id = r.target_id WHERE r.workload_id = ? GROUP BY t.target "
      "ORDER BY t.target");
  s.Bind(1, workload);
  while (s.Step()) {
    std::string t = ColumnText(s.get(), 0);
    int64_t n = sqlite3_column_int64(s.get(), 1);
    m.records_any_target += n;
    if (t == norm) {
      m.records_this_target = n;
      m.usable_this_target = sqlite3_column_int64(s.get(), 2);
    } else {
      m.other_targets.push_back(t);
    }
  }
  return m;
}

bool Database::HasRecord(WorkloadId workload, const std::string& target,
                         const std::string& trace_hash) const {
  Impl::Stmt s = impl_->Prepare(
      "SELECT 1 FROM records r JOIN targets t ON t.id = r.target_id "
      "WHERE r.workload_id = ? AND t.target = ? AND r.trace_hash = ? LIMIT 1");
  s.Bind(1, workload).Bind(2, NormalizeTarget(target)).Bind(3, trace_hash);
  return s.Step();
}

std::vector<std::string> Database::MeasuredTraceHashes(WorkloadId workload,
                                                       const std::string& target) const {
  std::vector<std::string> out;
  Impl::Stmt s = impl_->Prepare(
      "SELECT DISTINCT r.trace_hash FROM records r JOIN targets t ON t.id = r.target_id "
      "WHERE r.workload_id = ? AND t.target = ? ORDER BY r.trace_hash");
  s.Bind(1, workload).Bind(2, NormalizeTarget(target));
  while (s.Step()) out.push_back(ColumnText(s.get(), 0));
  return out;
}

int64_t Database::CountRecords(WorkloadId workload, const std::string& target) const {
  Impl::Stmt s = impl_->Prepare(
      "SELECT count(*) FROM records r JOIN targets t ON t.id = r.target_id "
      "WHERE r.workload_id = ? AND t.target = ?");
  s.Bind(1, workload).Bind(2, NormalizeTarget(target));
  s.Step();
  return sqlite3_column_int64(s.get(), 0);
}

int64_t Database::Size() const {
  Impl::Stmt s = impl_->Prepare("SELECT count(*) FROM records");
  s.Step();
  return sqlite3_column_int64(s.get(), 0);
}

DatabaseStats Database::Stats() const {
  DatabaseStats st;
  auto count = [&](const char* sql) {
    Impl::Stmt s = impl_->Prepare(sql);
    s.Step();
    return static_cast<int64_t>(sqlite3_column_int64(s.get(), 0));
  };
  st.workloads = count("SELECT count(*) FROM workloads");
  st.targets = count("SELECT count(DISTINCT target) FROM targets");
  st.records = count("SELECT count(*) FROM records");
  st.usable_records =
      count("SELECT count(*) FROM records WHERE status = 'ok' AND verified = 1 AND stale = 0");
  Impl::Stmt s = impl_->Prepare("SELECT status, count(*) FROM records GROUP BY status ORDER BY status");
  while (s.Step()) st.by_status.emplace_back(ColumnText(s.get(), 0), sqlite3_column_int64(s.get(), 1));
  return st;
}

void Database::ForEachRecord(const std::function<void(WorkloadId, const TuningRecord&)>& fn) const {
  // Materialized first so fn may itself query this database.
  std::vector<std::pair<WorkloadId, TuningRecord>> all;
  {
    Impl::Stmt s = impl_->Prepare(
        std::string("SELECT ") + kRecordColumns +
        " FROM records r JOIN targets t ON t.id = r.target_id JOIN workloads w ON w.id = "
        "r.workload_id ORDER BY r.id");
    while (s.Step()) {
      WorkloadId w = 0;
      TuningRecord r = impl_->ReadRecord(s.get(), &w);
      all.emplace_back(w, std::move(r));
    }
  }
  for (const auto& [w, r] : all) fn(w, r);
}

int64_t Database::Prune(int k) {
  if (k < 0) throw DatabaseError("prune: k must be >= 0");
  int64_t deleted = 0;
  Transaction([&] {
    Impl::Stmt s = impl_->Prepare(
        "DELETE FROM records WHERE id NOT IN (SELECT id FROM (SELECT r.id, row_number() OVER ("
        "PARTITION BY r.workload_id, t.target ORDER BY r.median_seconds, r.id) AS rank FROM "
        "records r JOIN targets t ON t.id = r.target_id WHERE r.status = 'ok' AND r.verified = 1 "
        "AND r.stale = 0) WHERE rank <= ?)");
    s.Bind(1, int64_t{k});
    s.Step();
    deleted = sqlite3_changes(impl_->db);
  });
  return deleted;
}

int64_t Database::Merge(const std::string& other_path) {
  Database other = Open(other_path, Mode::kReadOnly);
  std::map<WorkloadId, WorkloadId> ids;
  int64_t added = 0;
  Transaction([&] {
    Impl::Stmt s = other.impl_->Prepare("SELECT id, text FROM workloads ORDER BY id");
    while (s.Step()) {
      WorkloadId id = sqlite3_column_int64(s.get(), 0);
      ids[id] = CommitWorkload(ir::ParseFunc(ColumnText(s.get(), 1), other_path));
    }
    other.ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
      added += impl_->Insert(ids.at(w), r) ? 1 : 0;
    });
  });
  return added;
}

void Database::ExportJsonLines(std::ostream& out) const {
  out << json{{"kiln_tuning_db", kSchemaVersion}}.dump() << "\n";
  Impl::Stmt s = impl_->Prepare("SELECT id, hash, text FROM workloads ORDER BY id");
  while (s.Step()) {
    out << json{{"type", "workload"},
                {"id", sqlite3_column_int64(s.get(), 0)},
                {"hash", ColumnText(s.get(), 1)},
                {"text", ColumnText(s.get(), 2)}}
               .dump()
        << "\n";
  }
  ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
    json j = RecordToJson(r);
    j["type"] = "record";
    j["workload"] = w;
    out << j.dump() << "\n";
  });
}

int64_t Database::ImportJsonLines(std::istream& in) {
  std::map<int64_t, WorkloadId> ids;
  int64_t added = 0;
  Transaction([&] {
    std::string line;
    int64_t lineno = 0;
    bool header = false;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      auto where = [&] { return "import line " + std::to_string(lineno) + ": "; };
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) throw DatabaseError(where() + "not a JSON object");
      try {
        if (!header) {
          if (!j.contains("kiln_tuning_db")) {
            throw DatabaseError("not a Kiln export (first line lacks \"kiln_tuning_db\")");
          }
          int v = j.at("kiln_tuning_db").get<int>();
          if (v > kSchemaVersion) {
            throw DatabaseError("export format version " + std::to_string(v) +
                                " is newer than this Kiln (" + std::to_string(kSchemaVersion) + ")");
          }
          header = true;
          continue;
        }
        std::string type = j.at("type").get<std::string>();
        if (type == "workload") {
          ir::PrimFunc f = ir::ParseFunc(j.at("text").get<std::string>(), "import");
          if (j.contains("hash") && j["hash"].get<std::string>() != ir::StructuralHashHex(f)) {
            throw DatabaseError("workload hash does not match its text");
          }
          ids[j.at("id").get<int64_t>()] = CommitWorkload(f);
        } else if (type == "record") {
          int64_t w = j.at("workload").get<int64_t>();
          auto it = ids.find(w);
          if (it == ids.end()) {
            throw DatabaseError("record refers to workload " + std::to_string(w) +
                                " not defined on an earlier line");
          }
          added += impl_->Insert(it->second, RecordFromJson(j)) ? 1 : 0;
        } else {
          throw DatabaseError("unknown type '" + type + "'");
        }
      } catch (const json::exception& e) {
        throw DatabaseError(where() + e.what());
      } catch (const DatabaseError& e) {
        throw DatabaseError(where() + e.what());
      } catch (const std::exception& e) {
        throw DatabaseError(where() + e.what());
      }
    }
    if (!header) throw DatabaseError("import: empty input, not a Kiln export");
  });
  return added;
}

namespace {

JobRow ReadJobRow(sqlite3_stmt* s) {
  JobRow j;
  j.id = sqlite3_column_int64(s, 0);
  j.spec = ColumnText(s, 1);
  j.state = ColumnText(s, 2);
  j.priority = sqlite3_column_int64(s, 3);
  j.pool = ColumnText(s, 4);
  j.message = ColumnText(s, 5);
  j.created = sqlite3_column_int64(s, 6);
  j.updated = sqlite3_column_int64(s, 7);
  j.principal = ColumnText(s, 8);
  return j;
}

constexpr const char* kJobColumns = "id, spec, state, priority, pool, message, created, updated, principal";

}  // namespace

int64_t Database::CreateJob(const std::string& spec, int64_t priority, const std::string& state,
                            const std::string& principal) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  Impl::Stmt s = impl_->Prepare(
      "INSERT INTO jobs(spec, state, priority, pool, message, created, updated, principal) "
      "VALUES (?, ?, ?, '', '', ?, ?, ?)");
  s.Bind(1, spec).Bind(2, state).Bind(3, priority).Bind(4, now).Bind(5, now).Bind(6, principal);
  s.Step();
  return sqlite3_last_insert_rowid(impl_->db);
}

void Database::SetCommitPrincipal(const std::string& principal) { impl_->commit_principal = principal; }

void Database::UpdateJob(int64_t id, const std::string& state, const std::string& message) {
  Impl::Stmt s = impl_->Prepare("UPDATE jobs SET state = ?, message = ?, updated = ? WHERE id = ?");
  s.Bind(1, state).Bind(2, message).Bind(3, static_cast<int64_t>(std::time(nullptr))).Bind(4, id);
  s.Step();
  if (sqlite3_changes(impl_->db) != 1) throw DatabaseError(impl_->path + ": no job " + std::to_string(id));
}

void Database::SetJobPool(int64_t id, const std::string& pool) {
  Impl::Stmt s = impl_->Prepare("UPDATE jobs SET pool = ? WHERE id = ?");
  s.Bind(1, pool).Bind(2, id);
  s.Step();
  if (sqlite3_changes(impl_->db) != 1) throw DatabaseError(impl_->path + ": no job " + std::to_string(id));
}

std::optional<JobRow> Database::Job(int64_t id) const {
  Impl::Stmt s = impl_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?");
  s.Bind(1, id);
  if (!s.Step()) return std::nullopt;
  return ReadJobRow(s.get());
}

std::vector<JobRow> Database::Jobs() const {
  Impl::Stmt s = impl_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY id");
  std::vector<JobRow> out;
  while (s.Step()) out.push_back(ReadJobRow(s.get()));
  return out;
}

std::string Database::IntegrityCheck() const {
  Impl::Stmt s = impl_->Prepare("PRAGMA integrity_check");
  std::string out;
  while (s.Step()) out += (out.empty() ? "" : "\n") + ColumnText(s.get(), 0);
  return out;
}

void Database::SetPeer(WorkloadId workload, const PeerFigure& peer) {
  if (peer.name.empty()) throw DatabaseError(impl_->path + ": a peer figure needs a name");
  if (!(peer.seconds > 0) || !std::isfinite(peer.seconds)) {
    throw DatabaseError(impl_->path + ": peer '" + peer.name + "': seconds must be positive, not " +
                        std::to_string(peer.seconds));
  }
  Impl::Stmt s = impl_->Prepare(
      "INSERT OR REPLACE INTO peers(workload_id, target, name, seconds, note, timestamp) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  s.Bind(1, workload).Bind(2, NormalizeTarget(peer.target)).Bind(3, peer.name);
  s.Bind(4, peer.seconds).Bind(5, peer.note).Bind(6, peer.timestamp);
  s.Step();
}

std::vector<PeerFigure> Database::Peers(WorkloadId workload, const std::string& target) const {
  // An older file opened read-only has no peers table: it has no peers.
  Impl::Stmt t = impl_->Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'peers'");
  if (!t.Step()) return {};
  Impl::Stmt s = impl_->Prepare(
      "SELECT target, name, seconds, note, timestamp FROM peers WHERE workload_id = ? AND "
      "(? = '' OR target = ?) ORDER BY target, name");
  const std::string normalized = target.empty() ? "" : NormalizeTarget(target);
  s.Bind(1, workload).Bind(2, normalized).Bind(3, normalized);
  std::vector<PeerFigure> out;
  while (s.Step()) {
    out.push_back({ColumnText(s.get(), 0), ColumnText(s.get(), 1), sqlite3_column_double(s.get(), 2),
                   ColumnText(s.get(), 3), sqlite3_column_int64(s.get(), 4)});
  }
  return out;
}

}  // namespace kiln::database
