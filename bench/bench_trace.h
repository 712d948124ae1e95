// The schedule a kernel bench races (gemm_bench, conv_bench): a trace file,
// or the best verified record of the workload for the target in a tuning
// database, with a line saying which for the printout.
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "database/database.h"
#include "ir/prim_func.h"

namespace kiln::bench {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct BenchTrace {
  std::string json;
  std::string from;  // "trace FILE" or "best of N records in DB (trace H)"
};

// `name` names the workload in errors (e.g. "GMM:3"). An empty db_path
// reads trace_path.
inline BenchTrace LoadBenchTrace(const ir::PrimFunc& func, const std::string& name,
                                 const std::string& target, const std::string& db_path,
                                 const std::string& trace_path) {
  if (db_path.empty()) return {ReadFile(trace_path), "trace " + trace_path};
  if (!std::ifstream(db_path)) throw std::runtime_error("--db " + db_path + ": no such file");
  auto db = database::Database::Open(db_path, database::Database::Mode::kReadOnly);
  auto id = db.FindWorkload(func);
  auto best = id ? db.Best(*id, target) : std::nullopt;
  if (!best) {
    throw std::runtime_error("--db " + db_path + ": no verified " + name + " record for '" + target +
                             "': " + db.ExplainMiss(id.value_or(0), target).Explain());
  }
  return {best->trace_json, "best of " + std::to_string(db.CountRecords(*id, target)) +
                                " records in " + db_path + " (trace " + best->trace_hash + ")"};
}

}  // namespace kiln::bench
