// Fault soak (issue 22): N candidates (default 1,000) drawn at random, from a
// seed, among every fault the local runner knows (rpc/test_fault.h: segfault,
// abort, integer division by zero, infinite loop, stack overflow, memory
// blow-up past the child's limit, wrong values, stray writes into an input)
// and an unbuildable kernel, mixed with good candidates (three schedules of a
// small matmul), go through one real rpc::LocalRunner in batches, and every
// result is committed to a real SQLite database as the tuner does.
//
// Printed: per kind, how many came back with the right status (and, for
// crashes, the right signal in the message); how many runner children were
// replaced (expected: one per candidate that reached the child and failed);
// whether this process (the parent) survived; whether the database holds
// exactly what was committed and passes SQLite's integrity check; whether
// every good candidate came back ok and verified with its times stored
// unchanged. Goal: N/N classified right, 0 parent deaths, 0 good results lost
// or altered; the last line says met or not met (exit status 0 / 1).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "database/database.h"
#include "ir/schedule/schedule.h"
#include "ir/target.h"
#include "ir/workloads/suite.h"
#include "rpc/local_runner.h"
#include "search/measure.h"

namespace {

using namespace kiln;  // NOLINT: a benchmark's main
using search::MeasureStatus;

// What a candidate is; the good one first.
enum class Kind {
  kGood,
  kSegfault,
  kAbort,
  kDivideByZero,
  kInfiniteLoop,
  kStackOverflow,
  kUnboundedAlloc,
  kWrongValues,
  kStrayWrite,
  kBuildError,
};
constexpr int kKinds = 10;

struct KindInfo {
  const char* name;
  rpc::TestFault fault;
  MeasureStatus expected;
  const char* message;  // what the result's message must hold ("" for ok)
};

KindInfo Info(Kind k) {
  using rpc::TestFault;
  switch (k) {
    case Kind::kGood: return {"good", TestFault::kNone, MeasureStatus::kOk, ""};
    case Kind::kSegfault: return {"segfault", TestFault::kSegfault, MeasureStatus::kRunCrash, "SIGSEGV"};
    case Kind::kAbort: return {"abort", TestFault::kAbort, MeasureStatus::kRunCrash, "SIGABRT"};
    case Kind::kDivideByZero:
      return {"fpe", TestFault::kDivideByZero, MeasureStatus::kRunCrash, "SIGFPE"};
    case Kind::kInfiniteLoop:
      return {"infinite_loop", TestFault::kInfiniteLoop, MeasureStatus::kTimeout, "longer than"};
    case Kind::kStackOverflow:
      return {"stack_overflow", TestFault::kStackOverflow, MeasureStatus::kRunCrash, "SIGSEGV"};
    case Kind::kUnboundedAlloc:
      return {"memory_blowup", TestFault::kUnboundedAlloc, MeasureStatus::kRunCrash, "out of memory"};
    case Kind::kWrongValues:
      return {"wrong_values", TestFault::kWrongValues, MeasureStatus::kWrongResult, "C["};
    case Kind::kStrayWrite:
      return {"stray_write", TestFault::kStrayWrite, MeasureStatus::kWrongResult, "A["};
    case Kind::kBuildError:
      return {"build_error", TestFault::kNone, MeasureStatus::kBuildError, "not a C identifier"};
  }
  return {"?", TestFault::kNone, MeasureStatus::kInfraError, ""};
}

// Three good schedules of the workload: unscheduled, tiled, outer loop parallel.
search::MeasureCandidate Good(const ir::PrimFunc& workload, int variant) {
  ir::Schedule sch(workload);
  ir::BlockRV c = sch.GetBlock("C");
  std::vector<ir::LoopRV> l = sch.GetLoops(c);
  if (variant == 1) {
    auto i = sch.Split(l[0], {std::monostate{}, int64_t{8}});
    auto j = sch.Split(l[1], {std::monostate{}, int64_t{16}});
    sch.Reorder({i[0], j[0], l[2], i[1], j[1]});
  } else if (variant == 2) {
    sch.Parallel(l[0]);
  }
  return {sch.func(), sch.trace().AsJSONString()};
}

struct Tally {
  int drawn = 0;
  int right = 0;
  std::string first_wrong;  // the first misclassified result, for a person
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Fault soak of the local runner (issue 22)"};
  int n = 1000;
  int batch_size = 25;
  uint64_t seed = 1;
  double timeout_s = 1.0;
  int64_t memory_limit_mb = 1024;
  double good_share = 0.5;
  std::string db_path;
  app.add_option("--candidates", n, "Candidates in all")->capture_default_str()->check(CLI::Range(1, 1000000));
  app.add_option("--batch", batch_size, "Candidates per Measure call")->capture_default_str()->check(CLI::Range(1, 10000));
  app.add_option("--seed", seed, "Seed of the draw")->capture_default_str();
  app.add_option("--timeout", timeout_s, "Per-candidate time limit in seconds (infinite loops hit it)")
      ->capture_default_str()->check(CLI::Range(0.05, 600.0));
  app.add_option("--memory-limit-mb", memory_limit_mb, "The child's address-space limit")
      ->capture_default_str()->check(CLI::Range(int64_t{256}, int64_t{1} << 20));
  app.add_option("--good-share", good_share, "Share of good candidates")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--db", db_path, "Database file to commit to (default: a temporary file, removed)");
  CLI11_PARSE(app, argc, argv);
  const bool temp_db = db_path.empty();
  if (temp_db) {
    db_path = (std::filesystem::temp_directory_path() /
               ("kiln_fault_soak_" + std::to_string(::getpid()) + ".db"))
                  .string();
  }

  search::MeasureTask task;
  task.workload = ir::Matmul(32, 32, 32);
  task.target = ir::Target::Parse("llvm -num-cores=1");
  task.timing.number = 1;
  task.timing.repeat = 2;
  task.timing.min_repeat_ms = 0;
  task.timing.timeout_s = timeout_s;
  task.input_seed = 7;
  const search::MeasureCandidate good[3] = {Good(task.workload, 0), Good(task.workload, 1),
                                            Good(task.workload, 2)};
  search::MeasureCandidate unbuildable = good[0];
  unbuildable.scheduled.name = "not a kernel name";

  // The draw: every candidate's kind and (good ones) schedule, fixed by the seed.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> fault_kind(1, kKinds - 1), variant(0, 2);
  std::vector<Kind> kinds(n);
  std::vector<int> variants(n, 0);
  for (int i = 0; i < n; ++i) {
    kinds[i] = coin(rng) < good_share ? Kind::kGood : static_cast<Kind>(fault_kind(rng));
    variants[i] = variant(rng);
  }

  rpc::LocalRunnerOptions options;
  options.memory_limit_mb = memory_limit_mb;
  options.build_threads = 2;
  rpc::LocalRunner runner(options);
  database::Database db = database::Database::Open(db_path);
  const database::WorkloadId wid = db.CommitWorkload(task.workload);

  std::vector<Tally> tally(kKinds);
  std::vector<search::MeasureResult> results(n);
  std::vector<database::TuningRecord> committed(n);
  int64_t expected_replacements = 0, good_lost = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int from = 0; from < n; from += batch_size) {
    const int to = std::min(n, from + batch_size);
    std::vector<search::MeasureCandidate> batch;
    std::vector<rpc::TestFault> faults;
    for (int i = from; i < to; ++i) {
      batch.push_back(kinds[i] == Kind::kBuildError ? unbuildable : good[variants[i]]);
      faults.push_back(Info(kinds[i]).fault);
    }
    runner.set_test_faults(faults);
    std::vector<search::MeasureResult> got = runner.Measure(task, batch);
    if (got.size() != batch.size()) {
      std::printf("the runner returned %zu results for a batch of %zu\nnot met\n", got.size(),
                  batch.size());
      return 1;
    }
    // Commit every result as the tuner does (search/measure_callback/add_to_database.cc);
    // the trace is made unique per candidate so that each one is a record.
    std::vector<database::TuningRecord> records;
    for (int i = from; i < to; ++i) {
      const search::MeasureResult& r = got[i - from];
      results[i] = r;
      const KindInfo info = Info(kinds[i]);
      Tally& t = tally[static_cast<int>(kinds[i])];
      ++t.drawn;
      const bool right = r.status == info.expected &&
                         r.message.find(info.message) != std::string::npos &&
                         (info.expected != MeasureStatus::kOk || (r.verified && !r.run_secs.empty()));
      if (right) {
        ++t.right;
      } else if (t.first_wrong.empty()) {
        t.first_wrong = "#" + std::to_string(i) + ": " + search::MeasureStatusName(r.status) + ": " +
                        r.message.substr(0, 200);
      }
      if (kinds[i] == Kind::kGood && !(r.status == MeasureStatus::kOk && r.verified)) ++good_lost;
      // Every failure that reached the child ends that child.
      if (kinds[i] != Kind::kGood && kinds[i] != Kind::kBuildError) ++expected_replacements;
      database::TuningRecord rec;
      rec.workload_hash = db.WorkloadHash(wid);
      rec.target = task.target.ToString();
      rec.fingerprint = "fault-soak";
      rec.trace_json = nlohmann::json{{"soak_candidate", i},
                                      {"trace", nlohmann::json::parse(batch[i - from].trace_json)}}
                           .dump();
      rec.status = search::MeasureStatusName(r.status);
      rec.message = r.message;
      rec.verified = r.verified;
      if (r.status == MeasureStatus::kOk) rec.run_seconds = r.run_secs;
      rec.machine_load = r.machine_load;
      rec.wide_spread = r.wide_spread;
      committed[i] = rec;
      records.push_back(std::move(rec));
    }
    db.CommitRecords(wid, records);
    std::fprintf(stderr, "\rfault soak: %d of %d", to, n);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\n");

  // The database against what was committed, record by record.
  int64_t stored = 0, altered = 0, good_altered = 0;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    ++stored;
    const int i = nlohmann::json::parse(r.trace_json).at("soak_candidate").get<int>();
    const database::TuningRecord& c = committed.at(i);
    const bool same = r.status == c.status && r.message == c.message && r.verified == c.verified &&
                      r.run_seconds == c.run_seconds;
    if (!same) {
      ++altered;
      if (kinds[i] == Kind::kGood) ++good_altered;
    }
  });
  const std::string integrity = db.IntegrityCheck();
  const rpc::LocalRunnerStats& st = runner.stats();
  const int64_t replaced = st.children_started - 1;

  int right = 0;
  std::printf("fault soak: %d candidates, seed %llu, batches of %d, timeout %g s, memory limit %lld MiB, "
              "%.1f s\n",
              n, static_cast<unsigned long long>(seed), batch_size, timeout_s,
              static_cast<long long>(memory_limit_mb), secs);
  std::printf("%-16s %7s %7s  %s\n", "kind", "drawn", "right", "expected status");
  for (int k = 0; k < kKinds; ++k) {
    const KindInfo info = Info(static_cast<Kind>(k));
    right += tally[k].right;
    std::printf("%-16s %7d %7d  %s%s%s\n", info.name, tally[k].drawn, tally[k].right,
                search::MeasureStatusName(info.expected),
                tally[k].first_wrong.empty() ? "" : "; first wrong: ", tally[k].first_wrong.c_str());
  }
  std::printf("classified right: %d / %d\n", right, n);
  std::printf("children replaced: %lld (expected %lld: one per failure that reached the child); "
              "references built %lld, run %lld\n",
              static_cast<long long>(replaced), static_cast<long long>(expected_replacements),
              static_cast<long long>(st.references_built), static_cast<long long>(st.references_run));
  std::printf("parent deaths: 0 (this process ran every batch and is reporting)\n");
  std::printf("database: %lld of %d records stored, %lld altered, integrity %s\n",
              static_cast<long long>(stored), n, static_cast<long long>(altered), integrity.c_str());
  std::printf("good results lost: %lld, altered in the database: %lld\n",
              static_cast<long long>(good_lost), static_cast<long long>(good_altered));
  const bool met = right == n && replaced == expected_replacements && stored == n &&
                   altered == 0 && integrity == "ok" && good_lost == 0 && good_altered == 0;
  std::printf("goal (%d/%d classified right, 0 parent deaths, 0 good results lost or altered, "
              "database intact): %s\n",
              n, n, met ? "met" : "not met");
  if (temp_db) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path + suffix, ec);
  }
  return met ? 0 : 1;
}
