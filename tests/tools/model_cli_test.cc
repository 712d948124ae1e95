// kiln model train|eval on a small database built in the test: records of
// three matmul workloads whose (synthetic) times favour vectorized, parallel
// schedules, which the features can see.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cost_model/xgb_model.h"
#include "database/database.h"
#include "ir/schedule/schedule.h"
#include "ir/structural_hash.h"
#include "ir/text/printer.h"
#include "ir/workloads/suite.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::database::Database;
using kiln::testing::RunKiln;

constexpr const char* kTarget = "llvm -mcpu=skylake-avx512";

class ModelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = (fs::temp_directory_path() /
                              ("kiln_model_" + std::to_string(getpid()) + "_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                                 .string();
    db_ = base + ".db";
    model_ = base + ".model";
    fs::remove(db_);
    fs::remove(model_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_ + suffix);
    fs::remove(model_);
  }

  // Every (split factor, vectorize, parallel) schedule of each workload's
  // first block, with a time that falls with vectorization, parallelism and
  // (a little) with the split factor; every 9th record is a failure.
  void Fill(const std::vector<kiln::ir::PrimFunc>& workloads) {
    Database db = Database::Open(db_);
    int n = 0;
    for (size_t w = 0; w < workloads.size(); ++w) {
      const kiln::database::WorkloadId id = db.CommitWorkload(workloads[w]);
      for (int64_t factor : {2, 4, 8, 16}) {
        for (bool vec : {false, true}) {
          for (bool par : {false, true}) {
            kiln::ir::Schedule sch(workloads[w]);
            std::vector<kiln::ir::LoopRV> loops = sch.GetLoops(sch.GetBlock("C"));
            std::vector<kiln::ir::LoopRV> j = sch.Split(loops[1], {std::monostate{}, factor});
            if (vec) sch.Vectorize(j[1]);
            if (par) sch.Parallel(loops[0]);
            kiln::database::TuningRecord r;
            r.target = kTarget;
            r.fingerprint = "test-cpu";
            r.trace_json = sch.trace().AsJSONString();
            const double secs = 1e-3 * static_cast<double>(w + 1) / ((vec ? 4.0 : 1.0) * (par ? 2.0 : 1.0)) *
                                (1.0 + 0.3 / static_cast<double>(factor));
            r.status = (++n % 9 == 0) ? "run_crash" : "ok";
            if (r.status == "ok") r.run_seconds = {secs};
            r.verified = r.status == "ok";
            db.CommitRecord(id, r);
          }
        }
      }
    }
  }

  std::string db_, model_;
};

TEST_F(ModelCli, TrainSavesALoadableModel) {
  Fill({kiln::ir::Matmul(64, 64, 32), kiln::ir::Matmul(32, 128, 64)});
  auto r = RunKiln("model train --db " + db_ + " --target '" + kTarget + "' -o " + model_ + " --json",
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["records"], 32);
  EXPECT_EQ(j["workloads"], 2);
  EXPECT_EQ(j["failed_records"], 3);
  EXPECT_GT(j["rounds"].get<int>(), 0);
  const kiln::cost_model::XGBModel m = kiln::cost_model::XGBModel::Load(model_);
  EXPECT_TRUE(m.trained());
  EXPECT_EQ(m.last_train_size(), 32);

  auto text = RunKiln("model train --db " + db_ + " --target '" + kTarget + "' -o " + model_);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("trained on 32 record(s) of 2 workload(s)"), std::string::npos) << text.out;
}

// --exclude-workload leaves a workload's records out, and the model file
// lists the workloads it was trained on (what search_bench --prior-model
// checks).
TEST_F(ModelCli, TrainLeavesExcludedWorkloadsOut) {
  const kiln::ir::PrimFunc kept = kiln::ir::Matmul(64, 64, 32);
  const kiln::ir::PrimFunc left = kiln::ir::Matmul(32, 128, 64);
  Fill({kept, left});
  kiln::testing::TempFile left_text(kiln::ir::ToText(left));
  auto r = RunKiln("model train --db " + db_ + " --target '" + kTarget + "' -o " + model_ +
                       " --exclude-workload " + left_text.path() + " --json",
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["records"], 16);
  EXPECT_EQ(j["excluded_records"], 16);
  EXPECT_EQ(j["workloads"], 1);
  const kiln::cost_model::XGBModel m = kiln::cost_model::XGBModel::Load(model_);
  EXPECT_EQ(m.trained_workloads(), std::vector<std::string>{kiln::ir::StructuralHashHex(kept)});

  kiln::testing::TempFile kept_text(kiln::ir::ToText(kept));
  auto none = RunKiln("model train --db " + db_ + " --target '" + kTarget + "' -o " + model_ +
                      ".none --exclude-workload " + left_text.path() + " --exclude-workload " +
                      kept_text.path());
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("no records for target '" + std::string(kTarget) +
                          "' left after --exclude-workload"),
            std::string::npos)
      << none.out;
  EXPECT_FALSE(fs::exists(model_ + ".none"));
}

TEST_F(ModelCli, EvalHoldsOutWholeWorkloads) {
  Fill({kiln::ir::Matmul(64, 64, 32), kiln::ir::Matmul(32, 128, 64), kiln::ir::Matmul(128, 32, 16)});
  auto r = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --folds 3 --top-k 4 --json",
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["folds"].size(), 3u);
  ASSERT_EQ(j["per_workload"].size(), 3u);
  for (const auto& f : j["folds"]) {
    EXPECT_EQ(f["held_out_workloads"].size(), 1u);
    EXPECT_EQ(f["records"], 16);
    EXPECT_EQ(f["training_records"], 32);  // the other two workloads only
  }
  // Vectorized and parallel schedules are the fast ones on every workload:
  // a model trained on two workloads ranks the third.
  EXPECT_GT(j["spearman"].get<double>(), 0.6) << r.out;
  EXPECT_LE(j["spearman"].get<double>(), 1.0);
  EXPECT_GE(j["top_k_recall"].get<double>(), 0.5) << r.out;

  auto text = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --folds 3");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("overall"), std::string::npos) << text.out;
}

TEST_F(ModelCli, EvalHistoryRanksEachWorkloadsLaterRecords) {
  Fill({kiln::ir::Matmul(64, 64, 32), kiln::ir::Matmul(32, 128, 64)});
  // Each workload's first 8 records (split factors 2 and 4) train a model
  // that ranks its last 8 (factors 8 and 16): vectorized and parallel first.
  auto r = RunKiln("model eval --db " + db_ + " --target '" + kTarget +
                       "' --split history --history 8 --top-k 2 --json",
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["split"], "history");
  ASSERT_EQ(j["per_workload"].size(), 2u);
  for (const auto& w : j["per_workload"]) {
    EXPECT_EQ(w["training_records"], 8);
    EXPECT_EQ(w["records"], 8);
    EXPECT_TRUE(w["model_trained"].get<bool>());
    EXPECT_GT(w["spearman"].get<double>(), 0.6) << r.out;
    // Both top-2 picks are vectorized and parallel: within 10% of the best.
    EXPECT_GE(w["top_k_best_ratio"].get<double>(), 0.9) << r.out;
    EXPECT_LE(w["top_k_best_ratio"].get<double>(), 1.0);
  }

  auto text =
      RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --split history --history 8");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("best of top-10"), std::string::npos) << text.out;

  auto too_few = RunKiln("model eval --db " + db_ + " --target '" + kTarget +
                         "' --split history --history 15");
  EXPECT_EQ(too_few.code, 1);
  EXPECT_NE(too_few.out.find("at least 17 records"), std::string::npos) << too_few.out;

  auto stray = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --history 8");
  EXPECT_EQ(stray.code, 1);
  EXPECT_NE(stray.out.find("--split history only"), std::string::npos) << stray.out;
  auto folds = RunKiln("model eval --db " + db_ + " --target '" + kTarget +
                       "' --split history --folds 3");
  EXPECT_EQ(folds.code, 1);
  EXPECT_NE(folds.out.find("--split workload only"), std::string::npos) << folds.out;
}

// --model ranks each workload's records with a model file as it is;
// --prior-model starts each model the evaluation trains from one.
TEST_F(ModelCli, EvalWithAModelFileRanksWithoutTraining) {
  const kiln::ir::PrimFunc seen = kiln::ir::Matmul(64, 64, 32);
  Fill({seen, kiln::ir::Matmul(32, 128, 64), kiln::ir::Matmul(128, 32, 16)});
  kiln::testing::TempFile seen_text(kiln::ir::ToText(seen));
  auto train = RunKiln("model train --db " + db_ + " --target '" + kTarget + "' --workload " +
                       seen_text.path() + " -o " + model_);
  ASSERT_EQ(train.code, 0) << train.out;

  auto r = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --model " + model_ +
                       " --top-k 4 --json",
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], model_);
  EXPECT_EQ(j["model_target"], kTarget);
  ASSERT_EQ(j["per_workload"].size(), 3u);
  int trained_on = 0;
  for (const auto& w : j["per_workload"]) {
    EXPECT_EQ(w["records"], 16);
    trained_on += w["trained_on"].get<bool>();
    if (w["trained_on"].get<bool>()) {
      EXPECT_EQ(w["workload_hash"], kiln::ir::StructuralHashHex(seen));
      EXPECT_EQ(w["workload"], "A[64,32], B[32,64] -> C[64,64]");  // report::WorkloadLabel
    }
    // Vectorized and parallel schedules are fast on every workload: a model
    // of one ranks the others.
    EXPECT_GT(w["spearman"].get<double>(), 0.6) << r.out;
    EXPECT_GE(w["top_k_best_ratio"].get<double>(), 0.9) << r.out;
  }
  EXPECT_EQ(trained_on, 1);

  auto text = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --model " + model_);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("(the model trained on it)  A[64,32], B[32,64] -> C[64,64]\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("ranks 48 record(s) of 3 workload(s)"), std::string::npos) << text.out;

  auto history = RunKiln("model eval --db " + db_ + " --target '" + kTarget +
                             "' --split history --history 8 --prior-model " + model_ + " --json",
                         /*with_stderr=*/false);
  ASSERT_EQ(history.code, 0) << history.out;
  for (const auto& w : nlohmann::json::parse(history.out)["per_workload"]) {
    EXPECT_TRUE(w["model_trained"].get<bool>());
    EXPECT_GT(w["spearman"].get<double>(), 0.6) << history.out;
  }

  // The prior was trained on one of the evaluated workloads: said.
  auto warned = RunKiln("model eval --db " + db_ + " --target '" + kTarget +
                        "' --split history --history 8 --prior-model " + model_);
  ASSERT_EQ(warned.code, 0) << warned.out;
  EXPECT_NE(warned.out.find("--prior-model was trained on 1 of the 3 evaluated workload(s)"),
            std::string::npos)
      << warned.out;

  auto not_history = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --model " +
                             model_ + " --split history");
  EXPECT_EQ(not_history.code, 1);
  EXPECT_NE(not_history.out.find("--split history trains"), std::string::npos) << not_history.out;
  auto missing = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --model " +
                         model_ + ".absent");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("--model " + model_ + ".absent: cannot open"), std::string::npos)
      << missing.out;
  auto not_a_model =
      RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --prior-model " + db_);
  EXPECT_EQ(not_a_model.code, 1);
  EXPECT_NE(not_a_model.out.find("--prior-model " + db_ + ": "), std::string::npos)
      << not_a_model.out;
  auto with_folds = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "' --model " +
                            model_ + " --folds 3");
  EXPECT_NE(with_folds.code, 0);
}

TEST_F(ModelCli, ClearErrors) {
  auto missing = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "'");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("no such file"), std::string::npos) << missing.out;

  Fill({kiln::ir::Matmul(64, 64, 32)});
  auto one = RunKiln("model eval --db " + db_ + " --target '" + kTarget + "'");
  EXPECT_EQ(one.code, 1);
  EXPECT_NE(one.out.find("at least 2 workloads"), std::string::npos) << one.out;

  auto none = RunKiln("model train --db " + db_ + " --target 'cuda -arch=sm_90' -o " + model_);
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("no records for target"), std::string::npos) << none.out;
  EXPECT_FALSE(fs::exists(model_));

  auto usage = RunKiln("model train --db " + db_ + " --target '" + kTarget + "'");
  EXPECT_NE(usage.code, 0);
}

}  // namespace
