#include "search/measured_samples.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/schedule/schedule.h"
#include "ir/structural_equal.h"
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

  const MeasuredSamples all = LoadMeasuredSamples(db, kCpu);
  ASSERT_EQ(all.samples.size(), 3u) << all.first_error;
  EXPECT_EQ(all.unreplayable, 1);
  EXPECT_FALSE(all.first_error.empty());
  EXPECT_EQ(all.workload_ids, (std::vector<database::WorkloadId>{w_mm, w_mm, w_relu}));
  EXPECT_TRUE(ir::StructuralEqual(all.samples[0].scheduled, mm4));
  EXPECT_DOUBLE_EQ(all.samples[0].run_secs, 2e-3);
  EXPECT_TRUE(ir::StructuralEqual(all.samples[1].scheduled, mm8));
  EXPECT_TRUE(std::isinf(all.samples[1].run_secs)) << "a failed record costs +inf";
  EXPECT_EQ(all.samples[0].workload_key, ir::StructuralHashHex(mm));
  EXPECT_EQ(all.samples[2].workload_key, ir::StructuralHashHex(relu));
  EXPECT_TRUE(ir::StructuralEqual(all.samples[2].scheduled, relu2));

  const MeasuredSamples one = LoadMeasuredSamples(db, kCpu, w_relu);
  ASSERT_EQ(one.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(one.samples[0].run_secs, 5e-6);
  EXPECT_EQ(LoadMeasuredSamples(db, "cuda -arch=sm_90").samples.size(), 1u);
  EXPECT_THROW(LoadMeasuredSamples(db, "no-such-target"), database::DatabaseError);
}

// The features a model trains on, replayed and featurized in chunks on
// several threads: the same as featurizing LoadMeasuredSamples' programs.
TEST(MeasuredSamples, FeaturesInChunksMatchAtAnyThreadCount) {
  database::Database db = database::Database::InMemory();
  const ir::PrimFunc mm = ir::Matmul(32, 32, 32), relu = ir::MatmulRelu(16, 16, 16);
  const database::WorkloadId w_mm = db.CommitWorkload(mm), w_relu = db.CommitWorkload(relu);
  for (int64_t f : {2, 4, 8, 16}) db.CommitRecord(w_mm, Rec(Split(mm, "C", f).second, 1e-3 * f));
  db.CommitRecord(w_mm, Rec("[[[\"GetBlock\", [], {\"name\": \"gone\"}, [\"b0\"]]], []]", 1e-3));
  db.CommitRecord(w_relu, Rec(Split(relu, "C", 2).second, 0, "run_crash"));
  db.CommitRecord(w_mm, Rec(Split(mm, "C", 32).second, 5e-3));

  const MeasuredSamples programs = LoadMeasuredSamples(db, kCpu);
  const std::vector<cost_model::FeatureSample> want =
      cost_model::ToFeatureSamples(programs.samples, 1);
  ASSERT_EQ(want.size(), 6u);
  for (int threads : {1, 2}) {
    for (int chunk : {1, 2, 1024}) {
      const MeasuredFeatures got = LoadMeasuredFeatures(db, kCpu, threads, std::nullopt, {}, chunk);
      ASSERT_EQ(got.samples.size(), want.size()) << threads << " threads, chunk " << chunk;
      EXPECT_EQ(got.workload_ids, programs.workload_ids);
      EXPECT_EQ(got.unreplayable, 1);
      EXPECT_EQ(got.first_error, programs.first_error);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got.samples[i].features.rows, want[i].features.rows) << i;
        EXPECT_EQ(got.samples[i].features.values, want[i].features.values) << i;
        EXPECT_EQ(got.samples[i].workload_key, want[i].workload_key) << i;
        EXPECT_EQ(got.samples[i].run_secs, want[i].run_secs) << i;
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
  EXPECT_EQ(LoadMeasuredSamples(db, kCpu).samples.size(), 2u);
  EXPECT_EQ(LoadMeasuredSamples(db, std::string(kCpu) + " -mattr=+avx2,+fma").samples.size(), 2u);
  EXPECT_EQ(LoadMeasuredSamples(db, "llvm -mcpu=znver3").samples.size(), 0u);
}

}  // namespace
}  // namespace kiln::search
