// kiln tune: one command from a workload to tuned records. Searches the
// default design space (--strategy replay: random samples; evolutionary:
// mutations ranked by --cost-model), measures them in the isolated runner and
// commits each batch to the database; a rerun tops up to --trials instead of
// starting over. Ctrl-C stops after the batch in flight is committed.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cost_model/random_model.h"
#include "cost_model/xgb_model.h"
#include "database/database.h"
#include "database/record_json.h"
#include "ir/flops.h"
#include "ir/schedule/trace.h"
#include "ir/text/printer.h"
#include "rpc/local_runner.h"
#include "search/measured_samples.h"
#include "search/prior_model.h"
#include "search/target_lookup.h"
#include "search/tune.h"
#include "search/tune_context.h"
#include "support/cores.h"
#include "tools/build_only.h"
#include "tools/commands.h"
#include "tools/progress_text.h"
#include "tools/target_spec.h"
#include "tools/tune_cli.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

// The cost models `--cost-model` accepts, for the help text and the check.
const std::vector<std::string> kCostModels = {"xgb", "random"};

// The model that ranks candidates for the evolutionary search. The XGBoost
// model learns, before the first batch, from every record the database holds
// for this target, whatever the workload (search/measured_samples.h), so a
// resumed run or a new workload on a known target is never blind (TVM starts
// every run from random predictions). --prior-db adds the records of other
// databases of the target (a team's shared database, another job's): on
// C2D:0 a model that first learned from the other ResNet-50 layers avoided
// most of the runs that stay in a poor basin (docs/ARCHITECTURE.md §8).
// --prior-model starts the model from a model file trained on such records
// instead: nothing to replay, and retraining fits only the run's records. By
// default (auto) that is a model of configs/models/ trained on a CPU with
// the target's vector units, when there is one (search/prior_model.h).
// *seeded says whether that was done, so that Tune does not feed the same
// records again.
std::unique_ptr<cost_model::CostModel> MakeCostModel(const TuneCliOptions& o, int threads,
                                                     const database::Database& db,
                                                     const std::string& target, bool* seeded,
                                                     std::string* prior_model) {
  *seeded = false;
  if (prior_model != nullptr) prior_model->clear();
  const bool learns = o.strategy == "evolutionary" && o.cost_model == "xgb";
  const bool auto_prior = o.prior_model == search::kAutoPriorModel;
  const bool named_prior =
      !auto_prior && !o.prior_model.empty() && o.prior_model != search::kNoPriorModel;
  if ((!o.prior_dbs.empty() || named_prior) && !learns) {
    throw std::invalid_argument(std::string(o.prior_dbs.empty() ? "--prior-model" : "--prior-db") +
                                " trains the xgb model of the evolutionary search; " +
                                (o.strategy != "evolutionary"
                                     ? "--strategy " + o.strategy + " ranks nothing"
                                     : "--cost-model " + o.cost_model + " learns nothing"));
  }
  if (o.strategy == "replay") return nullptr;
  if (o.cost_model == "random") return std::make_unique<cost_model::RandomModel>(o.seed);
  if (o.cost_model != "xgb")
    throw std::invalid_argument("unknown cost model '" + o.cost_model + "'");
  cost_model::XGBModelConfig config;
  config.nthread = threads;
  std::vector<cost_model::FeatureSample> samples;
  std::string sources;
  for (const std::string& path : o.prior_dbs) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, o.db_path, ec)) {
      throw std::invalid_argument("--prior-db " + path + " is the tuning database (--db) itself");
    }
    database::Database prior = database::Database::Open(path, database::Database::Mode::kReadOnly);
    search::MeasuredFeatures loaded =
        search::LoadMeasuredFeatures(prior, target, threads, std::nullopt, config.features);
    if (loaded.samples.empty()) {
      throw std::invalid_argument("--prior-db " + path + " holds no replayable record of target '" +
                                  target + "' (`kiln db stats --db " + path +
                                  "` lists its targets)");
    }
    if (loaded.unreplayable > 0) {
      spdlog::warn(
          "tune: {} record(s) of --prior-db {} do not replay and do not train the model "
          "(first: {})",
          loaded.unreplayable, path, loaded.first_error);
    }
    sources += ", " + std::to_string(loaded.samples.size()) + " from " + path;
    samples.insert(samples.end(), std::make_move_iterator(loaded.samples.begin()),
                   std::make_move_iterator(loaded.samples.end()));
  }
  auto model = std::make_unique<cost_model::XGBModel>(config);
  std::string prior_path = named_prior ? o.prior_model : "";
  if (auto_prior) {
    const search::AutoPrior chosen =
        search::ChooseAutoPrior(PriorModelFiles(o.prior_model), ir::Target::Parse(target));
    prior_path = chosen.path;
    if (chosen.path.empty()) {
      spdlog::info("tune: the xgb model starts from nothing: {}", chosen.reason);
    } else {
      spdlog::info("tune: --prior-model auto chose {}: {}", chosen.path, chosen.reason);
    }
  }
  if (!prior_path.empty()) {
    auto prior =
        std::make_shared<cost_model::XGBModel>(cost_model::XGBModel::Load(prior_path, config));
    if (!prior->trained()) {
      throw std::invalid_argument("--prior-model " + prior_path +
                                  " holds an untrained model: it would predict nothing");
    }
    model->SetPrior(std::move(prior));
    sources += ", starting from the model " + prior_path;
    if (prior_model != nullptr) *prior_model = prior_path;
  }
  search::MeasuredFeatures stored =
      search::LoadMeasuredFeatures(db, target, threads, std::nullopt, config.features);
  if (stored.unreplayable > 0) {
    spdlog::warn("tune: {} stored record(s) do not replay and do not train the model (first: {})",
                 stored.unreplayable, stored.first_error);
  }
  const size_t own = stored.samples.size();
  samples.insert(samples.end(), std::make_move_iterator(stored.samples.begin()),
                 std::make_move_iterator(stored.samples.end()));
  if (!samples.empty() || model->prior() != nullptr) {
    model->UpdateFeatures(samples);
    spdlog::info("tune: the xgb model learned from {} stored record(s) of '{}'{} ({})", own, target,
                 sources,
                 model->trained()            ? "trained"
                 : model->prior() != nullptr ? "the prior predicts until there are enough to train"
                                             : "too few to train");
  }
  *seeded = true;
  return model;
}

std::string PriorOutcome(const cost_model::CostModel* model) {
  const auto* xgb = dynamic_cast<const cost_model::XGBModel*>(model);
  if (xgb == nullptr || xgb->prior() == nullptr) return "";
  return xgb->uses_prior() ? "kept" : "set aside";
}

// Where a run's wall time went: "  time: search 5.1 s, learning 2.3 s,
// building 40.2 s, running 80.4 s (the final re-measure: 3.0 s of those)".
// Building and running are the runner's own clocks (rpc/local_runner.h).
std::string TimeBreakdownText(const search::TuneSummary& s, const rpc::LocalRunnerStats& r) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << "  time: search " << s.search_secs << " s, learning "
      << s.learn_secs << " s, building " << r.build_wall_secs << " s, running " << r.run_wall_secs
      << " s";
  if (s.remeasure_secs > 0) out << " (the final re-measure: " << s.remeasure_secs << " s of those)";
  return out.str();
}

std::atomic<bool> g_stop{false};
// The first Ctrl-C asks the loop to stop once the batch in flight is
// committed; a second one gives up on that batch (everything committed before
// it is safe in the database) and ends the process as SIGINT would.
extern "C" void OnInterrupt(int) {
  if (g_stop.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  static const char kMsg[] =
      "\nkiln: stopping after the batch in flight is committed (Ctrl-C again to abort it)\n";
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
}

namespace {

// The progress display: one line per committed batch in a log; on a terminal
// one line redrawn in place, and once a second while a batch is measured (a
// batch of a large workload can take minutes) so that it visibly lives.
class ProgressDisplay {
 public:
  explicit ProgressDisplay(bool tty) : tty_(tty) {
    if (tty_) ticker_ = std::thread([this] { Tick(); });
  }
  ~ProgressDisplay() { Finish(); }
  void Update(const search::TuneProgress& p) {
    std::lock_guard<std::mutex> lock(mu_);
    line_ = ProgressText(p);
    batch_start_ = std::chrono::steady_clock::now();
    Draw("");
  }
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_) return;
      done_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    if (tty_ && !line_.empty()) std::cerr << "\n" << std::flush;
  }

 private:
  void Draw(const std::string& suffix) {
    std::cerr << (tty_ ? "\r\33[K" : "") << line_ << suffix << (tty_ ? "" : "\n") << std::flush;
  }
  void Tick() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) {
      if (line_.empty()) continue;
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_start_).count();
      Draw("; measuring the next batch: " + DurationText(secs));
    }
  }
  const bool tty_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string line_;
  std::chrono::steady_clock::time_point batch_start_;
  bool done_ = false;
  std::thread ticker_;
};

int TuneOne(const TuneCliOptions& o) {
  ResolvedWorkload w = ResolveWorkload(o.workloads.at(0));
  ir::Target target = ResolveTargetFlag(o.target);
  if (o.build_only) {
    return BuildOnly(w, target, o.trials_per_iter > 0 ? o.trials_per_iter : 16, o.seed, o.as_json);
  }
  RequireMeasurableTarget(target);
  int threads = o.threads > 0 ? o.threads : support::HardwareThreads();
  search::TuneContext ctx =
      search::MakeDefaultTuneContext(w.func, target, static_cast<int64_t>(o.seed), threads);
  ctx.task_name = w.label;
  database::Database db = database::Database::Open(o.db_path);
  // Records stored under an older spelling of this target are found again
  // (search/target_lookup.h), so a resumed run does not measure them twice.
  search::CanonicalizeStoredTargets(db);
  rpc::LocalRunnerOptions runner_options;
  runner_options.build_threads = threads;
  rpc::LocalRunner runner(runner_options);
  search::MeasureTask task{w.func, target, o.timing, o.seed};

  bool tty = isatty(STDERR_FILENO) != 0;
  // The progress display is the default view; the loop's log (per-batch
  // lines, sampling failures by postprocessor) is there with --verbose.
  spdlog::set_level(o.verbose ? spdlog::level::info : spdlog::level::warn);
  search::TuneOptions opts;
  opts.trials = o.trials;
  opts.trials_per_iter = TrialsPerIter(o);
  opts.trials_per_iter_start = TrialsPerIterStart(o);
  opts.seed = o.seed;
  opts.fingerprint = MachineFingerprint(target);
  opts.stop = &g_stop;
  opts.strategy = search::ParseStrategyKind(o.strategy);
  if (o.no_final_remeasure) opts.final_remeasure_top = 0;
  if (o.full_timing) opts.slow_call_factor = 0;
  bool model_seeded = false;
  std::string prior_model;
  std::unique_ptr<cost_model::CostModel> model =
      MakeCostModel(o, threads, db, target.ToString(), &model_seeded, &prior_model);
  opts.cost_model = model.get();
  opts.seed_model_from_database = !model_seeded;
  ProgressDisplay display(tty);
  opts.on_progress = [&display](const search::TuneProgress& p) { display.Update(p); };

  g_stop.store(false);
  auto previous = std::signal(SIGINT, OnInterrupt);
  const auto start = std::chrono::steady_clock::now();
  search::TuneSummary s;
  try {
    s = search::Tune(ctx, runner, db, task, opts);
  } catch (...) {
    std::signal(SIGINT, previous);
    display.Finish();
    throw;
  }
  std::signal(SIGINT, previous);
  display.Finish();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Nothing could be measured: that is an error for a script, not a result.
  const int exit_code = s.infrastructure_failed ? 1 : g_stop.load() ? 130 : 0;
  if (s.infrastructure_failed) std::cerr << "kiln: error: " << s.stop_reason << "\n";
  std::cerr << BusyMachineWarning(s.busy_measurements, s.ok_measurements);
  std::optional<database::TuningRecord> best;
  if (auto id = db.FindWorkload(w.func)) best = db.Best(*id, target.ToString());
  if (o.as_json) {
    nlohmann::json out = {{"workload", w.label},
                          {"target", target.ToString()},
                          {"db", o.db_path},
                          {"measured_this_run", s.measured_this_run},
                          {"records_total", s.records_total},
                          {"errors_by_kind", s.errors_by_kind},
                          {"sampling_failures", s.sampling_failures},
                          {"strategy", o.strategy},
                          {"cost_model", model ? o.cost_model : "none"},
                          {"prior_model", prior_model},
                          {"prior_model_outcome", PriorOutcome(model.get())},
                          {"search_seconds", s.search_secs},
                          {"learn_seconds", s.learn_secs},
                          {"build_seconds", runner.stats().build_wall_secs},
                          {"run_seconds", runner.stats().run_wall_secs},
                          {"remeasure_seconds", s.remeasure_secs},
                          {"busy_measurements", s.busy_measurements},
                          {"wide_spread_measurements", s.wide_spread_measurements},
                          {"remeasured", s.remeasured},
                          {"best_before_remeasure_seconds", s.best_before_remeasure_secs},
                          {"best_after_remeasure_seconds", s.best_after_remeasure_secs},
                          {"stopped", s.stop_reason},
                          {"seconds", elapsed}};
    if (best) out["best"] = database::RecordToJson(*best);
    std::cout << out.dump(2) << "\n";
    return exit_code;
  }
  // A few short lines a terminal does not wrap, the long parts last.
  std::cout << "tuned " << w.label << " on '" << target.ToString() << "': " << s.measured_this_run
            << " measured in " << DurationText(elapsed) << ", " << s.records_total << " records in "
            << o.db_path << "\n"
            << "  stopped: " << s.stop_reason << "\n"
            << "  errors this run: " << ErrorsText(s.errors_by_kind) << "\n"
            << "  rejected while sampling: " << s.sampling_failures << "\n"
            << "  search: " << o.strategy << " (" << (model ? o.cost_model : std::string("no"))
            << " model"
            << (prior_model.empty()
                    ? ""
                    : " starting from " + prior_model + ", " + PriorOutcome(model.get()))
            << "), " << std::fixed << std::setprecision(2) << s.search_secs << " s"
            << std::defaultfloat << std::setprecision(6) << "\n"
            << TimeBreakdownText(s, runner.stats()) << "\n";
  if (s.remeasured > 0 && s.best_before_remeasure_secs > 0) {
    // The search's times come from few repeats taken minutes apart; this
    // says how far the best moved when measured again at the end.
    std::cout << "  final re-measure: " << s.remeasured << " record(s) measured again, the best "
              << LatencyText(s.best_before_remeasure_secs) << " before, "
              << (s.best_after_remeasure_secs > 0 ? LatencyText(s.best_after_remeasure_secs) + " after"
                                                  : std::string("no usable record after"))
              << "\n";
  }
  if (!best) {
    std::cout << "no verified record yet\n";
  } else {
    ir::PrimFunc scheduled = ApplyTraceJson(w.func, best->trace_json);
    std::cout << "best: " << LatencyText(best->median_seconds);
    double flops = ir::EstimateFlops(w.func);
    if (best->median_seconds > 0) {
      std::cout << ", " << std::fixed << std::setprecision(2) << flops / best->median_seconds / 1e9
                << std::defaultfloat << " GFLOP/s";
    }
    std::cout << " (trace " << best->trace_hash.substr(0, 16) << ")\n\n# schedule\n"
              << ir::Trace::FromJSONString(best->trace_json).AsPython() << "\n# scheduled program\n"
              << ir::ToText(scheduled);
  }
  return exit_code;
}

}  // namespace

void RegisterTuneCommands(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TuneCliOptions>();
  auto* cmd = app.add_subcommand("tune", "Tune a workload and store every measurement");
  cmd->add_option("--workload,-w", o->workloads,
                  "Suite name (GMM, GMM:3), a family at its own shapes (C2D(1,56,56,64,64,3,1,1)) "
                  "or a text file; repeat it to tune several workloads under the task scheduler");
  cmd->add_option("--job", o->job,
                  "Job file (configs/jobs/): workloads with weights, target, trials, strategy");
  cmd->add_option("--task-scheduler", o->task_scheduler,
                  "Several workloads: 'gradient' (TVM's default) or 'round-robin'")
      ->check(CLI::IsMember({"gradient", "round-robin"}))
      ->capture_default_str();
  cmd->add_option("--trials-per-task", o->trials_per_task,
                  "Several workloads: records at most per task (default: --trials)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  cmd->add_option("--target", o->target, "Target: 'host' or e.g. 'llvm -mcpu=skylake-avx512'")
      ->capture_default_str();
  cmd->add_option("--db", o->db_path, "Tuning database (created if missing)")->capture_default_str();
  cmd->add_option("--trials", o->trials, "Measured candidates the database should hold in the end")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}))
      ->capture_default_str();
  cmd->add_option("--trials-per-iter", o->trials_per_iter,
                  "Candidates per batch (default 64 for the evolutionary search, as TVM's, 16 for "
                  "replay)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--trials-per-iter-start", o->trials_per_iter_start,
                  "First batches' size: a batch holds half the records so far, from this up to "
                  "--trials-per-iter, so a young cost model learns in smaller steps (default 16 for "
                  "the evolutionary search; 0: every batch is --trials-per-iter)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--seed", o->seed, "Search seed (same seed, same candidates)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Sampling and build threads (0: every core)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd->add_option("--number", o->timing.number, "Calls per repeat")->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--repeat", o->timing.repeat, "Timed repeats")->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--min-repeat-ms", o->timing.min_repeat_ms, "Minimum duration of one repeat")
      ->check(CLI::Range(0.0, 600000.0))
      ->capture_default_str();
  cmd->add_option("--timeout", o->timing.timeout_s, "Seconds before a candidate is killed")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  cmd->add_option("--strategy", o->strategy,
                  "Search strategy: 'replay' (random samples of the design space) or "
                  "'evolutionary' (mutations ranked by the cost model)")
      ->check(CLI::IsMember({"evolutionary", "replay"}))
      ->capture_default_str();
  cmd->add_option("--cost-model", o->cost_model,
                  "Cost model that ranks the evolutionary search's candidates")
      ->check(CLI::IsMember(kCostModels))
      ->capture_default_str();
  cmd->add_option("--prior-db", o->prior_dbs,
                  "Another tuning database whose records of the target the xgb model learns from "
                  "before the first batch (read only; repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--prior-model", o->prior_model,
                  "A cost model the xgb model starts from: a name in configs/models/ (avx512) or "
                  "a file of `kiln model train -o`. It ranks the first batches; the run's "
                  "records then train corrections to it. 'auto': a model of configs/models/ "
                  "trained on a CPU with the target's vector units, if there is one; 'none': "
                  "start from nothing")
      ->capture_default_str();
  cmd->add_flag("--build-only", o->build_only,
                "Sample --trials-per-iter candidates and build them for the target without "
                "measuring or storing (for cuda: CUDA C, NVRTC, PTX assembled for the arch)");
  cmd->add_flag("--no-final-remeasure", o->no_final_remeasure,
                "Do not re-measure the best 3 records with more repeats before reporting the best");
  cmd->add_flag("--full-timing", o->full_timing,
                "Time every candidate in full; by default one whose first call lasts 8 times the "
                "best so far is timed by that call alone");
  cmd->add_option("--target-preset", o->target_preset,
                  "A target preset: a name in configs/targets/ (znver4-2core) or a file");
  cmd->add_option("--search-preset", o->search_preset,
                  "A search preset: a name in configs/search/ (quick, default, thorough) or a file; "
                  "flags given on the command line win");
  cmd->add_flag("--json", o->as_json, "Print the summary as JSON");
  cmd->add_flag("-v,--verbose", o->verbose, "Log every batch and the sampling failures to stderr");
  cmd->callback([o, exit_code, cmd] {
    try {
      for (const char* flag : {"--target", "--trials", "--seed", "--strategy", "--trials-per-iter",
                               "--number", "--repeat", "--min-repeat-ms", "--timeout"}) {
        if (cmd->count(flag) > 0) o->given.insert(flag);
      }
      for (const char* flag : {"--cost-model", "--task-scheduler", "--trials-per-task"}) {
        if (cmd->count(flag) > 0) o->given.insert(flag);
      }
      ApplyPresets(o.get());
      if (o->workloads.empty() && o->job.empty())
        throw std::runtime_error("tune: give --workload (once or more) or --job FILE");
      *exit_code = (o->workloads.size() == 1 && o->job.empty()) ? TuneOne(*o) : TuneMany(*o);
    } catch (const std::exception& e) {
      std::cerr << "kiln: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace kiln::tools
