#include "database/tvm_import.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "database/record.h"
#include "database/tvm_target.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/verify.h"

namespace kiln::database {

namespace {

using nlohmann::json;

// TVM records a failed build or run as this many seconds
// (src/s_tir/meta_schedule/utils.h: kMaxMeanTime).
constexpr double kTvmFailedSeconds = 1e10;

std::vector<ArgInfo> ArgsFromTvm(const json& j) {
  std::vector<ArgInfo> out;
  if (j.is_null()) return out;
  if (!j.is_array()) throw TvmImportError("args_info is not a list");
  for (const json& a : j) {
    // ["TENSOR", "float32", [1, 128, 128]]
    if (!a.is_array() || a.size() != 3 || !a[0].is_string() || a[0] != "TENSOR" ||
        !a[1].is_string() || !a[2].is_array()) {
      throw TvmImportError("args_info entry is not [\"TENSOR\", dtype, shape]");
    }
    ArgInfo info;
    info.dtype = a[1].get<std::string>();
    for (const json& d : a[2]) {
      if (!d.is_number_integer()) throw TvmImportError("args_info shape holds integers");
      info.shape.push_back(d.get<int64_t>());
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<double> RunSecondsFromTvm(const json& j) {
  std::vector<double> out;
  if (j.is_null()) return out;
  if (!j.is_array()) throw TvmImportError("run_secs is not a list");
  for (const json& s : j) {
    if (!s.is_number()) throw TvmImportError("run_secs holds numbers");
    out.push_back(s.get<double>());
  }
  return out;
}

struct ImportedWorkload {
  bool ok = false;
  ir::PrimFunc func;
  WorkloadId id = 0;
  std::string error;
};

}  // namespace

TvmImportReport ImportTvmDatabase(Database& db, std::istream& workloads, std::istream& records,
                                  const TvmImportOptions& options) {
  TvmImportReport report;
  std::vector<ImportedWorkload> wl;
  std::string line;
  int64_t line_no = 0;
  auto problem = [&](const std::string& file, int64_t n, const std::string& what) {
    report.problems.push_back(file + ":" + std::to_string(n) + ": " + what);
  };
  // Every workload line keeps its index (records refer to lines by number),
  // converted or not.
  while (std::getline(workloads, line)) {
    ++line_no;
    ImportedWorkload w;
    try {
      json j = json::parse(line);
      if (!j.is_array() || j.size() != 2 || !j[1].is_string()) {
        throw TvmImportError("expected [\"<structural hash>\", \"<base64 IRModule>\"]");
      }
      json graph = json::parse(DecodeTvmWorkloadBlob(j[1].get<std::string>()));
      w.func = PrimFuncFromTvmGraph(graph);
      ir::Verify(w.func);
      w.id = db.CommitWorkload(w.func);
      w.ok = true;
      ++report.workloads;
    } catch (const DatabaseError&) {
      throw;
    } catch (const std::exception& e) {
      w.error = e.what();
      problem(options.workload_file, line_no, std::string("workload skipped: ") + e.what());
    }
    wl.push_back(std::move(w));
  }
  if (workloads.bad()) throw TvmImportError("cannot read " + options.workload_file);

  line_no = 0;
  while (std::getline(records, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++report.records;
    json j;
    int64_t index = -1;
    json body;
    try {
      j = json::parse(line);
      if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer() || !j[1].is_array() ||
          j[1].size() < 1) {
        throw TvmImportError("expected [workload_index, [trace, run_secs, target, args_info]]");
      }
      index = j[0].get<int64_t>();
      body = j[1];
      if (index < 0 || static_cast<size_t>(index) >= wl.size()) {
        throw TvmImportError("workload index " + std::to_string(index) + " is not a line of " +
                             options.workload_file);
      }
    } catch (const std::exception& e) {
      problem(options.record_file, line_no, std::string("record skipped: ") + e.what());
      ++report.skipped_other;
      continue;
    }
    const ImportedWorkload& w = wl[static_cast<size_t>(index)];
    if (!w.ok) {
      problem(
          options.record_file, line_no,
          "record skipped: its workload (line " + std::to_string(index + 1) + ") did not convert");
      ++report.skipped_workload;
      continue;
    }
    TuningRecord rec;
    try {
      json target = body.size() > 2 ? body[2] : json();
      if (options.target) {
        rec.target = *options.target;
      } else if (target.is_null()) {
        throw TvmImportError("the record has no target; give one with --target");
      } else {
        rec.target = TargetFromTvm(target).ToString();
      }
      rec.run_seconds = RunSecondsFromTvm(body.size() > 1 ? body[1] : json());
      rec.args = ArgsFromTvm(body.size() > 3 ? body[3] : json());
    } catch (const std::exception& e) {
      problem(options.record_file, line_no, std::string("record skipped: ") + e.what());
      ++report.skipped_other;
      continue;
    }
    try {
      ir::Trace trace = ir::Trace::FromJSON(body[0]);
      ir::Schedule sch(w.func);
      trace.ApplyToSchedule(&sch, /*remove_postproc=*/false);
      rec.trace_json = sch.trace().AsJSONString();
    } catch (const std::exception& e) {
      problem(options.record_file, line_no, std::string("trace does not replay: ") + e.what());
      ++report.skipped_replay;
      continue;
    }
    bool failed = rec.run_seconds.empty();
    for (double s : rec.run_seconds) failed = failed || !(s < kTvmFailedSeconds);
    rec.status = failed ? kStatusRunCrash : kStatusOk;
    rec.message = failed ? "TVM recorded no successful run" : "imported from TVM MetaSchedule";
    rec.verified = false;
    rec.provenance.source = "tvm";
    rec.provenance.source_run_seconds = rec.run_seconds;
    rec.provenance.host = "tvm";
    rec.provenance.kiln_version = options.kiln_version;
    rec.provenance.job_id = "tvm-import";
    rec.provenance.timestamp = static_cast<int64_t>(std::time(nullptr));
    try {
      if (db.CommitRecord(w.id, rec)) {
        ++report.imported;
      } else {
        ++report.duplicates;
      }
    } catch (const DatabaseError& e) {
      problem(options.record_file, line_no, std::string("record skipped: ") + e.what());
      ++report.skipped_other;
    }
  }
  if (records.bad()) throw TvmImportError("cannot read " + options.record_file);
  return report;
}

}  // namespace kiln::database
