// kiln model train|eval: the XGBoost cost model (cost_model/xgb_model.h)
// from a tuning database. `train` fits it on every record of a target and
// saves it; `eval` measures how well it ranks schedules of workloads it has
// never seen (k-fold by workload), the situation of a new tuning task, or
// (--split history) how well a workload's first records rank its later ones,
// the situation of the model inside one `kiln tune` run; or (--model) how
// well a model file, such as a prior of configs/models/, ranks each
// workload's records as it is.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cost_model/feature_extractor.h"
#include "cost_model/metrics.h"
#include "cost_model/xgb_model.h"
#include "database/database.h"
#include "ir/structural_hash.h"
#include "report/workload_names.h"
#include "search/measured_samples.h"
#include "tools/command_guard.h"
#include "tools/commands.h"
#include "tools/target_spec.h"
#include "tools/workload_spec.h"

namespace kiln::tools {

namespace {

using database::Database;
using nlohmann::json;

// Model settings exposed on the command line (the rest are TVM's defaults).
struct ModelFlags {
  int threads = 2;
  double min_weight = 0;
  bool log_label = false;
  std::string objective = "reg";
  int64_t max_training_programs = cost_model::XGBModelConfig{}.max_training_programs;
  int rounds = 0;
  cost_model::XGBModelConfig Config() const {
    cost_model::XGBModelConfig c;
    c.fixed_rounds = rounds;
    c.objective = objective;
    c.max_training_programs = max_training_programs;
    c.nthread = threads;
    c.min_weight = min_weight;
    c.log_label = log_label;
    return c;
  }
};

void AddModelFlags(CLI::App* cmd, ModelFlags* f) {
  cmd->add_option("--threads", f->threads, "Threads for feature extraction and prediction")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-weight", f->min_weight,
                  "Floor of a program's weight in the loss (TVM: 0, the label itself)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--log-label", f->log_label, "Train on log-scaled labels (TVM: off)");
  cmd->add_option("--objective", f->objective,
                  "reg: label-weighted squared error (TVM's); rank: pairwise order within each workload")
      ->check(CLI::IsMember({"reg", "rank"}));
  cmd->add_option("--rounds", f->rounds,
                  "Boost exactly this many rounds on every record (0: as many as a held-out "
                  "fifth of each workload's records chooses)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--max-training-programs", f->max_training_programs,
                  "Past this many programs, train on an equal share per workload (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

struct Loaded {
  std::string target;
  std::vector<cost_model::FeatureSample> samples;
  int64_t unreplayable = 0;  // records that no longer replay: skipped
  // Each workload's name for people (report::WorkloadLabel), by its key;
  // filled only for the evaluations, which print them.
  std::map<std::string, std::string> labels;
  const std::string& Label(const std::string& key) const { return labels.at(key); }
};

enum class Labels { kSkip, kFill };

Loaded Load(const std::string& db_path, const std::string& target_spec, const std::string& workload,
            int threads, Labels labels) {
  if (!std::ifstream(db_path)) throw std::runtime_error("--db " + db_path + ": no such file");
  Database db = Database::Open(db_path, Database::Mode::kReadOnly);
  Loaded l;
  l.target = ResolveTargetFlag(target_spec).ToString();
  std::optional<database::WorkloadId> only;
  if (!workload.empty()) {
    only = db.FindWorkload(ResolveWorkload(workload).func);
    if (!only) throw std::runtime_error("--workload " + workload + ": not in the database");
  }
  search::MeasuredFeatures loaded = search::LoadMeasuredFeatures(db, l.target, threads, only);
  l.samples = std::move(loaded.samples);
  l.unreplayable = loaded.unreplayable;
  if (labels == Labels::kFill) {
    const std::map<std::string, std::string> known = report::KnownWorkloadNames(db);
    for (const cost_model::FeatureSample& s : l.samples) {
      if (!l.labels.count(s.workload_key)) {
        l.labels[s.workload_key] = report::WorkloadLabel(db, known, s.workload_key);
      }
    }
  }
  if (l.unreplayable > 0) {
    std::cerr << "kiln: warning: " << l.unreplayable
              << " record(s) no longer replay and were skipped (first: " << loaded.first_error
              << ")\n";
  }
  return l;
}

double Secs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int64_t CountFailed(const std::vector<cost_model::FeatureSample>& s) {
  int64_t n = 0;
  for (const auto& x : s) n += !(std::isfinite(x.run_secs) && x.run_secs > 0);
  return n;
}

// A model fit on `samples`; a command has all its data at once, so it trains
// even below the warm-up that holds back a tuning run's first batches.
// With `prior`, the model starts from it (as `kiln tune --prior-model`
// does) and its trees learn what the prior got wrong.
cost_model::XGBModel Fit(const ModelFlags& flags,
                         const std::vector<cost_model::FeatureSample>& samples,
                         const std::shared_ptr<const cost_model::XGBModel>& prior = nullptr) {
  cost_model::XGBModel model(flags.Config());
  if (prior) model.SetPrior(prior);
  model.UpdateFeatures(samples);
  if (model.last_train_size() != model.data_size()) model.Train();
  return model;
}

// A model file for --model or --prior-model, with the flags' threads and
// objective; refused (naming the flag) when it cannot be read or holds no
// trained booster.
cost_model::XGBModel LoadTrainedModel(const std::string& path, const std::string& flag,
                                      const ModelFlags& flags) {
  cost_model::XGBModel m;
  try {
    m = cost_model::XGBModel::Load(path, flags.Config());
  } catch (const cost_model::CostModelError& e) {
    throw std::runtime_error(flag + " " + path + ": " + e.what());
  }
  if (!m.trained()) throw std::runtime_error(flag + " " + path + ": the model is not trained");
  return m;
}

// The model's scores for some of the samples and their measured throughput
// (failures 0). A model that could not train (no sample had feature rows)
// scores every program 0: its untrained scores are a hash, not a ranking.
struct Ranking {
  std::vector<double> pred, truth;
};

Ranking Rank(const cost_model::XGBModel& model, const std::vector<cost_model::FeatureSample>& samples,
             const std::vector<size_t>& indices) {
  std::vector<cost_model::FeatureRows> programs;
  Ranking r;
  for (size_t i : indices) {
    programs.push_back(samples[i].features);
    const double c = samples[i].run_secs;
    r.truth.push_back(std::isfinite(c) && c > 0 ? 1.0 / c : 0.0);
  }
  r.pred = model.informative() ? model.PredictFeatures(programs)
                               : std::vector<double>(programs.size(), 0);
  return r;
}

// How well a ranking orders one workload's records.
struct Quality {
  int64_t records = 0;
  double spearman = 0, recall = 0, best_ratio = 0;  // best_ratio: of the top-k
};

Quality Judge(const Ranking& r, int top_k) {
  return {static_cast<int64_t>(r.pred.size()), cost_model::SpearmanCorrelation(r.pred, r.truth),
          cost_model::TopKRecall(r.pred, r.truth, top_k),
          cost_model::TopKBestRatio(r.pred, r.truth, top_k)};
}

void Train(const std::string& db, const std::string& target, const std::string& workload,
           const std::vector<std::string>& excluded, const std::string& output,
           const ModelFlags& flags, bool as_json) {
  const int threads = flags.threads;
  const auto t0 = std::chrono::steady_clock::now();
  Loaded l = Load(db, target, workload, threads, Labels::kSkip);
  // Left out by workload, so that the model can start a bench of those
  // workloads (search_bench --prior-model) without having seen them.
  size_t left_out = 0;
  for (const std::string& w : excluded) {
    const std::string key = ir::StructuralHashHex(ResolveWorkload(w).func);
    const size_t before = l.samples.size();
    std::erase_if(l.samples,
                  [&](const cost_model::FeatureSample& s) { return s.workload_key == key; });
    left_out += before - l.samples.size();
    if (!as_json) {
      std::cout << "left out " << before - l.samples.size() << " record(s) of " << w << "\n";
    }
  }
  if (l.samples.empty()) {
    throw std::runtime_error("--db " + db + ": no records for target '" + l.target + "'" +
                             (workload.empty() ? "" : " and --workload " + workload) +
                             (left_out == 0 ? "" : " left after --exclude-workload"));
  }
  cost_model::XGBModel model = Fit(flags, l.samples);
  if (!model.trained()) throw std::runtime_error("no record yields feature rows: nothing to train on");
  // Recorded so that `kiln tune` knows which CPUs the model suits
  // (search/prior_model.h).
  model.set_trained_target(l.target);
  model.Save(output);
  const cost_model::TrainingReport& r = model.last_training();
  std::map<std::string, int> workloads;
  for (const auto& s : l.samples) workloads[s.workload_key]++;
  if (as_json) {
    std::cout << json{{"target", l.target},
                      {"records", l.samples.size()},
                      {"excluded_records", left_out},
                      {"failed_records", CountFailed(l.samples)},
                      {"unreplayable_records", l.unreplayable},
                      {"workloads", workloads.size()},
                      {"programs", r.programs},
                      {"rows", r.rows},
                      {"rounds", r.rounds},
                      {"validation_programs", r.validation_programs},
                      {"validation_rmse", r.validation_rmse},
                      {"seconds", Secs(t0)},
                      {"model", output}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "trained on " << l.samples.size() << " record(s) of " << workloads.size()
            << " workload(s) for '" << l.target << "' (" << CountFailed(l.samples)
            << " failed, label 0): " << r.rows << " feature rows, " << r.rounds << " rounds";
  if (r.validation_programs > 0) {
    std::cout << " chosen on " << r.validation_programs << " held-out programs (RMSE "
              << r.validation_rmse << ")";
  }
  std::cout << ", " << std::fixed << std::setprecision(1) << Secs(t0) << " s\nsaved " << output
            << "\n";
}

// The workloads in order of first appearance, and each one's sample indices
// in commit order.
struct Grouped {
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> by_workload;
};

Grouped GroupByWorkload(const std::vector<cost_model::FeatureSample>& samples) {
  Grouped g;
  for (size_t i = 0; i < samples.size(); ++i) {
    auto [it, inserted] = g.by_workload.try_emplace(samples[i].workload_key);
    if (inserted) g.order.push_back(samples[i].workload_key);
    it->second.push_back(i);
  }
  return g;
}

struct Score {
  int64_t records = 0;
  double spearman = 0;  // record-weighted mean over workloads
  double recall = 0;
  double best_ratio_sum = 0;  // over the workloads added
  int workloads = 0;
  void Add(const Quality& q) {
    records += q.records;
    spearman += q.spearman * static_cast<double>(q.records);
    recall += q.recall * static_cast<double>(q.records);
    best_ratio_sum += q.best_ratio;
    ++workloads;
  }
  double MeanSpearman() const {
    return spearman / std::max<double>(1.0, static_cast<double>(records));
  }
  double MeanRecall() const { return recall / std::max<double>(1.0, static_cast<double>(records)); }
  double MeanBestRatio() const { return best_ratio_sum / std::max(1, workloads); }
};

// What the JSON of every `kiln model eval` shares.
json RankedJson(const Loaded& l, size_t workloads, const json& per_workload, int top_k,
                const Score& overall, std::chrono::steady_clock::time_point t0) {
  return {{"target", l.target},
          {"records", l.samples.size()},
          {"failed_records", CountFailed(l.samples)},
          {"unreplayable_records", l.unreplayable},
          {"workloads", workloads},
          {"per_workload", per_workload},
          {"top_k", top_k},
          {"spearman", overall.MeanSpearman()},
          {"top_k_recall", overall.MeanRecall()},
          {"top_k_best_ratio", overall.MeanBestRatio()},
          {"seconds", Secs(t0)}};
}

// A prior trained on some of the evaluated workloads has seen their records:
// their figures are not held out. Said, not refused (a user may want it).
void WarnIfPriorSawThem(const std::shared_ptr<const cost_model::XGBModel>& prior,
                        const std::vector<std::string>& evaluated) {
  if (!prior) return;
  const std::vector<std::string> seen_list = prior->trained_workloads();
  const std::set<std::string> seen(seen_list.begin(), seen_list.end());
  const auto n = std::count_if(evaluated.begin(), evaluated.end(),
                               [&](const std::string& k) { return seen.count(k) > 0; });
  if (n > 0) {
    std::cerr << "kiln: warning: --prior-model was trained on " << n << " of the "
              << evaluated.size() << " evaluated workload(s): their figures are not held out\n";
  }
}

void Eval(const std::string& db, const std::string& target, int folds, int top_k,
          const ModelFlags& flags, const std::shared_ptr<const cost_model::XGBModel>& prior,
          bool as_json) {
  const int threads = flags.threads;
  const auto t0 = std::chrono::steady_clock::now();
  Loaded l = Load(db, target, "", threads, Labels::kFill);
  // Fold f holds every folds-th workload.
  const auto [order, by_workload] = GroupByWorkload(l.samples);
  WarnIfPriorSawThem(prior, order);
  if (order.size() < 2) {
    throw std::runtime_error("k-fold by workload needs records of at least 2 workloads for '" +
                             l.target + "'; the database has " + std::to_string(order.size()));
  }
  const int k = std::min<int>(folds, static_cast<int>(order.size()));
  json fold_json = json::array(), workload_json = json::array();
  Score overall;
  if (!as_json) {
    std::cout << "k-fold by workload: " << l.samples.size() << " record(s), " << order.size()
              << " workload(s), " << k << " folds, top-" << top_k << " recall\n";
  }
  for (int f = 0; f < k; ++f) {
    std::vector<cost_model::FeatureSample> train;
    std::vector<std::string> held;
    for (size_t w = 0; w < order.size(); ++w) {
      if (static_cast<int>(w % static_cast<size_t>(k)) == f) {
        held.push_back(order[w]);
      } else {
        for (size_t i : by_workload.at(order[w])) train.push_back(l.samples[i]);
      }
    }
    const cost_model::XGBModel model = Fit(flags, train, prior);
    Score fs;
    for (const std::string& key : held) {
      const Quality q = Judge(Rank(model, l.samples, by_workload.at(key)), top_k);
      const double rho = q.spearman, rec = q.recall;
      const int64_t n = q.records;
      workload_json.push_back({{"workload_hash", key},
                               {"workload", l.Label(key)},
                               {"fold", f},
                               {"records", n},
                               {"spearman", rho},
                               {"top_k_recall", rec}});
      fs.Add(q);
      overall.Add(q);
      if (!as_json) {
        std::cout << "  fold " << f << "  workload " << key.substr(0, 16) << "  " << std::setw(5)
                  << n << " records  spearman " << std::fixed << std::setprecision(3) << rho
                  << "  top-" << top_k << " recall " << rec << "  " << l.Label(key) << "\n";
      }
    }
    fold_json.push_back({{"fold", f},
                         {"held_out_workloads", held},
                         {"records", fs.records},
                         {"training_records", train.size()},
                         {"spearman", fs.MeanSpearman()},
                         {"top_k_recall", fs.MeanRecall()}});
    if (!as_json) {
      std::cout << "fold " << f << ": " << fs.records << " held-out records, trained on "
                << train.size() << ": spearman " << std::fixed << std::setprecision(3)
                << fs.MeanSpearman() << ", top-" << top_k << " recall " << fs.MeanRecall() << "\n";
    }
  }
  if (as_json) {
    json j = RankedJson(l, order.size(), workload_json, top_k, overall, t0);
    j["folds"] = fold_json;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "overall (record-weighted over held-out workloads): spearman " << std::fixed
            << std::setprecision(3) << overall.MeanSpearman() << ", top-" << top_k << " recall "
            << overall.MeanRecall() << " (" << std::setprecision(1) << Secs(t0) << " s)\n";
}

// --split history: each workload on its own, as a `kiln tune` run of it from
// nothing sees it after `history` trials: a model trained on its first
// `history` records (commit order) ranks the records measured after them.
// Those later records are what that run's search chose to measure, not a
// random sample, so the figures compare models and settings on the same
// database rather than stand alone.
void EvalHistory(const std::string& db, const std::string& target, int history, int top_k,
                 const ModelFlags& flags, const std::shared_ptr<const cost_model::XGBModel>& prior,
                 bool as_json) {
  const auto t0 = std::chrono::steady_clock::now();
  Loaded l = Load(db, target, "", flags.threads, Labels::kFill);
  const auto [order, by_workload] = GroupByWorkload(l.samples);
  WarnIfPriorSawThem(prior, order);
  const bool any = std::any_of(by_workload.begin(), by_workload.end(), [&](const auto& w) {
    return w.second.size() >= static_cast<size_t>(history) + 2;
  });
  if (!any) {
    throw std::runtime_error("--split history needs a workload with at least " +
                             std::to_string(history + 2) + " records for '" + l.target +
                             "' (--history " + std::to_string(history) + " plus 2 to rank)");
  }
  json workload_json = json::array();
  Score overall;
  int skipped = 0;
  if (!as_json) {
    std::cout << "history split: per workload, trained on its first " << history
              << " record(s), ranking the later ones; top-" << top_k << "\n";
  }
  for (const std::string& key : order) {
    const std::vector<size_t>& idx = by_workload.at(key);
    if (idx.size() < static_cast<size_t>(history) + 2) {
      ++skipped;
      continue;
    }
    const auto split = idx.begin() + history;
    std::vector<cost_model::FeatureSample> train;
    for (auto it = idx.begin(); it != split; ++it) train.push_back(l.samples[*it]);
    const cost_model::XGBModel model = Fit(flags, train, prior);
    const Quality q = Judge(Rank(model, l.samples, std::vector<size_t>(split, idx.end())), top_k);
    const double rho = q.spearman, rec = q.recall, best = q.best_ratio;
    const int64_t n = q.records;
    workload_json.push_back({{"workload_hash", key},
                             {"workload", l.Label(key)},
                             {"training_records", history},
                             {"records", n},
                             {"spearman", rho},
                             {"top_k_recall", rec},
                             {"top_k_best_ratio", best},
                             {"model_trained", model.informative()}});
    overall.Add(q);
    if (!as_json) {
      std::cout << "  workload " << key.substr(0, 16) << "  " << std::setw(5) << n
                << " later records  spearman " << std::fixed << std::setprecision(3) << rho
                << "  top-" << top_k << " recall " << rec << "  best of top-" << top_k << " "
                << best << (model.informative() ? "" : "  (nothing to train on: scores all 0)")
                << "  " << l.Label(key) << "\n";
    }
  }
  if (as_json) {
    json j = RankedJson(l, order.size(), workload_json, top_k, overall, t0);
    j["split"] = "history";
    j["history"] = history;
    j["skipped_workloads"] = skipped;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "overall (record-weighted over " << overall.workloads << " workload(s)";
  if (skipped > 0) std::cout << "; " << skipped << " with too few records skipped";
  std::cout << "): spearman " << std::fixed << std::setprecision(3) << overall.MeanSpearman()
            << ", top-" << top_k << " recall " << overall.MeanRecall() << ", best of top-" << top_k
            << " " << overall.MeanBestRatio() << " (mean over workloads) (" << std::setprecision(1)
            << Secs(t0) << " s)\n";
}

// --model: a model trained elsewhere (`kiln model train`, a shipped prior
// of configs/models/) ranks every record of each workload as it is, without
// training: how far a `kiln tune --prior-model` run can trust it before its
// own records teach it. A workload the model was trained on is marked: its
// figures say how well the model fits, not how well it generalizes.
void EvalModel(const std::string& db, const std::string& target, const std::string& model_file,
               const cost_model::XGBModel& model, int top_k, int threads, bool as_json) {
  const auto t0 = std::chrono::steady_clock::now();
  Loaded l = Load(db, target, "", threads, Labels::kFill);
  const auto [order, by_workload] = GroupByWorkload(l.samples);
  if (order.empty()) {
    throw std::runtime_error("--db " + db + ": no records for target '" + l.target + "'");
  }
  const std::vector<std::string> seen_list = model.trained_workloads();
  const std::set<std::string> seen(seen_list.begin(), seen_list.end());
  json workload_json = json::array();
  Score overall;
  if (!as_json) {
    std::cout << "model " << model_file << " ("
              << (model.trained_target().empty() ? "its training target not recorded"
                                                 : "trained for '" + model.trained_target() + "'")
              << ") ranks " << l.samples.size() << " record(s) of " << order.size()
              << " workload(s), top-" << top_k << "\n";
  }
  for (const std::string& key : order) {
    const Quality q = Judge(Rank(model, l.samples, by_workload.at(key)), top_k);
    const double rho = q.spearman, rec = q.recall, best = q.best_ratio;
    const int64_t n = q.records;
    const bool trained_on = seen.count(key) > 0;
    workload_json.push_back({{"workload_hash", key},
                             {"workload", l.Label(key)},
                             {"records", n},
                             {"spearman", rho},
                             {"top_k_recall", rec},
                             {"top_k_best_ratio", best},
                             {"trained_on", trained_on}});
    overall.Add(q);
    if (!as_json) {
      std::cout << "  workload " << key.substr(0, 16) << "  " << std::setw(5) << n
                << " records  spearman " << std::fixed << std::setprecision(3) << rho << "  top-"
                << top_k << " recall " << rec << "  best of top-" << top_k << " " << best
                << (trained_on ? "  (the model trained on it)" : "") << "  " << l.Label(key)
                << "\n";
    }
  }
  if (as_json) {
    json j = RankedJson(l, order.size(), workload_json, top_k, overall, t0);
    j["model"] = model_file;
    j["model_target"] = model.trained_target();
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "overall (record-weighted over " << order.size() << " workload(s)): spearman "
            << std::fixed << std::setprecision(3) << overall.MeanSpearman() << ", top-" << top_k
            << " recall " << overall.MeanRecall() << ", best of top-" << top_k << " "
            << overall.MeanBestRatio() << " (mean over workloads) (" << std::setprecision(1)
            << Secs(t0) << " s)\n";
}

}  // namespace

void RegisterModelCommands(CLI::App& app, int* exit_code) {
  auto* model = app.add_subcommand("model", "The XGBoost cost model: train from a database, evaluate held out");
  model->require_subcommand(1);

  struct TrainArgs {
    std::string db, target, workload, output;
    std::vector<std::string> excluded;
    ModelFlags flags;
    bool json = false;
  };
  auto t = std::make_shared<TrainArgs>();
  auto* train = model->add_subcommand("train", "Train on every record of a target and save the model");
  train->add_option("--db", t->db, "Tuning database file")->required();
  train->add_option("--target", t->target, "Target string (or host)")->required();
  train->add_option("--workload", t->workload, "Only this workload (suite name or text file)");
  train->add_option("--exclude-workload", t->excluded,
                    "Leave this workload's records out (suite name or text file; repeatable)");
  train->add_option("-o,--output", t->output, "Model file to write")->required();
  AddModelFlags(train, &t->flags);
  train->add_flag("--json", t->json, "Print JSON");
  train->callback([=] {
    Guard(exit_code,
          [&] { Train(t->db, t->target, t->workload, t->excluded, t->output, t->flags, t->json); });
  });

  struct EvalArgs {
    std::string db, target;
    int folds = 5, top_k = 10, history = 64;
    std::string split = "workload";
    std::string model_file, prior_file;
    ModelFlags flags;
    bool json = false;
  };
  auto e = std::make_shared<EvalArgs>();
  auto* eval = model->add_subcommand(
      "eval",
      "Ranking quality on records the model did not train on: k-fold by workload, or each "
      "workload's later records after its first (--split history)");
  eval->add_option("--db", e->db, "Tuning database file")->required();
  eval->add_option("--target", e->target, "Target string (or host)")->required();
  CLI::Option* folds =
      eval->add_option("--folds", e->folds, "Number of folds (default 5; at most the workloads)");
  folds->check(CLI::Range(2, 1000));
  eval->add_option("--split", e->split,
                   "workload: k-fold by workload (default); history: per workload, train on its "
                   "first --history records, rank the later ones")
      ->check(CLI::IsMember({"workload", "history"}));
  CLI::Option* history =
      eval->add_option("--history", e->history,
                       "With --split history: records each workload trains on (default 64)");
  history->check(CLI::PositiveNumber);
  eval->add_option("--top-k", e->top_k, "k of the top-k recall (default 10)")->check(CLI::PositiveNumber);
  AddModelFlags(eval, &e->flags);
  CLI::Option* model_opt = eval->add_option(
      "--model", e->model_file,
      "Rank every record of each workload with this trained model file, as it is (no folds, no "
      "training): how well a prior fits the database's workloads");
  CLI::Option* prior_opt = eval->add_option(
      "--prior-model", e->prior_file,
      "Each model trained by the evaluation starts from this model file, as `kiln tune "
      "--prior-model FILE` runs do");
  model_opt->excludes(prior_opt)->excludes(folds)->excludes(history);
  eval->add_flag("--json", e->json, "Print JSON");
  eval->callback([=] {
    Guard(exit_code, [&] {
      if (history->count() > 0 && e->split != "history") {
        throw std::invalid_argument("--history applies to --split history only");
      }
      if (folds->count() > 0 && e->split == "history") {
        throw std::invalid_argument("--folds applies to --split workload only");
      }
      if (!e->model_file.empty()) {
        if (e->split == "history") {
          throw std::invalid_argument("--model ranks with a trained model; --split history trains");
        }
        const cost_model::XGBModel m = LoadTrainedModel(e->model_file, "--model", e->flags);
        EvalModel(e->db, e->target, e->model_file, m, e->top_k, e->flags.threads, e->json);
        return;
      }
      std::shared_ptr<const cost_model::XGBModel> prior;
      if (!e->prior_file.empty()) {
        prior = std::make_shared<const cost_model::XGBModel>(
            LoadTrainedModel(e->prior_file, "--prior-model", e->flags));
      }
      if (e->split == "history") {
        EvalHistory(e->db, e->target, e->history, e->top_k, e->flags, prior, e->json);
      } else {
        Eval(e->db, e->target, e->folds, e->top_k, e->flags, prior, e->json);
      }
    });
  });
}

}  // namespace kiln::tools
