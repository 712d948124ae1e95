// kiln tune end to end: real design space, real builds in the isolated
// runner, a real SQLite file. Resume after SIGKILL never measures a schedule
// twice; Ctrl-C stops cleanly with what was measured committed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "database/database.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/trace.h"
#include "ir/structural_hash.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "tests/common/reduced_suite.h"
#include "tests/common/run_kiln.h"

namespace {

namespace fs = std::filesystem;
using kiln::database::Database;
using kiln::testing::RunKiln;
using kiln::testing::TempFile;

const std::string kFast = " --number 1 --repeat 1 --min-repeat-ms 1 --target 'llvm -num-cores=1'";

std::string SmallText(const std::string& name) {
  for (const auto& c : kiln::testing::ReducedSuite()) {
    if (std::string(c.name) == name) return kiln::ir::ToText(c.make());
  }
  return "";
}

std::string SmallGmmText() { return SmallText("GMM"); }

// `kiln ARGS` fails with exit code 1 and says `needle`.
void ExpectRefused(const std::string& args, const std::string& needle) {
  auto r = RunKiln(args);
  EXPECT_EQ(r.code, 1) << args;
  EXPECT_NE(r.out.find(needle), std::string::npos) << r.out;
}

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (fs::temp_directory_path() /
           ("kiln_tune_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
              .string();
    fs::remove(db_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_ + suffix);
  }
  // Records in the database and whether any schedule repeats: the same
  // trace, or another trace that yields the same program.
  std::pair<int64_t, bool> Count() {
    Database db = Database::Open(db_, Database::Mode::kReadOnly);
    const kiln::ir::PrimFunc workload = kiln::ir::ParseFunc(SmallGmmText());
    int64_t n = 0;
    std::set<std::string> seen;
    std::set<uint64_t> programs;
    bool dup = false;
    db.ForEachRecord([&](auto, const kiln::database::TuningRecord& r) {
      ++n;
      dup |= !seen.insert(r.trace_hash).second;
      kiln::ir::Schedule sch(workload);
      kiln::ir::Trace::FromJSONString(r.trace_json).ApplyToSchedule(&sch, /*remove_postproc=*/false);
      dup |= !programs.insert(kiln::ir::StructuralHash(sch.func())).second;
    });
    return {n, dup};
  }
  // Count() while another process may still be creating the file: until its
  // schema is committed the file is not yet a Kiln database.
  int64_t CountWhileCreated() {
    if (!fs::exists(db_)) return 0;
    try {
      return Count().first;
    } catch (const std::exception&) {
      return 0;
    }
  }
  std::string db_;
  TempFile workload_{SmallGmmText()};
};

TEST_F(TuneCli, TunesVerifiesAndTopsUpOnRerun) {
  auto r = RunKiln("tune --workload " + workload_.path() + " --trials 8 --trials-per-iter 4 --db " +
                       db_ + " --json" + kFast,
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["records_total"], 8);
  ASSERT_TRUE(j.contains("best")) << r.out;
  EXPECT_TRUE(j["best"]["verified"].get<bool>());
  // The final re-measure says where the best stood before it and after it.
  EXPECT_GE(j["remeasured"].get<int>(), 3);
  EXPECT_GT(j["best_before_remeasure_seconds"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["best_after_remeasure_seconds"].get<double>(),
                   j["best"]["median_seconds"].get<double>());
  // Where the time went: every candidate was built and run, and the final
  // re-measure's share is part of the run's whole.
  EXPECT_GT(j["build_seconds"].get<double>(), 0);
  EXPECT_GT(j["run_seconds"].get<double>(), 0);
  EXPECT_GT(j["remeasure_seconds"].get<double>(), 0);
  EXPECT_LT(j["build_seconds"].get<double>() + j["run_seconds"].get<double>(),
            j["seconds"].get<double>());
  EXPECT_GE(j["learn_seconds"].get<double>(), 0);

  auto again = RunKiln("tune --workload " + workload_.path() + " --trials 12 --trials-per-iter 4 --db " +
                       db_ + kFast);
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("# schedule"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("  final re-measure: "), std::string::npos) << again.out;
  EXPECT_NE(again.out.find(" before, "), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("  time: search "), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("(the final re-measure: "), std::string::npos) << again.out;
  auto [n, dup] = Count();
  EXPECT_EQ(n, 12);
  EXPECT_FALSE(dup);

  auto q = RunKiln("query --db " + db_ + " --workload " + workload_.path() +
                   " --target 'llvm -num-cores=1'");
  EXPECT_EQ(q.code, 0) << q.out;
}

TEST_F(TuneCli, ResumeAfterSigkillMeasuresNothingTwice) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string cmd = std::string("exec ") + KILN_BINARY_DIR + "/tools/kiln tune --workload " +
                      workload_.path() + " --trials 64 --trials-per-iter 8 --db " + db_ + kFast +
                      " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once some batches are committed but (most likely) before the end.
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (CountWhileCreated() >= 16) break;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  auto [killed_at, dup0] = Count();
  EXPECT_GE(killed_at, 1);
  EXPECT_FALSE(dup0);

  // Issue 6: tune 64, SIGKILL, tune again to 128. The rerun measures exactly
  // what is missing: nothing committed before the kill is measured again.
  ::testing::Test::RecordProperty("records_at_kill", static_cast<int>(killed_at));
  auto r = RunKiln("tune --workload " + workload_.path() + " --trials 128 --trials-per-iter 16 --db " +
                       db_ + " --json" + kFast,
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["measured_this_run"].get<int64_t>(), 128 - killed_at);
  EXPECT_EQ(j["records_total"], 128);
  auto [n, dup] = Count();
  EXPECT_EQ(n, 128);
  EXPECT_FALSE(dup) << "a schedule was measured twice";
}

TEST_F(TuneCli, CtrlCStopsAfterCommittingTheBatchInFlight) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Its own process group, signalled as a whole, as a terminal's Ctrl-C
    // signals kiln and its kiln-runner child together.
    setpgid(0, 0);
    std::string cmd = std::string("exec ") + KILN_BINARY_DIR + "/tools/kiln tune --workload " +
                      workload_.path() + " --trials 100000 --trials-per-iter 4 --db " + db_ + kFast +
                      " > /dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists whichever runs first
  for (int i = 0; i < 1200 && CountWhileCreated() < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(kill(-pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "kiln tune did not exit by itself after Ctrl-C";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  auto [n, dup] = Count();
  EXPECT_GE(n, 4);
  EXPECT_EQ(n % 4, 0) << "the batch in flight was committed whole";
  EXPECT_FALSE(dup);
  // The candidate running at the Ctrl-C finished normally: nothing was
  // blamed on a schedule for the interrupt.
  Database db = Database::Open(db_, Database::Mode::kReadOnly);
  db.ForEachRecord([](auto, const kiln::database::TuningRecord& r) {
    EXPECT_NE(r.status, "run_crash") << r.message;
  });
}

TEST_F(TuneCli, EvolutionaryStrategyTunesAndTopsUp) {
  auto r = RunKiln("tune --workload " + workload_.path() + " --trials 8 --trials-per-iter 4 --db " +
                       db_ + " --strategy evolutionary --cost-model random --json" + kFast,
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["strategy"], "evolutionary");
  EXPECT_EQ(j["cost_model"], "random");
  EXPECT_EQ(j["measured_this_run"], 8);
  EXPECT_GT(j["search_seconds"].get<double>(), 0);
  // The random model trains nothing, but its updates are timed all the same.
  EXPECT_GE(j["learn_seconds"].get<double>(), 0);
  auto again = RunKiln("tune --workload " + workload_.path() + " --trials 12 --trials-per-iter 4 " +
                           "--db " + db_ + " --strategy evolutionary --json" + kFast,
                       /*with_stderr=*/false);
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(nlohmann::json::parse(again.out)["measured_this_run"], 4);
  auto [n, dup] = Count();
  EXPECT_EQ(n, 12);
  EXPECT_FALSE(dup);
  // Batches grow from --trials-per-iter-start with the records: 12 held, so
  // the next batch is 6; then 9 (18 held), capped by the 2 trials left.
  auto ramp = RunKiln("tune --workload " + workload_.path() + " --trials 20 --trials-per-iter 16 " +
                      "--trials-per-iter-start 2 --db " + db_ + " --strategy evolutionary " +
                      "--cost-model random -v" + kFast);
  ASSERT_EQ(ramp.code, 0) << ramp.out;
  EXPECT_NE(ramp.out.find("batch 0: 6 measured"), std::string::npos) << ramp.out;
  EXPECT_NE(ramp.out.find("batch 1: 2 measured"), std::string::npos) << ramp.out;
}

TEST_F(TuneCli, BadFlagsFailClearly) {
  auto strategy = RunKiln("tune --workload GMM:0 --trials 4 --strategy annealing --db " + db_);
  EXPECT_NE(strategy.code, 0);
  EXPECT_NE(strategy.out.find("annealing"), std::string::npos) << strategy.out;
  auto model = RunKiln("tune --workload GMM:0 --trials 4 --cost-model oracle --db " + db_);
  EXPECT_NE(model.code, 0);
  EXPECT_NE(model.out.find("oracle"), std::string::npos) << model.out;
  EXPECT_NE(RunKiln("tune --workload GMM:0 --trials 0 --db " + db_).code, 0);
  auto start = RunKiln("tune --workload GMM:0 --trials 4 --trials-per-iter-start -2 --db " + db_);
  EXPECT_NE(start.code, 0);
  EXPECT_NE(start.out.find("--trials-per-iter-start"), std::string::npos) << start.out;
  auto bad = RunKiln("tune --workload NOPE --trials 4 --db " + db_);
  EXPECT_EQ(bad.code, 1) << bad.out;
  // A cuda target without a GPU: tests/tools/gpu_cli_test.cc.
}

// --prior-db: the xgb model also learns from another database's records of
// the target before the first batch, for one workload and under the task
// scheduler; that database is only read, and nothing of it enters --db.
TEST_F(TuneCli, PriorDatabaseTrainsTheModelAndIsOnlyRead) {
  const std::string prior = db_ + ".prior";
  auto seed = RunKiln("tune --workload " + workload_.path() + " --trials 8 --trials-per-iter 4 " +
                          "--strategy replay --db " + prior + kFast,
                      /*with_stderr=*/false);
  ASSERT_EQ(seed.code, 0) << seed.out;
  const auto prior_size = fs::file_size(prior);
  TempFile sfm(SmallText("SFM"));
  auto r = RunKiln("tune --workload " + sfm.path() + " --trials 4 --trials-per-iter 4 --db " + db_ +
                   " --prior-db " + prior + " -v" + kFast);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("learned from 0 stored record(s) of 'llvm -num-cores=1', 8 from " + prior),
            std::string::npos)
      << r.out;
  auto many = RunKiln("tune -w " + sfm.path() + " -w " + workload_.path() +
                      " --trials-per-task 6 --trials-per-iter 2 --db " + db_ + " --prior-db " +
                      prior + " -v" + kFast);
  ASSERT_EQ(many.code, 0) << many.out;
  EXPECT_NE(
      many.out.find("learned from 4 stored record(s) of 'llvm -num-cores=1', 8 from " + prior),
      std::string::npos)
      << many.out;
  {
    Database own = Database::Open(db_, Database::Mode::kReadOnly);
    int64_t n = 0;
    own.ForEachRecord([&](auto, const kiln::database::TuningRecord&) { ++n; });
    EXPECT_EQ(n, 12);  // 6 per task, none copied from the prior
    Database p = Database::Open(prior, Database::Mode::kReadOnly);
    n = 0;
    p.ForEachRecord([&](auto, const kiln::database::TuningRecord&) { ++n; });
    EXPECT_EQ(n, 8);
  }
  EXPECT_EQ(fs::file_size(prior), prior_size);

  const std::string tune_sfm = "tune --workload " + sfm.path() + " --trials 8 --db " + db_;
  ExpectRefused(tune_sfm + " --strategy replay --prior-db " + prior + kFast,
                "--strategy replay ranks nothing");
  ExpectRefused(tune_sfm + " --cost-model random --prior-db " + prior + kFast,
                "--cost-model random learns nothing");
  ExpectRefused(tune_sfm + " --prior-db " + db_ + kFast, "is the tuning database (--db) itself");
  ExpectRefused(tune_sfm + " --prior-db " + prior +
                    " --number 1 --repeat 1 --min-repeat-ms 1 --target 'llvm -num-cores=2'",
                "holds no replayable record of target 'llvm -num-cores=2'");
  auto missing = RunKiln("tune --workload " + sfm.path() + " --trials 8 --db " + db_ +
                         " --prior-db " + prior + ".missing" + kFast);
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.out.find("--prior-db"), std::string::npos) << missing.out;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(prior + suffix);
}

// --prior-model: the model starts from a model file, so the first batch is
// already ranked; a model that cannot learn, or a file that is no model, is
// refused.
TEST_F(TuneCli, PriorModelRanksTheFirstBatch) {
  const std::string prior = db_ + ".prior";
  const std::string model = db_ + ".model";
  auto seed = RunKiln("tune --workload " + workload_.path() + " --trials 8 --trials-per-iter 4 " +
                          "--strategy replay --db " + prior + kFast,
                      /*with_stderr=*/false);
  ASSERT_EQ(seed.code, 0) << seed.out;
  auto train = RunKiln("model train --db " + prior + " --target 'llvm -num-cores=1' -o " + model);
  ASSERT_EQ(train.code, 0) << train.out;
  TempFile sfm(SmallText("SFM"));
  auto r = RunKiln("tune --workload " + sfm.path() + " --trials 4 --trials-per-iter 4 --db " + db_ +
                   " --prior-model " + model + " -v" + kFast);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("learned from 0 stored record(s) of 'llvm -num-cores=1', starting from the "
                       "model " +
                       model + " (the prior predicts until there are enough to train)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("round 0:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("has not learned yet"), std::string::npos) << r.out;
  // Without it the same run's first batch is random.
  auto blind = RunKiln("tune --workload " + sfm.path() + " --trials 4 --trials-per-iter 4 --db " +
                       db_ + ".blind -v" + kFast);
  ASSERT_EQ(blind.code, 0) << blind.out;
  EXPECT_NE(blind.out.find("has not learned yet"), std::string::npos) << blind.out;

  const std::string tune_sfm = "tune --workload " + sfm.path() + " --trials 8 --db " + db_;
  ExpectRefused(tune_sfm + " --strategy replay --prior-model " + model + kFast,
                "--prior-model trains the xgb model of the evolutionary search; "
                "--strategy replay ranks nothing");
  ExpectRefused(tune_sfm + " --cost-model random --prior-model " + model + kFast,
                "--cost-model random learns nothing");
  ExpectRefused(tune_sfm + " --prior-model " + prior + kFast, "is not a usable Kiln cost model");
  ExpectRefused(tune_sfm + " --prior-model " + model + ".missing" + kFast,
                "--prior-model: no model '" + model + ".missing' (no such file)");
  // A name is a model of configs/models/.
  auto shipped = RunKiln("tune --workload " + sfm.path() + " --trials 4 --trials-per-iter 4 --db " +
                         db_ + ".shipped --prior-model avx512 -v" + kFast);
  ASSERT_EQ(shipped.code, 0) << shipped.out;
  EXPECT_NE(shipped.out.find("configs/models/avx512.model (the prior predicts"), std::string::npos)
      << shipped.out;
  auto unknown = RunKiln(tune_sfm + " --prior-model avx9000" + kFast);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.out.find("--prior-model: no model 'avx9000' (looked in "), std::string::npos)
      << unknown.out;
  EXPECT_NE(unknown.out.find("known: avx2 avx512"), std::string::npos) << unknown.out;
  for (const std::string& f : {prior, db_ + ".blind", db_ + ".shipped"}) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(f + suffix);
  }
  fs::remove(model);
}

// --prior-model auto (the default): the run starts from the first model of
// configs/models/ trained on a CPU with the target's vector units, passing
// over a model of other vector units and a file that is no model; with none
// that suits, or with --prior-model none, it starts from nothing.
TEST_F(TuneCli, PriorModelAutoChoosesByVectorUnits) {
  const std::string prior = db_ + ".prior";
  const fs::path dir = db_ + ".configs";
  fs::create_directories(dir / "models");
  auto seed = RunKiln("tune --workload " + workload_.path() + " --trials 8 --trials-per-iter 4 " +
                          "--strategy replay --db " + prior + kFast,
                      /*with_stderr=*/false);
  ASSERT_EQ(seed.code, 0) << seed.out;
  const std::string generic = (dir / "models" / "generic.model").string();
  auto train = RunKiln("model train --db " + prior + " --target 'llvm -num-cores=1' -o " + generic);
  ASSERT_EQ(train.code, 0) << train.out;
  // The same model, its header saying it was trained on an AVX-512 CPU (the
  // header's target is not under the booster's checksum), named to come
  // first; and a file that is no model.
  std::ifstream in(generic, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t nl = bytes.find('\n');
  ASSERT_NE(nl, std::string::npos);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(0, nl));
  EXPECT_EQ(header.value("target", ""), "llvm -num-cores=1");
  header["target"] = "llvm -mcpu=skylake-avx512 -num-cores=1";
  std::ofstream((dir / "models" / "a_avx512.model").string(), std::ios::binary)
      << header.dump() << bytes.substr(nl);
  std::ofstream((dir / "models" / "b_broken.model").string()) << "not a model\n";

  TempFile sfm(SmallText("SFM"));
  const std::string tune = "tune --workload " + sfm.path() + " --trials 4 --trials-per-iter 4 -v";
  setenv("KILN_CONFIG_DIR", dir.c_str(), 1);
  auto chosen = RunKiln(tune + " --db " + db_ + kFast);
  auto none = RunKiln(tune + " --db " + db_ + ".none --prior-model none" + kFast);
  unsetenv("KILN_CONFIG_DIR");
  ASSERT_EQ(chosen.code, 0) << chosen.out;
  EXPECT_NE(chosen.out.find("--prior-model auto chose " + generic +
                            ": trained on 'llvm -num-cores=1', the same vector units as "
                            "'llvm -num-cores=1'"),
            std::string::npos)
      << chosen.out;
  EXPECT_NE(chosen.out.find("starting from the model " + generic +
                            " (the prior predicts until there are enough to train)"),
            std::string::npos)
      << chosen.out;
  EXPECT_EQ(chosen.out.find("has not learned yet"), std::string::npos) << chosen.out;
  // A model that knows only its prior explores more (prior_eps_greedy); too
  // few records to hold some out, so the prior is kept.
  EXPECT_NE(chosen.out.find("(the cost model knows only its prior: more random picks)"),
            std::string::npos)
      << chosen.out;
  EXPECT_NE(chosen.out.find("(xgb model starting from " + generic + ", kept)"), std::string::npos)
      << chosen.out;
  ASSERT_EQ(none.code, 0) << none.out;
  EXPECT_EQ(none.out.find("starting from the model"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("has not learned yet"), std::string::npos) << none.out;

  // Without the folder, only the shipped models are there (AVX-512 and AVX2),
  // and neither suits a generic x86-64 target: the reasons are logged.
  auto nothing = RunKiln(tune + " --db " + db_ + ".nothing" + kFast);
  ASSERT_EQ(nothing.code, 0) << nothing.out;
  EXPECT_NE(nothing.out.find("the xgb model starts from nothing: no model of configs/models/ "
                             "suits 'llvm -num-cores=1' ("),
            std::string::npos)
      << nothing.out;
  EXPECT_NE(nothing.out.find("avx512.model: avx512f is on for"), std::string::npos) << nothing.out;
  EXPECT_NE(nothing.out.find("avx2.model: avx2 is on for"), std::string::npos) << nothing.out;
  EXPECT_NE(nothing.out.find("has not learned yet"), std::string::npos) << nothing.out;
  // With the folder again: the refused files and their reasons, when the
  // target suits none (a generic x86-64 with AVX2 added but not FMA, which
  // the shipped AVX2 model was trained with).
  setenv("KILN_CONFIG_DIR", dir.c_str(), 1);
  auto avx2 = RunKiln(tune + " --db " + db_ +
                      ".avx2 --number 1 --repeat 1 --min-repeat-ms 1 "
                      "--target 'llvm -mattr=+avx2 -num-cores=1'");
  unsetenv("KILN_CONFIG_DIR");
  ASSERT_EQ(avx2.code, 0) << avx2.out;
  EXPECT_NE(avx2.out.find("a_avx512.model: avx512f is on"), std::string::npos) << avx2.out;
  EXPECT_NE(avx2.out.find("b_broken.model: '" + (dir / "models" / "b_broken.model").string() +
                          "' is not a usable Kiln cost model"),
            std::string::npos)
      << avx2.out;
  EXPECT_NE(avx2.out.find("generic.model: avx2 is off for 'llvm -num-cores=1'"), std::string::npos)
      << avx2.out;
  EXPECT_NE(avx2.out.find("avx2.model: fma is on for"), std::string::npos) << avx2.out;
  for (const std::string& f : {prior, db_ + ".none", db_ + ".nothing", db_ + ".avx2"}) {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(f + suffix);
  }
  fs::remove_all(dir);
}

// Several workloads share one budget: --workload repeated, the same workload
// twice is one task with the weights added, and a job file may name the
// evolutionary strategy and leave the target to the command line.
TEST_F(TuneCli, SeveralWorkloadsAndJobFile) {
  TempFile sfm(SmallText("SFM"));
  auto r = RunKiln("tune -w " + workload_.path() + " -w " + sfm.path() + " -w " + workload_.path() +
                       " --trials-per-task 4 --trials-per-iter 4 --cost-model random --db " + db_ +
                       " --json" + kFast,
                   /*with_stderr=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u) << r.out;
  EXPECT_EQ(j["tasks"][0]["weight"], 2.0);
  EXPECT_EQ(j["tasks"][1]["weight"], 1.0);
  for (const auto& t : j["tasks"]) EXPECT_EQ(t["trials_done"], 4) << r.out;
  EXPECT_EQ(j["measured_this_run"], 8);

  TempFile job(R"({"workloads": [{"spec": ")" + workload_.path() + R"(", "weight": 3},
                                 {"spec": ")" + sfm.path() + R"("}],
                   "trials": 12, "seed": 3,
                   "strategy": {"name": "evolutionary", "trialsPerIter": 2}})");
  const std::string job_path = job.path() + ".json";  // the extension picks JSON
  fs::copy_file(job.path(), job_path);
  auto k = RunKiln("tune --job " + job_path + " --cost-model random --db " + db_ + " --json" + kFast,
                   /*with_stderr=*/false);
  fs::remove(job_path);
  ASSERT_EQ(k.code, 0) << k.out;
  auto jk = nlohmann::json::parse(k.out);
  ASSERT_EQ(jk["tasks"].size(), 2u);
  EXPECT_EQ(jk["tasks"][0]["weight"], 3.0);
  // 8 records were there; the job asks 12 in all.
  EXPECT_EQ(jk["measured_this_run"], 4) << k.out;
  EXPECT_EQ(jk["target"], "llvm -num-cores=1");
}

// Without a GPU, --build-only still samples the CUDA design space, runs the
// postprocessors and builds every candidate down to a cubin for sm_90.
TEST_F(TuneCli, CudaBuildOnlySamplesAndAssembles) {
  auto r = RunKiln("tune --workload GMM:0 --target 'cuda -arch=sm_90' --build-only "
                   "--trials-per-iter 3 --seed 5");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("3 of 3 candidates built and assembled for sm_90"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bytes of PTX"), std::string::npos) << r.out;
}

// Rejected draws are counted by postprocessor, and each postprocessor's first
// reason is printed (and in --json, "rejected_example"), so that a workload
// that builds few candidates says why.
TEST_F(TuneCli, CudaBuildOnlyNamesTheFirstReasonOfEachRejection) {
  const std::string args =
      "tune --workload GMM:0 --target 'cuda -arch=sm_90' --build-only --trials-per-iter 2 --seed 1";
  auto r = RunKiln(args);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("draws rejected by VerifyGPUCode"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("VerifyGPUCode, first rejection: block '"), std::string::npos) << r.out;
  auto j = RunKiln(args + " --json");
  ASSERT_EQ(j.code, 0) << j.out;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_GT(doc["rejected"].value("VerifyGPUCode", 0), 0) << j.out;
  EXPECT_NE(doc["rejected_example"]["VerifyGPUCode"].get<std::string>().find("threads"),
            std::string::npos)
      << j.out;
}

// Cross-thread reductions (RMSNorm's two sketches: one reduces across
// threads) reach the PTX as warp shuffles, and the summary counts the
// candidates that use them.
TEST_F(TuneCli, CudaBuildOnlyCountsWarpShuffles) {
  auto j = RunKiln("tune --workload RMS:0 --target 'cuda -arch=sm_90' --build-only "
                   "--trials-per-iter 4 --seed 1 --json");
  ASSERT_EQ(j.code, 0) << j.out;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["built"], 4) << j.out;
  EXPECT_GT(doc["warp_shuffle_candidates"].get<int64_t>(), 0) << j.out;
  int64_t shuffling = 0;
  for (const auto& c : doc["candidates"]) shuffling += c["warp_shuffle_instructions"] > 0;
  EXPECT_EQ(shuffling, doc["warp_shuffle_candidates"].get<int64_t>()) << j.out;
}

}  // namespace
