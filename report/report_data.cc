#include "report/report_data.h"

#include <nlohmann/json.hpp>

#include "ir/flops.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_hash.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"

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

std::map<std::string, std::string> KnownWorkloadNames(const database::Database& db) {
  std::map<std::string, std::string> names;
  // Jobs first: a job's spec is what its submitter called the workload. A
  // database older than the jobs table has none.
  std::vector<database::JobRow> jobs;
  try {
    jobs = db.Jobs();
  } catch (const database::DatabaseError&) {
  }
  for (const database::JobRow& job : jobs) {
    const nlohmann::json spec =
        nlohmann::json::parse(job.spec, nullptr, /*allow_exceptions=*/false);
    if (!spec.is_object() || !spec.contains("workloads") || !spec["workloads"].is_array()) continue;
    for (const nlohmann::json& w : spec["workloads"]) {
      // A job spec is the farm's to define: one this code cannot read only
      // loses its names.
      try {
        if (!w.is_object() || !w.value("spec", nlohmann::json()).is_string()) continue;
        const nlohmann::json wl = w.value("workload", nlohmann::json::object());
        std::string hash = wl.is_object() ? wl.value("structuralHash", std::string()) : "";
        if (hash.empty() && wl.is_object() && wl.value("text", nlohmann::json()).is_string()) {
          hash =
              ir::StructuralHashHex(ir::ParseFunc(wl["text"].get<std::string>(), "job workload"));
        }
        if (!hash.empty()) names.emplace(hash, w["spec"].get<std::string>());
      } catch (const std::exception&) {
      }
    }
  }
  for (const ir::WorkloadConfig& c : ir::SuiteConfigs()) {
    names.emplace(ir::StructuralHashHex(ir::MakeWorkload(c.name, c.index)),
                  c.name + ":" + std::to_string(c.index));
  }
  return names;
}

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
    } else if (auto it = names.find(s.hash); it != names.end()) {
      s.name = it->second;
    } else {
      s.name = "workload " + s.hash.substr(0, 16);
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
