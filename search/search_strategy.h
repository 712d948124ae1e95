// SearchStrategy: how the tuning loop (search/tune.h) gets its candidates
// (TVM's SearchStrategy, docs/ARCHITECTURE.md §7). The loop calls PreTuning once, then
// GenerateCandidates for every batch, hands the measured results to the
// measure callbacks (search/measure_callback.h) and then to
// NotifyRunnerResults, and calls PostTuning at the end. Measured results
// reach a strategy through the database and the cost model, which the
// callbacks update before NotifyRunnerResults is called.
//
// Determinism: a strategy's candidates depend only on the context's seed,
// the database content and the cost model's state, never on thread counts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "database/database.h"
#include "search/candidate.h"
#include "search/failure_stats.h"
#include "search/measure.h"
#include "search/measured_set.h"

namespace kiln::search {

// What one tuning run shares with its strategy and callbacks. Owned by the
// loop; valid from PreTuning to PostTuning.
struct TuningState {
  database::Database* db = nullptr;  // strategies only read it; AddToDatabase writes
  database::WorkloadId workload_id = 0;
  std::string target;                      // normalized
  cost_model::CostModel* cost_model = nullptr;  // may be null (ReplayTrace needs none)
  MeasuredSet* measured = nullptr;         // seeded from the database, grown per batch
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string Name() const = 0;
  // Called once before the first batch. Throws std::invalid_argument when
  // the state lacks what the strategy needs (a cost model, a database).
  virtual void PreTuning(const TuningState& state) = 0;
  // Up to k candidates, none of them measured (by program key) or returned
  // before in this run. Fewer when the strategy could find no more this
  // round; none, with exhausted() set, when it gives up.
  virtual std::vector<Candidate> GenerateCandidates(int k) = 0;
  // The last GenerateCandidates gave up: the space looks exhausted.
  virtual bool exhausted() const = 0;
  // The results of the last batch (after the callbacks ran), in order.
  virtual void NotifyRunnerResults(const std::vector<Candidate>& /*batch*/,
                                   const std::vector<MeasureResult>& /*results*/) {}
  virtual void PostTuning() {}

  virtual const FailureStats& failures() const = 0;
  // Sampling rounds run so far (for messages).
  virtual int64_t rounds() const = 0;
};
using SearchStrategyPtr = std::unique_ptr<SearchStrategy>;

enum class StrategyKind { kReplay, kEvolutionary };
const char* StrategyKindName(StrategyKind k);  // "replay", "evolutionary"
// Throws std::invalid_argument naming the accepted values.
StrategyKind ParseStrategyKind(const std::string& name);

}  // namespace kiln::search
