// kiln tune with several workloads (--workload repeated, or --job FILE): one
// trial budget shared under the task scheduler (search/tune_tasks.h), one
// cost model for all of them, a table with one row per task and the weighted
// total latency (TVM's task table).
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <sstream>

#include "database/record_json.h"
#include "ir/structural_equal.h"
#include "rpc/local_runner.h"
#include "search/target_lookup.h"
#include "search/tune_tasks.h"
#include "support/cores.h"
#include "rpc/farm/job_file.h"
#include "rpc/proto_convert.h"
#include "tools/progress_text.h"
#include "tools/target_spec.h"
#include "tools/tune_cli.h"
#include "tools/workload_spec.h"

namespace kiln::tools {
namespace {

std::string Fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// One row per task: ID | Name | GFLOP | Weight | GFLOP/s | Latency | Weighted | Trials | Done.
std::string TaskTable(const search::TuneTasksProgress& p) {
  size_t name_w = 4;
  for (const auto& t : p.tasks) name_w = std::max(name_w, std::min<size_t>(t.name.size(), 40));
  std::ostringstream o;
  auto row = [&](const std::vector<std::string>& cells) {
    static const int kWidths[] = {3, 0, 8, 6, 9, 10, 10, 11, 4};
    for (size_t c = 0; c < cells.size(); ++c) {
      const int w = c == 1 ? static_cast<int>(name_w) : kWidths[c];
      std::string cell = cells[c];
      if (static_cast<int>(cell.size()) > w) cell = cell.substr(0, static_cast<size_t>(w));
      o << (c ? " | " : "") << (c == 1 ? std::left : std::right) << std::setw(w) << cell;
    }
    o << "\n";
  };
  row({"ID", "Name", "GFLOP", "Weight", "GFLOP/s", "Latency", "Weighted", "Trials", "Done"});
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const auto& t = p.tasks[i];
    const bool has = t.best_secs > 0;
    row({std::to_string(i), t.name, Fixed(t.flops / 1e9, 3), Fixed(t.weight, 0),
         has ? Fixed(t.flops / t.best_secs / 1e9, 2) : "N/A", has ? LatencyText(t.best_secs) : "N/A",
         has ? LatencyText(t.weight * t.best_secs) : "N/A",
         std::to_string(t.trials_done) + "/" + std::to_string(t.trials_target),
         t.finished ? "Y" : ""});
  }
  int64_t done = 0;
  for (const auto& t : p.tasks) done += t.trials_done;
  o << "trials: " << done << "; weighted total latency: "
    << (p.weighted_latency > 0 ? LatencyText(p.weighted_latency) : "N/A") << "\n";
  return o.str();
}

}  // namespace

int TuneMany(const TuneCliOptions& cli) {
  TuneCliOptions o = cli;
  std::vector<std::pair<std::string, double>> specs;  // (workload spec, weight)
  bool job_sets_trials = false;
  for (const std::string& w : o.workloads) specs.emplace_back(w, 1.0);
  if (!o.job.empty()) {
    // The job file (configs/jobs/, proto/kiln/v1/job.proto) sets what the
    // command line does not.
    // The shape is checked here; the target, the trials and the strategy
    // may come from the command line, and both strategies run locally.
    const v1::TuningJob job = rpc::farm::ParseJobFile(o.job);
    const std::string strategy = job.strategy().name();
    job_sets_trials = job.trials() > 0;
    auto unset = [&](const char* flag) { return o.given.count(flag) == 0; };
    for (const v1::JobWorkload& w : job.workloads())
      specs.emplace_back(w.spec(), w.weight() > 0 ? w.weight() : 1.0);
    if (unset("--target") && !job.target().spec().empty()) o.target = job.target().spec();
    if (unset("--trials") && job.trials() > 0) o.trials = job.trials();
    if (unset("--seed") && job.seed() != 0) o.seed = job.seed();
    if (unset("--strategy") && !strategy.empty()) o.strategy = strategy;
    if (unset("--trials-per-iter") && job.strategy().trials_per_iter() > 0)
      o.trials_per_iter = job.strategy().trials_per_iter();
    if (job.has_timing() && unset("--number") && unset("--repeat") && unset("--min-repeat-ms") &&
        unset("--timeout")) {
      o.timing = rpc::FromProto(job.timing());
    }
  }
  search::ParseStrategyKind(o.strategy);  // a clear error for a job's unknown strategy
  // Without --trials (or a job's), every task gets the single-workload
  // default of 64 rather than the first task taking the whole budget.
  if (o.given.count("--trials") == 0 && (o.job.empty() || !job_sets_trials)) {
    o.trials = 64 * static_cast<int64_t>(specs.size());
  }
  const ir::Target target = ResolveTargetFlag(o.target);
  if (o.build_only) throw std::runtime_error("--build-only takes one --workload");
  RequireMeasurableTarget(target);
  const int threads = o.threads > 0 ? o.threads : support::HardwareThreads();
  std::vector<search::TuneTask> tasks;
  for (const auto& [spec, weight] : specs) {
    ResolvedWorkload w = ResolveWorkload(spec);
    // The same workload listed twice (two layers of one shape) is one task
    // called more often: its weights add up.
    auto same = std::find_if(tasks.begin(), tasks.end(), [&](const search::TuneTask& t) {
      return ir::StructuralEqual(t.task.workload, w.func);
    });
    if (same != tasks.end()) {
      spdlog::warn("tune: {} is the same workload as {}; tuned once with weight {}", w.label,
                   same->name, same->weight + weight);
      same->weight += weight;
      continue;
    }
    search::TuneTask t;
    t.name = w.label;
    t.ctx = search::MakeDefaultTuneContext(w.func, target, static_cast<int64_t>(o.seed), threads);
    t.ctx.task_name = w.label;
    t.task = search::MeasureTask{w.func, target, o.timing, o.seed};
    t.weight = weight;
    t.trials = o.trials_per_task > 0 ? o.trials_per_task : o.trials;
    tasks.push_back(std::move(t));
  }

  database::Database db = database::Database::Open(o.db_path);
  search::CanonicalizeStoredTargets(db);
  rpc::LocalRunnerOptions runner_options;
  runner_options.build_threads = threads;
  rpc::LocalRunner runner(runner_options);
  spdlog::set_level(o.verbose ? spdlog::level::info : spdlog::level::warn);

  search::TuneTasksOptions opts;
  opts.base.trials_per_iter = TrialsPerIter(o);
  opts.base.trials_per_iter_start = TrialsPerIterStart(o);
  opts.base.seed = o.seed;
  opts.base.fingerprint = MachineFingerprint(target);
  if (o.no_final_remeasure) opts.base.final_remeasure_top = 0;
  if (o.full_timing) opts.base.slow_call_factor = 0;
  opts.base.stop = &g_stop;
  opts.base.strategy = search::ParseStrategyKind(o.strategy);
  bool model_seeded = false;
  std::string prior_model;
  std::unique_ptr<cost_model::CostModel> model =
      MakeCostModel(o, threads, db, target.ToString(), &model_seeded, &prior_model);
  opts.base.cost_model = model.get();
  opts.base.seed_model_from_database = !model_seeded;
  opts.scheduler.kind = search::ParseTaskSchedulerKind(o.task_scheduler);
  opts.scheduler.seed = o.seed;
  opts.total_trials = o.trials;
  const bool tty = isatty(STDERR_FILENO) != 0;
  size_t drawn_lines = 0;
  opts.on_progress = [&](const search::TuneTasksProgress& p) {
    if (o.as_json) return;
    if (tty) {
      // Redraw the table in place.
      if (drawn_lines > 0) std::cerr << "\33[" << drawn_lines << "A\33[J";
      const std::string table = TaskTable(p);
      drawn_lines = static_cast<size_t>(std::count(table.begin(), table.end(), '\n'));
      std::cerr << table << std::flush;
    } else if (p.current >= 0) {
      const auto& t = p.tasks[static_cast<size_t>(p.current)];
      std::cerr << "[task " << p.current << " " << t.name << "] " << t.trials_done << "/"
                << t.trials_target << " trials, best "
                << (t.best_secs > 0 ? LatencyText(t.best_secs) : "N/A") << "; weighted total "
                << (p.weighted_latency > 0 ? LatencyText(p.weighted_latency) : "N/A") << "\n";
    }
  };

  g_stop.store(false);
  auto previous = std::signal(SIGINT, OnInterrupt);
  search::TuneTasksSummary s;
  try {
    s = search::TuneTasks(tasks, runner, db, opts);
  } catch (...) {
    std::signal(SIGINT, previous);
    throw;
  }
  std::signal(SIGINT, previous);
  const int exit_code = s.infrastructure_failed ? 1 : g_stop.load() ? 130 : 0;
  if (s.infrastructure_failed) std::cerr << "kiln: error: " << s.stop_reason << "\n";
  if (o.as_json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& t : s.final.tasks) {
      rows.push_back({{"name", t.name}, {"weight", t.weight}, {"flops", t.flops},
                      {"trials_done", t.trials_done}, {"trials_target", t.trials_target},
                      {"best_seconds", t.best_secs}, {"finished", t.finished},
                      {"errors_by_kind", t.errors_by_kind}});
    }
    std::cout << nlohmann::json{{"target", target.ToString()},
                                {"db", o.db_path},
                                {"tasks", rows},
                                {"weighted_latency_seconds", s.final.weighted_latency},
                                {"measured_this_run", s.final.measured_this_run},
                                {"search_seconds", s.search_secs},
                                {"prior_model", prior_model},
                                {"prior_model_outcome", PriorOutcome(model.get())},
                                {"stopped", s.stop_reason}}
                     .dump(2)
              << "\n";
    return exit_code;
  }
  std::cout << "tuned " << tasks.size() << " workloads on '" << target.ToString()
            << "': " << s.final.measured_this_run << " measured this run, into " << o.db_path
            << "\n"
            << "  stopped: " << s.stop_reason << "\n"
            << (prior_model.empty() ? ""
                                    : "  cost model: starting from " + prior_model + ", " +
                                          PriorOutcome(model.get()) + "\n")
            << TaskTable(s.final);
  return exit_code;
}

}  // namespace kiln::tools
