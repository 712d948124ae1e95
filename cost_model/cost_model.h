// The cost model interface the search ranks candidates with (TVM's CostModel:
// update with measured results, predict for unmeasured programs). It sees
// scheduled programs only, never search/ types, so that cost_model/ depends
// on ir/ alone and the search, the CLI and tests share one seam.
#pragma once

#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::cost_model {

// One measured program. `workload_key` groups the samples of one workload
// (its structural hash, hex): a label is relative to the best cost measured
// for the same workload, so workloads of very different sizes can share one
// model. `run_secs` is the median seconds per call; +inf (or any value that
// is not finite and positive) marks a failed measurement.
struct Sample {
  ir::PrimFunc scheduled;
  std::string workload_key;
  double run_secs;
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Adds measured samples to what the model knows; the model decides when to
  // retrain. Must be deterministic: the same sequence of Update calls gives
  // the same later predictions, whatever the thread count.
  virtual void Update(const std::vector<Sample>& samples) = 0;

  // One score per program, in order; higher means predicted faster. Scores
  // are comparable within one workload only. Deterministic for a given model
  // state and input, whatever the thread count.
  virtual std::vector<double> Predict(const std::vector<ir::PrimFunc>& scheduled) = 0;

  // A short name for logs ("xgb", "random").
  virtual std::string Name() const = 0;

  // False while the model has learned nothing to rank with (an XGBoost
  // model before its first training predicts a hash of the features): the
  // evolutionary search then picks fresh random samples instead of evolving
  // toward noise (search/evolutionary_search.cc).
  virtual bool informative() const { return true; }

  // True while the model ranks with a prior alone: a model trained elsewhere
  // on other workloads (XGBModel::SetPrior), before any training on the
  // samples given to Update. The evolutionary search then explores more
  // (EvolutionarySearchConfig::prior_eps_greedy), since the prior may not
  // fit the workload at hand.
  virtual bool prior_only() const { return false; }
};

}  // namespace kiln::cost_model
