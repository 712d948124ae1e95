#include "search/remeasure.h"

#include <algorithm>
#include <set>
#include <string>

#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

std::vector<MeasureResult> RemeasureRecords(Runner& runner, const MeasureTask& task,
                                            const std::vector<database::TuningRecord>& records) {
  std::vector<MeasureResult> results(records.size());
  std::vector<MeasureCandidate> batch;
  std::vector<size_t> slot;  // batch index -> record index
  for (size_t i = 0; i < records.size(); ++i) {
    try {
      ir::Trace trace = ir::Trace::FromJSONString(records[i].trace_json);
      ir::Schedule sch(task.workload);
      trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
      batch.push_back({sch.func(), records[i].trace_json});
      slot.push_back(i);
    } catch (const std::exception& e) {
      results[i].status = MeasureStatus::kBuildError;
      results[i].message = std::string("the stored trace does not replay on the workload: ") + e.what();
    }
  }
  if (batch.empty()) return results;
  std::vector<MeasureResult> measured = runner.Measure(task, batch);
  if (measured.size() != batch.size()) {
    for (size_t i : slot) {
      results[i].status = MeasureStatus::kInfraError;
      results[i].message = "the runner returned " + std::to_string(measured.size()) +
                           " results for a batch of " + std::to_string(batch.size());
    }
    return results;
  }
  for (size_t b = 0; b < batch.size(); ++b) results[slot[b]] = std::move(measured[b]);
  return results;
}

database::TuningRecord WithRemeasure(database::TuningRecord stored, const MeasureResult& result,
                                     bool keep_stored_repeats) {
  if (result.status == MeasureStatus::kOk && result.verified) {
    if (!keep_stored_repeats) stored.run_seconds.clear();
    stored.machine_load =
        keep_stored_repeats ? std::max(stored.machine_load, result.machine_load) : result.machine_load;
    stored.run_seconds.insert(stored.run_seconds.end(), result.run_secs.begin(),
                              result.run_secs.end());
    stored.median_seconds = database::Median(stored.run_seconds);
    stored.wide_spread = IsWideSpread(stored.run_seconds);
    stored.verified = true;
    stored.status = database::kStatusOk;
    stored.message.clear();
    return stored;
  }
  const bool ok_unverified = result.status == MeasureStatus::kOk;
  stored.status = ok_unverified ? database::kStatusWrongResult : MeasureStatusName(result.status);
  stored.message = "re-measured: " + (ok_unverified ? std::string("outputs not verified")
                                                     : result.message);
  stored.verified = false;
  return stored;
}

int RemeasureBest(Runner& runner, database::Database& db, database::WorkloadId workload,
                  const MeasureTask& task, int top, int repeat, int* failed) {
  if (failed != nullptr) *failed = 0;
  if (top <= 0) return 0;
  MeasureTask longer = task;
  longer.timing.repeat = std::max(task.timing.repeat, repeat);
  // A re-measured record that turns out slower drops out of the top, and an
  // unchecked one may take its place: go on until the top `top` are all
  // re-measured (at most 4 * top records, to bound the cost on a noisy machine).
  std::set<std::string> done_hashes;
  int done = 0;
  while (done < 4 * top) {
    std::vector<database::TuningRecord> fresh;
    for (database::TuningRecord& r : db.TopK(workload, task.target.ToString(), top)) {
      if (!done_hashes.count(r.trace_hash)) fresh.push_back(std::move(r));
    }
    if (fresh.empty()) break;
    std::vector<MeasureResult> results = RemeasureRecords(runner, longer, fresh);
    bool any = false;
    db.Transaction([&] {
      for (size_t i = 0; i < fresh.size(); ++i) {
        done_hashes.insert(fresh[i].trace_hash);
        // The machinery failed, not the schedule: the record stays as it was.
        if (results[i].status == MeasureStatus::kInfraError) continue;
        if (results[i].status != MeasureStatus::kOk && failed != nullptr) ++*failed;
        db.UpdateMeasurement(workload, WithRemeasure(fresh[i], results[i], /*keep_stored_repeats=*/true));
        ++done;
        any = true;
      }
    });
    if (!any) break;  // every one was an infrastructure failure: do not spin
  }
  return done;
}

}  // namespace kiln::search
