#include "search/verify_records.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "codegen/llvm_backend.h"
#include "codegen/target_features.h"
#include "ir/target.h"
#include "ir/text/parser.h"
#include "search/remeasure.h"
#include "support/cores.h"

namespace kiln::search {
namespace {

using database::TuningRecord;
using database::WorkloadId;

// Records to measure, by (workload, stored target string).
using Groups = std::map<std::pair<WorkloadId, std::string>, std::vector<TuningRecord>>;

Groups Collect(const database::Database& db, const VerifyOptions& opts) {
  Groups groups;
  auto wanted = [&](WorkloadId w) { return !opts.workload || *opts.workload == w; };
  if (opts.unverified) {
    db.ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
      if (wanted(w) && r.status == database::kStatusOk && !r.verified) {
        groups[{w, r.target}].push_back(r);
      }
    });
    return groups;
  }
  db.ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
    if (wanted(w) && r.status == database::kStatusOk && r.verified && !r.stale) {
      groups.try_emplace({w, r.target});
    }
  });
  for (auto& [key, records] : groups) records = db.TopK(key.first, key.second, opts.top);
  return groups;
}

void Spread(const TuningRecord& r, VerifiedRecord* v) {
  v->stored_median = r.median_seconds;
  if (r.run_seconds.empty()) {
    v->stored_min = v->stored_max = r.median_seconds;
    return;
  }
  const auto [lo, hi] = std::minmax_element(r.run_seconds.begin(), r.run_seconds.end());
  v->stored_min = *lo;
  v->stored_max = *hi;
}

}  // namespace

bool CanMeasureHere(const std::string& record_target, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return false;
  };
  ir::Target record;
  try {
    record = ir::Target::Parse(record_target);
  } catch (const std::exception& e) {
    return fail(std::string("the stored target does not parse: ") + e.what());
  }
  if (record.kind != ir::Target::Kind::kLLVM) {
    return fail("a " + record.KindName() + " target: the local runner measures CPU kernels only");
  }
  const int hw = support::HardwareThreads();
  if (record.num_cores > hw) {
    return fail("measured for " + std::to_string(record.num_cores) + " cores; this machine has " +
                std::to_string(hw));
  }
  // No CPU named: generic code of the default triple, which runs anywhere here.
  if (record.mcpu.empty() && record.mattr.empty() && record.mtriple.empty()) return true;
  ir::Target host = codegen::HostTarget();
  host.num_cores = record.num_cores;
  std::string reason;
  try {
    if (codegen::CompatibleTarget(record, host, &reason)) return true;
  } catch (const std::exception& e) {
    reason = e.what();
  }
  return fail("this machine cannot run code for it: " + reason);
}

VerifySummary VerifyRecords(database::Database& db, Runner& runner, const VerifyOptions& opts) {
  if (opts.top < 1) throw std::invalid_argument("verify: --top must be at least 1");
  if (!(opts.threshold >= 0)) throw std::invalid_argument("verify: --threshold must be >= 0");
  VerifySummary summary;
  // Named, not structured, bindings: the lambdas below capture them (clang
  // 14, which builds the fuzz tree, cannot capture structured bindings).
  for (const auto& group : Collect(db, opts)) {
    const auto& records = group.second;
    const database::WorkloadId wid = group.first.first;
    const std::string& target = group.first.second;
    std::vector<VerifiedRecord> rows(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      rows[i].workload = wid;
      rows[i].target = target;
      rows[i].trace_hash = records[i].trace_hash;
      Spread(records[i], &rows[i]);
    }
    auto skip_all = [&](const std::string& why) {
      for (VerifiedRecord& v : rows) {
        v.outcome = "skipped";
        v.message = why;
        ++summary.skipped;
        summary.records.push_back(v);
      }
    };
    ir::PrimFunc func;
    try {
      func = ir::ParseFunc(db.WorkloadText(wid), "workload " + std::to_string(wid));
    } catch (const std::exception& e) {
      skip_all(std::string("the stored workload does not parse: ") + e.what());
      continue;
    }
    for (VerifiedRecord& v : rows) v.workload_name = func.name;
    std::string why;
    if (!CanMeasureHere(target, &why)) {
      skip_all(why);
      continue;
    }
    MeasureTask task{func, ir::Target::Parse(target), opts.timing, opts.input_seed};
    const std::vector<MeasureResult> results = RemeasureRecords(runner, task, records);
    db.Transaction([&] {
      for (size_t i = 0; i < records.size(); ++i) {
        const MeasureResult& r = results[i];
        VerifiedRecord& v = rows[i];
        v.machine_load = r.machine_load;
        const bool ok = r.status == MeasureStatus::kOk && r.verified;
        if (ok) {
          v.new_median = r.MedianSecs();
          if (v.stored_median > 0) v.ratio = v.new_median / v.stored_median;
        }
        if (r.status == MeasureStatus::kInfraError) {
          // The machinery failed, not the record: nothing is concluded.
          v.outcome = "skipped";
          v.message = r.message;
          ++summary.skipped;
        } else if (opts.unverified) {
          db.UpdateMeasurement(wid, WithRemeasure(records[i], r, /*keep_stored_repeats=*/false));
          v.outcome = ok ? "promoted" : "refused";
          if (!ok) v.message = MeasureStatusName(r.status) + std::string(": ") + r.message;
          ++(ok ? summary.promoted : summary.refused);
        } else {
          bool slower = false;
          if (!ok) {
            v.outcome = "failed";
            v.message = MeasureStatusName(r.status) + std::string(": ") + r.message;
            slower = true;
          } else if (v.new_median > v.stored_max * (1 + opts.threshold)) {
            v.outcome = "slower";
            slower = true;
          } else if (v.new_median < v.stored_min * (1 - opts.threshold)) {
            v.outcome = "faster";
          } else {
            v.outcome = "ok";
          }
          if (v.outcome != "ok") ++summary.flagged;
          if (slower && opts.mark_stale) {
            TuningRecord stale = records[i];
            stale.stale = true;
            db.UpdateMeasurement(wid, stale);
            v.marked_stale = true;
            ++summary.marked_stale;
          }
        }
        summary.records.push_back(v);
      }
    });
  }
  return summary;
}

}  // namespace kiln::search
