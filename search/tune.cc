#include "search/tune.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "database/record.h"
#include "ir/flops.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "search/replay_trace.h"

#ifndef KILN_VERSION_STRING
#error "KILN_VERSION_STRING is set by search/CMakeLists.txt"
#endif

namespace kiln::search {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

void Validate(const TuneContext& ctx, const MeasureTask& task, const TuneOptions& opts) {
  if (opts.trials < 1) {
    throw std::invalid_argument("tune: trials must be at least 1 (got " +
                                std::to_string(opts.trials) + ")");
  }
  if (opts.trials_per_iter < 1) {
    throw std::invalid_argument("tune: trials_per_iter must be at least 1 (got " +
                                std::to_string(opts.trials_per_iter) + ")");
  }
  if (opts.fingerprint.empty()) {
    throw std::invalid_argument(
        "tune: the machine fingerprint is empty (every record must say where it was measured)");
  }
  if (!ir::StructuralEqual(ctx.workload, task.workload)) {
    throw std::invalid_argument("tune: the tune context's workload '" + ctx.workload.name +
                                "' is not the measure task's workload '" + task.workload.name + "'");
  }
  if (!(ctx.target == task.target)) {
    throw std::invalid_argument("tune: the tune context's target '" + ctx.target.ToString() +
                                "' is not the measure task's target '" + task.target.ToString() +
                                "'");
  }
}

// What the database already holds for (workload, target): the trace hashes,
// and the program keys of the traces that still replay, so that a schedule
// reached again by another trace is not measured twice either.
struct Measured {
  std::unordered_set<std::string> trace_hashes;
  std::unordered_set<uint64_t> keys;
};

Measured LoadMeasured(const database::Database& db, database::WorkloadId wid,
                      const std::string& target, const ir::PrimFunc& workload) {
  Measured m;
  for (std::string& h : db.MeasuredTraceHashes(wid, target)) m.trace_hashes.insert(std::move(h));
  int64_t unreplayable = 0;
  std::string first_error;
  db.ForEachRecord([&](database::WorkloadId w, const database::TuningRecord& r) {
    if (w != wid || r.target != target) return;
    try {
      ir::Schedule sch(workload);
      ir::Trace::FromJSONString(r.trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
      m.keys.insert(ir::StructuralHash(sch.func()));
    } catch (const std::exception& e) {
      if (unreplayable++ == 0) first_error = e.what();
    }
  });
  if (unreplayable > 0) {
    // Their trace hashes still keep those exact traces from being measured again.
    spdlog::warn("tune: {} stored record(s) no longer replay on this workload (first: {})",
                 unreplayable, first_error);
  }
  return m;
}

database::TuningRecord MakeRecord(const TuneOptions& opts, const std::string& workload_hash, const std::string& target,
                                  const std::vector<database::ArgInfo>& args,
                                  const std::string& host, const Candidate& c,
                                  const MeasureResult& r) {
  database::TuningRecord rec;
  rec.workload_hash = workload_hash;
  rec.target = target;
  rec.fingerprint = opts.fingerprint;
  rec.trace_json = c.trace_json;
  rec.status = MeasureStatusName(r.status);
  rec.message = r.message;
  rec.verified = r.verified;
  // Only an ok result has meaningful times (the runner leaves the rest empty).
  if (r.status == MeasureStatus::kOk) rec.run_seconds = r.run_secs;
  rec.args = args;
  rec.provenance.host = host;
  rec.provenance.kiln_version = KILN_VERSION_STRING;
  rec.provenance.seed = opts.seed;
  rec.provenance.timestamp = static_cast<int64_t>(std::time(nullptr));
  return rec;
}

}  // namespace

TuneSummary Tune(const TuneContext& ctx, Runner& runner, database::Database& db,
                 const MeasureTask& task, const TuneOptions& opts) {
  Validate(ctx, task, opts);
  const std::string target = task.target.ToString();
  const std::string workload_hash = ir::StructuralHashHex(task.workload);
  const database::WorkloadId wid = db.CommitWorkload(task.workload);
  const double flops = ir::EstimateFlops(task.workload);
  std::vector<database::ArgInfo> args;
  for (const ArgInfo& a : ArgInfoOf(task.workload)) args.push_back({a.dtype.str(), a.shape});
  const std::string host = HostName();

  Measured measured = LoadMeasured(db, wid, target, task.workload);
  TuneContext search_ctx = ctx;
  search_ctx.seed = static_cast<int64_t>(opts.seed);
  ReplayTrace strategy(search_ctx);

  TuneSummary summary;
  const auto start = std::chrono::steady_clock::now();
  auto stop_requested = [&] { return opts.stop != nullptr && opts.stop->load(); };
  auto report = [&](int64_t done) {
    if (!opts.on_progress) return;
    TuneProgress p{done, opts.trials, 0, 0, summary.errors_by_kind, 0};
    if (std::optional<database::TuningRecord> best = db.Best(wid, target)) {
      p.best_secs = best->median_seconds;
      if (best->median_seconds > 0) p.best_gflops = flops / best->median_seconds / 1e9;
    }
    if (summary.measured_this_run > 0 && done < opts.trials) {
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      p.eta_secs = elapsed / static_cast<double>(summary.measured_this_run) *
                   static_cast<double>(opts.trials - done);
    }
    opts.on_progress(p);
  };

  int64_t done = db.CountRecords(wid, target);
  spdlog::info("tune: {} on '{}': {} of {} trials in the database, seed {}", ctx.task_name,
               target, done, opts.trials, opts.seed);
  report(done);
  int64_t batch_index = 0;
  while (true) {
    if (done >= opts.trials) {
      summary.stop_reason = "the database holds " + std::to_string(done) + " records for this " +
                            "workload and target (" + std::to_string(opts.trials) + " requested)";
      break;
    }
    if (stop_requested()) {
      summary.stop_reason = "stopped on request";
      break;
    }
    const int k = static_cast<int>(std::min<int64_t>(opts.trials_per_iter, opts.trials - done));
    // Candidates whose exact trace is stored (but whose program key was not
    // recovered) are dropped here; ask again for the slots they took.
    std::vector<Candidate> batch;
    bool exhausted = false;
    while (static_cast<int>(batch.size()) < k) {
      const int want = k - static_cast<int>(batch.size());
      std::vector<Candidate> got = strategy.NextBatch(want, measured.keys);
      for (Candidate& c : got) {
        const std::string h = database::TraceHash(database::CanonicalTraceJson(c.trace_json));
        if (measured.trace_hashes.count(h)) continue;
        batch.push_back(std::move(c));
      }
      if (static_cast<int>(got.size()) < want) {
        exhausted = true;
        break;
      }
    }
    if (batch.empty()) {
      summary.stop_reason = "the design space is exhausted: no new candidate in " +
                            std::to_string(strategy.rounds()) + " sampling rounds (" +
                            "sampling failures: " + strategy.failures().Summary() + ")";
      break;
    }
    if (stop_requested()) {  // nothing is in flight yet
      summary.stop_reason = "stopped on request";
      break;
    }

    std::vector<MeasureCandidate> to_measure;
    to_measure.reserve(batch.size());
    for (const Candidate& c : batch) to_measure.push_back({c.scheduled, c.trace_json});
    std::vector<MeasureResult> results = runner.Measure(task, to_measure);
    if (results.size() != batch.size()) {
      throw std::runtime_error("tune: the runner returned " + std::to_string(results.size()) +
                               " results for a batch of " + std::to_string(batch.size()));
    }
    int64_t ok = 0, infra = 0;
    std::string infra_message;
    for (size_t i = 0; i < batch.size(); ++i) {
      const MeasureResult& r = results[i];
      if (r.status != MeasureStatus::kOk) ++summary.errors_by_kind[MeasureStatusName(r.status)];
      if (r.status == MeasureStatus::kInfraError) {
        if (infra++ == 0) infra_message = r.message;
        continue;
      }
      if (r.status == MeasureStatus::kOk) ++ok;
      db.CommitRecord(wid, MakeRecord(opts, workload_hash, target, args, host, batch[i], r));
      measured.keys.insert(batch[i].key);
      measured.trace_hashes.insert(
          database::TraceHash(database::CanonicalTraceJson(batch[i].trace_json)));
      ++summary.measured_this_run;
    }
    done = db.CountRecords(wid, target);
    spdlog::info("tune: batch {}: {} measured ({} ok), {}/{} trials; sampling failures so far: {}",
                 batch_index++, batch.size(), ok, done, opts.trials,
                 strategy.failures().Summary());
    if (infra > 0) {
      spdlog::warn("tune: {} candidate(s) not recorded, the measurement itself failed: {}", infra,
                   infra_message);
    }
    report(done);
    if (infra == static_cast<int64_t>(batch.size())) {
      summary.stop_reason = "the measurement infrastructure failed for a whole batch: " +
                            infra_message;
      summary.infrastructure_failed = true;
      break;
    }
    if (stop_requested()) {
      summary.stop_reason = "stopped on request after committing the batch in flight";
      break;
    }
    if (exhausted && done < opts.trials) {
      summary.stop_reason = "the design space is exhausted: " + std::to_string(done) + " of " +
                            std::to_string(opts.trials) + " trials (sampling failures: " +
                            strategy.failures().Summary() + ")";
      break;
    }
  }
  summary.records_total = db.CountRecords(wid, target);
  summary.sampling_failures = strategy.failures().counts.empty() ? "none" : strategy.failures().Summary();
  for (const auto& [kind, n] : strategy.failures().counts) {
    spdlog::info("tune: sampling failures by {}: {} (first: {})", kind, n,
                 strategy.failures().example.count(kind) ? strategy.failures().example.at(kind)
                                                         : "");
  }
  spdlog::info("tune: stopped: {}; {} measured this run, {} records in all", summary.stop_reason,
               summary.measured_this_run, summary.records_total);
  return summary;
}

}  // namespace kiln::search
