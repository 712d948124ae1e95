#include "report/report_data.h"

#include <map>

#include "ir/flops.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "report/workload_names.h"

namespace kiln::report {
namespace {

BestSchedule Replay(const database::Database& db, database::WorkloadId id,
                    const database::TuningRecord& r) {
  BestSchedule b;
  b.record = r;
  try {
    const ir::Trace trace = ir::Trace::FromJSONString(r.trace_json);
    b.trace_script = trace.AsPython();
    ir::Schedule sch(ir::ParseFunc(db.WorkloadText(id), "workload " + std::to_string(id)));
    trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
    b.program = ir::ToText(sch.func());
  } catch (const std::exception& e) {
    b.error = e.what();
  }
  return b;
}

}  // namespace

std::vector<WorkloadSection> CollectSections(const database::Database& db, const ReportFilter& f) {
  std::vector<WorkloadSection> sections;
  std::map<std::pair<database::WorkloadId, std::string>, size_t> index;
  db.ForEachRecord([&](database::WorkloadId id, const database::TuningRecord& r) {
    if (f.workload && *f.workload != id) return;
    if (!f.target.empty() && r.target != f.target) return;
    if (!f.job_id.empty() && r.provenance.job_id != f.job_id) return;
    auto [it, fresh] = index.emplace(std::make_pair(id, r.target), sections.size());
    if (fresh) {
      WorkloadSection s;
      s.id = id;
      s.target = r.target;
      sections.push_back(std::move(s));
    }
    sections[it->second].records.push_back(r);
  });
  std::map<std::string, std::string> names;
  if (!sections.empty() && !(f.workload && !f.workload_label.empty()))
    names = KnownWorkloadNames(db);
  for (WorkloadSection& s : sections) {
    s.hash = db.WorkloadHash(s.id);
    if (f.workload && !f.workload_label.empty()) {
      s.name = f.workload_label;
    } else {
      s.name = WorkloadLabel(db, names, s.hash);
    }
    s.flops =
        ir::EstimateFlops(ir::ParseFunc(db.WorkloadText(s.id), "workload " + std::to_string(s.id)));
    s.runs = TuningCurves(s.records, s.flops);
    const database::TuningRecord* best = nullptr;
    for (const database::TuningRecord& r : s.records) {
      if (IsUsable(r) && (best == nullptr || r.median_seconds < best->median_seconds)) best = &r;
    }
    if (best != nullptr) s.best = Replay(db, s.id, *best);
    s.peers = db.Peers(s.id, s.target);
  }
  return sections;
}

}  // namespace kiln::report
