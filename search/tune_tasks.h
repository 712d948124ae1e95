// Tuning several workloads that share one trial budget (TVM's tune_tasks,
// reference: search/task_scheduler.h for the policy): the task scheduler
// picks which task gets the next batch, Tune (search/tune.h) measures that
// one batch and commits it, and the scheduler hears the task's new best.
// Everything lives in the database, so a rerun resumes each task where its
// records stop; one cost model (when given) learns from every task.
//
// Each batch is a Tune call that tops the task up by trials_per_iter records.
// Its seed is forked from (the run's seed, the task's workload hash, the
// records the task already holds), so the candidates depend only on the seed
// and the database, as in a single-task run, and two calls never repeat a
// sampling round.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "database/database.h"
#include "search/measure.h"
#include "search/task_scheduler.h"
#include "search/tune.h"
#include "search/tune_context.h"

namespace kiln::search {

struct TuneTask {
  std::string name;  // for the display ("C2D(1,56,56,64,64,3,1,1)")
  TuneContext ctx;
  MeasureTask task;
  double weight = 1;   // how many times a model runs this kernel
  int64_t trials = 64;  // records the database should hold for it in the end
};

struct TaskStatus {
  std::string name;
  double weight = 1;
  double flops = 0;
  int64_t trials_done = 0;
  int64_t trials_target = 0;
  double best_secs = 0;  // 0 when none
  bool finished = false;
  std::map<std::string, int64_t> errors_by_kind;  // this run's, by status name
};

struct TuneTasksProgress {
  std::vector<TaskStatus> tasks;
  int current = -1;              // the task whose batch was just committed (-1: before any)
  double weighted_latency = 0;   // sum of weight x best seconds over tasks with a result
  int64_t measured_this_run = 0;
};

struct TuneTasksOptions {
  // Per-batch options for every task: strategy, cost model, seed,
  // fingerprint, trials_per_iter, stop flag (`trials` and `on_progress` are
  // set per call here).
  TuneOptions base;
  TaskSchedulerConfig scheduler;
  // Records all tasks together should hold in the end (TVM's
  // max_trials_global); 0: only each task's own `trials` caps it.
  int64_t total_trials = 0;
  std::function<void(const TuneTasksProgress&)> on_progress;
};

struct TuneTasksSummary {
  TuneTasksProgress final;
  std::string stop_reason;
  bool infrastructure_failed = false;
  double search_secs = 0;
};

// Throws std::invalid_argument for no tasks, a bad weight, or tasks whose
// contexts do not match their measure tasks; otherwise as Tune.
TuneTasksSummary TuneTasks(const std::vector<TuneTask>& tasks, Runner& runner,
                           database::Database& db, const TuneTasksOptions& opts);

}  // namespace kiln::search
