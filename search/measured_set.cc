#include "search/measured_set.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "database/record.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_hash.h"

namespace kiln::search {

double SampleSeconds(bool ok, bool verified, double median_seconds) {
  if (ok && verified && median_seconds > 0) return median_seconds;
  return std::numeric_limits<double>::infinity();
}

std::string MeasuredSet::TraceHashOf(const std::string& trace_json) {
  return database::TraceHash(database::CanonicalTraceJson(trace_json));
}

void MeasuredSet::Add(const Candidate& c) {
  keys_.insert(c.key);
  trace_hashes_.insert(TraceHashOf(c.trace_json));
}

MeasuredSet MeasuredSet::Load(const database::Database& db, database::WorkloadId wid,
                              const std::string& target, const ir::PrimFunc& workload,
                              std::vector<cost_model::Sample>* samples) {
  MeasuredSet m;
  for (std::string& h : db.MeasuredTraceHashes(wid, target)) m.trace_hashes_.insert(std::move(h));
  const std::string workload_key = ir::StructuralHashHex(workload);
  std::string first_error;
  db.ForEachRecord([&](database::WorkloadId w, const database::TuningRecord& r) {
    if (w != wid || r.target != target) return;
    try {
      ir::Schedule sch(workload);
      ir::Trace::FromJSONString(r.trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
      m.keys_.insert(ir::StructuralHash(sch.func()));
      if (samples != nullptr) {
        samples->push_back({sch.func(), workload_key,
                            SampleSeconds(r.status == database::kStatusOk, r.verified,
                                          r.median_seconds)});
      }
    } catch (const std::exception& e) {
      if (m.unreplayable_++ == 0) first_error = e.what();
    }
  });
  if (m.unreplayable_ > 0) {
    // Their trace hashes still keep those exact traces from being measured again.
    spdlog::warn("tune: {} stored record(s) no longer replay on this workload (first: {})",
                 m.unreplayable_, first_error);
  }
  return m;
}

}  // namespace kiln::search
