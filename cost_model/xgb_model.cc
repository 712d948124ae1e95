#include "cost_model/xgb_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <random>

#include "cost_model/metrics.h"

namespace kiln::cost_model {
namespace {

constexpr char kFormatName[] = "kiln-xgb-model";
constexpr int kFormatVersion = 1;

void Check(int rc, const char* what) {
  if (rc != 0) throw CostModelError(std::string("XGBoost ") + what + ": " + XGBGetLastError());
}

class DMatrix {
 public:
  DMatrix(const std::vector<float>& values, int64_t rows, int nthread) {
    Check(XGDMatrixCreateFromMat_omp(values.data(), static_cast<bst_ulong>(rows),
                                     static_cast<bst_ulong>(kNumFeatures),
                                     std::numeric_limits<float>::quiet_NaN(), &h_, nthread),
          "XGDMatrixCreateFromMat");
  }
  ~DMatrix() { XGDMatrixFree(h_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

// Programs flattened into rows, with each row's program and each program's
// label.
struct Packed {
  std::vector<float> values;
  std::vector<int64_t> program_of_row;
  std::vector<double> labels;  // per program
  std::vector<int> group;      // per program: its workload, for "rank"
  int64_t rows() const { return static_cast<int64_t>(program_of_row.size()); }
  int64_t programs() const { return static_cast<int64_t>(labels.size()); }
  void Add(const FeatureRows& f, double label, int workload = 0) {
    values.insert(values.end(), f.values.begin(), f.values.end());
    for (int64_t r = 0; r < f.rows; ++r) program_of_row.push_back(programs());
    labels.push_back(label);
    group.push_back(workload);
  }
  // Program indices by group.
  std::map<int, std::vector<size_t>> Groups() const {
    std::map<int, std::vector<size_t>> g;
    for (size_t p = 0; p < group.size(); ++p) g[group[p]].push_back(p);
    return g;
  }
};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The pairwise logistic loss's gradient and (diagonal) hessian per program:
// for programs a, b of one workload with label y_a > y_b, the loss
// log(1 + exp(-(s_a - s_b))). Every ordered pair weighs the same: weighting
// by y_a - y_b ranked held-out workloads worse (Spearman 0.50 against 0.52
// on the database in the closing note of issue 17). A group small enough takes every
// pair; a larger one `partners` random partners per program (seeded by the
// round, so training repeats exactly). Each program's sums are divided by its
// pair count, so the step does not grow with the group.
void RankGradients(const Packed& d, const std::vector<double>& score, int partners, uint64_t seed,
                   std::vector<double>* grad, std::vector<double>* hess) {
  grad->assign(static_cast<size_t>(d.programs()), 0.0);
  hess->assign(static_cast<size_t>(d.programs()), 0.0);
  std::vector<double> pairs(static_cast<size_t>(d.programs()), 0.0);
  std::mt19937_64 rng(seed);
  auto pair = [&](size_t a, size_t b) {
    if (d.labels[a] == d.labels[b]) return;
    if (d.labels[a] < d.labels[b]) std::swap(a, b);
    constexpr double w = 1.0;
    const double p = Sigmoid(-(score[a] - score[b]));  // chance the order is wrong
    (*grad)[a] -= w * p;
    (*grad)[b] += w * p;
    const double h = w * std::max(p * (1 - p), 1e-6);
    (*hess)[a] += h;
    (*hess)[b] += h;
    pairs[a] += 1;
    pairs[b] += 1;
  };
  for (const auto& [g, members] : d.Groups()) {
    const size_t n = members.size();
    if (n < 2) continue;
    if (n <= static_cast<size_t>(partners) + 1) {
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) pair(members[i], members[j]);
      continue;
    }
    std::uniform_int_distribution<size_t> other(0, n - 2);
    for (size_t i = 0; i < n; ++i) {
      for (int k = 0; k < partners; ++k) {
        size_t j = other(rng);
        if (j >= i) ++j;
        pair(members[i], members[j]);
      }
    }
  }
  for (size_t p = 0; p < pairs.size(); ++p) {
    if (pairs[p] == 0) continue;
    (*grad)[p] /= pairs[p];
    (*hess)[p] /= pairs[p];
  }
}

// 1 - the mean Spearman correlation of predictions and labels within each
// group (groups of fewer than 2 programs left out).
double RankError(const Packed& d, const std::vector<double>& score) {
  double sum = 0;
  int n = 0;
  for (const auto& [g, members] : d.Groups()) {
    if (members.size() < 2) continue;
    std::vector<double> s, y;
    for (size_t p : members) {
      s.push_back(score[p]);
      y.push_back(d.labels[p]);
    }
    sum += SpearmanCorrelation(s, y);
    ++n;
  }
  return n == 0 ? 0 : 1 - sum / n;
}

// Per-row outputs of the trees [begin, end) (base_score is 0).
std::vector<float> PredictRows(BoosterHandle b, const DMatrix& m, int begin, int end,
                               int64_t rows) {
  const std::string config = "{\"type\": 0, \"training\": false, \"iteration_begin\": " +
                             std::to_string(begin) + ", \"iteration_end\": " +
                             std::to_string(end) + ", \"strict_shape\": false}";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  Check(XGBoosterPredictFromDMatrix(b, m.get(), config.c_str(), &shape, &dim, &out),
        "XGBoosterPredictFromDMatrix");
  return std::vector<float>(out, out + rows);
}

std::vector<double> SumByProgram(const std::vector<double>& row_values,
                                 const std::vector<int64_t>& program_of_row, int64_t programs) {
  std::vector<double> s(static_cast<size_t>(programs), 0.0);
  for (size_t r = 0; r < program_of_row.size(); ++r) {
    s[static_cast<size_t>(program_of_row[r])] += row_values[r];
  }
  return s;
}

// The training loss's own weighting (max(label, min_weight)), so that early
// stopping judges what the boosting optimizes; unweighted when every weight
// is 0 (all failures).
double WeightedRmse(const std::vector<double>& pred, const std::vector<double>& label,
                    double min_weight) {
  if (pred.empty()) return 0;
  double s = 0, ws = 0, u = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    const double e = (pred[i] - label[i]) * (pred[i] - label[i]);
    const double w = std::max(label[i], min_weight);
    s += w * e;
    ws += w;
    u += e;
  }
  return ws > 0 ? std::sqrt(s / ws) : std::sqrt(u / static_cast<double>(pred.size()));
}

std::string Num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

BoosterHandle NewBooster(const XGBModelConfig& c, DMatrixHandle train) {
  BoosterHandle b = nullptr;
  Check(XGBoosterCreate(&train, 1, &b), "XGBoosterCreate");
  const std::vector<std::pair<std::string, std::string>> params = {
      {"max_depth", std::to_string(c.max_depth)},
      {"gamma", Num(c.gamma)},
      {"min_child_weight", Num(c.min_child_weight)},
      {"eta", Num(c.eta)},
      {"seed", std::to_string(c.seed)},
      {"nthread", "1"},
      {"tree_method", c.tree_method},
      {"base_score", "0"},
      {"verbosity", "0"},
      {"disable_default_eval_metric", "1"},
  };
  for (const auto& [k, v] : params) {
    if (XGBoosterSetParam(b, k.c_str(), v.c_str()) != 0) {
      XGBoosterFree(b);
      Check(1, "XGBoosterSetParam");
    }
  }
  return b;
}

// Boosts with the pack-sum objective for up to max_rounds rounds. With a
// validation set, stops once `patience` rounds brought no lower RMSE of its
// summed predictions and keeps the best prefix of trees. Each row starts
// from its base output (a prior model's; none: 0). Returns the booster.
BoosterHandle Boost(const XGBModelConfig& c, const Packed& train, const Packed* valid,
                    int max_rounds, int patience, int* rounds_out, double* rmse_out,
                    const std::vector<double>& train_base, const std::vector<double>& valid_base) {
  DMatrix dtrain(train.values, train.rows(), 1);
  std::unique_ptr<DMatrix> dvalid;
  if (valid != nullptr) dvalid = std::make_unique<DMatrix>(valid->values, valid->rows(), 1);
  BoosterHandle b = NewBooster(c, dtrain.get());
  try {
    std::vector<double> row_pred = train_base;
    row_pred.resize(static_cast<size_t>(train.rows()), 0.0);
    std::vector<double> valid_row_pred = valid ? valid_base : std::vector<double>{};
    valid_row_pred.resize(valid ? static_cast<size_t>(valid->rows()) : 0, 0.0);
    std::vector<float> grad(row_pred.size()), hess(row_pred.size());
    int best_round = 0;
    double best = std::numeric_limits<double>::infinity();
    for (int it = 0; it < max_rounds; ++it) {
      std::vector<double> sum(static_cast<size_t>(train.programs()), 0.0);
      for (size_t r = 0; r < row_pred.size(); ++r) sum[static_cast<size_t>(train.program_of_row[r])] += row_pred[r];
      if (c.objective == "rank") {
        std::vector<double> pg, ph;
        RankGradients(train, sum, c.rank_partners, static_cast<uint64_t>(c.seed) * 7919 + it, &pg, &ph);
        for (size_t r = 0; r < row_pred.size(); ++r) {
          const size_t p = static_cast<size_t>(train.program_of_row[r]);
          grad[r] = static_cast<float>(pg[p]);
          hess[r] = static_cast<float>(ph[p]);
        }
      } else {
        for (size_t r = 0; r < row_pred.size(); ++r) {
          const size_t p = static_cast<size_t>(train.program_of_row[r]);
          const double y = train.labels[p], w = std::max(y, c.min_weight);
          grad[r] = static_cast<float>(w * (sum[p] - y));
          hess[r] = static_cast<float>(w);
        }
      }
      Check(XGBoosterBoostOneIter(b, dtrain.get(), grad.data(), hess.data(),
                                  static_cast<bst_ulong>(grad.size())),
            "XGBoosterBoostOneIter");
      const std::vector<float> tree = PredictRows(b, dtrain, it, it + 1, train.rows());
      for (size_t r = 0; r < row_pred.size(); ++r) row_pred[r] += tree[r];
      if (valid == nullptr) {
        best_round = it + 1;
        continue;
      }
      const std::vector<float> vtree = PredictRows(b, *dvalid, it, it + 1, valid->rows());
      for (size_t r = 0; r < valid_row_pred.size(); ++r) valid_row_pred[r] += vtree[r];
      std::vector<double> vsum(static_cast<size_t>(valid->programs()), 0.0);
      for (size_t r = 0; r < valid_row_pred.size(); ++r) vsum[static_cast<size_t>(valid->program_of_row[r])] += valid_row_pred[r];
      const double rmse = c.objective == "rank" ? RankError(*valid, vsum)
                                                : WeightedRmse(vsum, valid->labels, c.min_weight);
      if (rmse < best) {
        best = rmse;
        best_round = it + 1;
      } else if (it + 1 - best_round >= patience) {
        break;
      }
    }
    *rounds_out = best_round;
    *rmse_out = valid != nullptr ? best : 0;
    int built = 0;
    Check(XGBoosterBoostedRounds(b, &built), "XGBoosterBoostedRounds");
    if (built != best_round && best_round > 0) {
      BoosterHandle sliced = nullptr;
      Check(XGBoosterSlice(b, 0, best_round, 1, &sliced), "XGBoosterSlice");
      XGBoosterFree(b);
      b = sliced;
    }
    return b;
  } catch (...) {
    XGBoosterFree(b);
    throw;
  }
}

uint64_t Fnv1a(const char* data, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

// A stand-in score before any training: a hash of the features, uniform in
// [0, 1) and independent of what else is asked.
double HashScore(const FeatureRows& f) {
  uint64_t h = Fnv1a(reinterpret_cast<const char*>(f.values.data()), f.values.size() * sizeof(float));
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 29;
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Which programs train the model: every one with feature rows, or past
// `cap` an equal share per workload at an even stride (XGBModelConfig::
// max_training_programs says why).
std::vector<char> TrainingSubset(const std::vector<FeatureSample>& data, int64_t cap) {
  std::vector<char> used(data.size(), 0);
  std::map<std::string, std::vector<size_t>> by_workload;
  int64_t total = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i].features.rows == 0) continue;
    by_workload[data[i].workload_key].push_back(i);
    used[i] = 1;
    ++total;
  }
  if (cap <= 0 || total <= cap) return used;
  std::fill(used.begin(), used.end(), 0);
  // Equal shares, the smallest workloads first so that what they leave
  // goes to the larger ones (ties in key order: deterministic).
  std::vector<std::pair<size_t, std::string>> sizes;
  for (const auto& [key, idx] : by_workload) sizes.emplace_back(idx.size(), key);
  std::sort(sizes.begin(), sizes.end());
  int64_t left = cap;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::vector<size_t>& idx = by_workload[sizes[k].second];
    const int64_t count = static_cast<int64_t>(idx.size());
    const int64_t share = std::max<int64_t>(1, left / static_cast<int64_t>(sizes.size() - k));
    const int64_t take = std::min(count, share);
    // The j-th pick ends the j-th of `take` equal runs: the newest is the last.
    for (int64_t j = 0; j < take; ++j) used[idx[static_cast<size_t>((j + 1) * count / take - 1)]] = 1;
    left = std::max<int64_t>(0, left - take);
  }
  return used;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

struct XGBModel::Booster {
  BoosterHandle h = nullptr;
  int rounds = 0;
  explicit Booster(BoosterHandle handle, int n) : h(handle), rounds(n) {}
  ~Booster() {
    if (h != nullptr) XGBoosterFree(h);
  }
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;
};

XGBModel::XGBModel(XGBModelConfig config) : config_(std::move(config)) {
  if (config_.nthread < 1) throw std::invalid_argument("XGBModel: nthread must be >= 1");
  if (config_.validation_every < 2) throw std::invalid_argument("XGBModel: validation_every must be >= 2");
  if (config_.objective != "reg" && config_.objective != "rank") {
    throw std::invalid_argument("XGBModel: objective '" + config_.objective + "': expected 'reg' or 'rank'");
  }
  if (config_.rank_partners < 1) throw std::invalid_argument("XGBModel: rank_partners must be >= 1");
}
XGBModel::~XGBModel() = default;
XGBModel::XGBModel(XGBModel&&) noexcept = default;
XGBModel& XGBModel::operator=(XGBModel&&) noexcept = default;

bool XGBModel::trained() const { return booster_ != nullptr; }

std::vector<std::string> XGBModel::trained_workloads() const {
  if (!trained()) return {};
  if (per_workload_at_train_.empty()) return loaded_workloads_;
  std::vector<std::string> keys;
  for (const auto& [key, n] : per_workload_at_train_) keys.push_back(key);
  return keys;
}

void XGBModel::SetPrior(std::shared_ptr<const XGBModel> prior) {
  if (prior == nullptr || !prior->trained()) {
    throw std::invalid_argument("XGBModel: a prior must be a trained model");
  }
  if (prior->config_.objective != config_.objective) {
    throw std::invalid_argument("XGBModel: the prior was trained with objective '" +
                                prior->config_.objective + "', this model uses '" +
                                config_.objective + "'");
  }
  for (const XGBModel* p = prior.get(); p != nullptr; p = p->prior_.get()) {
    if (p == this) throw std::invalid_argument("XGBModel: a model cannot be its own prior");
  }
  prior_ = std::move(prior);
  prior_in_use_ = true;
  if (trained()) Train();
}

std::vector<double> XGBModel::RowOutputs(const std::vector<float>& values, int64_t rows) const {
  std::vector<double> out = uses_prior() ? prior_->RowOutputs(values, rows)
                                         : std::vector<double>(static_cast<size_t>(rows), 0.0);
  if (trained() && rows > 0) {
    DMatrix m(values, rows, config_.nthread);
    const std::vector<float> trees = PredictRows(booster_->h, m, 0, 0, rows);
    for (size_t r = 0; r < out.size(); ++r) out[r] += trees[r];
  }
  return out;
}

std::vector<FeatureSample> ToFeatureSamples(const std::vector<Sample>& samples, int num_threads,
                                            const FeatureOptions& options) {
  std::vector<ir::PrimFunc> funcs;
  funcs.reserve(samples.size());
  for (const Sample& s : samples) funcs.push_back(s.scheduled);
  std::vector<FeatureRows> rows = ExtractFeaturesBatch(funcs, num_threads, options);
  std::vector<FeatureSample> fs;
  fs.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    fs.push_back({std::move(rows[i]), samples[i].workload_key, samples[i].run_secs});
  }
  return fs;
}

void XGBModel::Update(const std::vector<Sample>& samples) {
  UpdateFeatures(ToFeatureSamples(samples, config_.nthread, config_.features));
}

void XGBModel::UpdateFeatures(const std::vector<FeatureSample>& samples) {
  for (const FeatureSample& s : samples) {
    if (s.features.values.size() != static_cast<size_t>(s.features.rows) * kNumFeatures) {
      throw std::invalid_argument("XGBModel: a sample's feature rows are not " +
                                  std::to_string(kNumFeatures) + " values long");
    }
  }
  data_.insert(data_.end(), samples.begin(), samples.end());
  for (const FeatureSample& s : samples) ++per_workload_[s.workload_key];
  const int64_t n = data_size();
  if (n < config_.num_warmup_samples) return;
  auto grew = [&](int64_t now, int64_t then) {
    return now > then && static_cast<double>(now - then) >=
                             config_.retrain_growth * static_cast<double>(then);
  };
  bool grown = grew(n, last_train_size_);
  // And per workload, where this model's own training saw the counts (a
  // loaded model knows only its training size).
  if (!per_workload_at_train_.empty()) {
    for (const FeatureSample& s : samples) {
      auto at_train = per_workload_at_train_.find(s.workload_key);
      grown = grown || grew(per_workload_[s.workload_key],
                            at_train == per_workload_at_train_.end() ? 0 : at_train->second);
    }
  }
  if (!trained() || grown) Train();
}

TrainingReport XGBModel::Train() {
  // Labels relative to the best finite cost of each workload.
  std::map<std::string, double> best;
  auto ok = [](double c) { return std::isfinite(c) && c > 0; };
  for (const FeatureSample& s : data_) {
    if (!ok(s.run_secs)) continue;
    auto [it, inserted] = best.emplace(s.workload_key, s.run_secs);
    if (!inserted) it->second = std::min(it->second, s.run_secs);
  }
  auto label = [&](const FeatureSample& s) {
    auto it = best.find(s.workload_key);
    const double y = (ok(s.run_secs) && it != best.end()) ? it->second / s.run_secs : 0.0;
    if (!config_.log_label || y <= 0) return y;
    return 1.0 + std::log10(std::max(y, 1e-3)) / 3.0;
  };
  // Deterministic split: every validation_every-th program of each workload.
  Packed all, train, valid;
  std::map<std::string, int64_t> seen;
  std::map<std::string, int> group;
  const std::vector<char> used = TrainingSubset(data_, config_.max_training_programs);
  for (size_t i = 0; i < data_.size(); ++i) {
    const FeatureSample& s = data_[i];
    if (!used[i]) continue;
    const double y = label(s);
    const int g = group.emplace(s.workload_key, static_cast<int>(group.size())).first->second;
    all.Add(s.features, y, g);
    const int64_t k = seen[s.workload_key]++;
    ((k % config_.validation_every == config_.validation_every - 1) ? valid : train).Add(s.features, y, g);
  }
  TrainingReport report;
  report.programs = all.programs();
  report.rows = all.rows();
  if (all.programs() == 0) return report;
  int rounds = 0;
  double rmse = 0;
  bool use_prior = prior_ != nullptr;
  BoosterHandle h = nullptr;
  // Where the prior leaves each row; the trees boost from there.
  auto base = [&](const Packed& p) {
    return prior_ ? prior_->RowOutputs(p.values, p.rows()) : std::vector<double>{};
  };
  const std::vector<double> all_base = base(all);
  if (config_.fixed_rounds > 0) {
    h = Boost(config_, all, nullptr, config_.fixed_rounds, 0, &rounds, &rmse, all_base, {});
  } else if (valid.programs() >= config_.min_validation_programs && train.programs() > 0) {
    BoosterHandle probe =
        Boost(config_, train, &valid, config_.max_rounds, config_.early_stopping_rounds, &rounds,
              &rmse, base(train), base(valid));
    XGBoosterFree(probe);
    if (prior_ && config_.check_prior) {
      // The prior learned other workloads and may mislead on these: the
      // same split fit from nothing decides whether it stays.
      int bare_rounds = 0;
      double bare_rmse = 0;
      BoosterHandle bare = Boost(config_, train, &valid, config_.max_rounds,
                                 config_.early_stopping_rounds, &bare_rounds, &bare_rmse, {}, {});
      XGBoosterFree(bare);
      report.validation_rmse_with_prior = rmse;
      report.validation_rmse_without_prior = bare_rmse;
      if (bare_rmse < rmse) {
        use_prior = false;
        rounds = bare_rounds;
        rmse = bare_rmse;
      }
    }
    rounds = std::max(rounds, 1);
    int refit_rounds = 0;
    double unused = 0;
    h = Boost(config_, all, nullptr, rounds, 0, &refit_rounds, &unused,
              use_prior ? all_base : std::vector<double>{}, {});
    report.validation_programs = valid.programs();
  } else {
    // Too little data to hold some out: TVM's rule (stop on the training set).
    h = Boost(config_, all, &all, config_.max_rounds, config_.early_stopping_rounds, &rounds, &rmse,
              all_base, all_base);
  }
  if (XGBoosterSetParam(h, "nthread", std::to_string(config_.nthread).c_str()) != 0) {
    XGBoosterFree(h);
    Check(1, "XGBoosterSetParam(nthread)");
  }
  booster_ = std::make_unique<Booster>(h, rounds);
  prior_in_use_ = use_prior;
  report.prior_used = use_prior;
  report.rounds = rounds;
  report.validation_rmse = rmse;
  last_report_ = report;
  last_train_size_ = data_size();
  per_workload_at_train_ = per_workload_;
  return report;
}

std::vector<double> XGBModel::Predict(const std::vector<ir::PrimFunc>& scheduled) {
  return PredictFeatures(ExtractFeaturesBatch(scheduled, config_.nthread, config_.features));
}

std::vector<double> XGBModel::PredictFeatures(const std::vector<FeatureRows>& programs) const {
  std::vector<double> scores(programs.size(), 0.0);
  if (!informative()) {
    for (size_t i = 0; i < programs.size(); ++i) scores[i] = HashScore(programs[i]);
    return scores;
  }
  Packed p;
  for (const FeatureRows& f : programs) {
    if (f.values.size() != static_cast<size_t>(f.rows) * kNumFeatures) {
      throw std::invalid_argument("XGBModel::PredictFeatures: rows are not " +
                                  std::to_string(kNumFeatures) + " values long");
    }
    p.Add(f, 0);
  }
  if (p.rows() == 0) return scores;
  std::vector<double> sums =
      SumByProgram(RowOutputs(p.values, p.rows()), p.program_of_row, p.programs());
  if (config_.objective == "rank") {
    for (double& v : sums) v = Sigmoid(v);
  }
  return sums;
}

void XGBModel::Save(const std::string& path) const {
  if (prior_) {
    throw CostModelError(
        "a cost model that starts from a prior cannot be saved on its own (its "
        "trees predict only corrections to the prior)");
  }
  const char* buf = nullptr;
  bst_ulong len = 0;
  if (trained()) {
    Check(XGBoosterSaveModelToBuffer(booster_->h, "{\"format\": \"ubj\"}", &len, &buf),
          "XGBoosterSaveModelToBuffer");
  }
  nlohmann::json header = {
      {"format", kFormatName},
      {"version", kFormatVersion},
      {"num_features", kNumFeatures},
      {"training_size", last_train_size_},
      {"rounds", trained() ? booster_->rounds : 0},
      {"objective", config_.objective},
      {"workloads", trained_workloads()},
      {"booster_bytes", static_cast<uint64_t>(len)},
      {"booster_fnv1a64", Hex(Fnv1a(buf, static_cast<size_t>(len)))},
  };
  if (!trained_target_.empty()) header["target"] = trained_target_;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw CostModelError("cannot write cost model file '" + tmp + "'");
    out << header.dump() << '\n';
    out.write(buf, static_cast<std::streamsize>(len));
    out.flush();
    if (!out) throw CostModelError("cannot write cost model file '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw CostModelError("cannot move the cost model file into place at '" + path + "'");
  }
}

XGBModel XGBModel::Load(const std::string& path, XGBModelConfig config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CostModelError("cannot open cost model file '" + path + "'");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) {
    return CostModelError("'" + path + "' is not a usable Kiln cost model: " + why);
  };
  const size_t nl = content.find('\n');
  if (nl == std::string::npos) throw fail("no header line");
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(content.substr(0, nl));
  } catch (const std::exception&) {
    throw fail("the header line is not JSON");
  }
  try {
    if (!h.is_object() || h.value("format", "") != kFormatName) {
      throw fail("the header does not say format \"" + std::string(kFormatName) + "\"");
    }
    const int version = h.at("version").get<int>();
    if (version != kFormatVersion) {
      throw fail("format version " + std::to_string(version) + ", this Kiln reads version " +
                 std::to_string(kFormatVersion));
    }
    const int nf = h.at("num_features").get<int>();
    if (nf != kNumFeatures) {
      throw fail("it was trained on " + std::to_string(nf) + " features per row, this Kiln extracts " +
                 std::to_string(kNumFeatures));
    }
    const uint64_t len = h.at("booster_bytes").get<uint64_t>();
    if (content.size() - nl - 1 != len) {
      throw fail("the booster should be " + std::to_string(len) + " bytes, the file holds " +
                 std::to_string(content.size() - nl - 1) + " (truncated or appended to)");
    }
    const char* data = content.data() + nl + 1;
    if (h.at("booster_fnv1a64").get<std::string>() != Hex(Fnv1a(data, static_cast<size_t>(len)))) {
      throw fail("the booster's checksum does not match (corrupt)");
    }
    // The objective decides how predictions are read; files written before
    // it was recorded are "reg".
    config.objective = h.value("objective", std::string("reg"));
    if (config.objective != "reg" && config.objective != "rank") {
      throw fail("unknown objective '" + config.objective + "'");
    }
    XGBModel m(std::move(config));
    m.last_train_size_ = h.at("training_size").get<int64_t>();
    // Files written before the field was added do not say.
    m.loaded_workloads_ = h.value("workloads", std::vector<std::string>{});
    m.trained_target_ = h.value("target", std::string());
    if (len > 0) {
      BoosterHandle b = nullptr;
      Check(XGBoosterCreate(nullptr, 0, &b), "XGBoosterCreate");
      if (XGBoosterLoadModelFromBuffer(b, data, static_cast<bst_ulong>(len)) != 0 ||
          XGBoosterSetParam(b, "nthread", std::to_string(m.config_.nthread).c_str()) != 0) {
        const std::string err = XGBGetLastError();
        XGBoosterFree(b);
        throw fail("XGBoost cannot load its booster: " + err);
      }
      m.booster_ = std::make_unique<Booster>(b, h.at("rounds").get<int>());
    }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("a header field is missing or of the wrong type (") + e.what() + ")");
  }
}

}  // namespace kiln::cost_model
