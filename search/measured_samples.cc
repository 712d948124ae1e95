#include "search/measured_samples.h"

#include <limits>
#include <map>
#include <set>

#include "codegen/target_features.h"

#include "ir/text/parser.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

MeasuredSamples LoadMeasuredSamples(const database::Database& db, const std::string& target,
                                    std::optional<database::WorkloadId> only) {
  const std::string normalized = database::NormalizeTarget(target);
  // Every stored spelling of the target counts (a database written before
  // targets were canonical holds the long form; search/target_lookup.h).
  std::set<std::string> spellings = {normalized};
  std::optional<ir::Target> canonical;
  try {
    canonical = codegen::CanonicalTarget(ir::Target::Parse(normalized));
  } catch (const std::exception&) {
    // A target this LLVM cannot describe: only its own spelling matches.
  }
  if (canonical) {
    for (const std::string& stored : db.Targets()) {
      try {
        if (codegen::CanonicalTarget(ir::Target::Parse(stored)) == *canonical) spellings.insert(stored);
      } catch (const std::exception&) {
        // A stored target that no longer parses matches nothing.
      }
    }
  }
  struct Workload {
    ir::PrimFunc func;
    std::string key;
  };
  std::map<database::WorkloadId, Workload> workloads;
  MeasuredSamples out;
  db.ForEachRecord([&](database::WorkloadId w, const database::TuningRecord& r) {
    if (spellings.count(r.target) == 0 || (only && *only != w)) return;
    auto it = workloads.find(w);
    if (it == workloads.end()) {
      Workload wl;
      try {
        wl.func = ir::ParseFunc(db.WorkloadText(w), "<workload " + std::to_string(w) + ">");
      } catch (const std::exception& e) {
        throw database::DatabaseError("stored workload " + std::to_string(w) +
                                      " does not parse: " + e.what());
      }
      wl.key = db.WorkloadHash(w);
      it = workloads.emplace(w, std::move(wl)).first;
    }
    try {
      ir::Schedule sch(it->second.func);
      ir::Trace::FromJSONString(r.trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
      const bool ok = r.status == database::kStatusOk && r.median_seconds > 0;
      out.samples.push_back({sch.func(), it->second.key,
                             ok ? r.median_seconds : std::numeric_limits<double>::infinity()});
      out.workload_ids.push_back(w);
    } catch (const std::exception& e) {
      if (out.unreplayable++ == 0) out.first_error = e.what();
    }
  });
  return out;
}

}  // namespace kiln::search
