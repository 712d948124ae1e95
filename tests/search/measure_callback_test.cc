// Measure callbacks (docs/ARCHITECTURE.md §11): AddToDatabase records every result but
// infra errors and marks those candidates measured; UpdateCostModel feeds
// the model the same results (failures as +inf seconds).
#include "search/measure_callback.h"

#include <gtest/gtest.h>

#include <cmath>

#include "database/database.h"
#include "ir/structural_hash.h"
#include "search/replay_trace.h"
#include "search_test_util.h"

namespace kiln::search {
namespace {

class LoggingModel : public cost_model::CostModel {
 public:
  void Update(const std::vector<cost_model::Sample>& s) override {
    samples.insert(samples.end(), s.begin(), s.end());
  }
  std::vector<double> Predict(const std::vector<ir::PrimFunc>& p) override {
    return std::vector<double>(p.size(), 0.0);
  }
  std::string Name() const override { return "logging"; }
  std::vector<cost_model::Sample> samples;
};

TEST(MeasureCallbacks, RecordAndLearnEverythingButInfraErrors) {
  TuneContext ctx = testing::Context(ir::BatchMatmulNKKM(1, 8, 8, 8), "llvm -num-cores=2");
  ReplayTrace rt(ctx);
  std::vector<Candidate> batch = rt.NextBatch(3);
  ASSERT_EQ(batch.size(), 3u);
  std::vector<MeasureResult> results(3);
  results[0].status = MeasureStatus::kOk;
  results[0].verified = true;
  results[0].run_secs = {2e-3, 1e-3, 3e-3};
  results[1].status = MeasureStatus::kBuildError;
  results[1].message = "no";
  results[2].status = MeasureStatus::kInfraError;
  results[2].message = "the runner died";

  database::Database db = database::Database::InMemory();
  const database::WorkloadId wid = db.CommitWorkload(ctx.workload);
  MeasuredSet measured;
  LoggingModel model;
  const std::string whash = ir::StructuralHashHex(ctx.workload);
  TuningState state{&db, wid, ctx.target.ToString(), &model, &measured};
  RecordTemplate t;
  t.workload_hash = whash;
  t.fingerprint = "callback test";
  t.seed = 9;
  MakeAddToDatabase(t)->Apply(state, batch, results);
  MakeUpdateCostModel(whash)->Apply(state, batch, results);

  EXPECT_EQ(db.CountRecords(wid, ctx.target.ToString()), 2);
  EXPECT_TRUE(measured.HasKey(batch[0].key));
  EXPECT_TRUE(measured.HasKey(batch[1].key));
  EXPECT_FALSE(measured.HasKey(batch[2].key)) << "an infra error must be measured again later";
  EXPECT_TRUE(measured.HasTrace(MeasuredSet::TraceHashOf(batch[1].trace_json)));
  std::optional<database::TuningRecord> best = db.Best(wid, ctx.target.ToString());
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->median_seconds, 2e-3);
  EXPECT_EQ(best->provenance.seed, 9u);

  ASSERT_EQ(model.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(model.samples[0].run_secs, 2e-3);
  EXPECT_TRUE(std::isinf(model.samples[1].run_secs));
  EXPECT_EQ(model.samples[0].workload_key, whash);
  EXPECT_EQ(ir::StructuralHash(model.samples[0].scheduled), batch[0].key);

  // A loaded set agrees with what was committed, and yields the samples.
  std::vector<cost_model::Sample> stored;
  MeasuredSet loaded = MeasuredSet::Load(db, wid, ctx.target.ToString(), ctx.workload, &stored);
  EXPECT_TRUE(loaded.HasKey(batch[0].key));
  EXPECT_TRUE(loaded.HasKey(batch[1].key));
  EXPECT_FALSE(loaded.HasKey(batch[2].key));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_DOUBLE_EQ(stored[0].run_secs, 2e-3);
  EXPECT_TRUE(std::isinf(stored[1].run_secs));
}

}  // namespace
}  // namespace kiln::search
