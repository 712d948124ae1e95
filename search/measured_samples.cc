#include "search/measured_samples.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "codegen/target_features.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/text/parser.h"
#include "support/parallel_for.h"

namespace kiln::search {

namespace {

struct Workload {
  ir::PrimFunc func;
  std::string key;
};

// A stored record of the target, not yet replayed.
struct StoredRecord {
  database::WorkloadId workload;
  std::string trace_json;
  double run_secs;  // the median for status "ok", +inf otherwise
};

struct Stored {
  std::map<database::WorkloadId, Workload> workloads;
  std::vector<StoredRecord> records;  // commit order
};

Stored CollectRecords(const database::Database& db, const std::string& target,
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
  Stored out;
  db.ForEachRecord([&](database::WorkloadId w, const database::TuningRecord& r) {
    if (spellings.count(r.target) == 0 || (only && *only != w)) return;
    if (out.workloads.count(w) == 0) {
      Workload wl;
      try {
        wl.func = ir::ParseFunc(db.WorkloadText(w), "<workload " + std::to_string(w) + ">");
      } catch (const std::exception& e) {
        throw database::DatabaseError("stored workload " + std::to_string(w) +
                                      " does not parse: " + e.what());
      }
      wl.key = db.WorkloadHash(w);
      out.workloads.emplace(w, std::move(wl));
    }
    const bool ok = r.status == database::kStatusOk && r.median_seconds > 0;
    out.records.push_back(
        {w, r.trace_json, ok ? r.median_seconds : std::numeric_limits<double>::infinity()});
  });
  return out;
}

// The record's schedule, or nullopt with *error set when it no longer replays.
std::optional<ir::PrimFunc> Replay(const Workload& w, const std::string& trace_json,
                                   std::string* error) {
  try {
    ir::Schedule sch(w.func);
    ir::Trace::FromJSONString(trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
    return sch.func();
  } catch (const std::exception& e) {
    *error = e.what();
    return std::nullopt;
  }
}

}  // namespace

MeasuredFeatures LoadMeasuredFeatures(const database::Database& db, const std::string& target,
                                      int threads, std::optional<database::WorkloadId> only,
                                      const cost_model::FeatureOptions& options, int chunk) {
  if (chunk < 1) throw std::invalid_argument("LoadMeasuredFeatures: chunk must be >= 1");
  const Stored stored = CollectRecords(db, target, only);
  MeasuredFeatures out;
  for (size_t begin = 0; begin < stored.records.size(); begin += static_cast<size_t>(chunk)) {
    const size_t n = std::min(static_cast<size_t>(chunk), stored.records.size() - begin);
    std::vector<std::optional<ir::PrimFunc>> funcs(n);
    std::vector<std::string> errors(n);
    support::ParallelFor(static_cast<int>(n), threads, [&](int i) {
      const StoredRecord& r = stored.records[begin + static_cast<size_t>(i)];
      funcs[static_cast<size_t>(i)] =
          Replay(stored.workloads.at(r.workload), r.trace_json, &errors[static_cast<size_t>(i)]);
    });
    std::vector<cost_model::Sample> replayed;
    for (size_t i = 0; i < n; ++i) {
      const StoredRecord& r = stored.records[begin + i];
      if (funcs[i]) {
        replayed.push_back({std::move(*funcs[i]), stored.workloads.at(r.workload).key, r.run_secs});
        out.workload_ids.push_back(r.workload);
      } else if (out.unreplayable++ == 0) {
        out.first_error = errors[i];
      }
    }
    std::vector<cost_model::FeatureSample> features =
        cost_model::ToFeatureSamples(replayed, threads, options);
    out.samples.insert(out.samples.end(), std::make_move_iterator(features.begin()),
                       std::make_move_iterator(features.end()));
  }
  return out;
}

}  // namespace kiln::search
