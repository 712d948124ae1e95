// The tuning database's workloads, records and peer figures: storing them
// (Database::Impl::Insert, structural lookup of workloads) and the queries
// the tuner, `kiln query` and `kiln report` ask. The connection, schema,
// jobs and JSON-lines files are beside it (database/database_impl.h).
#include "database/database.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "database/database_impl.h"
#include "database/record_json.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "ir/target.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"

namespace kiln::database {

using nlohmann::json;

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

const std::vector<std::pair<WorkloadId, ir::PrimFunc>>& Database::Impl::Candidates(
    const std::string& hash) {
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

std::optional<WorkloadId> Database::Impl::Find(const ir::PrimFunc& f) {
  for (const auto& [id, g] : Candidates(ir::StructuralHashHex(f))) {
    if (ir::StructuralEqual(f, g)) return id;
  }
  return std::nullopt;
}

int64_t Database::Impl::TargetId(const std::string& target, const std::string& fingerprint) {
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

bool Database::Impl::Insert(WorkloadId workload, const TuningRecord& in) {
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

TuningRecord Database::Impl::ReadRecord(sqlite3_stmt* s, WorkloadId* workload) {
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

void Database::SetCommitPrincipal(const std::string& principal) { impl_->commit_principal = principal; }

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
