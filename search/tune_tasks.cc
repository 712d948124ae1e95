#include "search/tune_tasks.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ir/flops.h"
#include "ir/structural_hash.h"
#include "search/remeasure.h"
#include "support/split_mix.h"

namespace kiln::search {
namespace {

// SplitMix64's finalizer, to fork per-batch seeds.
constexpr auto Mix = support::SplitMix64;

double WeightedLatency(const std::vector<TaskStatus>& tasks) {
  double total = 0;
  for (const TaskStatus& t : tasks)
    if (t.best_secs > 0) total += t.weight * t.best_secs;
  return total;
}

}  // namespace

TuneTasksSummary TuneTasks(const std::vector<TuneTask>& tasks, Runner& runner,
                           database::Database& db, const TuneTasksOptions& opts) {
  if (tasks.empty()) throw std::invalid_argument("tune: no tasks");
  std::vector<double> weights;
  for (const TuneTask& t : tasks) weights.push_back(t.weight);
  TaskScheduler scheduler(weights, opts.scheduler);

  TuneTasksSummary summary;
  TuneTasksProgress& p = summary.final;
  std::vector<database::WorkloadId> wids;
  std::vector<uint64_t> hashes;
  for (const TuneTask& t : tasks) {
    if (t.trials < 1) throw std::invalid_argument("tune: task " + t.name + " has no trials");
    wids.push_back(db.CommitWorkload(t.task.workload));
    hashes.push_back(ir::StructuralHash(t.task.workload));
    // Two tasks of one workload would share records and count each other's
    // trials: the caller merges them (their weights add up).
    for (size_t j = 0; j + 1 < wids.size(); ++j) {
      if (wids[j] == wids.back() && tasks[j].task.target == t.task.target) {
        throw std::invalid_argument("tune: tasks " + tasks[j].name + " and " + t.name +
                                    " are the same workload; list it once with the sum of their weights");
      }
    }
    TaskStatus s;
    s.name = t.name;
    s.weight = t.weight;
    s.flops = ir::EstimateFlops(t.task.workload);
    s.trials_target = t.trials;
    p.tasks.push_back(std::move(s));
  }
  auto refresh = [&](size_t i) {
    TaskStatus& s = p.tasks[i];
    const std::string target = tasks[i].task.target.ToString();
    s.trials_done = db.CountRecords(wids[i], target);
    if (auto best = db.Best(wids[i], target)) s.best_secs = best->median_seconds;
  };
  for (size_t i = 0; i < tasks.size(); ++i) {
    refresh(i);
    if (p.tasks[i].trials_done >= p.tasks[i].trials_target) {
      scheduler.Finish(static_cast<int>(i));
      p.tasks[i].finished = true;
    }
  }
  auto report = [&](int current) {
    p.current = current;
    p.weighted_latency = WeightedLatency(p.tasks);
    if (opts.on_progress) opts.on_progress(p);
  };
  report(-1);

  const int per_iter = std::max(1, opts.base.trials_per_iter);
  // Tune() feeds the model a task's stored records when asked to; after the
  // task's first batch the model already holds them (and every record
  // measured since, through the update callback), so later batches must not
  // add them again.
  std::vector<bool> model_holds_task(tasks.size(), !opts.base.seed_model_from_database);
  while (true) {
    if (opts.base.stop != nullptr && opts.base.stop->load()) {
      summary.stop_reason = "stopped on request";
      break;
    }
    int64_t total_done = 0;
    for (const TaskStatus& t : p.tasks) total_done += t.trials_done;
    const int64_t global_left =
        opts.total_trials > 0 ? opts.total_trials - total_done : std::numeric_limits<int64_t>::max();
    if (global_left <= 0) {
      summary.stop_reason = "the tasks hold " + std::to_string(total_done) + " records (" +
                            std::to_string(opts.total_trials) + " requested in all)";
      break;
    }
    const int i = scheduler.Next();
    if (i < 0) {
      summary.stop_reason = "every task holds its trials or has exhausted its design space";
      break;
    }
    const size_t k = static_cast<size_t>(i);
    TaskStatus& s = p.tasks[k];
    TuneOptions o = opts.base;
    o.trials = std::min<int64_t>(s.trials_target, s.trials_done + std::min<int64_t>(per_iter, global_left));
    o.seed = Mix(opts.base.seed ^ Mix(hashes[k] ^ Mix(static_cast<uint64_t>(s.trials_done))));
    o.on_progress = nullptr;
    o.seed_model_from_database = !model_holds_task[k];
    model_holds_task[k] = true;
    o.final_remeasure_top = 0;  // once per task at the end, not after every batch
    spdlog::info("tune: task #{} {} gets a batch ({} of {} trials)", i, s.name, s.trials_done,
                 s.trials_target);
    const TuneSummary r = Tune(tasks[k].ctx, runner, db, tasks[k].task, o);
    summary.search_secs += r.search_secs;
    p.measured_this_run += r.measured_this_run;
    for (const auto& [kind, n] : r.errors_by_kind) s.errors_by_kind[kind] += n;
    refresh(k);
    scheduler.Report(i, s.best_secs > 0 ? s.best_secs : 0);
    const bool stopping = opts.base.stop != nullptr && opts.base.stop->load();
    if (s.trials_done >= s.trials_target || (r.measured_this_run == 0 && !stopping)) {
      // Met its budget, or found nothing new to measure (its space is
      // exhausted, or every candidate was rejected): no more batches.
      if (s.trials_done < s.trials_target)
        spdlog::warn("tune: task {} stops short of its trials: {}", s.name, r.stop_reason);
      scheduler.Finish(i);
      s.finished = true;
    }
    report(i);
    if (r.infrastructure_failed) {
      summary.stop_reason = "task " + s.name + ": " + r.stop_reason;
      summary.infrastructure_failed = true;
      break;
    }
  }
  // The final re-measure of each task's best (TuneOptions::final_remeasure_top).
  const bool stopped = opts.base.stop != nullptr && opts.base.stop->load();
  if (opts.base.final_remeasure_top > 0 && p.measured_this_run > 0 && !stopped &&
      !summary.infrastructure_failed) {
    for (size_t k = 0; k < tasks.size(); ++k) {
      RemeasureBest(runner, db, wids[k], tasks[k].task, opts.base.final_remeasure_top,
                    opts.base.final_remeasure_repeat, nullptr);
      refresh(k);
    }
  }
  p.weighted_latency = WeightedLatency(p.tasks);
  return summary;
}

}  // namespace kiln::search
