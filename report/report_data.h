// What `kiln report` shows, gathered from a database: one section per
// (workload, target) that has records, with its runs' curves, its best
// record replayed into a scheduled program, and its peer figures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "report/curve.h"

namespace kiln::report {

struct ReportFilter {
  std::optional<database::WorkloadId> workload;  // one workload, or all
  std::string workload_label;                    // its name on the page ("GMM:2")
  std::string target;                            // a normalized target, or "" for all
  std::string job_id;                            // one farm job's records, or "" for all
};

struct BestSchedule {
  database::TuningRecord record;
  std::string trace_script;  // ir::Trace::AsPython
  std::string program;       // the scheduled PrimFunc in the text form
  std::string error;         // why the trace did not replay (then program is empty)
};

struct WorkloadSection {
  database::WorkloadId id = 0;
  std::string hash;
  std::string name;  // report/workload_names.h: WorkloadLabel
  std::string target;
  double flops = 0;                             // ir::EstimateFlops of the stored workload
  std::vector<database::TuningRecord> records;  // commit order
  std::vector<CurveRun> runs;
  std::optional<BestSchedule> best;  // the fastest usable record among `records`
  std::vector<database::PeerFigure> peers;
};

// Throws database::DatabaseError when the database cannot be read.
std::vector<WorkloadSection> CollectSections(const database::Database& db,
                                             const ReportFilter& filter);

}  // namespace kiln::report
