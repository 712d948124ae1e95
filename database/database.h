// Database: Kiln's SQLite tuning database, the source of truth of every
// tuning run (format and guarantees: database/FORMAT.md).
//
// Every lookup is exact: a record is returned only for the workload it was
// measured on (structural hash confirmed by structural equality) and the
// normalized target string it was measured for. Writes go through WAL with a
// busy timeout, so several processes may commit at once and a killed process
// loses nothing it had committed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "database/record.h"
#include "ir/prim_func.h"

namespace kiln::database {

// Any failure of the store: what() names the file and what went wrong.
class DatabaseError : public std::runtime_error {
 public:
  explicit DatabaseError(const std::string& msg) : std::runtime_error(msg) {}
};

// The schema version this binary writes; older files are migrated on open
// (read-write), newer ones are refused.
inline constexpr int kSchemaVersion = 3;

using WorkloadId = int64_t;

// Why a (workload, target) query has no tuned result, for `kiln query --why`.
struct MissReason {
  bool workload_known = false;
  int64_t records_any_target = 0;    // records of this workload on any target
  int64_t records_this_target = 0;   // of which measured for the queried target
  int64_t usable_this_target = 0;    // status ok and verified
  std::vector<std::string> other_targets;  // targets that do have records
  std::string Explain() const;       // one sentence
};

// A farm job as the database keeps it (the table of schema version 2). The
// farm (rpc/farm/) gives `spec` and `state` their meaning; the database
// stores them so that a restarted coordinator resumes its jobs.
struct JobRow {
  int64_t id = 0;
  std::string spec;
  std::string state;
  int64_t priority = 0;
  std::string pool;  // the device pool the job measures on; empty until bound
  std::string message;
  int64_t created = 0;  // seconds since the Unix epoch
  int64_t updated = 0;
  std::string principal;  // the farm principal that submitted it (schema version 3)
};

// Another implementation's time for a workload on a target (a vendor library,
// TVM, a hand-written kernel), stored with `kiln db peer add` so that
// `kiln report` can give the tuned best as a ratio against it. One figure per
// (workload, target, name); a new one replaces the old.
struct PeerFigure {
  std::string target;  // normalized on store
  std::string name;    // "openblas-sgemm", "tvm-0.27"
  double seconds = 0;  // the peer's time for one call
  std::string note;    // how it was measured, for people
  int64_t timestamp = 0;
};

struct DatabaseStats {
  int64_t workloads = 0;
  int64_t targets = 0;
  int64_t records = 0;
  int64_t usable_records = 0;  // ok, verified and not stale
  std::vector<std::pair<std::string, int64_t>> by_status;
};

class Database {
 public:
  enum class Mode { kReadWrite, kReadOnly };

  // Opens (creating when read-write and missing) a database file. Throws
  // DatabaseError for a file that is not SQLite, is corrupt, is not a Kiln
  // database, or has a newer schema than this binary.
  static Database Open(const std::string& path, Mode mode = Mode::kReadWrite);
  static Database InMemory();

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const;

  // Workloads. CommitWorkload returns the existing id when a structurally
  // equal workload is stored, else stores it.
  WorkloadId CommitWorkload(const ir::PrimFunc& func);
  std::optional<WorkloadId> FindWorkload(const ir::PrimFunc& func) const;
  bool HasWorkload(const ir::PrimFunc& func) const { return FindWorkload(func).has_value(); }
  // All ids stored under a structural hash (more than one only on a collision).
  std::vector<WorkloadId> FindWorkloadsByHash(const std::string& hash_hex) const;
  std::string WorkloadText(WorkloadId id) const;
  std::string WorkloadHash(WorkloadId id) const;

  // Records. record.target is normalized; trace_json canonicalized and
  // hashed; median computed. Returns false (and changes nothing) when the
  // same (workload, target, trace hash) is already stored: replaying a
  // commit never duplicates. Throws for an unknown status string or target.
  bool CommitRecord(WorkloadId workload, const TuningRecord& record);
  // One transaction for the whole batch; returns how many were new.
  size_t CommitRecords(WorkloadId workload, const std::vector<TuningRecord>& records);
  // Runs fn inside one transaction (nested calls join the outer one).
  void Transaction(const std::function<void()>& fn);

  // Rewrites what a re-measure changes in the stored record with the same
  // workload, target, fingerprint and trace (hash, or the hash of its
  // trace_json when trace_hash is empty): run_seconds (and the median),
  // status, message, verified, stale and the noise figures. Returns false
  // when no such record is stored.
  bool UpdateMeasurement(WorkloadId workload, const TuningRecord& record);

  // Best records by median seconds among status "ok", verified, not stale records of
  // exactly this workload and target (any fingerprint), fastest first.
  std::vector<TuningRecord> TopK(WorkloadId workload, const std::string& target, int k) const;
  std::optional<TuningRecord> Best(WorkloadId workload, const std::string& target) const;
  MissReason ExplainMiss(WorkloadId workload, const std::string& target) const;

  // For resuming a tuning loop: every trace hash measured for (workload,
  // target), failures included, and their count.
  bool HasRecord(WorkloadId workload, const std::string& target, const std::string& trace_hash) const;
  std::vector<std::string> MeasuredTraceHashes(WorkloadId workload, const std::string& target) const;
  int64_t CountRecords(WorkloadId workload, const std::string& target) const;

  // Every distinct target string that has a target row, sorted.
  std::vector<std::string> Targets() const;
  // Stores every record measured for target `from` under target `to` instead
  // (both normalized), in one transaction; a record that `to` already holds
  // (same workload, fingerprint and trace hash) is dropped, not doubled.
  // Returns how many target rows changed. For rewriting stored targets into
  // a new canonical form (search/stored_targets.h).
  int64_t RenameTarget(const std::string& from, const std::string& to);

  int64_t Size() const;  // number of records
  DatabaseStats Stats() const;
  // Every record in commit order.
  void ForEachRecord(const std::function<void(WorkloadId, const TuningRecord&)>& fn) const;
  // Keeps the best k usable records per (workload, target) and deletes every
  // other record, failures included. Returns how many were deleted.
  int64_t Prune(int k);
  // Copies every workload and record of another database file in; returns
  // how many records were new.
  int64_t Merge(const std::string& other_path);
  // JSON lines in the format of database/FORMAT.md.
  void ExportJsonLines(std::ostream& out) const;
  // Returns how many records were new; errors name the line number.
  int64_t ImportJsonLines(std::istream& in);

  std::string IntegrityCheck() const;  // "ok" or SQLite's report

  // Farm jobs (JobRow). Update and SetJobPool throw DatabaseError for an
  // unknown id.
  int64_t CreateJob(const std::string& spec, int64_t priority, const std::string& state,
                    const std::string& principal = "");
  // The farm principal stored with every record this handle commits from
  // now on (records.principal, schema version 3); '' outside the farm.
  void SetCommitPrincipal(const std::string& principal);
  void UpdateJob(int64_t id, const std::string& state, const std::string& message);
  void SetJobPool(int64_t id, const std::string& pool);
  std::optional<JobRow> Job(int64_t id) const;
  std::vector<JobRow> Jobs() const;  // by id

  // Peer figures (PeerFigure). SetPeer throws DatabaseError for an empty
  // name or a time that is not positive; Peers with an empty target returns
  // those of every target, and none for a file older than schema version 3.
  void SetPeer(WorkloadId workload, const PeerFigure& peer);
  std::vector<PeerFigure> Peers(WorkloadId workload, const std::string& target = "") const;

 private:
  struct Impl;
  explicit Database(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The normalized form of a target string; throws DatabaseError naming it.
std::string NormalizeTarget(const std::string& target);

}  // namespace kiln::database
