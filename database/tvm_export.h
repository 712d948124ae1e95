// Writing Kiln's database as a TVM MetaSchedule JSON database that
// `ms.database.JSONDatabase(path_workload, path_tuning_record)` of
// apache-tvm 0.27 loads: each workload as an IRModule JSON graph (the node
// shapes database/tvm_graph.h reads), each record as
// [workload line, [trace, run_secs, target config, args_info]].
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>

#include "database/database.h"

namespace kiln::database {

// The IRModule {name: func} as TVM 0.27's JSON graph.
nlohmann::json PrimFuncToTvmGraph(const ir::PrimFunc& func);

// A Kiln trace (its JSON) in TVM 0.27's spelling (GetBlock -> GetSBlock).
nlohmann::json TraceToTvm(const nlohmann::json& kiln_trace);

struct TvmExportReport {
  int64_t workloads = 0;
  int64_t records = 0;
};

// Every workload with records, and every record (failures as TVM writes
// them: run_secs [1e10]).
TvmExportReport ExportTvmDatabase(const Database& db, std::ostream& workloads,
                                  std::ostream& records);

}  // namespace kiln::database
