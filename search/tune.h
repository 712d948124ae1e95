// The tuning loop of one task (issue 6; TVM's task loop, reference §7/§11):
// ReplayTrace proposes batches, the Runner measures them, and every result is
// committed to the database as soon as the batch returns. The database is
// the source of truth: schedules it already holds for this workload and
// target are never measured again, and `trials` is the number of records the
// database should hold for them, so a rerun resumes and tops up.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "database/database.h"
#include "search/measure.h"
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
  // The search seed (it replaces ctx.seed); stored in every record's provenance.
  uint64_t seed = 0;
  std::string fingerprint;   // the measuring machine (required): stored with every record
  // Checked between batches: when set, the loop stops after committing the
  // batch in flight.
  const std::atomic<bool>* stop = nullptr;
  // Called once before the first batch and after every committed batch.
  std::function<void(const TuneProgress&)> on_progress;
};

struct TuneSummary {
  int64_t measured_this_run = 0;  // candidates measured and committed by this call
  int64_t records_total = 0;      // records for this workload and target at the end
  std::map<std::string, int64_t> errors_by_kind;  // this run's failures, by status name
  std::string stop_reason;        // why the loop ended, in words
  bool infrastructure_failed = false;  // it ended because a whole batch came back infra_error
  // Candidates the sampler rejected, by postprocessor (ReplayTrace's
  // "RewriteParallelVectorizeUnroll: 3, replay: 1"); "none" when none.
  std::string sampling_failures;
};

// Tunes task.workload on task.target. ctx must describe the same workload and
// target (std::invalid_argument otherwise, and for bad options). Candidates
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
