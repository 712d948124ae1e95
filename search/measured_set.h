// What the database already holds for one workload and target, as the search
// needs it: the trace hashes of every stored record and the program keys
// (structural hashes of the scheduled programs) of the ones that still
// replay, so that a schedule reached again through another trace is not
// measured twice either. Seeded from the database at the start of a run
// (TVM's EvolutionarySearch starts with an empty set and re-measures what an
// earlier run measured) and grown by AddToDatabase as batches are committed.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "cost_model/cost_model.h"
#include "database/database.h"
#include "ir/prim_func.h"
#include "search/candidate.h"

namespace kiln::search {

class MeasuredSet {
 public:
  // Replays every stored record of (wid, target) on `workload`. When
  // `samples` is given, each replayed record is appended to it as a cost
  // model sample (failures and unverified results as +inf), in the
  // database's record order. Records that no longer replay are counted and
  // logged; their trace hashes still count as measured.
  static MeasuredSet Load(const database::Database& db, database::WorkloadId wid,
                          const std::string& target, const ir::PrimFunc& workload,
                          std::vector<cost_model::Sample>* samples = nullptr);

  bool HasTrace(const std::string& trace_hash) const { return trace_hashes_.count(trace_hash) > 0; }
  bool HasKey(uint64_t key) const { return keys_.count(key) > 0; }
  // Marks a committed candidate as measured.
  void Add(const Candidate& c);
  const std::unordered_set<uint64_t>& keys() const { return keys_; }
  int64_t unreplayable() const { return unreplayable_; }

  // The hash the database keys a trace by.
  static std::string TraceHashOf(const std::string& trace_json);

 private:
  std::unordered_set<std::string> trace_hashes_;
  std::unordered_set<uint64_t> keys_;
  int64_t unreplayable_ = 0;
};

// The cost-model label of a measured result: its median seconds when it ran
// and was verified, +inf otherwise (the model learns failures as the worst).
double SampleSeconds(bool ok, bool verified, double median_seconds);

}  // namespace kiln::search
