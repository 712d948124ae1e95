// What `kiln tune` shares between its one-workload form (tools/tune_commands.cc)
// and its many-workload form (tools/tune_tasks_commands.cc): the options, the
// cost model and Ctrl-C handling (the text helpers are tools/progress_text.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "database/database.h"
#include "search/measure.h"

namespace kiln::tools {

struct TuneCliOptions {
  std::vector<std::string> workloads;  // --workload, repeatable
  std::string job;                     // --job FILE: workloads with weights, and defaults
  std::string target = "host";
  std::string db_path = "kiln.db";
  int64_t trials = 64;           // one workload: its records; several: all of theirs together
  int64_t trials_per_task = 0;   // several: a cap per task (0: --trials)
  int trials_per_iter = 0;  // 0: 64 for the evolutionary search (TVM's), 16 for replay
  int trials_per_iter_start = -1;  // -1: 16 for the evolutionary search, 0 (off) for replay
  uint64_t seed = 1;
  int threads = 0;
  search::TimingConfig timing;
  std::string strategy = "evolutionary";
  std::string cost_model = "xgb";
  std::string task_scheduler = "gradient";
  // --prior-db FILE, repeatable: databases the xgb model also learns from
  // before the first batch (read only; their records never count as tuned).
  std::vector<std::string> prior_dbs;
  // --prior-model NAME|FILE|auto|none: a model (configs/models/NAME.model,
  // or a file of `kiln model train -o`) the xgb model starts from (XGBModel::
  // SetPrior). "auto": a shipped model that suits the target, if any
  // (search/prior_model.h, among PriorModelFiles("auto")); "none" (or
  // empty): none. ApplyPresets turns a name into its file.
  std::string prior_model = "auto";
  bool as_json = false;
  bool verbose = false;
  bool no_final_remeasure = false;  // TuneOptions::final_remeasure_top = 0
  bool full_timing = false;         // TuneOptions::slow_call_factor = 0
  bool build_only = false;  // sample and build one batch, measure nothing (tools/build_only.h)
  // Flags given on the command line; with --job they override the file.
  std::set<std::string> given;
  std::string target_preset;  // --target-preset NAME|FILE (configs/targets/)
  std::string search_preset;  // --search-preset NAME|FILE (configs/search/)
};

// Fills the options a --target-preset / --search-preset sets and the command
// line does not, and marks them given; turns a --prior-model name into its
// file (tools/config_commands.cc). Throws
// config::ConfigError for a missing or invalid preset, or a model that is neither a file nor a
// known name.
void ApplyPresets(TuneCliOptions* o);

// The model files a --prior-model value may start a run from: "auto", every
// model of configs/models/ (search::ChooseAutoPrior picks one per target);
// "none" or empty, none; otherwise the named model or file. Throws
// config::ConfigError for a name that is neither (tools/config_commands.cc).
std::vector<std::string> PriorModelFiles(const std::string& flag);

// --trials-per-iter as TuneOptions::trials_per_iter takes it: 64 for the
// evolutionary search unless given (TVM's), 16 for replay.
inline int TrialsPerIter(const TuneCliOptions& o) {
  if (o.trials_per_iter > 0) return o.trials_per_iter;
  return o.strategy == "evolutionary" ? 64 : 16;
}

// --trials-per-iter-start as TuneOptions::trials_per_iter_start takes it:
// 16 for the evolutionary search unless given, 0 (off) for replay, whose
// batches teach nothing.
inline int TrialsPerIterStart(const TuneCliOptions& o) {
  if (o.strategy != "evolutionary") return 0;
  return o.trials_per_iter_start >= 0 ? o.trials_per_iter_start : 16;
}

// The cost models `--cost-model` accepts.
extern const std::vector<std::string> kCostModels;

// The model that ranks candidates (see tune_commands.cc); *seeded says it
// already learned from the database. Null for --strategy replay, which ranks
// nothing (training XGBoost there would only cost time). Throws
// std::invalid_argument for --prior-db or --prior-model with a model that
// cannot learn from them, or a prior database that holds no record of the
// target; cost_model::CostModelError for a model file that cannot be used.
// *prior_model (if given) is set to the model file the xgb model starts
// from, empty for none.
std::unique_ptr<cost_model::CostModel> MakeCostModel(const TuneCliOptions& o, int threads,
                                                     const database::Database& db,
                                                     const std::string& target, bool* seeded,
                                                     std::string* prior_model = nullptr);

// What became of the prior the model started from, for the summary: "kept",
// or "set aside" when the run's own held-out records ranked better without
// it (cost_model::XGBModelConfig::check_prior); empty without a prior.
std::string PriorOutcome(const cost_model::CostModel* model);

// Set by the first Ctrl-C (OnInterrupt); the loops stop after the batch in flight.
extern std::atomic<bool> g_stop;
extern "C" void OnInterrupt(int);

// Several workloads sharing one budget under the task scheduler.
int TuneMany(const TuneCliOptions& o);

}  // namespace kiln::tools
