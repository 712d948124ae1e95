#include "search/measured_samples.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cost_model/feature_extractor.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"

namespace kiln::search {
namespace {

constexpr const char* kCpu = "llvm -mcpu=skylake-avx512";

database::TuningRecord Rec(const std::string& trace_json, double secs,
                           const std::string& status = "ok", const std::string& target = kCpu) {
  database::TuningRecord r;
  r.target = target;
  r.fingerprint = "test-cpu";
  r.trace_json = trace_json;
  if (status == "ok") r.run_seconds = {secs};
  r.status = status;
  r.verified = status == "ok";
  return r;
}

// A schedule of `f` splitting its first loop by `factor`, and its trace.
std::pair<ir::PrimFunc, std::string> Split(const ir::PrimFunc& f, const std::string& block,
                                           int64_t factor) {
  ir::Schedule sch(f);
  std::vector<ir::LoopRV> loops = sch.GetLoops(sch.GetBlock(block));
  sch.Split(loops[0], {std::monostate{}, factor});
  return {sch.func(), sch.trace().AsJSONString()};
}

// The features of `f` as the model computes them.
cost_model::FeatureRows FeaturesOf(const ir::PrimFunc& f) {
  return cost_model::ExtractFeaturesBatch({f}, 1).at(0);
}

TEST(MeasuredSamples, ReplaysEveryRecordOfTheTarget) {
  database::Database db = database::Database::InMemory();
  const ir::PrimFunc mm = ir::Matmul(32, 32, 32), relu = ir::MatmulRelu(16, 16, 16);
  const database::WorkloadId w_mm = db.CommitWorkload(mm), w_relu = db.CommitWorkload(relu);
  auto [mm4, t_mm4] = Split(mm, "C", 4);
  auto [mm8, t_mm8] = Split(mm, "C", 8);
  auto [mm16, t_mm16] = Split(mm, "C", 16);
  db.CommitRecord(w_mm, Rec(t_mm4, 2e-3));
  db.CommitRecord(w_mm, Rec(t_mm8, 0, "build_error"));
  db.CommitRecord(w_mm, Rec(t_mm16, 1e-3, "ok", "cuda -arch=sm_90"));  // another target
  db.CommitRecord(w_mm, Rec("[[[\"GetBlock\", [], {\"name\": \"no_such_block\"}, [\"b0\"]]], []]", 1e-3));
  auto [relu2, t_relu2] = Split(relu, "C", 2);
  db.CommitRecord(w_relu, Rec(t_relu2, 5e-6));
  // The three replayed programs differ in their features, so equal features
  // say the replay gave back the scheduled program.
  ASSERT_NE(FeaturesOf(mm4).values, FeaturesOf(mm8).values);
  ASSERT_NE(FeaturesOf(mm4).values, FeaturesOf(relu2).values);

  const MeasuredFeatures all = LoadMeasuredFeatures(db, kCpu, 1);
  ASSERT_EQ(all.samples.size(), 3u) << all.first_error;
  EXPECT_EQ(all.unreplayable, 1);
  EXPECT_FALSE(all.first_error.empty());
  EXPECT_EQ(all.workload_ids, (std::vector<database::WorkloadId>{w_mm, w_mm, w_relu}));
  EXPECT_EQ(all.samples[0].features.values, FeaturesOf(mm4).values);
  EXPECT_DOUBLE_EQ(all.samples[0].run_secs, 2e-3);
  EXPECT_EQ(all.samples[1].features.values, FeaturesOf(mm8).values);
  EXPECT_TRUE(std::isinf(all.samples[1].run_secs)) << "a failed record costs +inf";
  EXPECT_EQ(all.samples[0].workload_key, ir::StructuralHashHex(mm));
  EXPECT_EQ(all.samples[2].workload_key, ir::StructuralHashHex(relu));
  EXPECT_EQ(all.samples[2].features.values, FeaturesOf(relu2).values);

  const MeasuredFeatures one = LoadMeasuredFeatures(db, kCpu, 1, w_relu);
  ASSERT_EQ(one.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(one.samples[0].run_secs, 5e-6);
  EXPECT_EQ(LoadMeasuredFeatures(db, "cuda -arch=sm_90", 1).samples.size(), 1u);
  EXPECT_THROW(LoadMeasuredFeatures(db, "no-such-target", 1), database::DatabaseError);
}

// Replayed and featurized in chunks on several threads: the same features,
// in the same order, as one chunk on one thread.
TEST(MeasuredSamples, FeaturesInChunksMatchAtAnyThreadCount) {
  database::Database db = database::Database::InMemory();
  const ir::PrimFunc mm = ir::Matmul(32, 32, 32), relu = ir::MatmulRelu(16, 16, 16);
  const database::WorkloadId w_mm = db.CommitWorkload(mm), w_relu = db.CommitWorkload(relu);
  for (int64_t f : {2, 4, 8, 16}) db.CommitRecord(w_mm, Rec(Split(mm, "C", f).second, 1e-3 * f));
  db.CommitRecord(w_mm, Rec("[[[\"GetBlock\", [], {\"name\": \"gone\"}, [\"b0\"]]], []]", 1e-3));
  db.CommitRecord(w_relu, Rec(Split(relu, "C", 2).second, 0, "run_crash"));
  db.CommitRecord(w_mm, Rec(Split(mm, "C", 32).second, 5e-3));

  const MeasuredFeatures want = LoadMeasuredFeatures(db, kCpu, 1, std::nullopt, {}, 1024);
  ASSERT_EQ(want.samples.size(), 6u);
  EXPECT_EQ(want.unreplayable, 1);
  EXPECT_EQ(want.samples[5].features.values, FeaturesOf(Split(mm, "C", 32).first).values);
  for (int threads : {1, 2}) {
    for (int chunk : {1, 2, 1024}) {
      const MeasuredFeatures got = LoadMeasuredFeatures(db, kCpu, threads, std::nullopt, {}, chunk);
      ASSERT_EQ(got.samples.size(), want.samples.size()) << threads << " threads, chunk " << chunk;
      EXPECT_EQ(got.workload_ids, want.workload_ids);
      EXPECT_EQ(got.unreplayable, 1);
      EXPECT_EQ(got.first_error, want.first_error);
      for (size_t i = 0; i < want.samples.size(); ++i) {
        EXPECT_EQ(got.samples[i].features.rows, want.samples[i].features.rows) << i;
        EXPECT_EQ(got.samples[i].features.values, want.samples[i].features.values) << i;
        EXPECT_EQ(got.samples[i].workload_key, want.samples[i].workload_key) << i;
        EXPECT_EQ(got.samples[i].run_secs, want.samples[i].run_secs) << i;
      }
    }
  }
  EXPECT_EQ(LoadMeasuredFeatures(db, kCpu, 2, w_relu).samples.size(), 1u);
  EXPECT_THROW(LoadMeasuredFeatures(db, kCpu, 1, std::nullopt, {}, 0), std::invalid_argument);
}

// A record stored under a longer spelling of the same target (one written
// before targets were canonical, search/target_lookup.h) trains too.
TEST(MeasuredSamples, EveryStoredSpellingOfTheTargetCounts) {
  database::Database db = database::Database::InMemory();
  const ir::PrimFunc mm = ir::Matmul(32, 32, 32);
  const database::WorkloadId w = db.CommitWorkload(mm);
  auto [mm4, t_mm4] = Split(mm, "C", 4);
  auto [mm8, t_mm8] = Split(mm, "C", 8);
  db.CommitRecord(w, Rec(t_mm4, 2e-3));
  db.CommitRecord(w, Rec(t_mm8, 1e-3, "ok", std::string(kCpu) + " -mattr=+avx2"));  // implied by the CPU
  EXPECT_EQ(LoadMeasuredFeatures(db, kCpu, 1).samples.size(), 2u);
  EXPECT_EQ(LoadMeasuredFeatures(db, std::string(kCpu) + " -mattr=+avx2,+fma", 1).samples.size(),
            2u);
  EXPECT_EQ(LoadMeasuredFeatures(db, "llvm -mcpu=znver3", 1).samples.size(), 0u);
}

}  // namespace
}  // namespace kiln::search
