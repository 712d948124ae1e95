#include "database/record_json.h"

namespace kiln::database {

using nlohmann::json;

json ArgsToJson(const std::vector<ArgInfo>& args) {
  json a = json::array();
  for (const auto& arg : args) a.push_back({{"dtype", arg.dtype}, {"shape", arg.shape}});
  return a;
}

std::vector<ArgInfo> ArgsFromJson(const json& j) {
  std::vector<ArgInfo> args;
  for (const auto& a : j) {
    args.push_back({a.at("dtype").get<std::string>(), a.at("shape").get<std::vector<int64_t>>()});
  }
  return args;
}

json RecordToJson(const TuningRecord& r) {
  return {{"workload_hash", r.workload_hash},
          {"target", r.target},
          {"fingerprint", r.fingerprint},
          {"trace", json::parse(r.trace_json)},
          {"trace_hash", r.trace_hash},
          {"run_seconds", r.run_seconds},
          {"median_seconds", r.median_seconds},
          {"status", r.status},
          {"message", r.message},
          {"verified", r.verified},
          {"stale", r.stale},
          {"machine_load", r.machine_load},
          {"wide_spread", r.wide_spread},
          {"args", ArgsToJson(r.args)},
          {"host", r.provenance.host},
          {"kiln_version", r.provenance.kiln_version},
          {"seed", r.provenance.seed},
          {"job_id", r.provenance.job_id},
          {"timestamp", r.provenance.timestamp},
          {"provenance", r.provenance.source},
          {"source_run_seconds", r.provenance.source_run_seconds}};
}

TuningRecord RecordFromJson(const json& j) {
  TuningRecord r;
  r.target = j.at("target").get<std::string>();
  r.fingerprint = j.value("fingerprint", "");
  r.trace_json = j.at("trace").dump();
  r.run_seconds = j.at("run_seconds").get<std::vector<double>>();
  r.status = j.at("status").get<std::string>();
  r.message = j.value("message", "");
  r.verified = j.at("verified").get<bool>();
  r.stale = j.value("stale", false);
  r.machine_load = j.value("machine_load", -1.0);
  r.wide_spread = j.value("wide_spread", false);
  r.args = ArgsFromJson(j.value("args", json::array()));
  r.provenance.host = j.value("host", "");
  r.provenance.kiln_version = j.value("kiln_version", "");
  r.provenance.seed = j.value("seed", uint64_t{0});
  r.provenance.job_id = j.value("job_id", "");
  r.provenance.timestamp = j.value("timestamp", int64_t{0});
  r.provenance.source = j.value("provenance", "");
  r.provenance.source_run_seconds =
      j.value("source_run_seconds", json::array()).get<std::vector<double>>();
  return r;
}

}  // namespace kiln::database
