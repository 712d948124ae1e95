// Evolutionary search vs ReplayTrace at the same budget and seed: each tunes
// every workload into its own in-memory database through the local runner;
// then both bests are re-timed side by side in one runner batch with the
// runner's protocol (more repeats) and the ratio is replay's time over
// evolutionary's (> 1: the evolutionary search found the faster kernel).
// Goal: geometric mean >= 1.15 at 128 trials. The cost model is --cost-model:
// xgb (kiln tune's default; each run starts from an empty database, so the
// model learns only from that run's own measurements and its prior model,
// below) or random; the search overhead (strategy time) is printed per
// trial.
//
// --prior-db DB: the xgb model first learns from DB's records of the host
// target, as kiln tune's model learns from every record its database holds
// (tools/tune_commands.cc): the case of a workload tuned into a database
// that already holds other workloads (a model's other layers, say). Records
// of the benched workload itself are left out, so neither strategy starts
// from its results; ReplayTrace has no model and gains nothing.
//
// --prior-model FILE|auto|none: the xgb model starts from a model file
// (`kiln model train -o`), as `kiln tune --prior-model` does. The default,
// auto, is kiln tune's: the first model of configs/models/ trained on a CPU
// with the host's vector units, if any (search/prior_model.h); none: start
// from nothing. The file lists the workloads it was trained on; the bench
// refuses a model that has seen one of the benched workloads, which would
// then not be held out.
//
// --seeds N: N runs, seeds S to S+N-1, and the geometric mean over every
// seed's ratios too. One run's ratio moves with both strategies' luck:
// ReplayTrace's best of 128 random samples differs by up to 1.3x between
// seeds (docs/ARCHITECTURE.md §7).
//
// usage: search_bench [TRIALS] [--workload W]... [--per-iter N] [--seed S]
//                     [--seeds N] [--prior-db DB] [--prior-model FILE|auto|none]
// Figures only: never asserted.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_prior.h"
#include "codegen/llvm_backend.h"
#include "cost_model/random_model.h"
#include "cost_model/xgb_model.h"
#include "database/database.h"
#include "ir/flops.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"
#include "rpc/local_runner.h"
#include "search/measured_samples.h"
#include "search/remeasure.h"
#include "search/tune.h"
#include "search/tune_context.h"

namespace {

using namespace kiln;  // NOLINT: a benchmark's main

constexpr double kGoalRatio = 1.15;

ir::PrimFunc Workload(const std::string& spec) {
  const size_t colon = spec.find(':');
  const int config = colon == std::string::npos ? 0 : std::stoi(spec.substr(colon + 1));
  return ir::MakeWorkload(spec.substr(0, colon), config);
}

struct Outcome {
  std::optional<database::TuningRecord> best;
  double wall_secs = 0;
  double search_secs = 0;
  int64_t measured = 0;
};

Outcome TuneWith(search::StrategyKind kind, const std::string& cost_model, const ir::PrimFunc& f,
                 const ir::Target& target, int64_t trials, int per_iter, uint64_t seed, int threads,
                 rpc::LocalRunner& runner, const std::vector<cost_model::FeatureSample>& prior,
                 const std::shared_ptr<const cost_model::XGBModel>& prior_model) {
  search::TuneContext ctx = search::MakeDefaultTuneContext(f, target, 1, threads);
  database::Database db = database::Database::InMemory();
  search::MeasureTask task{f, target, search::TimingConfig{}, seed};
  std::unique_ptr<cost_model::CostModel> model;
  if (cost_model == "random") {
    model = std::make_unique<cost_model::RandomModel>(seed);
  } else if (cost_model == "xgb") {
    cost_model::XGBModelConfig config;
    config.nthread = threads;
    auto xgb = std::make_unique<cost_model::XGBModel>(config);
    if (kind == search::StrategyKind::kEvolutionary && prior_model) xgb->SetPrior(prior_model);
    if (kind == search::StrategyKind::kEvolutionary && !prior.empty()) {
      const std::string key = ir::StructuralHashHex(f);
      std::vector<cost_model::FeatureSample> others;
      for (const cost_model::FeatureSample& p : prior) {
        if (p.workload_key != key) others.push_back(p);
      }
      std::printf(
          "  the model learns from %zu prior record(s) first (%zu of this workload left out)\n",
          others.size(), prior.size() - others.size());
      xgb->UpdateFeatures(others);
    }
    model = std::move(xgb);
  } else {
    throw std::invalid_argument("unknown cost model '" + cost_model + "'");
  }
  search::TuneOptions o;
  o.trials = trials;
  o.trials_per_iter = per_iter;
  o.seed = seed;
  o.fingerprint = "search_bench";
  o.strategy = kind;
  o.cost_model = model.get();
  const auto t0 = std::chrono::steady_clock::now();
  search::TuneSummary s = search::Tune(ctx, runner, db, task, o);
  Outcome out;
  out.wall_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.search_secs = s.search_secs;
  out.measured = s.measured_this_run;
  out.best = db.Best(*db.FindWorkload(f), target.ToString());
  return out;
}

// One seed: both strategies on every workload, the bests re-timed side by
// side; appends each workload's ratio to *ratios.
void RunSeed(const std::vector<std::string>& workloads, const std::string& cost_model,
             const ir::Target& target, int64_t trials, int per_iter, uint64_t seed, int threads,
             int repeat, rpc::LocalRunner& runner,
             const std::vector<cost_model::FeatureSample>& prior,
             const std::shared_ptr<const cost_model::XGBModel>& prior_model,
             std::vector<double>* ratios) {
  double log_sum = 0;
  int n = 0;
  for (const std::string& w : workloads) {
    const ir::PrimFunc f = Workload(w);
    const double flops = ir::EstimateFlops(f);
    Outcome rep = TuneWith(search::StrategyKind::kReplay, cost_model, f, target, trials, per_iter,
                           seed, threads, runner, prior, prior_model);
    Outcome evo = TuneWith(search::StrategyKind::kEvolutionary, cost_model, f, target, trials,
                           per_iter, seed, threads, runner, prior, prior_model);
    std::printf(
        "%-6s replay: %lld measured in %.0f s (search %.1f ms/trial); evolutionary: "
        "%lld measured in %.0f s (search %.1f ms/trial)\n",
        w.c_str(), static_cast<long long>(rep.measured), rep.wall_secs,
        rep.measured ? rep.search_secs * 1e3 / rep.measured : 0.0,
        static_cast<long long>(evo.measured), evo.wall_secs,
        evo.measured ? evo.search_secs * 1e3 / evo.measured : 0.0);
    if (!rep.best || !evo.best) {
      std::printf("%-6s no verified best for %s: no ratio\n", w.c_str(),
                  !rep.best ? "replay" : "evolutionary");
      continue;
    }
    // Both bests again, side by side, with more repeats.
    search::MeasureTask task{f, target, search::TimingConfig{}, seed};
    task.timing.repeat = repeat;
    std::vector<search::MeasureResult> r =
        search::RemeasureRecords(runner, task, {*rep.best, *evo.best});
    if (r.size() != 2 || r[0].status != search::MeasureStatus::kOk ||
        r[1].status != search::MeasureStatus::kOk) {
      std::printf("%-6s re-timing failed: %s / %s\n", w.c_str(),
                  r.empty() ? "?" : r[0].message.c_str(),
                  r.size() < 2 ? "?" : r[1].message.c_str());
      continue;
    }
    const double t_rep = r[0].MedianSecs(), t_evo = r[1].MedianSecs();
    const double ratio = t_rep / t_evo;
    log_sum += std::log(ratio);
    ++n;
    ratios->push_back(ratio);
    std::printf(
        "%-6s best: replay %.3f ms (%.1f GFLOP/s), evolutionary %.3f ms (%.1f GFLOP/s); "
        "ratio %.3fx (tuning-time bests: %.3f / %.3f ms)\n",
        w.c_str(), t_rep * 1e3, flops / t_rep / 1e9, t_evo * 1e3, flops / t_evo / 1e9, ratio,
        rep.best->median_seconds * 1e3, evo.best->median_seconds * 1e3);
  }
  if (n > 0) {
    const double geo = std::exp(log_sum / n);
    std::printf("seed %llu: geometric mean ratio over %d workload(s): %.3fx; goal >= %.2fx: %s\n",
                static_cast<unsigned long long>(seed), n, geo, kGoalRatio,
                geo >= kGoalRatio ? "met" : "NOT met");
  }
}

// The prior model --prior-model names (a file, "auto" or "none"), checked to
// hold out the benched workloads; null for none.
std::shared_ptr<const cost_model::XGBModel> LoadPriorModel(
    const std::string& flag, const std::string& cost_model, const ir::Target& target,
    const std::vector<std::string>& workloads, int threads) {
  if (flag == search::kAutoPriorModel && cost_model != "xgb") return nullptr;
  if (flag != search::kAutoPriorModel && flag != search::kNoPriorModel && cost_model != "xgb")
    throw std::invalid_argument("--prior-model needs the xgb cost model");
  const std::string path = bench::ChoosePriorModelFile(flag, target);
  if (path.empty()) return nullptr;
  cost_model::XGBModelConfig config;
  config.nthread = threads;
  auto m = std::make_shared<cost_model::XGBModel>(cost_model::XGBModel::Load(path, config));
  const std::vector<std::string> seen = m->trained_workloads();
  if (!m->trained() || seen.empty()) {
    throw std::invalid_argument("--prior-model " + path +
                                ": an untrained model, or one whose file does not list the "
                                "workloads it was trained on");
  }
  for (const std::string& w : workloads) {
    if (std::find(seen.begin(), seen.end(), ir::StructuralHashHex(Workload(w))) != seen.end()) {
      throw std::invalid_argument("--prior-model " + path + " was trained on " + w +
                                  "'s records: it would not be held out");
    }
  }
  std::printf("prior model: %s, trained on %zu program(s) of %zu workload(s), none benched\n",
              path.c_str(), static_cast<size_t>(m->last_train_size()), seen.size());
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Evolutionary search vs ReplayTrace at the same budget and seed"};
  int64_t trials = 128;
  std::vector<std::string> workloads = {"GMM:3", "C2D:0", "SFM:0"};
  int per_iter = 16, threads = 2, repeat = 5, seeds = 1;
  uint64_t seed = 1;
  std::string cost_model = "xgb", prior_db, prior_model_flag = search::kAutoPriorModel;
  app.add_option("trials", trials, "Trials per strategy and workload")
      ->check(CLI::Range(1, 100000));
  app.add_option("--workload", workloads, "Workloads (suite names)");
  app.add_option("--per-iter", per_iter, "Candidates per measured batch")
      ->check(CLI::Range(1, 4096));
  app.add_option("--seed", seed, "Search seed (both strategies)");
  app.add_option("--seeds", seeds, "Runs with seeds --seed, --seed + 1, ...")
      ->check(CLI::Range(1, 1000));
  app.add_option("--threads", threads, "Sampling and build threads")->check(CLI::Range(1, 256));
  app.add_option("--repeat", repeat, "Repeats when re-timing the bests")
      ->check(CLI::Range(1, 1000));
  app.add_option("--cost-model", cost_model, "Cost model of the evolutionary search")
      ->check(CLI::IsMember({"xgb", "random"}));
  app.add_option("--prior-db", prior_db,
                 "A tuning database whose records of other workloads the xgb model learns from "
                 "before the first batch")
      ->check(CLI::ExistingFile);
  app.add_option("--prior-model", prior_model_flag,
                 "A cost model file, trained without the benched workloads, that the xgb model "
                 "starts from; auto: kiln tune's choice from configs/models/; none: no prior")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  // A run takes minutes a seed: show each line as it comes, also in a log.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (prior_model_flag != search::kAutoPriorModel && prior_model_flag != search::kNoPriorModel &&
      !std::filesystem::is_regular_file(prior_model_flag)) {
    std::fprintf(stderr, "search_bench: --prior-model %s: no such file\n",
                 prior_model_flag.c_str());
    return 1;
  }

  try {
    const ir::Target target = codegen::HostTarget();
    rpc::LocalRunnerOptions ro;
    ro.build_threads = threads;
    rpc::LocalRunner runner(ro);
    std::printf("search_bench: %lld trials, %d per batch, seed %llu%s, target '%s', %s model\n",
                static_cast<long long>(trials), per_iter, static_cast<unsigned long long>(seed),
                seeds > 1 ? (" to " + std::to_string(seed + seeds - 1)).c_str() : "",
                target.ToString().c_str(), cost_model.c_str());
    std::vector<cost_model::FeatureSample> prior;
    if (!prior_db.empty()) {
      if (cost_model != "xgb") throw std::invalid_argument("--prior-db needs the xgb cost model");
      const database::Database db =
          database::Database::Open(prior_db, database::Database::Mode::kReadOnly);
      search::MeasuredFeatures stored =
          search::LoadMeasuredFeatures(db, target.ToString(), threads);
      prior = std::move(stored.samples);
      if (prior.empty()) {
        throw std::invalid_argument("--prior-db " + prior_db + ": no records for target '" +
                                    target.ToString() + "'");
      }
      std::printf("prior: %zu record(s) of '%s' from %s (%lld no longer replay)\n", prior.size(),
                  target.ToString().c_str(), prior_db.c_str(),
                  static_cast<long long>(stored.unreplayable));
    }
    const std::shared_ptr<const cost_model::XGBModel> prior_model =
        LoadPriorModel(prior_model_flag, cost_model, target, workloads, threads);
    std::vector<double> ratios;
    for (int k = 0; k < seeds; ++k) {
      if (seeds > 1) std::printf("# seed %llu\n", static_cast<unsigned long long>(seed + k));
      RunSeed(workloads, cost_model, target, trials, per_iter, seed + k, threads, repeat, runner,
              prior, prior_model, &ratios);
    }
    if (seeds > 1 && !ratios.empty()) {
      double log_sum = 0;
      for (double r : ratios) log_sum += std::log(r);
      const double geo = std::exp(log_sum / static_cast<double>(ratios.size()));
      std::printf("geometric mean ratio over %d seed(s), %zu ratio(s): %.3fx; goal >= %.2fx: %s\n",
                  seeds, ratios.size(), geo, kGoalRatio, geo >= kGoalRatio ? "met" : "NOT met");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
