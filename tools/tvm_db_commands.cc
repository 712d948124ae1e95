#include "tools/tvm_db_commands.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "database/database.h"
#include "database/tvm_export.h"
#include "database/tvm_import.h"
#include "search/target_lookup.h"
#include "tools/target_spec.h"

namespace kiln::tools {

void ImportTvmFiles(const std::string& db_path, const std::vector<std::string>& files,
                    const std::string& target) {
  if (files.size() != 2) {
    throw std::runtime_error(
        "--format tvm takes two files: database_workload.json database_tuning_record.json");
  }
  std::ifstream workloads(files[0]);
  if (!workloads) throw std::runtime_error(files[0] + ": cannot read");
  std::ifstream records(files[1]);
  if (!records) throw std::runtime_error(files[1] + ": cannot read");
  database::TvmImportOptions opts;
  opts.workload_file = files[0];
  opts.record_file = files[1];
  if (!target.empty()) opts.target = ResolveTargetFlag(target).ToString();
  database::Database db = database::Database::Open(db_path);
  database::TvmImportReport r = database::ImportTvmDatabase(db, workloads, records, opts);
  search::CanonicalizeStoredTargets(db);
  for (const std::string& p : r.problems) std::cerr << "kiln: " << p << "\n";
  std::cout << "imported " << r.imported << " new record(s) of " << r.records << " from TVM ("
            << r.workloads << " workload(s); " << r.duplicates
            << " already stored; skipped: " << r.skipped_replay << " trace(s) that do not replay, "
            << r.skipped_workload << " of unconverted workloads, " << r.skipped_other
            << " malformed); imported records are unverified until `kiln db verify`\n";
}

void ExportTvmFiles(const std::string& db_path, const std::string& dir) {
  if (!std::ifstream(db_path)) throw std::runtime_error("--db " + db_path + ": no such file");
  database::Database db = database::Database::Open(db_path, database::Database::Mode::kReadOnly);
  std::filesystem::create_directories(dir);
  const std::string wpath = (std::filesystem::path(dir) / "database_workload.json").string();
  const std::string rpath = (std::filesystem::path(dir) / "database_tuning_record.json").string();
  std::ofstream workloads(wpath);
  if (!workloads) throw std::runtime_error(wpath + ": cannot write");
  std::ofstream records(rpath);
  if (!records) throw std::runtime_error(rpath + ": cannot write");
  database::TvmExportReport r = database::ExportTvmDatabase(db, workloads, records);
  workloads.close();
  records.close();
  if (!workloads || !records) throw std::runtime_error(dir + ": writing the TVM database failed");
  std::cout << "wrote " << r.workloads << " workload(s) and " << r.records
            << " record(s) as a TVM MetaSchedule JSON database in " << dir << "\n";
}

}  // namespace kiln::tools
