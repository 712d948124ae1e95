#include "search/tune.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <vector>

#include "database/record.h"
#include "ir/flops.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "search/evolutionary_search.h"
#include "search/measure_callback.h"
#include "search/measured_set.h"
#include "search/remeasure.h"
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
  if (opts.trials_per_iter_start < 0) {
    throw std::invalid_argument("tune: trials_per_iter_start must be >= 0 (got " +
                                std::to_string(opts.trials_per_iter_start) + ")");
  }
  if (!std::isfinite(opts.slow_call_factor) ||
      (opts.slow_call_factor != 0 && opts.slow_call_factor < 2)) {
    throw std::invalid_argument("tune: slow_call_factor must be 0 (off) or at least 2 (got " +
                                std::to_string(opts.slow_call_factor) + ")");
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

SearchStrategyPtr MakeStrategy(const TuneContext& ctx, const TuneOptions& opts) {
  switch (opts.strategy) {
    case StrategyKind::kReplay:
      return std::make_unique<ReplayTrace>(ctx, opts.replay);
    case StrategyKind::kEvolutionary:
      if (opts.cost_model == nullptr) {
        throw std::invalid_argument(
            "tune: the evolutionary search needs a cost model (TuneOptions::cost_model)");
      }
      return std::make_unique<EvolutionarySearch>(ctx, opts.evolutionary);
  }
  throw std::invalid_argument("tune: unknown search strategy");
}

}  // namespace

int BatchSize(const TuneOptions& opts, int64_t done) {
  const int start = opts.trials_per_iter_start;
  if (start <= 0 || start >= opts.trials_per_iter) return opts.trials_per_iter;
  return static_cast<int>(std::clamp<int64_t>(done / 2, start, opts.trials_per_iter));
}

TuneSummary Tune(const TuneContext& ctx, Runner& runner, database::Database& db,
                 const MeasureTask& task, const TuneOptions& opts) {
  Validate(ctx, task, opts);
  const std::string target = task.target.ToString();
  const std::string workload_hash = ir::StructuralHashHex(task.workload);
  const database::WorkloadId wid = db.CommitWorkload(task.workload);
  const double flops = ir::EstimateFlops(task.workload);
  RecordTemplate record{workload_hash, opts.fingerprint, {}, HostName(), KILN_VERSION_STRING,
                        opts.seed, opts.job_id};
  for (const ArgInfo& a : ArgInfoOf(task.workload)) record.args.push_back({a.dtype.str(), a.shape});

  TuneSummary summary;
  const auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };

  // The measured set, and the model, start from what the database holds.
  std::vector<cost_model::Sample> stored;
  const bool seed_model = opts.cost_model != nullptr && opts.seed_model_from_database;
  MeasuredSet measured =
      MeasuredSet::Load(db, wid, target, task.workload, seed_model ? &stored : nullptr);
  if (seed_model && !stored.empty()) {
    spdlog::info("tune: the {} model learns from {} stored record(s) before the first batch",
                 opts.cost_model->Name(), stored.size());
    const auto learn_start = std::chrono::steady_clock::now();
    opts.cost_model->Update(stored);
    summary.learn_secs += since(learn_start);
  }

  TuneContext search_ctx = ctx;
  search_ctx.seed = static_cast<int64_t>(opts.seed);
  auto t0 = std::chrono::steady_clock::now();
  SearchStrategyPtr strategy = MakeStrategy(search_ctx, opts);
  TuningState state{&db, wid, target, opts.cost_model, &measured};
  strategy->PreTuning(state);
  summary.search_secs += since(t0);
  std::vector<MeasureCallbackPtr> callbacks;
  callbacks.push_back(MakeAddToDatabase(record));
  callbacks.push_back(MakeUpdateCostModel(workload_hash));

  auto stop_requested = [&] { return opts.stop != nullptr && opts.stop->load(); };
  auto report = [&](int64_t done) {
    if (!opts.on_progress) return;
    TuneProgress p{done, opts.trials, 0, 0, summary.errors_by_kind, 0};
    if (std::optional<database::TuningRecord> best = db.Best(wid, target)) {
      p.best_secs = best->median_seconds;
      if (best->median_seconds > 0) p.best_gflops = flops / best->median_seconds / 1e9;
    }
    if (summary.measured_this_run > 0 && done < opts.trials) {
      p.eta_secs = since(start) / static_cast<double>(summary.measured_this_run) *
                   static_cast<double>(opts.trials - done);
    }
    opts.on_progress(p);
  };

  int64_t done = db.CountRecords(wid, target);
  spdlog::info("tune: {} on '{}': {} of {} trials in the database, {} search, seed {}",
               ctx.task_name, target, done, opts.trials, strategy->Name(), opts.seed);
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
    const int k = static_cast<int>(std::min<int64_t>(BatchSize(opts, done), opts.trials - done));
    // Candidates whose exact trace is stored (but whose program key was not
    // recovered) are dropped here; ask again for the slots they took.
    std::vector<Candidate> batch;
    bool exhausted = false;
    t0 = std::chrono::steady_clock::now();
    while (static_cast<int>(batch.size()) < k) {
      const int want = k - static_cast<int>(batch.size());
      std::vector<Candidate> got = strategy->GenerateCandidates(want);
      summary.candidates_generated += static_cast<int64_t>(got.size());
      int dropped = 0;
      for (Candidate& c : got) {
        if (measured.HasTrace(MeasuredSet::TraceHashOf(c.trace_json))) {
          ++dropped;
          continue;
        }
        batch.push_back(std::move(c));
      }
      if (strategy->exhausted()) {
        exhausted = true;
        break;
      }
      if (dropped == 0) break;  // all the strategy had this round
    }
    summary.search_secs += since(t0);
    if (batch.empty()) {
      summary.stop_reason = "the design space is exhausted: no new candidate in " +
                            std::to_string(strategy->rounds()) + " sampling rounds (" +
                            "sampling failures: " + strategy->failures().Summary() + ")";
      break;
    }
    if (stop_requested()) {  // nothing is in flight yet
      summary.stop_reason = "stopped on request";
      break;
    }

    std::vector<MeasureCandidate> to_measure;
    to_measure.reserve(batch.size());
    for (const Candidate& c : batch) to_measure.push_back({c.scheduled, c.trace_json});
    MeasureTask batch_task = task;
    if (opts.slow_call_factor > 0) {
      if (std::optional<database::TuningRecord> best = db.Best(wid, target)) {
        batch_task.timing.slow_call_secs = opts.slow_call_factor * best->median_seconds;
      }
    }
    std::vector<MeasureResult> results = runner.Measure(batch_task, to_measure);
    if (results.size() != batch.size()) {
      throw std::runtime_error("tune: the runner returned " + std::to_string(results.size()) +
                               " results for a batch of " + std::to_string(batch.size()));
    }
    int64_t ok = 0, infra = 0;
    std::string infra_message;
    for (const MeasureResult& r : results) {
      if (r.status != MeasureStatus::kOk) ++summary.errors_by_kind[MeasureStatusName(r.status)];
      if (r.status == MeasureStatus::kInfraError) {
        if (infra++ == 0) infra_message = r.message;
        continue;
      }
      if (r.status == MeasureStatus::kOk) {
        ++ok;
        ++summary.ok_measurements;
        if (r.machine_load > kBusyMachineLoad) ++summary.busy_measurements;
        if (r.wide_spread) ++summary.wide_spread_measurements;
      }
      ++summary.measured_this_run;
    }
    t0 = std::chrono::steady_clock::now();
    for (const MeasureCallbackPtr& cb : callbacks) cb->Apply(state, batch, results);
    strategy->NotifyRunnerResults(batch, results);
    summary.learn_secs += since(t0);
    done = db.CountRecords(wid, target);
    spdlog::info("tune: batch {}: {} measured ({} ok), {}/{} trials; sampling failures so far: {}",
                 batch_index++, batch.size(), ok, done, opts.trials,
                 strategy->failures().Summary());
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
                            strategy->failures().Summary() + ")";
      break;
    }
  }
  strategy->PostTuning();
  if (opts.final_remeasure_top > 0 && summary.measured_this_run > 0 && !stop_requested() &&
      !summary.infrastructure_failed) {
    int failed = 0;
    t0 = std::chrono::steady_clock::now();
    const std::optional<database::TuningRecord> before = db.Best(wid, target);
    summary.remeasured = RemeasureBest(runner, db, wid, task, opts.final_remeasure_top,
                                       opts.final_remeasure_repeat, &failed);
    summary.remeasure_failed = failed;
    summary.remeasure_secs = since(t0);
    const std::optional<database::TuningRecord> after = db.Best(wid, target);
    if (summary.remeasured > 0) {
      summary.best_before_remeasure_secs = before ? before->median_seconds : 0;
      summary.best_after_remeasure_secs = after ? after->median_seconds : 0;
    }
    spdlog::info(
        "tune: re-measured the best {} record(s) with {} repeats ({} failed); best {:.4g} ms "
        "before, {:.4g} ms after",
        summary.remeasured, opts.final_remeasure_repeat, failed,
        summary.best_before_remeasure_secs * 1e3, summary.best_after_remeasure_secs * 1e3);
    report(db.CountRecords(wid, target));
  }
  if (summary.busy_measurements > 0) {
    spdlog::warn("tune: {} of {} measurement(s) ran while other processes used more than {:.0f}% "
                 "of the CPUs: their times may be slow",
                 summary.busy_measurements, summary.ok_measurements, kBusyMachineLoad * 100);
  }
  summary.records_total = db.CountRecords(wid, target);
  const FailureStats& failures = strategy->failures();
  summary.sampling_failures = failures.counts.empty() ? "none" : failures.Summary();
  for (const auto& [kind, n] : failures.counts) {
    spdlog::info("tune: sampling failures by {}: {} (first: {})", kind, n,
                 failures.example.count(kind) ? failures.example.at(kind) : "");
  }
  spdlog::info("tune: stopped: {}; {} measured this run, {} records in all; search {:.2f} s",
               summary.stop_reason, summary.measured_this_run, summary.records_total,
               summary.search_secs);
  return summary;
}

}  // namespace kiln::search
