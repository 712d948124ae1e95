// Measure callbacks: what happens to a measured batch (TVM's MeasureCallback,
// docs/ARCHITECTURE.md §11). The tuning loop runs them in order after every batch,
// before the strategy hears the results: AddToDatabase commits the records
// (search/measure_callback/add_to_database.cc), then UpdateCostModel feeds
// the model (search/measure_callback/update_cost_model.cc).
//
// Results with status infra_error (the measuring machinery failed, not the
// schedule) say nothing about the schedule: no callback records or learns
// from them, so that a later run measures those schedules again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "database/record.h"
#include "search/candidate.h"
#include "search/measure.h"
#include "search/search_strategy.h"

namespace kiln::search {

class MeasureCallback {
 public:
  virtual ~MeasureCallback() = default;
  virtual std::string Name() const = 0;
  // results[i] is batch[i]'s result.
  virtual void Apply(const TuningState& state, const std::vector<Candidate>& batch,
                     const std::vector<MeasureResult>& results) = 0;
};
using MeasureCallbackPtr = std::unique_ptr<MeasureCallback>;

// The fields every record of one run shares.
struct RecordTemplate {
  std::string workload_hash;  // ir::StructuralHashHex of the workload
  std::string fingerprint;    // the measuring machine
  std::vector<database::ArgInfo> args;
  std::string host;
  std::string kiln_version;
  uint64_t seed = 0;
  std::string job_id;
};

// Commits one record per result (infra errors aside) to state.db and marks
// the candidate measured in state.measured. Throws database::DatabaseError.
MeasureCallbackPtr MakeAddToDatabase(RecordTemplate record);
// Calls state.cost_model->Update with one sample per result (infra errors
// aside): the median seconds of a verified ok result, +inf otherwise. Does
// nothing without a cost model.
MeasureCallbackPtr MakeUpdateCostModel(std::string workload_key);

}  // namespace kiln::search
