// The tuning loop of one task (issue 6; TVM's task loop, docs/ARCHITECTURE.md §7, §11):
// a SearchStrategy (search/search_strategy.h: ReplayTrace or
// EvolutionarySearch) proposes batches, the Runner measures them, and the
// measure callbacks (search/measure_callback.h) commit every result to the
// database and feed the cost model as soon as the batch returns. The database is
// the source of truth: schedules it already holds for this workload and
// target are never measured again, and `trials` is the number of records the
// database should hold for them, so a rerun resumes and tops up.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "cost_model/cost_model.h"
#include "database/database.h"
#include "search/evolutionary_search.h"
#include "search/measure.h"
#include "search/replay_trace.h"
#include "search/search_strategy.h"
#include "search/tune_context.h"

namespace kiln::search {

struct TuneProgress {
  int64_t trials_done;    // records the database holds for this workload and target
  int64_t trials_target;  // TuneOptions::trials
  double best_gflops;     // of the best usable (ok, verified) record; 0 when none
  double best_secs;       // its median seconds; 0 when none
  std::map<std::string, int64_t> errors_by_kind;  // this run's failed measurements, by status name
  double eta_secs;        // this run's seconds per measurement times the trials left
};

struct TuneOptions {
  int64_t trials = 64;       // target number of records for this workload and target (>= 1)
  int trials_per_iter = 16;  // candidates per measured batch (>= 1)
  // Batches start smaller while the workload has few records: a batch holds
  // half the records stored so far, at least trials_per_iter_start and at
  // most trials_per_iter (0, or not below trials_per_iter: every batch is
  // trials_per_iter). The cost model learns between batches, so a young
  // model gets more, smaller steps: with 16 growing to 64 (batches start at
  // records 0, 16, 32, 48, 72, 108, 162), four guided batches have started
  // by trial 128, not one (docs/ARCHITECTURE.md §7).
  int trials_per_iter_start = 0;
  // The search seed (it replaces ctx.seed); stored in every record's provenance.
  uint64_t seed = 0;
  std::string fingerprint;   // the measuring machine (required): stored with every record
  std::string job_id;        // the farm job the records belong to ("" for kiln tune)
  // Checked between batches: when set, the loop stops after committing the
  // batch in flight.
  const std::atomic<bool>* stop = nullptr;
  // Called once before the first batch and after every committed batch.
  std::function<void(const TuneProgress&)> on_progress;

  // How candidates are found. EvolutionarySearch needs a cost model.
  StrategyKind strategy = StrategyKind::kReplay;
  ReplayTraceConfig replay;
  EvolutionarySearchConfig evolutionary;
  // The model that ranks candidates (not owned; may be shared by several
  // tasks). UpdateCostModel feeds it every measured batch. May be null for
  // ReplayTrace, which ranks nothing (it is then fed nothing).
  cost_model::CostModel* cost_model = nullptr;
  // Before the first batch, Update the model with the records the database
  // already holds for this workload and target, so that a resumed run is not
  // blind. Turn off when the caller trained the model from the database itself.
  bool seed_model_from_database = true;
  // Before the best is reported, the `final_remeasure_top` best records are
  // measured again with at least `final_remeasure_repeat` repeats, and every
  // repeat is kept in the record (search/remeasure.h): the winner is not
  // chosen on one noisy measurement. Only when this run measured something;
  // 0 turns it off (`kiln tune --no-final-remeasure`).
  int final_remeasure_top = 3;
  int final_remeasure_repeat = 5;
  // A candidate whose first call lasts this many times the workload's best
  // so far is timed by that call alone (TimingConfig::slow_call_secs; 0:
  // every candidate is timed in full, `kiln tune --full-timing`). On GMM:3
  // about a tenth of a run's candidates are that slow, and timing them took
  // a good part of its wall time (docs/ARCHITECTURE.md §10). The final
  // re-measure always times in full.
  double slow_call_factor = 8;
};

// The size of the next batch for a workload holding `done` records.
int BatchSize(const TuneOptions& opts, int64_t done);

struct TuneSummary {
  int64_t measured_this_run = 0;  // candidates measured and committed by this call
  int64_t records_total = 0;      // records for this workload and target at the end
  std::map<std::string, int64_t> errors_by_kind;  // this run's failures, by status name
  std::string stop_reason;        // why the loop ended, in words
  bool infrastructure_failed = false;  // it ended because a whole batch came back infra_error
  // Candidates the sampler rejected, by postprocessor (ReplayTrace's
  // "RewriteParallelVectorizeUnroll: 3, replay: 1"); "none" when none.
  std::string sampling_failures;
  // Seconds spent in the strategy (PreTuning and GenerateCandidates:
  // sampling, mutation, postprocs, prediction), i.e. the search overhead;
  // building and running are the runner's, training is UpdateCostModel's.
  double search_secs = 0;
  // Where more of the wall time went: the measure callbacks and the
  // strategy's notification (committing to the database, training the cost
  // model), and the final re-measure. The runner's own clocks say how long
  // building and running took (rpc::LocalRunnerStats).
  double learn_secs = 0;
  double remeasure_secs = 0;
  int64_t candidates_generated = 0;  // what the strategy proposed (measured or not)
  // Noise: this run's ok measurements taken while other processes used more
  // than kBusyMachineLoad of the CPUs, and those whose repeats spread wide.
  int64_t busy_measurements = 0;
  int64_t wide_spread_measurements = 0;
  int64_t ok_measurements = 0;
  // The final re-measure: records measured again, and those that failed then.
  int64_t remeasured = 0;
  int64_t remeasure_failed = 0;
  // The best record's median just before the final re-measure and just
  // after it (seconds; both 0 when nothing was re-measured; after 0 alone
  // when no usable record was left). They differ by the noise of the few
  // repeats measured during the search and by how far the machine's speed
  // drifted since (docs/ARCHITECTURE.md §10).
  double best_before_remeasure_secs = 0;
  double best_after_remeasure_secs = 0;
};

// Tunes task.workload on task.target. ctx must describe the same workload and
// target (std::invalid_argument otherwise, and for bad options, and for
// EvolutionarySearch without a cost model). Candidates
// depend only on opts.seed and the database content, never on thread counts.
//
// Results with status infra_error (the measuring machinery failed, not the
// schedule) are counted but not committed, so that a later run measures
// those schedules again; a batch that fails that way entirely stops the loop.
// Throws database::DatabaseError when the database fails, std::runtime_error
// when the runner breaks its contract (a result count that differs from the
// batch size).
TuneSummary Tune(const TuneContext& ctx, Runner& runner, database::Database& db,
                 const MeasureTask& task, const TuneOptions& opts);

}  // namespace kiln::search
