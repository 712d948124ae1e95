#include "report/curve.h"

#include <cmath>

namespace kiln::report {

std::string RunLabel(const RunKey& key) {
  std::string seed = "seed " + std::to_string(key.seed);
  return key.job_id.empty() ? seed : "job " + key.job_id + " \u00b7 " + seed;
}

double Gflops(double flops, double seconds) {
  return seconds > 0 && std::isfinite(seconds) ? flops / seconds / 1e9 : 0.0;
}

bool IsUsable(const database::TuningRecord& r) {
  return r.status == database::kStatusOk && r.verified && r.median_seconds > 0 &&
         std::isfinite(r.median_seconds);
}

std::vector<CurveRun> TuningCurves(const std::vector<database::TuningRecord>& records,
                                   double flops) {
  std::vector<CurveRun> runs;
  for (const database::TuningRecord& r : records) {
    RunKey key{r.provenance.job_id, r.provenance.seed};
    CurveRun* run = nullptr;
    for (CurveRun& c : runs) {
      if (c.key == key) run = &c;
    }
    if (run == nullptr) {
      runs.push_back(CurveRun{key, RunLabel(key), {}, 0, 0, 0, 0, r.provenance.timestamp, 0});
      run = &runs.back();
    }
    ++run->trials;
    run->last_timestamp = r.provenance.timestamp;
    if (!IsUsable(r)) continue;
    ++run->usable;
    if (run->best_seconds == 0 || r.median_seconds < run->best_seconds) {
      run->best_seconds = r.median_seconds;
      run->best_gflops = Gflops(flops, r.median_seconds);
      run->points.push_back({run->trials, run->best_gflops});
    }
  }
  // The step function ends at the run's last trial, not at its last gain.
  for (CurveRun& c : runs) {
    if (!c.points.empty() && c.points.back().trial != c.trials) {
      c.points.push_back({c.trials, c.best_gflops});
    }
  }
  return runs;
}

}  // namespace kiln::report
