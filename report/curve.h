// The tuning curve: the best speed found so far against the number of trials,
// one line per run.
//
// A run is what the database can tell apart: the records of one workload and
// target that carry the same job id (set by the farm; empty for `kiln tune`)
// and the same search seed. The strategy is not stored with a record, so two
// strategies are two runs only when they were given different seeds; a run
// resumed with the same seed continues its own line, as the tuning loop
// itself continues it (search/tune.h). Trials are counted in commit order and
// every record is a trial, failures included, as TVM counts them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "database/record.h"

namespace kiln::report {

struct RunKey {
  std::string job_id;
  uint64_t seed = 0;
  friend bool operator==(const RunKey&, const RunKey&) = default;
};

// "seed 1", or "job 7 · seed 1" for a farm job's records.
std::string RunLabel(const RunKey& key);

struct CurvePoint {
  int64_t trial = 0;       // 1-based, within the run
  double best_gflops = 0;  // the best usable record up to and including this trial
};

struct CurveRun {
  RunKey key;
  std::string label;
  // A point where the best improves, and one at the last trial (the curve is
  // a step function); empty while the run has no usable record.
  std::vector<CurvePoint> points;
  int64_t trials = 0;
  int64_t usable = 0;  // status ok and verified: only these can be the best
  double best_seconds = 0;
  double best_gflops = 0;
  int64_t first_timestamp = 0;
  int64_t last_timestamp = 0;
};

// GFLOP/s of a kernel doing `flops` in `seconds` (0 when seconds <= 0).
double Gflops(double flops, double seconds);

// `records` are one workload's on one target, in commit order. Runs come in
// the order of their first record. A record is usable when its status is ok,
// it is verified and its median is positive (the rule of Database::Best).
std::vector<CurveRun> TuningCurves(const std::vector<database::TuningRecord>& records,
                                   double flops);

bool IsUsable(const database::TuningRecord& r);

}  // namespace kiln::report
