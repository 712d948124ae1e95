// The cost model's training data from the tuning database: every record of a
// target replayed on its workload (as search/tune.cc replays records to
// resume) and featurized, so that a model is trained before the first batch
// of a run and `kiln model train|eval` can learn from a database alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/xgb_model.h"
#include "database/database.h"

namespace kiln::search {

// In the database's commit order. A sample's workload_key is the workload's
// structural hash (hex); its run_secs the record's median for status "ok",
// +inf for every failed status.
struct MeasuredFeatures {
  std::vector<cost_model::FeatureSample> samples;
  std::vector<database::WorkloadId> workload_ids;  // parallel to samples
  int64_t unreplayable = 0;                        // records whose trace no longer replays: skipped
  std::string first_error;                         // the first of those errors, for the log
};

// The records of `target` (normalized here; DatabaseError for a bad one),
// for every workload or only `only`, as the cost model's features. Records
// are replayed and featurized `chunk` at a time on `threads` threads, so
// that a large database is never held as scheduled programs all at once (a
// farm's database of 22,401 records took about 800 MB so,
// docs/ARCHITECTURE.md §8). The result does not depend on `threads` or
// `chunk`. Throws database::DatabaseError when the database fails or a
// stored workload no longer parses.
MeasuredFeatures LoadMeasuredFeatures(const database::Database& db, const std::string& target,
                                      int threads,
                                      std::optional<database::WorkloadId> only = std::nullopt,
                                      const cost_model::FeatureOptions& options = {},
                                      int chunk = 1024);

}  // namespace kiln::search
