// Importing a TVM MetaSchedule JSON database (database_workload.json and
// database_tuning_record.json, one JSON value per line) into Kiln's
// database. Each workload's IRModule is converted to Kiln IR
// (database/tvm_graph.h); each record's trace is replayed on it, and what
// replays is stored with provenance "tvm", TVM's run seconds, and
// verified = false: it is never a tuned result until `kiln db verify`
// re-measures it on this machine.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "database/database.h"
#include "database/tvm_graph.h"

namespace kiln::database {

struct TvmImportOptions {
  std::string workload_file = "database_workload.json";  // names in messages
  std::string record_file = "database_tuning_record.json";
  // Stores every record under this target instead of the one mapped from
  // its TVM config (e.g. the resolved "host" target of this machine).
  std::optional<std::string> target;
  std::string kiln_version;
};

struct TvmImportReport {
  int64_t workloads = 0;              // lines of the workload file converted and stored
  int64_t records = 0;                // lines of the record file read
  int64_t imported = 0;               // records newly stored
  int64_t duplicates = 0;             // replayed but already stored
  int64_t skipped_workload = 0;       // records of a workload that did not convert
  int64_t skipped_replay = 0;         // records whose trace did not replay
  int64_t skipped_other = 0;          // malformed lines, unmappable targets
  std::vector<std::string> problems;  // one line each, "file:line: what"
};

// Throws TvmImportError only when a file cannot be read at all; a bad line is
// reported in the returned problems and skipped.
TvmImportReport ImportTvmDatabase(Database& db, std::istream& workloads, std::istream& records,
                                  const TvmImportOptions& options);

}  // namespace kiln::database
