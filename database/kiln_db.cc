// The C API of include/kiln/kiln_db.h over Database. No C++ exception ever
// crosses it: each is turned into a status and a message.
#include "kiln/kiln_db.h"

#include <cctype>
#include <optional>
#include <string>

#include "database/database.h"
#include "ir/text/parser.h"

struct kiln_db {
  kiln::database::Database db;
  std::string trace;
  std::string error;
};

namespace {

thread_local std::string open_error;

bool LooksLikeHash(const std::string& s) {
  if (s.size() != 16) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" {

kiln_db_status kiln_db_open(const char* path, kiln_db** out) {
  if (out == nullptr) return KILN_DB_ERROR;
  *out = nullptr;
  if (path == nullptr) {
    open_error = "kiln_db_open: path is NULL";
    return KILN_DB_ERROR;
  }
  try {
    *out = new kiln_db{kiln::database::Database::Open(path, kiln::database::Database::Mode::kReadOnly),
                       "", ""};
    return KILN_DB_OK;
  } catch (const std::exception& e) {
    open_error = e.what();
    return KILN_DB_ERROR;
  }
}

void kiln_db_close(kiln_db* db) { delete db; }

kiln_db_status kiln_db_lookup(kiln_db* db, const char* workload, const char* target,
                              const char** trace_json, double* median_seconds) {
  if (db == nullptr) return KILN_DB_ERROR;
  if (workload == nullptr || target == nullptr) {
    db->error = "kiln_db_lookup: workload and target must not be NULL";
    return KILN_DB_ERROR;
  }
  try {
    std::string w = workload;
    std::optional<kiln::database::WorkloadId> id;
    if (LooksLikeHash(w)) {
      auto ids = db->db.FindWorkloadsByHash(w);
      if (ids.size() > 1) {
        db->error = "workload hash " + w + " is shared by " + std::to_string(ids.size()) +
                    " workloads; pass the workload text instead";
        return KILN_DB_ERROR;
      }
      if (!ids.empty()) id = ids.front();
    } else {
      id = db->db.FindWorkload(kiln::ir::ParseFunc(w, "workload"));
    }
    auto best = id ? db->db.Best(*id, target) : std::nullopt;
    if (!best) {
      db->error = db->db.ExplainMiss(id.value_or(0), target).Explain();
      return KILN_DB_MISS;
    }
    db->trace = best->trace_json;
    if (trace_json) *trace_json = db->trace.c_str();
    if (median_seconds) *median_seconds = best->median_seconds;
    db->error.clear();
    return KILN_DB_OK;
  } catch (const std::exception& e) {
    db->error = e.what();
    return KILN_DB_ERROR;
  }
}

const char* kiln_db_last_error(const kiln_db* db) {
  return db == nullptr ? open_error.c_str() : db->error.c_str();
}

const char* kiln_db_status_string(kiln_db_status status) {
  switch (status) {
    case KILN_DB_OK: return "ok";
    case KILN_DB_MISS: return "miss";
    default: return "error";
  }
}

}  // extern "C"
