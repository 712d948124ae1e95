// `kiln db import --format tvm` and `kiln db export --format tvm`: TVM
// MetaSchedule JSON databases in and out (database/tvm_import.h,
// database/tvm_export.h). tools/db_commands.cc routes --format tvm here.
#pragma once

#include <string>
#include <vector>

namespace kiln::tools {

// files: database_workload.json then database_tuning_record.json. target:
// the --target flag ("" keeps each record's own TVM target). Prints a
// summary and every skipped line; throws on an unreadable file.
void ImportTvmFiles(const std::string& db_path, const std::vector<std::string>& files,
                    const std::string& target);

// Writes DIR/database_workload.json and DIR/database_tuning_record.json.
void ExportTvmFiles(const std::string& db_path, const std::string& dir);

}  // namespace kiln::tools
