// The XGBoost cost model (TVM's XGBModel, docs/ARCHITECTURE.md §8), through XGBoost's C
// API.
//
// Pack-sum: a program has one feature row per stored buffer
// (feature_extractor.h); its score is the sum of the booster's outputs over
// its rows. Training minimizes, over programs p with label y_p and rows r(p),
//     L = 1/2 Σ_p y_p (Σ_{r∈r(p)} f(x_r) − y_p)²,
// the label-weighted squared error of the summed prediction. Its gradient
// for a row r of p is y_p (S_p − y_p) where S_p is p's current sum; the
// Hessian is y_p 1·1ᵀ within a program, of which we pass the diagonal y_p
// (TVM's custom objective does the same). Each boosting round gets those
// gradients through XGBoosterBoostOneIter; base_score is 0 so that the sum
// of a program's rows is its whole prediction (TVM leaves 0.5 per row).
//
// Labels: y = (best finite cost of the same workload) / cost, in (0, 1];
// failures (cost not finite and positive) get 0, and so do workloads without
// a success. Weights equal labels, so fast programs dominate and failures
// contribute no gradient (as in TVM).
//
// Where it improves on TVM:
//  - early stopping watches a held-out split (every 5th program of each
//    workload, in the order the samples arrived: deterministic), not the
//    training set; the model is then refit on all programs with the number
//    of rounds the held-out split chose;
//  - training runs on one thread (XGBoost's multi-threaded sums change with
//    the thread count, its single-threaded ones do not), so a model and its
//    predictions are identical at any `nthread`, which only parallelizes
//    feature extraction and prediction (independent per row);
//  - retraining happens only when the data grew by retrain_growth (20%)
//    since the last training, as TVM's adaptive training, counted per
//    workload as well as in all: a model that starts from a large database
//    of other workloads (tools/tune_commands.cc trains it on every record of
//    the target) still retrains as the workload being tuned gains records,
//    where a growth of all the data would wait for hundreds of them;
//  - until trained, predictions are a deterministic hash of the features
//    (TVM draws uniform random numbers);
//  - a model may start from a prior: another model, trained elsewhere on
//    other workloads (`kiln model train`, `kiln tune --prior-model`). Its
//    outputs are each row's starting point, so the model predicts with the
//    prior alone before it trains and then boosts only what its own data
//    says the prior got wrong (TVM has no warm start: every run begins
//    blind). Once the data allow a held-out split, the prior stays only
//    while it lowers the held-out error (XGBModelConfig::check_prior).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost_model/cost_model.h"
#include "cost_model/feature_extractor.h"

namespace kiln::cost_model {

class CostModelError : public std::runtime_error {
 public:
  explicit CostModelError(const std::string& msg) : std::runtime_error(msg) {}
};

struct XGBModelConfig {
  // TVM's XGBConfig defaults.
  int max_depth = 10;
  double gamma = 0.001;
  double min_child_weight = 0;
  double eta = 0.2;
  int64_t seed = 43;
  // TVM leaves "auto", which XGBoost 1.7 resolves to "exact" on data this
  // small; "hist" ranks as well here at a fraction of the training time
  // (xgb_model_test), and training on one thread keeps it deterministic.
  std::string tree_method = "hist";
  // Threads for feature extraction and prediction (training uses one).
  int nthread = 1;
  int max_rounds = 10000;           // TVM's num_boost_round
  int early_stopping_rounds = 50;   // rounds without a better held-out error
  // No training before this many samples. TVM's is 100, which leaves the
  // first 128 trials of a run at batches of 64 (or the first 112 at 16) to
  // random picks; a model trained on 32 already picks far better than
  // random (docs/ARCHITECTURE.md §7 has the figures).
  int num_warmup_samples = 32;
  double retrain_growth = 0.2;      // retrain once data grew by this fraction
  // At most this many programs train the model (0: all). Past it, each
  // workload gets an equal share (one with fewer programs leaves the rest of
  // its share to the others), taken at an even stride over its programs in
  // the order they came, its newest included; labels stay relative to each
  // workload's best over all its programs. A farm's database (or a
  // --prior-db) can hold tens of thousands of records, mostly of a few
  // workloads: 22,401 records made a 64-trial run of a new workload 4x
  // slower, each retrain taking ~8 s (docs/ARCHITECTURE.md §8).
  int64_t max_training_programs = 8192;
  // Each program's weight in the loss is max(label, min_weight). TVM's is
  // the label itself (0): slow programs and failures then carry almost no
  // weight, and the model ranks them poorly.
  double min_weight = 0;
  // Squashes labels to a log scale: y' = 1 + log10(max(y, 1e-3)) / 3, so
  // [1e-3, 1] maps onto [0, 1] (failures stay 0). TVM uses y itself.
  bool log_label = false;
  // The boosting objective over each program's summed row predictions:
  // "reg" is TVM's label-weighted squared error on the labels; "rank" is a
  // pairwise logistic loss between programs of the same workload, which
  // learns the order within a workload and not each workload's scale, the
  // part that does not carry over to a workload the model has not seen. Predictions of a "rank" model are
  // squashed through a sigmoid so that they stay positive for the search's
  // score-proportional sampling (search/evolutionary_search.cc).
  std::string objective = "reg";
  int rank_partners = 64;           // "rank": pairs per program, drawn at random in larger groups
  // > 0: boost exactly this many rounds on every program, no held-out
  // split. For a prior trained on many workloads (`kiln model train
  // --rounds`): one held-out error over all of them stops where the
  // workloads that overfit soonest do (configs/models/README.md).
  int fixed_rounds = 0;
  // With a prior (SetPrior) and a held-out split, each training also fits
  // the split from nothing and keeps the prior only when boosting from it
  // gives the lower held-out error. Kiln's own: a prior learned on other
  // workloads can rank a new one worse than its own few records do (the
  // shipped model on SFM:0: Spearman 0.13 on random schedules,
  // configs/models/README.md).
  bool check_prior = true;
  int validation_every = 5;         // every n-th program of a workload is held out
  int min_validation_programs = 10; // fewer: early-stop on the training set (TVM)
  FeatureOptions features;
};

// One measured program as features (what Update extracts from a Sample).
struct FeatureSample {
  FeatureRows features;
  std::string workload_key;
  double run_secs;  // not finite and positive: failed
};

// The features of measured programs, in order (ExtractFeaturesBatch: a
// program that fails to lower gets zero rows, which training skips).
std::vector<FeatureSample> ToFeatureSamples(const std::vector<Sample>& samples, int num_threads,
                                            const FeatureOptions& options = {});

struct TrainingReport {
  int64_t programs = 0;            // with at least one row
  int64_t rows = 0;
  int64_t validation_programs = 0; // 0: early-stopped on the training set
  int rounds = 0;                  // boosting rounds of the final booster
  // The held-out error at the chosen round: for "reg", the label-weighted
  // RMSE of the summed prediction; for "rank", 1 - the mean Spearman
  // correlation within each workload.
  double validation_rmse = 0;
  // With a prior: whether the booster boosts from it (false: the held-out
  // split set it aside, see XGBModelConfig::check_prior), and the held-out
  // errors of the split fit from the prior and from nothing (-1: not
  // compared).
  bool prior_used = false;
  double validation_rmse_with_prior = -1, validation_rmse_without_prior = -1;
};

class XGBModel final : public CostModel {
 public:
  explicit XGBModel(XGBModelConfig config = {});
  ~XGBModel() override;
  XGBModel(XGBModel&&) noexcept;
  XGBModel& operator=(XGBModel&&) noexcept;

  // CostModel. Update extracts features (failed extraction: the sample is
  // kept as a program without rows, which training skips) and trains when
  // the data crossed the warm-up or grew by retrain_growth.
  void Update(const std::vector<Sample>& samples) override;
  std::vector<double> Predict(const std::vector<ir::PrimFunc>& scheduled) override;
  std::string Name() const override { return "xgb"; }
  bool informative() const override { return trained() || prior_ != nullptr; }
  bool prior_only() const override { return !trained() && prior_ != nullptr; }
  // Whether predictions start from the prior: it has one, and either has not
  // trained yet or its last training kept the prior (check_prior).
  bool uses_prior() const { return prior_ != nullptr && (!trained() || prior_in_use_); }

  // The same on features already extracted.
  void UpdateFeatures(const std::vector<FeatureSample>& samples);
  std::vector<double> PredictFeatures(const std::vector<FeatureRows>& programs) const;

  // Trains now on everything held, whatever the thresholds (no-op without
  // any program with rows). Throws CostModelError when XGBoost fails.
  TrainingReport Train();

  bool trained() const;

  // Starts from `prior` (see the top of this file): from now on each row's
  // output is the prior's plus this model's trees, and training fits those
  // trees to what the prior leaves of the labels. The prior must be trained
  // with the same objective; throws std::invalid_argument otherwise. A
  // model that has trained already is retrained on its data at once, so
  // that its trees and its prior agree.
  void SetPrior(std::shared_ptr<const XGBModel> prior);
  const XGBModel* prior() const { return prior_.get(); }
  int64_t data_size() const { return static_cast<int64_t>(data_.size()); }
  // data_size() at the last training (or recorded in the loaded file).
  int64_t last_train_size() const { return last_train_size_; }
  const TrainingReport& last_training() const { return last_report_; }
  // The workload keys of the programs the booster was trained on (from the
  // file, for a loaded model): a bench that starts from a prior checks that
  // it holds its workloads out.
  std::vector<std::string> trained_workloads() const;
  // The target whose records trained the model (a target string; empty:
  // unknown, as in files written before it was recorded). `kiln tune`
  // starts a run from a shipped model only when that target has the tuning
  // target's vector units (search/prior_model.h).
  const std::string& trained_target() const { return trained_target_; }
  void set_trained_target(std::string target) { trained_target_ = std::move(target); }
  const XGBModelConfig& config() const { return config_; }

  // A versioned file: one JSON header line (format "kiln-xgb-model",
  // version, feature count, training-data size, the trained workloads' keys,
  // the trained target when known, booster size and checksum)
  // followed by the booster in XGBoost's own UBJSON format. Training data is
  // not stored: it lives in the tuning database. Save throws CostModelError
  // when the file cannot be written, or for a model with a prior (its trees
  // alone would predict only corrections); Load when the file is missing,
  // not this format, of another version or feature count, truncated or
  // corrupt.
  void Save(const std::string& path) const;
  static XGBModel Load(const std::string& path, XGBModelConfig config = {});

 private:
  struct Booster;
  XGBModelConfig config_;
  std::vector<FeatureSample> data_;
  std::unique_ptr<Booster> booster_;
  std::shared_ptr<const XGBModel> prior_;
  bool prior_in_use_ = true;
  int64_t last_train_size_ = 0;
  // Programs held per workload key, now and at the last training.
  std::map<std::string, int64_t> per_workload_;
  std::map<std::string, int64_t> per_workload_at_train_;
  std::vector<std::string> loaded_workloads_;  // a loaded model's trained workloads
  std::string trained_target_;
  TrainingReport last_report_;

  // Each row's output: the prior's (if any) plus this model's trees (if
  // trained).
  std::vector<double> RowOutputs(const std::vector<float>& values, int64_t rows) const;
};

}  // namespace kiln::cost_model
