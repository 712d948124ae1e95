// The cost model's training data from the tuning database: every record of a
// target replayed on its workload (as search/tune.cc replays records to
// resume), so that a model is trained before the first batch of a run and
// `kiln model train|eval` can learn from a database alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "cost_model/xgb_model.h"
#include "database/database.h"

namespace kiln::search {

struct MeasuredSamples {
  // In the database's commit order. workload_key is the workload's
  // structural hash (hex); run_secs the record's median for status "ok",
  // +inf for every failed status.
  std::vector<cost_model::Sample> samples;
  std::vector<database::WorkloadId> workload_ids;  // parallel to samples
  int64_t unreplayable = 0;  // records whose trace no longer replays: skipped
  std::string first_error;   // the first of those errors, for the log
};

// Loads the records of `target` (normalized here; DatabaseError for a bad
// one), for every workload or only `only`. Throws database::DatabaseError
// when the database fails or a stored workload no longer parses.
MeasuredSamples LoadMeasuredSamples(const database::Database& db, const std::string& target,
                                    std::optional<database::WorkloadId> only = std::nullopt);

// The same records as the cost model's features, in the same order, and
// what no longer replays: what a model trains on, without holding every
// scheduled program at once. Records are replayed and featurized `chunk` at
// a time on `threads` threads (a farm's database of 22,401 records held
// about 800 MB of scheduled programs at once, docs/ARCHITECTURE.md §8).
// The result does not depend on `threads` or `chunk`.
struct MeasuredFeatures {
  std::vector<cost_model::FeatureSample> samples;
  std::vector<database::WorkloadId> workload_ids;  // parallel to samples
  int64_t unreplayable = 0;
  std::string first_error;
};

MeasuredFeatures LoadMeasuredFeatures(const database::Database& db, const std::string& target,
                                      int threads,
                                      std::optional<database::WorkloadId> only = std::nullopt,
                                      const cost_model::FeatureOptions& options = {},
                                      int chunk = 1024);

}  // namespace kiln::search
