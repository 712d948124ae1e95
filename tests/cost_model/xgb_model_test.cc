#include "cost_model/xgb_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <tuple>

#include "cost_model/metrics.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"

namespace kiln::cost_model {
namespace {

// A synthetic program: 1-3 rows with a few informative features. Its true
// speed is the sum over its rows of a nonlinear function of each row (what
// pack-sum can represent), so programs with more rows are not simply faster.
struct Synthetic {
  FeatureRows rows;
  double speed = 0;
};

double RowSpeed(const float* x) {
  return 1.0 + 2.0 * x[0] + (x[1] > 0.5f ? 1.5 : 0.0) + 3.0 * x[2] * x[3];
}

Synthetic MakeProgram(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Synthetic s;
  s.rows.rows = 1 + static_cast<int64_t>(rng() % 3);
  s.rows.values.assign(static_cast<size_t>(s.rows.rows) * kNumFeatures, 0.0f);
  for (int64_t r = 0; r < s.rows.rows; ++r) {
    float* x = s.rows.values.data() + r * kNumFeatures;
    for (int k = 0; k < 6; ++k) x[k] = u(rng);  // x[4], x[5]: noise features
    s.speed += RowSpeed(x);
  }
  return s;
}

// Samples of two workloads whose costs differ by a factor of 1000: labels are
// relative to each workload's best, so both train one model.
std::vector<FeatureSample> MakeSamples(std::mt19937_64& rng, int n) {
  std::vector<FeatureSample> out;
  for (int i = 0; i < n; ++i) {
    Synthetic s = MakeProgram(rng);
    const bool big = i % 2 == 1;
    const double cost = (big ? 1.0 : 1e-3) / s.speed;
    out.push_back({s.rows, big ? "big" : "small", cost});
  }
  return out;
}

// Samples of one workload only.
std::vector<FeatureSample> MakeSamplesOf(std::mt19937_64& rng, int n, const std::string& key) {
  std::vector<FeatureSample> out;
  for (int i = 0; i < n; ++i) {
    Synthetic s = MakeProgram(rng);
    out.push_back({s.rows, key, 1.0 / s.speed});
  }
  return out;
}

// Fresh programs to rank, with their true speeds.
struct HeldOut {
  std::vector<FeatureRows> rows;
  std::vector<double> speed;
};

HeldOut MakeHeldOut(std::mt19937_64& rng, int n) {
  HeldOut h;
  for (int i = 0; i < n; ++i) {
    Synthetic s = MakeProgram(rng);
    h.rows.push_back(s.rows);
    h.speed.push_back(s.speed);
  }
  return h;
}

XGBModelConfig FastConfig() {
  XGBModelConfig c;
  c.num_warmup_samples = 10;
  return c;
}

TEST(XGBModel, PackSumTrainingRanksHeldOutPrograms) {
  std::mt19937_64 rng(1);
  XGBModel m(FastConfig());
  m.UpdateFeatures(MakeSamples(rng, 600));
  ASSERT_TRUE(m.trained());
  const TrainingReport& rep = m.last_training();
  EXPECT_EQ(rep.programs, 600);
  EXPECT_EQ(rep.validation_programs, 120);  // every 5th program of each workload
  EXPECT_GT(rep.rounds, 0);

  const HeldOut held = MakeHeldOut(rng, 300);
  const std::vector<FeatureRows>& test = held.rows;
  const std::vector<double>& speed = held.speed;
  const std::vector<double> pred = m.PredictFeatures(test);
  const double rho = SpearmanCorrelation(pred, speed);
  std::printf("held-out Spearman %.3f, top-30 recall %.2f, %d rounds, validation RMSE %.4f\n",
              rho, TopKRecall(pred, speed, 30), rep.rounds, rep.validation_rmse);
  EXPECT_GT(rho, 0.9);
  EXPECT_GT(TopKRecall(pred, speed, 30), 0.5);
}

TEST(XGBModel, WeightFloorAndLogLabelsStillRank) {
  for (const auto& [min_weight, log_label] : {std::pair{0.1, false}, {1.0, false}, {0.0, true}}) {
    std::mt19937_64 rng(11);
    XGBModelConfig c = FastConfig();
    c.min_weight = min_weight;
    c.log_label = log_label;
    XGBModel m(c);
    m.UpdateFeatures(MakeSamples(rng, 400));
    const HeldOut held = MakeHeldOut(rng, 200);
    const std::vector<FeatureRows>& test = held.rows;
    const std::vector<double>& speed = held.speed;
    // The synthetic speed is a sum over rows, which log labels no longer
    // model exactly: a looser bound there.
    EXPECT_GT(SpearmanCorrelation(m.PredictFeatures(test), speed), log_label ? 0.8 : 0.9)
        << "min_weight " << min_weight << " log_label " << log_label;
  }
}

TEST(XGBModel, FailuresGetZeroLabelsAndDoNotBreakTraining) {
  std::mt19937_64 rng(2);
  std::vector<FeatureSample> s = MakeSamples(rng, 200);
  for (size_t i = 0; i < s.size(); i += 7) s[i].run_secs = std::numeric_limits<double>::infinity();
  s.push_back({s[0].features, "never_ran", std::numeric_limits<double>::infinity()});
  XGBModel m(FastConfig());
  m.UpdateFeatures(s);
  ASSERT_TRUE(m.trained());
  for (double p : m.PredictFeatures({s[1].features, s[2].features})) EXPECT_TRUE(std::isfinite(p));
}

TEST(XGBModel, SameModelAtAnyThreadCount) {
  std::mt19937_64 rng(3);
  const std::vector<FeatureSample> data = MakeSamples(rng, 300);
  std::vector<FeatureRows> test;
  for (int i = 0; i < 50; ++i) test.push_back(MakeProgram(rng).rows);
  XGBModelConfig c1 = FastConfig(), c2 = FastConfig();
  c1.nthread = 1;
  c2.nthread = 2;
  XGBModel a(c1), b(c2), a2(c1);
  a.UpdateFeatures(data);
  b.UpdateFeatures(data);
  a2.UpdateFeatures(data);
  EXPECT_EQ(a.PredictFeatures(test), b.PredictFeatures(test));
  EXPECT_EQ(a.PredictFeatures(test), a2.PredictFeatures(test));
  EXPECT_EQ(a.last_training().rounds, b.last_training().rounds);
}

TEST(XGBModel, RetrainsOnlyAfterTwentyPercentGrowth) {
  std::mt19937_64 rng(4);
  XGBModelConfig c;
  EXPECT_EQ(c.num_warmup_samples, 32);  // TVM's is 100 (docs/ARCHITECTURE.md §7)
  c.num_warmup_samples = 100;
  XGBModel m(c);
  m.UpdateFeatures(MakeSamplesOf(rng, 99, "w"));
  EXPECT_FALSE(m.trained());
  EXPECT_FALSE(m.informative());  // the search does not evolve on its noise
  EXPECT_EQ(m.last_train_size(), 0);
  m.UpdateFeatures(MakeSamplesOf(rng, 1, "w"));
  ASSERT_TRUE(m.trained());
  EXPECT_TRUE(m.informative());
  EXPECT_EQ(m.last_train_size(), 100);
  m.UpdateFeatures(MakeSamplesOf(rng, 19, "w"));  // 119 < 100 * 1.2
  EXPECT_EQ(m.last_train_size(), 100);
  m.UpdateFeatures(MakeSamplesOf(rng, 1, "w"));  // 120
  EXPECT_EQ(m.last_train_size(), 120);
  m.UpdateFeatures(MakeSamplesOf(rng, 23, "w"));  // 143 < 144
  EXPECT_EQ(m.last_train_size(), 120);
  m.UpdateFeatures(MakeSamplesOf(rng, 1, "w"));
  EXPECT_EQ(m.last_train_size(), 144);
}

// A model that starts from many records of other workloads (kiln tune trains
// it on the whole database) retrains as the workload being tuned gains
// records: growth is counted per workload too, or its first hundreds of
// measurements would never reach the model.
TEST(XGBModel, RetrainsWhenOneWorkloadGrowsByTwentyPercent) {
  std::mt19937_64 rng(14);
  XGBModel m(FastConfig());
  m.UpdateFeatures(MakeSamplesOf(rng, 500, "others"));
  ASSERT_EQ(m.last_train_size(), 500);
  m.UpdateFeatures(MakeSamplesOf(rng, 4, "tuned"));  // a new workload: 4 > 0
  EXPECT_EQ(m.last_train_size(), 504);
  m.UpdateFeatures(MakeSamplesOf(rng, 4, "tuned"));  // 8 = 4 * 2
  EXPECT_EQ(m.last_train_size(), 508);
  m.UpdateFeatures(MakeSamplesOf(rng, 1, "tuned"));  // 9 < 8 * 1.2
  EXPECT_EQ(m.last_train_size(), 508);
  m.UpdateFeatures(MakeSamplesOf(rng, 1, "tuned"));  // 10 >= 9.6
  EXPECT_EQ(m.last_train_size(), 510);
  m.UpdateFeatures(MakeSamplesOf(rng, 50, "others"));  // 550 < 500 * 1.2
  EXPECT_EQ(m.last_train_size(), 510);
  m.UpdateFeatures(MakeSamplesOf(rng, 50, "others"));  // 600
  EXPECT_EQ(m.last_train_size(), 610);
}

// Past max_training_programs each workload trains with an equal share, the
// smaller ones leaving what they do not use to the larger: 30 + 85 + 85.
TEST(XGBModel, TrainsOnAnEqualShareOfEachWorkloadPastTheCap) {
  std::mt19937_64 rng(15);
  std::vector<FeatureSample> data = MakeSamplesOf(rng, 1000, "big");
  for (const char* key : {"mid", "small"}) {
    std::vector<FeatureSample> more = MakeSamplesOf(rng, key == std::string("mid") ? 150 : 30, key);
    data.insert(data.end(), more.begin(), more.end());
  }
  XGBModelConfig c = FastConfig();
  c.max_training_programs = 200;
  XGBModel capped(c);
  capped.UpdateFeatures(data);
  ASSERT_TRUE(capped.trained());
  EXPECT_EQ(capped.last_training().programs, 200);
  EXPECT_EQ(capped.last_training().validation_programs, 6 + 17 + 17);  // every 5th of each
  EXPECT_EQ(capped.data_size(), 1180);  // all are kept, for the next training

  const HeldOut held = MakeHeldOut(rng, 300);
  EXPECT_GT(SpearmanCorrelation(capped.PredictFeatures(held.rows), held.speed), 0.8);

  c.max_training_programs = 0;
  XGBModel all(c);
  all.UpdateFeatures(data);
  EXPECT_EQ(all.last_training().programs, 1180);
}

TEST(XGBModel, UntrainedPredictionsAreDeterministicHashes) {
  std::mt19937_64 rng(5);
  XGBModel m;
  const FeatureRows a = MakeProgram(rng).rows, b = MakeProgram(rng).rows;
  const std::vector<double> ab = m.PredictFeatures({a, b}), ba = m.PredictFeatures({b, a});
  EXPECT_EQ(ab[0], ba[1]);
  EXPECT_EQ(ab[1], ba[0]);
  EXPECT_NE(ab[0], ab[1]);
}

// A file name in the test's temporary folder, removed when the test binary
// exits.
std::string TempPath(const std::string& name) {
  struct RemovedAtExit {
    std::vector<std::string> paths;
    ~RemovedAtExit() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  };
  static RemovedAtExit files;
  files.paths.push_back(::testing::TempDir() + "/xgb_model_test_" + name);
  return files.paths.back();
}

// fixed_rounds boosts exactly that many rounds on every program, holding
// none out, and still ranks; the same data left to the held-out split
// stops elsewhere.
TEST(XGBModel, FixedRoundsTrainOnEveryProgram) {
  std::mt19937_64 rng(11);
  const std::vector<FeatureSample> data = MakeSamples(rng, 300);
  XGBModelConfig c = FastConfig();
  c.fixed_rounds = 7;
  XGBModel fixed(c);
  fixed.UpdateFeatures(data);
  ASSERT_TRUE(fixed.trained());
  EXPECT_EQ(fixed.last_training().rounds, 7);
  EXPECT_EQ(fixed.last_training().validation_programs, 0);
  EXPECT_EQ(fixed.last_training().programs, 300);
  XGBModel chosen(FastConfig());
  chosen.UpdateFeatures(data);
  EXPECT_EQ(chosen.last_training().validation_programs, 60);
  EXPECT_NE(chosen.last_training().rounds, 7);
  const HeldOut held = MakeHeldOut(rng, 200);
  EXPECT_GT(SpearmanCorrelation(fixed.PredictFeatures(held.rows), held.speed), 0.8);
}

// The header records the target the model was trained for, when set (kiln
// model train sets it; search/prior_model.h chooses by it).
TEST(XGBModel, SaveLoadKeepsTheTrainedTarget) {
  std::mt19937_64 rng(12);
  XGBModel m(FastConfig());
  m.UpdateFeatures(MakeSamples(rng, 100));
  const std::string path = TempPath("target.model");
  m.Save(path);
  EXPECT_EQ(XGBModel::Load(path).trained_target(), "");
  m.set_trained_target("llvm -mcpu=znver4 -num-cores=2");
  m.Save(path);
  EXPECT_EQ(XGBModel::Load(path).trained_target(), "llvm -mcpu=znver4 -num-cores=2");
}

TEST(XGBModel, SaveLoadGivesIdenticalPredictions) {
  std::mt19937_64 rng(6);
  XGBModel m(FastConfig());
  m.UpdateFeatures(MakeSamples(rng, 200));
  ASSERT_TRUE(m.trained());
  std::vector<FeatureRows> test;
  for (int i = 0; i < 40; ++i) test.push_back(MakeProgram(rng).rows);
  const std::string path = TempPath("roundtrip.model");
  m.Save(path);
  XGBModel loaded = XGBModel::Load(path, FastConfig());
  ASSERT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.last_train_size(), 200);
  EXPECT_EQ(loaded.PredictFeatures(test), m.PredictFeatures(test));
  EXPECT_EQ(loaded.trained_workloads(), (std::vector<std::string>{"big", "small"}));
  // A loaded model retrains only once the data it is given outgrows the
  // training size it recorded by 20%.
  loaded.UpdateFeatures(MakeSamples(rng, 200));
  EXPECT_EQ(loaded.last_train_size(), 200);
  EXPECT_EQ(loaded.PredictFeatures(test), m.PredictFeatures(test));
  loaded.UpdateFeatures(MakeSamples(rng, 40));
  EXPECT_EQ(loaded.last_train_size(), 240);

  // An untrained model saves and loads too.
  const std::string empty = TempPath("empty.model");
  XGBModel().Save(empty);
  EXPECT_FALSE(XGBModel::Load(empty).trained());
}

// The pairwise objective learns the order within each workload: it ranks
// held-out programs, its predictions are positive (the search samples in
// proportion to them), and a saved model keeps its objective.
TEST(XGBModel, RankObjectiveRanksAndRoundTrips) {
  std::mt19937_64 rng(3);
  XGBModelConfig c = FastConfig();
  c.objective = "rank";
  c.rank_partners = 16;  // groups of 240 programs: sampled pairs
  XGBModel m(c);
  m.UpdateFeatures(MakeSamples(rng, 600));
  ASSERT_TRUE(m.trained());
  EXPECT_GT(m.last_training().rounds, 0);
  EXPECT_LT(m.last_training().validation_rmse, 0.2) << "1 - Spearman on the held-out split";
  const HeldOut held = MakeHeldOut(rng, 300);
  const std::vector<FeatureRows>& test = held.rows;
  const std::vector<double>& speed = held.speed;
  const std::vector<double> pred = m.PredictFeatures(test);
  EXPECT_GT(SpearmanCorrelation(pred, speed), 0.9);
  for (double p : pred) EXPECT_TRUE(p > 0 && p < 1) << p;
  const std::string path = TempPath("rank.model");
  m.Save(path);
  XGBModel loaded = XGBModel::Load(path);  // the default config says "reg"; the file says "rank"
  EXPECT_EQ(loaded.config().objective, "rank");
  EXPECT_EQ(loaded.PredictFeatures(test), pred);
  XGBModelConfig bad;
  bad.objective = "listwise";
  EXPECT_THROW(XGBModel{bad}, std::invalid_argument);
}

// A model that starts from a prior predicts with it until it trains, then
// learns what the prior misses: workload "b" is faster where feature 4 is
// large, which the prior (trained on "a", where feature 4 is noise) ignores.
// One-row programs, so that the row count does not decide the order.
struct PriorCase {
  std::vector<FeatureSample> a, b;
  std::vector<FeatureRows> test;
  std::vector<double> speed;  // of the test programs on "b"
};

PriorCase MakePriorCase(uint64_t seed, int n_b) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  auto program = [&] {
    FeatureRows f;
    f.rows = 1;
    f.values.assign(kNumFeatures, 0.0f);
    for (int k = 0; k < 6; ++k) f.values[static_cast<size_t>(k)] = u(rng);
    return f;
  };
  auto speed_b = [](const FeatureRows& f) { return RowSpeed(f.values.data()) + 3.0 * f.values[4]; };
  PriorCase c;
  for (int i = 0; i < 400; ++i) {
    FeatureRows f = program();
    const double cost = 1.0 / RowSpeed(f.values.data());
    c.a.push_back({std::move(f), "a", cost});
  }
  for (int i = 0; i < n_b; ++i) {
    FeatureRows f = program();
    const double cost = 1.0 / speed_b(f);
    c.b.push_back({std::move(f), "b", cost});
  }
  for (int i = 0; i < 300; ++i) {
    c.test.push_back(program());
    c.speed.push_back(speed_b(c.test.back()));
  }
  return c;
}

// With 30 programs of "b" (seeds 11-15 alike): the prior alone ranks held-out
// programs at Spearman 0.73-0.80, the prior and the 30 at 0.96-0.98, the 30
// alone at 0.66-0.82.
TEST(XGBModel, StartsFromAPriorAndLearnsWhatItMisses) {
  const PriorCase c = MakePriorCase(11, 30);
  auto prior = std::make_shared<XGBModel>(FastConfig());
  prior->UpdateFeatures(c.a);
  ASSERT_TRUE(prior->trained());

  XGBModel m(FastConfig());
  EXPECT_FALSE(m.informative());
  m.SetPrior(prior);
  EXPECT_TRUE(m.informative());
  EXPECT_FALSE(m.trained());
  EXPECT_EQ(m.PredictFeatures(c.test), prior->PredictFeatures(c.test));
  const double rho_prior = SpearmanCorrelation(m.PredictFeatures(c.test), c.speed);
  m.UpdateFeatures(c.b);
  ASSERT_TRUE(m.trained());
  const double rho_with = SpearmanCorrelation(m.PredictFeatures(c.test), c.speed);
  XGBModel scratch(FastConfig());
  scratch.UpdateFeatures(c.b);
  const double rho_scratch = SpearmanCorrelation(scratch.PredictFeatures(c.test), c.speed);
  std::printf(
      "held-out Spearman on b: prior alone %.3f, prior + 30 of b %.3f, 30 of b alone %.3f\n",
      rho_prior, rho_with, rho_scratch);
  EXPECT_GT(rho_with, rho_prior + 0.1);
  EXPECT_GT(rho_with, rho_scratch + 0.1);
  EXPECT_EQ(m.trained_workloads(), std::vector<std::string>{"b"});
  EXPECT_EQ(prior->trained_workloads(), std::vector<std::string>{"a"});

  // The same at any thread count.
  XGBModelConfig two = FastConfig();
  two.nthread = 2;
  XGBModel m2(two);
  m2.SetPrior(prior);
  m2.UpdateFeatures(c.b);
  EXPECT_EQ(m2.PredictFeatures(c.test), m.PredictFeatures(c.test));
  // A prior set after training retrains at once, to the same model.
  XGBModel late(FastConfig());
  late.UpdateFeatures(c.b);
  late.SetPrior(prior);
  EXPECT_EQ(late.PredictFeatures(c.test), m.PredictFeatures(c.test));

  // Its trees alone predict corrections: it is not saved without the prior.
  EXPECT_THROW(m.Save(TempPath("with_prior.model")), CostModelError);
  EXPECT_THROW(m.SetPrior(std::make_shared<XGBModel>(FastConfig())), std::invalid_argument);
  XGBModelConfig rank = FastConfig();
  rank.objective = "rank";
  EXPECT_THROW(XGBModel(rank).SetPrior(prior), std::invalid_argument);
  EXPECT_THROW(prior->SetPrior(prior), std::invalid_argument);
}

// Once a held-out split exists, a prior stays only while it lowers the
// held-out error: one trained on "a" with the order reversed (the fast
// programs measured slow) is set aside for what 100 programs of "b" teach
// alone, and the prior that ranks "b" well is kept.
TEST(XGBModel, APriorThatMisleadsIsSetAside) {
  const PriorCase c = MakePriorCase(12, 100);
  std::vector<FeatureSample> reversed = c.a;
  for (FeatureSample& s : reversed) s.run_secs = 1.0 / s.run_secs;
  auto misleading = std::make_shared<XGBModel>(FastConfig());
  misleading->UpdateFeatures(reversed);
  auto helpful = std::make_shared<XGBModel>(FastConfig());
  helpful->UpdateFeatures(c.a);

  XGBModel scratch(FastConfig());
  scratch.UpdateFeatures(c.b);
  ASSERT_TRUE(scratch.trained());

  XGBModel m(FastConfig());
  m.SetPrior(misleading);
  EXPECT_TRUE(m.prior_only());
  EXPECT_TRUE(m.uses_prior());
  EXPECT_LT(SpearmanCorrelation(m.PredictFeatures(c.test), c.speed), -0.3);
  m.UpdateFeatures(c.b);
  ASSERT_TRUE(m.trained());
  EXPECT_FALSE(m.prior_only());
  const TrainingReport& r = m.last_training();
  EXPECT_EQ(r.validation_programs, 20);
  EXPECT_FALSE(r.prior_used);
  EXPECT_FALSE(m.uses_prior());
  EXPECT_LT(r.validation_rmse_without_prior, r.validation_rmse_with_prior);
  EXPECT_EQ(r.validation_rmse, r.validation_rmse_without_prior);
  // What is left is the model of b alone, exactly.
  EXPECT_EQ(m.PredictFeatures(c.test), scratch.PredictFeatures(c.test));

  XGBModel kept(FastConfig());
  kept.SetPrior(helpful);
  kept.UpdateFeatures(c.b);
  const TrainingReport& k = kept.last_training();
  EXPECT_TRUE(k.prior_used);
  EXPECT_TRUE(kept.uses_prior());
  EXPECT_LT(k.validation_rmse_with_prior, k.validation_rmse_without_prior);
  EXPECT_GT(SpearmanCorrelation(kept.PredictFeatures(c.test), c.speed),
            SpearmanCorrelation(scratch.PredictFeatures(c.test), c.speed));

  // Without the check, the misleading prior stays.
  XGBModelConfig unchecked = FastConfig();
  unchecked.check_prior = false;
  XGBModel stuck(unchecked);
  stuck.SetPrior(misleading);
  stuck.UpdateFeatures(c.b);
  EXPECT_TRUE(stuck.last_training().prior_used);
  EXPECT_EQ(stuck.last_training().validation_rmse_without_prior, -1);
}

// The models shipped in configs/models/ load, list what they were trained
// on, and hold out the workloads of bench/search_bench (which checks the
// same).
TEST(XGBModel, ShippedPriorsLoadAndHoldOutTheBenchWorkloads) {
  // name, workloads, the CPU named in the header's target
  const std::tuple<std::string, size_t, std::string> shipped[] = {
      {"avx512", 30u, "-mcpu=rocketlake"}, {"avx2", 30u, "-mcpu=znver1"}};
  for (const auto& [name, count, cpu] : shipped) {
    SCOPED_TRACE(name);
    const XGBModel m =
        XGBModel::Load(std::string(KILN_SOURCE_DIR) + "/configs/models/" + name + ".model");
    ASSERT_TRUE(m.trained());
    const std::vector<std::string> seen = m.trained_workloads();
    EXPECT_EQ(seen.size(), count);
    // It names the CPU it was trained on, so that `kiln tune --prior-model
    // auto` offers it only to targets of the same vector units.
    EXPECT_NE(m.trained_target().find(cpu), std::string::npos) << m.trained_target();
    // Keys are the workloads' structural hashes: ResNet-50's 3x3 layer at
    // 56x56 is in, the benches' workloads are out.
    const std::string r50_3x3 =
        ir::StructuralHashHex(ir::MakeWorkloadWithParams("C2D", {1, 56, 56, 64, 64, 3, 1, 1}));
    EXPECT_EQ(std::count(seen.begin(), seen.end(), r50_3x3), 1);
    for (const auto& [family, config] : {std::pair{"GMM", 3}, {"C2D", 0}, {"SFM", 0}}) {
      const std::string key = ir::StructuralHashHex(ir::MakeWorkload(family, config));
      EXPECT_EQ(std::count(seen.begin(), seen.end(), key), 0) << family << ":" << config;
    }
    // It ranks: a matmul whose rows run in parallel and whose columns are
    // vectorized under the reduction (the shape of every schedule the search
    // measures) above the same matmul as written.
    std::vector<FeatureRows> rows;
    for (bool scheduled : {false, true}) {
      ir::Schedule sch(ir::Matmul(256, 256, 256));
      std::vector<ir::LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
      if (scheduled) {
        std::vector<ir::LoopRV> j = sch.Split(loops[1], {int64_t{32}, int64_t{8}});
        sch.Reorder({loops[0], j[0], loops[2], j[1]});
        sch.Parallel(loops[0]);
        sch.Vectorize(j[1]);
      }
      rows.push_back(ExtractFeatures(sch.func()));
    }
    const std::vector<double> p = m.PredictFeatures(rows);
    EXPECT_LT(p[0], p[1]);
  }
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& s) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << s;
}

void ExpectLoadError(const std::string& path, const std::string& needle) {
  try {
    XGBModel::Load(path);
    ADD_FAILURE() << "loading " << path << " should fail with '" << needle << "'";
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(XGBModel, BadFilesAreClearErrors) {
  std::mt19937_64 rng(7);
  XGBModel m(FastConfig());
  m.UpdateFeatures(MakeSamples(rng, 100));
  const std::string good = TempPath("good.model");
  m.Save(good);
  const std::string content = ReadAll(good);
  const size_t nl = content.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string bad = TempPath("bad.model");

  ExpectLoadError(TempPath("missing.model"), "cannot open");

  std::string flipped = content;
  flipped[nl + 1 + (content.size() - nl - 1) / 2] ^= 0x55;
  WriteAll(bad, flipped);
  ExpectLoadError(bad, "checksum");

  WriteAll(bad, content.substr(0, content.size() - 10));
  ExpectLoadError(bad, "truncated");

  std::string v2 = content;
  const size_t at = v2.find("\"version\":1");
  ASSERT_NE(at, std::string::npos) << content.substr(0, nl);
  v2.replace(at, 11, "\"version\":2");
  WriteAll(bad, v2);
  ExpectLoadError(bad, "format version 2");

  std::string nf = content;
  const size_t f = nf.find("\"num_features\":164");
  ASSERT_NE(f, std::string::npos);
  nf.replace(f, 18, "\"num_features\":172");
  WriteAll(bad, nf);
  ExpectLoadError(bad, "172 features");

  WriteAll(bad, "not a model\n");
  ExpectLoadError(bad, "not JSON");
  WriteAll(bad, "{\"format\": \"something-else\"}\n");
  ExpectLoadError(bad, "format");
  WriteAll(bad, "");
  ExpectLoadError(bad, "no header");
}

TEST(XGBModel, UpdateAndPredictScheduledPrograms) {
  // Through the CostModel interface: features are extracted from programs.
  // Matmuls whose inner loop is vectorized are "measured" faster.
  std::vector<Sample> samples;
  std::vector<ir::PrimFunc> test;
  for (int n : {16, 32, 48, 64, 80, 96}) {
    for (bool vec : {false, true}) {
      ir::Schedule sch(ir::Matmul(n, 32, 16));
      std::vector<ir::LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
      if (vec) sch.Vectorize(loops[1]);
      samples.push_back({sch.func(), "mm" + std::to_string(n), vec ? 1e-4 : 4e-4});
      if (n == 64) test.push_back(sch.func());
    }
  }
  XGBModelConfig c;
  c.num_warmup_samples = 4;
  c.nthread = 2;
  XGBModel m(c);
  CostModel& model = m;
  model.Update(samples);
  ASSERT_TRUE(m.trained());
  EXPECT_EQ(m.data_size(), 12);
  const std::vector<double> p = model.Predict(test);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_LT(p[0], p[1]) << "the vectorized matmul should score higher";
}

TEST(Metrics, SpearmanAndTopK) {
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(SpearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(SpearmanCorrelation({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9487, 1e-4);  // a tie
  EXPECT_EQ(SpearmanCorrelation({1, 1, 1}, {1, 2, 3}), 0.0);
  EXPECT_DOUBLE_EQ(TopKRecall({0.9, 0.1, 0.8, 0.2}, {5, 1, 4, 0}, 2), 1.0);
  EXPECT_DOUBLE_EQ(TopKRecall({0.1, 0.9, 0.8, 0.2}, {5, 1, 4, 0}, 2), 0.5);
  EXPECT_THROW(SpearmanCorrelation({1}, {1, 2}), std::invalid_argument);
  EXPECT_DOUBLE_EQ(TopKBestRatio({0.9, 0.1, 0.8, 0.2}, {5, 1, 4, 0}, 1), 1.0);
  EXPECT_DOUBLE_EQ(TopKBestRatio({0.1, 0.9, 0.8, 0.2}, {5, 1, 4, 0}, 2), 0.8);
  EXPECT_DOUBLE_EQ(TopKBestRatio({0.1, 0.9, 0.8, 0.2}, {5, 1, 4, 0}, 9), 1.0);  // k clamped
  EXPECT_EQ(TopKBestRatio({0.1, 0.9}, {0, 0}, 1), 0.0);  // every program failed
  EXPECT_THROW(TopKBestRatio({1}, {1, 2}, 1), std::invalid_argument);
}

}  // namespace
}  // namespace kiln::cost_model
