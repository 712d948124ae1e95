// Moving records between databases: JSON-lines export and import (the
// format of database/FORMAT.md) and merging another database file in.
#include <sqlite3.h>

#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "database/database.h"
#include "database/database_impl.h"
#include "database/record_json.h"
#include "ir/structural_hash.h"
#include "ir/text/parser.h"

namespace kiln::database {

using nlohmann::json;

int64_t Database::Merge(const std::string& other_path) {
  Database other = Open(other_path, Mode::kReadOnly);
  std::map<WorkloadId, WorkloadId> ids;
  int64_t added = 0;
  Transaction([&] {
    Impl::Stmt s = other.impl_->Prepare("SELECT id, text FROM workloads ORDER BY id");
    while (s.Step()) {
      WorkloadId id = sqlite3_column_int64(s.get(), 0);
      ids[id] = CommitWorkload(ir::ParseFunc(ColumnText(s.get(), 1), other_path));
    }
    other.ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
      added += impl_->Insert(ids.at(w), r) ? 1 : 0;
    });
  });
  return added;
}

void Database::ExportJsonLines(std::ostream& out) const {
  out << json{{"kiln_tuning_db", kSchemaVersion}}.dump() << "\n";
  Impl::Stmt s = impl_->Prepare("SELECT id, hash, text FROM workloads ORDER BY id");
  while (s.Step()) {
    out << json{{"type", "workload"},
                {"id", sqlite3_column_int64(s.get(), 0)},
                {"hash", ColumnText(s.get(), 1)},
                {"text", ColumnText(s.get(), 2)}}
               .dump()
        << "\n";
  }
  ForEachRecord([&](WorkloadId w, const TuningRecord& r) {
    json j = RecordToJson(r);
    j["type"] = "record";
    j["workload"] = w;
    out << j.dump() << "\n";
  });
}

int64_t Database::ImportJsonLines(std::istream& in) {
  std::map<int64_t, WorkloadId> ids;
  int64_t added = 0;
  Transaction([&] {
    std::string line;
    int64_t lineno = 0;
    bool header = false;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      auto where = [&] { return "import line " + std::to_string(lineno) + ": "; };
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) throw DatabaseError(where() + "not a JSON object");
      try {
        if (!header) {
          if (!j.contains("kiln_tuning_db")) {
            throw DatabaseError("not a Kiln export (first line lacks \"kiln_tuning_db\")");
          }
          int v = j.at("kiln_tuning_db").get<int>();
          if (v > kSchemaVersion) {
            throw DatabaseError("export format version " + std::to_string(v) +
                                " is newer than this Kiln (" + std::to_string(kSchemaVersion) + ")");
          }
          header = true;
          continue;
        }
        std::string type = j.at("type").get<std::string>();
        if (type == "workload") {
          ir::PrimFunc f = ir::ParseFunc(j.at("text").get<std::string>(), "import");
          if (j.contains("hash") && j["hash"].get<std::string>() != ir::StructuralHashHex(f)) {
            throw DatabaseError("workload hash does not match its text");
          }
          ids[j.at("id").get<int64_t>()] = CommitWorkload(f);
        } else if (type == "record") {
          int64_t w = j.at("workload").get<int64_t>();
          auto it = ids.find(w);
          if (it == ids.end()) {
            throw DatabaseError("record refers to workload " + std::to_string(w) +
                                " not defined on an earlier line");
          }
          added += impl_->Insert(it->second, RecordFromJson(j)) ? 1 : 0;
        } else {
          throw DatabaseError("unknown type '" + type + "'");
        }
      } catch (const json::exception& e) {
        throw DatabaseError(where() + e.what());
      } catch (const DatabaseError& e) {
        throw DatabaseError(where() + e.what());
      } catch (const std::exception& e) {
        throw DatabaseError(where() + e.what());
      }
    }
    if (!header) throw DatabaseError("import: empty input, not a Kiln export");
  });
  return added;
}
}  // namespace kiln::database
