// Tuning database: best-record lookup latency (p50 / p99) at 10k and 1M
// records, and commit throughput in batches, each against a peer measured in
// the same run on the same file: a raw SQLite prepared point query / insert.
//
// Goals (issue 5): p99 <= 100 us at 1M records, >= 10k commits/s in batches.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "database/database.h"
#include "ir/workloads/suite.h"

namespace {

using kiln::database::Database;
using kiln::database::TuningRecord;
using kiln::database::WorkloadId;
using Clock = std::chrono::steady_clock;

const char* kTargets[] = {"llvm -mcpu=skylake-avx512", "cuda -arch=sm_90"};

TuningRecord Rec(int64_t i, std::mt19937_64& rng) {
  TuningRecord r;
  r.target = kTargets[i % 2];
  r.fingerprint = "bench";
  r.trace_json = "{\"insts\":[{\"kind\":\"Split\",\"i\":" + std::to_string(i) + "}]}";
  double base = 1e-3 * (1 + static_cast<double>(rng() % 100000) / 1000);
  r.run_seconds = {base, base * 1.01, base * 0.99};
  r.status = i % 10 == 0 ? "run_crash" : "ok";
  r.verified = i % 10 != 0;
  r.args = {{"float32", {1024, 1024}}};
  return r;
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

void Run(int64_t n_records) {
  std::string path = "/tmp/kiln_db_bench_" + std::to_string(getpid()) + ".db";
  for (const char* s : {"", "-wal", "-shm"}) std::remove((path + s).c_str());
  std::mt19937_64 rng(42);
  Database db = Database::Open(path);
  std::vector<WorkloadId> ws;
  for (const auto& cfg : kiln::ir::SuiteConfigs()) {
    ws.push_back(db.CommitWorkload(kiln::ir::MakeWorkload(cfg.name, cfg.index)));
  }
  const size_t kBatch = 10000;
  auto t0 = Clock::now();
  int64_t done = 0;
  while (done < n_records) {
    WorkloadId w = ws[(done / kBatch) % ws.size()];
    std::vector<TuningRecord> batch;
    for (size_t j = 0; j < kBatch && done < n_records; ++j, ++done) batch.push_back(Rec(done, rng));
    db.CommitRecords(w, batch);
  }
  double fill = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("records=%lld  commit in batches of %zu: %.0f records/s\n",
              static_cast<long long>(n_records), kBatch, n_records / fill);

  // Peer commit: raw prepared INSERTs in one transaction into the same table.
  {
    sqlite3* raw;
    sqlite3_open(path.c_str(), &raw);
    sqlite3_busy_timeout(raw, 10000);
    sqlite3_stmt* ins;
    sqlite3_prepare_v2(raw,
                       "INSERT INTO records(workload_id, target_id, trace_hash, trace_json, "
                       "run_seconds, median_seconds, status, message, verified, args, host, "
                       "kiln_version, seed, job_id, timestamp) VALUES "
                       "(?, 1, ?, '{}', '[1]', ?, 'ok', '', 1, '[]', '', '', 0, '', 0)",
                       -1, &ins, nullptr);
    const int kPeer = 10000;
    auto p0 = Clock::now();
    sqlite3_exec(raw, "BEGIN", nullptr, nullptr, nullptr);
    for (int i = 0; i < kPeer; ++i) {
      std::string h = "peer" + std::to_string(i);
      sqlite3_bind_int64(ins, 1, ws[0]);
      sqlite3_bind_text(ins, 2, h.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_double(ins, 3, 1.0);
      sqlite3_step(ins);
      sqlite3_reset(ins);
    }
    sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);  // keep the file as Kiln wrote it
    double peer = std::chrono::duration<double>(Clock::now() - p0).count();
    std::printf("  peer raw SQLite insert: %.0f rows/s  (Kiln/peer throughput %.2f)\n",
                kPeer / peer, (n_records / fill) / (kPeer / peer));

    // Single-record commits (one transaction each), the tuning loop's worst case.
    const int kSingles = 500;
    auto s0 = Clock::now();
    for (int i = 0; i < kSingles; ++i) db.CommitRecord(ws[1], Rec(n_records + i, rng));
    double singles = std::chrono::duration<double>(Clock::now() - s0).count();
    std::printf("  single-record commits: %.0f commits/s\n", kSingles / singles);

    // Lookups: Kiln's Best (target normalized, record decoded) vs a raw point
    // query through the same index.
    sqlite3_stmt* q;
    sqlite3_prepare_v2(raw,
                       "SELECT trace_json, median_seconds FROM records WHERE workload_id = ? AND "
                       "target_id = 1 AND status = 'ok' AND verified = 1 ORDER BY median_seconds "
                       "LIMIT 1",
                       -1, &q, nullptr);
    const int kLookups = 20000;
    std::vector<double> kiln_us, peer_us;
    double sink = 0;
    for (int i = 0; i < kLookups; ++i) {
      WorkloadId w = ws[rng() % ws.size()];
      auto a = Clock::now();
      auto best = db.Best(w, kTargets[0]);
      auto b = Clock::now();
      sqlite3_bind_int64(q, 1, w);
      if (sqlite3_step(q) == SQLITE_ROW) sink += sqlite3_column_double(q, 1);
      sqlite3_reset(q);
      auto c = Clock::now();
      if (best) sink += best->median_seconds;
      kiln_us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
      peer_us.push_back(std::chrono::duration<double, std::micro>(c - b).count());
    }
    std::printf("  best-record lookup: Kiln p50 %.1f us p99 %.1f us | peer raw query p50 %.1f us "
                "p99 %.1f us | Kiln/peer p99 %.2f  (checksum %.3f)\n",
                Pct(kiln_us, 0.5), Pct(kiln_us, 0.99), Pct(peer_us, 0.5), Pct(peer_us, 0.99),
                Pct(kiln_us, 0.99) / Pct(peer_us, 0.99), sink);
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    sqlite3_close(raw);
  }
  for (const char* s : {"", "-wal", "-shm"}) std::remove((path + s).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // `database_bench quick` runs only the 10k size (for smoke runs).
  bool quick = argc > 1 && std::string(argv[1]) == "quick";
  Run(10000);
  if (!quick) Run(1000000);
  return 0;
}
