// Several workloads under one budget (search/tune_tasks.h) with a runner that
// builds nothing (search_test_util.h): the budget is honoured, every task is
// visited, a rerun resumes without measuring anything twice, the same seed
// gives the same records, and the weighted latency is what the table says.
#include "search/tune_tasks.h"

#include <gtest/gtest.h>

#include <set>

#include "cost_model/random_model.h"
#include "database/database.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

using testing::HashRunner;

std::vector<TuneTask> Tasks(int64_t per_task) {
  const ir::Target target = ir::Target::Parse("llvm -num-cores=2");
  std::vector<TuneTask> tasks;
  const std::pair<const char*, ir::PrimFunc> workloads[] = {
      {"GMM", ir::BatchMatmulNKKM(1, 16, 16, 16)},
      {"SFM", ir::SoftmaxMN(8, 16)},
      {"C2D", ir::Conv2dNHWC(1, 8, 8, 4, 8, 3, 1, 1)},
  };
  double weight = 1;
  for (const auto& [name, f] : workloads) {
    TuneTask t;
    t.name = name;
    t.ctx = MakeDefaultTuneContext(f, target, 1, 1);
    t.task = MeasureTask{f, target, {}, 1};
    t.weight = weight;
    weight *= 2;
    t.trials = per_task;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

TuneTasksOptions Options(cost_model::CostModel* model, StrategyKind strategy, int64_t total) {
  TuneTasksOptions o;
  o.base.trials_per_iter = 4;
  o.base.seed = 5;
  o.base.fingerprint = "tune-tasks-test";
  o.base.strategy = strategy;
  o.base.cost_model = model;
  o.base.evolutionary.population_size = 32;
  o.base.evolutionary.init_min_unmeasured = 8;
  o.total_trials = total;
  // The tests count the search's own measurements; the final re-measure of
  // each task's best has a test of its own.
  o.base.final_remeasure_top = 0;
  return o;
}

std::set<std::string> TraceHashes(const database::Database& db) {
  std::set<std::string> out;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    out.insert(r.trace_hash);
  });
  return out;
}

TEST(TuneTasks, SharesTheBudgetVisitsEveryTaskAndResumes) {
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  cost_model::RandomModel model(3);
  std::vector<int> visits(3, 0);
  TuneTasksOptions o = Options(&model, StrategyKind::kEvolutionary, 24);
  o.on_progress = [&](const TuneTasksProgress& p) {
    if (p.current >= 0) ++visits[static_cast<size_t>(p.current)];
  };
  TuneTasksSummary s = TuneTasks(Tasks(16), runner, db, o);
  EXPECT_EQ(db.Size(), 24) << s.stop_reason;
  EXPECT_EQ(s.final.measured_this_run, 24);
  for (int v : visits) EXPECT_GE(v, 1) << "the gradient scheduler visits every task first";
  double weighted = 0;
  for (const TaskStatus& t : s.final.tasks) {
    EXPECT_GT(t.best_secs, 0) << t.name;
    weighted += t.weight * t.best_secs;
  }
  EXPECT_DOUBLE_EQ(s.final.weighted_latency, weighted);

  // A rerun with a larger budget tops up; nothing is measured twice.
  const std::set<std::string> before = TraceHashes(db);
  TuneTasksSummary again = TuneTasks(Tasks(16), runner, db, Options(&model, StrategyKind::kEvolutionary, 36));
  EXPECT_EQ(db.Size(), 36) << again.stop_reason;
  EXPECT_EQ(again.final.measured_this_run, 12);
  EXPECT_EQ(TraceHashes(db).size(), 36u);
  for (const std::string& h : before) EXPECT_TRUE(TraceHashes(db).count(h));
  EXPECT_EQ(runner.measured, 36);
}

TEST(TuneTasks, PerTaskCapsEndTheRunAndTheSameSeedRepeats) {
  auto run = [](StrategyKind strategy) {
    database::Database db = database::Database::InMemory();
    HashRunner runner;
    cost_model::RandomModel model(3);
    TuneTasksSummary s = TuneTasks(Tasks(8), runner, db, Options(&model, strategy, 0));
    for (const TaskStatus& t : s.final.tasks) {
      EXPECT_EQ(t.trials_done, 8) << t.name;
      EXPECT_TRUE(t.finished) << t.name;
    }
    return TraceHashes(db);
  };
  for (StrategyKind k : {StrategyKind::kReplay, StrategyKind::kEvolutionary}) {
    const std::set<std::string> a = run(k), b = run(k);
    EXPECT_EQ(a.size(), 24u);
    EXPECT_EQ(a, b);
  }
}

TEST(TuneTasks, EachTasksBestIsMeasuredAgainOnceAtTheEnd) {
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  cost_model::RandomModel model(3);
  TuneTasksOptions o = Options(&model, StrategyKind::kReplay, 0);
  o.base.final_remeasure_top = 2;
  o.base.final_remeasure_repeat = 3;
  TuneTasksSummary s = TuneTasks(Tasks(8), runner, db, o);
  EXPECT_EQ(db.Size(), 24) << s.stop_reason;
  // Two records of each of the three tasks, once: not after every batch.
  EXPECT_EQ(runner.measured, 24 + 3 * 2);
  int longer = 0;
  db.ForEachRecord([&](database::WorkloadId, const database::TuningRecord& r) {
    if (r.run_seconds.size() == 2u) ++longer;  // the tuning repeat and the re-measure's
  });
  EXPECT_EQ(longer, 6);
}

TEST(TuneTasks, RefusesBadTasks) {
  database::Database db = database::Database::InMemory();
  HashRunner runner;
  EXPECT_THROW(TuneTasks({}, runner, db, Options(nullptr, StrategyKind::kReplay, 0)),
               std::invalid_argument);
  std::vector<TuneTask> tasks = Tasks(4);
  tasks[1].weight = 0;
  EXPECT_THROW(TuneTasks(tasks, runner, db, Options(nullptr, StrategyKind::kReplay, 0)),
               std::invalid_argument);
}

}  // namespace
}  // namespace kiln::search
