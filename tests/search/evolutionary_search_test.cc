// EvolutionarySearch (docs/ARCHITECTURE.md §7) through the tuning loop, with a runner
// that builds nothing: a candidate's "time" is a function of its program's
// structural hash, so whole runs repeat exactly. The same seed gives the
// same candidates at 1 and 2 threads; a resumed run feeds the model the
// stored records before it predicts anything, and never proposes a schedule
// the database holds.
#include "search/evolutionary_search.h"

#include <gtest/gtest.h>

#include <set>
#include <unordered_set>

#include "cost_model/random_model.h"
#include "database/database.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "search/tune.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

constexpr const char* kFingerprint = "evolutionary-search-test";

using testing::HashRunner;

// A random model that logs what it was asked, in order.
class RecordingModel : public cost_model::CostModel {
 public:
  void Update(const std::vector<cost_model::Sample>& samples) override {
    events.push_back("update " + std::to_string(samples.size()));
    updated.insert(updated.end(), samples.begin(), samples.end());
    inner.Update(samples);
  }
  std::vector<double> Predict(const std::vector<ir::PrimFunc>& programs) override {
    events.push_back("predict");
    return inner.Predict(programs);
  }
  std::string Name() const override { return "recording"; }
  cost_model::RandomModel inner{3};
  std::vector<std::string> events;
  std::vector<cost_model::Sample> updated;
};

struct EvoSetup {
  TuneContext ctx;
  MeasureTask task;
};

EvoSetup Make(int threads, const ir::PrimFunc& f = ir::BatchMatmulNKKM(1, 16, 16, 16)) {
  EvoSetup s{testing::Context(f, "llvm -num-cores=4", 1, threads), {}};
  s.task.workload = s.ctx.workload;
  s.task.target = s.ctx.target;
  return s;
}

TuneOptions Options(int64_t trials, int per_iter, cost_model::CostModel* model, uint64_t seed = 5) {
  TuneOptions o;
  o.trials = trials;
  o.trials_per_iter = per_iter;
  o.seed = seed;
  o.fingerprint = kFingerprint;
  o.strategy = StrategyKind::kEvolutionary;
  o.cost_model = model;
  return o;
}

std::vector<database::TuningRecord> Records(const database::Database& db, const MeasureTask& t) {
  std::vector<database::TuningRecord> out;
  const database::WorkloadId wid = *db.FindWorkload(t.workload);
  db.ForEachRecord([&](database::WorkloadId w, const database::TuningRecord& r) {
    if (w == wid && r.target == t.target.ToString()) out.push_back(r);
  });
  return out;
}

uint64_t ProgramKey(const ir::PrimFunc& workload, const std::string& trace_json) {
  ir::Schedule sch(workload);
  ir::Trace::FromJSONString(trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
  return ir::StructuralHash(sch.func());
}

TEST(EvolutionarySearch, DefaultsAreTVMsButExploration) {
  EvolutionarySearchConfig c;
  EXPECT_EQ(c.population_size, 512);
  EXPECT_DOUBLE_EQ(c.init_measured_ratio, 0.2);
  EXPECT_EQ(c.init_min_unmeasured, 50);
  EXPECT_EQ(c.genetic_num_iters, 4);
  EXPECT_DOUBLE_EQ(c.genetic_mutate_prob, 0.85);
  EXPECT_EQ(c.genetic_max_fail_count, 10);
  // Not TVM's 0.05 (docs/ARCHITECTURE.md §7 has the measurements), and half
  // of those slots measure structural neighbours of the best (Kiln's own).
  EXPECT_DOUBLE_EQ(c.eps_greedy, 0.2);
  EXPECT_DOUBLE_EQ(c.prior_eps_greedy, 0.5);
  EXPECT_DOUBLE_EQ(c.neighbor_share, 0.5);
  EXPECT_EQ(c.neighbor_incumbents, 4);
  std::vector<WeightedMutator> m = DefaultLLVMMutators();
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].mutator->Name(), "MutateTileSize");
  EXPECT_DOUBLE_EQ(m[0].probability, 0.9);
  EXPECT_EQ(m[1].mutator->Name(), "MutateComputeLocation");
  EXPECT_DOUBLE_EQ(m[1].probability, 0.05);
  EXPECT_EQ(m[2].mutator->Name(), "MutateUnroll");
  EXPECT_DOUBLE_EQ(m[2].probability, 0.03);
  EXPECT_EQ(m[3].mutator->Name(), "MutateParallel");
  EXPECT_DOUBLE_EQ(m[3].probability, 0.02);
}

TEST(EvolutionarySearch, NeedsACostModel) {
  EvoSetup s = Make(1);
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  EXPECT_THROW(Tune(s.ctx, runner, db, s.task, Options(8, 4, nullptr)), std::invalid_argument);
  EXPECT_EQ(runner.measured, 0);
  EvolutionarySearchConfig bad;
  bad.eps_greedy = 2;
  EXPECT_THROW(EvolutionarySearch(s.ctx, bad), std::invalid_argument);
}

TEST(EvolutionarySearch, SameSeedSameCandidatesAtOneAndTwoThreads) {
  std::vector<std::string> seqs[2];
  for (int threads : {1, 2}) {
    EvoSetup s = Make(threads);
    database::Database db = database::Database::InMemory();
    HashRunner runner;
    cost_model::RandomModel model(1);
    TuneSummary sum = Tune(s.ctx, runner, db, s.task, Options(24, 8, &model));  // three batches
    EXPECT_EQ(sum.measured_this_run, 24) << sum.stop_reason;
    for (const database::TuningRecord& r : Records(db, s.task)) {
      seqs[threads - 1].push_back(r.trace_hash);
    }
  }
  ASSERT_EQ(seqs[0].size(), 24u);
  EXPECT_EQ(seqs[0], seqs[1]);
}

// With trials_per_iter_start, a batch holds half the records so far, from
// the start size up to trials_per_iter: the model learns in small steps
// while it is young.
TEST(EvolutionarySearch, BatchesGrowFromTheStartSizeWithTheRecords) {
  EvoSetup s = Make(2);
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  cost_model::RandomModel model(1);
  TuneOptions o = Options(64, 32, &model);
  o.trials_per_iter_start = 8;
  o.final_remeasure_top = 0;  // which reports progress once more
  std::vector<int64_t> done;
  o.on_progress = [&](const TuneProgress& p) { done.push_back(p.trials_done); };
  TuneSummary sum = Tune(s.ctx, runner, db, s.task, o);
  EXPECT_EQ(sum.measured_this_run, 64) << sum.stop_reason;
  // 8, 8, 8, then 24/2, 36/2, 54/2 capped by the 10 trials left.
  EXPECT_EQ(done, (std::vector<int64_t>{0, 8, 16, 24, 36, 54, 64}));

  EXPECT_EQ(BatchSize(o, 0), 8);
  EXPECT_EQ(BatchSize(o, 1000), 32);
  o.trials_per_iter_start = 0;  // off
  EXPECT_EQ(BatchSize(o, 0), 32);
  o.trials_per_iter_start = 40;  // not below trials_per_iter: off
  EXPECT_EQ(BatchSize(o, 0), 32);
  o.trials_per_iter_start = -1;
  EXPECT_THROW(Tune(s.ctx, runner, db, s.task, o), std::invalid_argument);
}

TEST(EvolutionarySearch, ResumedRunLearnsFromTheDatabaseFirstAndNeverRepeats) {
  EvoSetup s = Make(2);
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  {
    cost_model::RandomModel model(1);
    TuneSummary first = Tune(s.ctx, runner, db, s.task, Options(16, 8, &model));
    ASSERT_EQ(first.measured_this_run, 16) << first.stop_reason;
  }
  std::set<uint64_t> before;
  for (const database::TuningRecord& r : Records(db, s.task)) {
    before.insert(ProgramKey(s.task.workload, r.trace_json));
  }
  ASSERT_EQ(before.size(), 16u);

  RecordingModel model;
  TuneSummary second = Tune(s.ctx, runner, db, s.task, Options(32, 8, &model));
  EXPECT_EQ(second.measured_this_run, 16) << second.stop_reason;
  // The stored records reach the model before it ranks anything.
  ASSERT_GE(model.events.size(), 2u);
  EXPECT_EQ(model.events[0], "update 16");
  EXPECT_EQ(model.events[1], "predict");
  std::set<uint64_t> stored;
  for (size_t i = 0; i < 16; ++i) stored.insert(ir::StructuralHash(model.updated[i].scheduled));
  EXPECT_EQ(stored, before);
  for (size_t i = 0; i < 16; ++i) EXPECT_TRUE(std::isfinite(model.updated[i].run_secs));
  // ... and every measured batch after that.
  EXPECT_EQ(std::count(model.events.begin(), model.events.end(), "update 8"), 2);

  std::vector<database::TuningRecord> all = Records(db, s.task);
  ASSERT_EQ(all.size(), 32u);
  std::set<uint64_t> keys;
  for (const database::TuningRecord& r : all) {
    EXPECT_TRUE(keys.insert(ProgramKey(s.task.workload, r.trace_json)).second)
        << "a program was measured twice";
  }
}

// A database that holds the 8 records of a short evolutionary run.
struct EightRecords {
  EightRecords() {
    HashRunner runner;
    Tune(s.ctx, runner, db, s.task, Options(8, 8, &model));
  }
  EvoSetup s = Make(2);
  database::Database db = database::Database::InMemory();
  cost_model::RandomModel model{2};
};

TEST(EvolutionarySearch, RoundsNeverReturnAKeyTwiceAndUseTheDatabaseBest) {
  EightRecords e;
  EvoSetup& s = e.s;
  database::Database& db = e.db;
  cost_model::RandomModel& model = e.model;
  MeasuredSet measured = MeasuredSet::Load(db, *db.FindWorkload(s.task.workload),
                                           s.task.target.ToString(), s.task.workload);
  EvolutionarySearchConfig config;
  config.population_size = 64;
  config.init_min_unmeasured = 16;
  EvolutionarySearch es(s.ctx, config);
  es.PreTuning({&db, *db.FindWorkload(s.task.workload), s.task.target.ToString(), &model, &measured});
  std::unordered_set<uint64_t> seen;
  for (int round = 0; round < 3; ++round) {
    std::vector<Candidate> got = es.GenerateCandidates(8);
    EXPECT_EQ(got.size(), 8u);
    EXPECT_EQ(es.last_round().from_database, 8);  // the 8 stored records seed the population
    EXPECT_GT(es.last_round().mutations_ok, 0);
    for (const Candidate& c : got) {
      EXPECT_FALSE(measured.HasKey(c.key)) << "a measured program came back";
      EXPECT_TRUE(seen.insert(c.key).second) << "a program came back twice";
      EXPECT_EQ(ProgramKey(s.task.workload, c.trace_json), c.key);
    }
  }
}

// Exploration slots measure structural neighbours of the best measured
// schedules (search/structural_neighbors.h): the best record's trace with one
// compute location or categorical draw changed, its tiles kept.
TEST(EvolutionarySearch, ExplorationMeasuresNeighboursOfTheBestMeasured) {
  EightRecords e;
  EvoSetup& s = e.s;
  database::Database& db = e.db;
  const database::WorkloadId wid = *db.FindWorkload(s.task.workload);
  const std::string target = s.task.target.ToString();
  std::vector<ir::Trace> incumbents;
  for (const database::TuningRecord& r : db.TopK(wid, target, 4)) {
    incumbents.push_back(ir::Trace::FromJSONString(r.trace_json));
  }
  ASSERT_EQ(incumbents.size(), 4u);
  // Which incumbent `t` is one structural decision away from (-1: none).
  auto neighbour_of = [&](const ir::Trace& t) {
    for (size_t k = 0; k < incumbents.size(); ++k) {
      const std::vector<size_t> diff = testing::ChangedDecisions(incumbents[k], t);
      if (diff.size() == 1 && (t.insts()[diff[0]].kind == "SampleComputeLocation" ||
                               t.insts()[diff[0]].kind == "SampleCategorical")) {
        return static_cast<int>(k);
      }
    }
    return -1;
  };

  for (double share : {1.0, 0.0}) {
    SCOPED_TRACE("neighbor_share " + std::to_string(share));
    MeasuredSet measured = MeasuredSet::Load(db, wid, target, s.task.workload);
    EvolutionarySearchConfig config;
    config.population_size = 64;
    config.init_min_unmeasured = 16;
    config.eps_greedy = 1;  // every slot explores
    config.neighbor_share = share;
    EvolutionarySearch es(s.ctx, config);
    es.PreTuning({&db, wid, target, &e.model, &measured});
    std::vector<Candidate> got = es.GenerateCandidates(4);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(es.last_round().picked_best, 0);
    if (share == 0) {
      EXPECT_EQ(es.last_round().picked_neighbor, 0);
      EXPECT_EQ(es.last_round().picked_random, 4);
      continue;
    }
    EXPECT_EQ(es.last_round().picked_neighbor, 4);
    // The best record lends its neighbours first.
    EXPECT_EQ(neighbour_of(got[0].trace), 0);
    for (const Candidate& c : got) {
      EXPECT_GE(neighbour_of(c.trace), 0) << c.trace.AsPython();
      EXPECT_FALSE(measured.HasKey(c.key));
      EXPECT_EQ(ProgramKey(s.task.workload, c.trace_json), c.key);
    }
  }
  EvolutionarySearchConfig bad;
  bad.neighbor_share = 1.5;
  EXPECT_THROW(EvolutionarySearch(s.ctx, bad), std::invalid_argument);
}

// A random model that says whether it has learned anything yet.
class UntrainedUntilToldModel : public cost_model::CostModel {
 public:
  void Update(const std::vector<cost_model::Sample>& samples) override { inner.Update(samples); }
  std::vector<double> Predict(const std::vector<ir::PrimFunc>& programs) override {
    ++predictions;
    return inner.Predict(programs);
  }
  std::string Name() const override { return "untrained-until-told"; }
  bool informative() const override { return learned; }
  bool prior_only() const override { return learned && only_prior; }
  cost_model::RandomModel inner{4};
  bool learned = false;
  bool only_prior = false;  // with learned: what it knows is a prior
  int predictions = 0;
};

// An evolutionary search over an empty database with that model, at a
// small population.
struct UntrainedSearch {
  UntrainedSearch(int population, int min_unmeasured, double eps_greedy = 0.2,
                  double prior_eps_greedy = 0.5)
      : es(s.ctx, [&] {
          EvolutionarySearchConfig c;
          c.population_size = population;
          c.init_min_unmeasured = min_unmeasured;
          c.eps_greedy = eps_greedy;
          c.prior_eps_greedy = prior_eps_greedy;
          return c;
        }()) {
    es.PreTuning({&db, db.CommitWorkload(s.task.workload), s.task.target.ToString(), &model,
                  &measured});
  }
  EvoSetup s = Make(2);
  database::Database db = database::Database::InMemory();
  MeasuredSet measured;
  UntrainedUntilToldModel model;
  EvolutionarySearch es;
};

// Until the model has learned (an XGBoost model before its warm-up), its
// scores are noise: the round picks fresh random samples, evolves nothing and
// asks the model nothing; once it has, the round evolves as usual.
TEST(EvolutionarySearch, AModelThatHasNotLearnedGetsRandomPicksNotEvolution) {
  UntrainedSearch u(64, 16);
  EvolutionarySearch& es = u.es;
  UntrainedUntilToldModel& model = u.model;
  std::unordered_set<uint64_t> seen;
  std::vector<Candidate> got = es.GenerateCandidates(8);
  EXPECT_EQ(got.size(), 8u);
  EXPECT_FALSE(es.last_round().model_informative);
  EXPECT_EQ(es.last_round().picked_random, 8);
  EXPECT_EQ(es.last_round().picked_best, 0);
  EXPECT_EQ(es.last_round().mutations_tried, 0);
  EXPECT_EQ(model.predictions, 0);
  for (const Candidate& c : got) EXPECT_TRUE(seen.insert(c.key).second);

  model.learned = true;
  got = es.GenerateCandidates(8);
  EXPECT_EQ(got.size(), 8u);
  EXPECT_TRUE(es.last_round().model_informative);
  EXPECT_GT(es.last_round().mutations_tried, 0);
  EXPECT_GT(es.last_round().picked_best, 0);
  EXPECT_GT(model.predictions, 0);
  for (const Candidate& c : got) EXPECT_TRUE(seen.insert(c.key).second) << "a program came back";
}

// Each slot of a batch is random with probability ε, so that a batch smaller
// than 1/ε still explores (TVM takes floor(k ε) random slots: none here).
TEST(EvolutionarySearch, SmallBatchesStillGetRandomPicks) {
  for (double eps : {0.0, 0.1, 1.0}) {
    UntrainedSearch u(64, 16, eps);
    u.model.learned = true;
    int random = 0, best = 0;
    for (int round = 0; round < 12; ++round) {
      ASSERT_EQ(u.es.GenerateCandidates(4).size(), 4u);
      ASSERT_TRUE(u.es.last_round().model_informative);
      random += u.es.last_round().picked_random;
      best += u.es.last_round().picked_best;
    }
    SCOPED_TRACE("eps " + std::to_string(eps));
    EXPECT_EQ(random + best, 48);
    if (eps == 0.0) {
      EXPECT_EQ(random, 0);
    }
    if (eps == 1.0) {
      EXPECT_EQ(best, 0);
    }
    if (eps == 0.1) {
      EXPECT_GT(random, 0);
      EXPECT_GT(best, random);
    }
  }
}

// A model that knows only a prior explores with prior_eps_greedy, and with
// eps_greedy once it has trained on the run's records.
TEST(EvolutionarySearch, AModelThatKnowsOnlyItsPriorExploresMore) {
  UntrainedSearch u(64, 16, /*eps_greedy=*/0.0, /*prior_eps_greedy=*/1.0);
  u.model.learned = true;
  u.model.only_prior = true;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(u.es.GenerateCandidates(4).size(), 4u);
    EXPECT_TRUE(u.es.last_round().model_prior_only);
    EXPECT_EQ(u.es.last_round().picked_best, 0);
  }
  u.model.only_prior = false;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(u.es.GenerateCandidates(4).size(), 4u);
    EXPECT_FALSE(u.es.last_round().model_prior_only);
    EXPECT_EQ(u.es.last_round().picked_best, 4);
  }
  EvolutionarySearchConfig bad;
  bad.prior_eps_greedy = -0.1;
  EXPECT_THROW(EvolutionarySearch(u.s.ctx, bad), std::invalid_argument);
}

// When the fresh samples cannot fill the batch, an untrained model's round
// still evolves, so that mutants fill it (as they did before the model
// was asked whether it had learned).
TEST(EvolutionarySearch, AnUntrainedModelsRoundStillEvolvesWhenSamplesCannotFillTheBatch) {
  UntrainedSearch u(/*population=*/12, 4);  // at most 12 fresh samples for a batch of 24
  EvolutionarySearch& es = u.es;
  std::vector<Candidate> got = es.GenerateCandidates(24);
  EXPECT_FALSE(es.last_round().model_informative);
  EXPECT_LE(es.last_round().sampled, 12);
  EXPECT_GT(es.last_round().mutations_tried, 0);
  EXPECT_GT(es.last_round().picked_best, 0) << "mutants fill what the samples cannot";
  EXPECT_GT(static_cast<int>(got.size()), es.last_round().sampled);
  std::unordered_set<uint64_t> seen;
  for (const Candidate& c : got) EXPECT_TRUE(seen.insert(c.key).second);
}

}  // namespace
}  // namespace kiln::search
