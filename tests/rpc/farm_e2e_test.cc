// The farm end to end over loopback: a real coordinator and real workers as
// processes, real gRPC, real SQLite, real builds in the isolated runner. A
// small job ends with exactly its records; `kiln query --farm` answers as
// `kiln query --db`; with the replay strategy the farm measures the same
// schedules as `kiln tune` with the same seed.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/text/printer.h"
#include "search/measure.h"
#include "tests/common/reduced_suite.h"
#include "tests/rpc/farm_cluster.h"

namespace {

using kiln::testing::FarmCluster;
using kiln::testing::RunKiln;
using kiln::testing::RunKilnBounded;
using kiln::testing::TempFile;

const std::string kTarget = "'llvm -num-cores=1'";
const std::string kFast = " --number 1 --repeat 1 --min-repeat-ms 1";
// Short leases so that the fault tests see expiry in seconds.
const std::string kCoordinatorFlags = "--lease-seconds 3 --heartbeat-seconds 0.5 --threads 1";

std::string SmallGmmText() {
  for (const auto& c : kiln::testing::ReducedSuite()) {
    if (std::string(c.name) == "GMM") return kiln::ir::ToText(c.make());
  }
  return "";
}

#ifdef KILN_HAVE_RUNNER

TEST(FarmE2E, TwoWorkersRunAJobThatMatchesKilnTuneAndAnswersQueries) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("e2e");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  farm.StartWorker("--target " + kTarget + " --name a");
  farm.StartWorker("--target " + kTarget + " --name b");

  const std::string job = " --workload " + workload.path() + " --target " + kTarget +
                          " --trials 8 --trials-per-iter 4 --seed 3 --strategy replay" + kFast;
  auto r = RunKilnBounded("submit --insecure --farm " + farm.address() + job + " --json");
  ASSERT_EQ(r.code, 0) << r.out << farm.Logs();
  EXPECT_NE(r.out.find("\"JOB_STATE_DONE\""), std::string::npos) << r.out;
  auto [hashes, dup] = farm.TraceHashes();
  EXPECT_EQ(hashes.size(), 8u);
  EXPECT_FALSE(dup);

  // Both workers registered in one pool and measured.
  auto st = RunKilnBounded("farm status --json --insecure --farm " + farm.address(), 30);
  ASSERT_EQ(st.code, 0) << st.out;
  auto status = nlohmann::json::parse(st.out);
  ASSERT_EQ(status["workers"].size(), 2u) << st.out;
  ASSERT_EQ(status["pools"].size(), 1u) << st.out;
  EXPECT_EQ(status["pools"][0]["workers"], 2);

  auto jobs = RunKilnBounded("jobs --json --insecure --farm " + farm.address(), 30);
  ASSERT_EQ(jobs.code, 0) << jobs.out;
  auto listed = nlohmann::json::parse(jobs.out);
  ASSERT_EQ(listed["jobs"].size(), 1u);
  EXPECT_EQ(listed["jobs"][0]["state"], "JOB_STATE_DONE");
  EXPECT_EQ(listed["jobs"][0]["records"], "8");
  // Its records carry the job's id: a report of that job holds all eight.
  {
    const nlohmann::json id = listed["jobs"][0]["id"];
    const std::string job_id = id.is_string() ? id.get<std::string>() : id.dump();
    TempFile page("");
    auto report = RunKiln("report --db " + farm.db() + " --job " + job_id + " -o " + page.path());
    EXPECT_EQ(report.code, 0) << report.out;
    EXPECT_NE(report.out.find(", 8 records"), std::string::npos) << report.out;
  }

  // The same answer from the farm as from the file, hit and miss alike.
  for (const std::string& flags : {std::string(" --json"), std::string(" --why")}) {
    auto via_farm = RunKiln("query --insecure --farm " + farm.address() + " --workload " + workload.path() + " --target " +
                            kTarget + flags);
    auto via_db = RunKiln("query --db " + farm.db() + " --workload " + workload.path() + " --target " + kTarget +
                          flags);
    EXPECT_EQ(via_farm.code, 0) << via_farm.out;
    EXPECT_EQ(via_farm.code, via_db.code);
    EXPECT_TRUE(via_farm.out == via_db.out) << flags << ":\n" << via_farm.out << "\nvs\n" << via_db.out;
  }
  auto miss_farm = RunKiln("query --insecure --farm " + farm.address() + " --workload " + workload.path() +
                           " --target 'llvm -num-cores=2'");
  auto miss_db = RunKiln("query --db " + farm.db() + " --workload " + workload.path() +
                         " --target 'llvm -num-cores=2'");
  EXPECT_EQ(miss_farm.code, 3);
  EXPECT_EQ(miss_farm.out, miss_db.out);

  // `kiln tune` with the same seed on one machine measures the same schedules.
  const std::string local_db = farm.path("local.db");
  auto tune = RunKilnBounded("tune --db " + local_db + job.substr(0, job.find(" --strategy")) +
                             " --strategy replay" + kFast);
  ASSERT_EQ(tune.code, 0) << tune.out;
  EXPECT_EQ(farm.TraceHashes(local_db).first, hashes);
}

TEST(FarmE2E, AJobWithABadWorkloadOrFieldIsRefusedClearly) {
  FarmCluster farm("bad");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  TempFile job("workloads { spec: \"GMM:0\" }\ntarget { spec: \"host\" }\ntrails: 4\n");
  auto r = RunKilnBounded("submit --insecure --farm " + farm.address() + " --job " + job.path(), 30);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find(job.path() + ":3:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trails"), std::string::npos) << r.out;
  auto missing = RunKilnBounded("jobs cancel 42 --insecure --farm " + farm.address(), 30);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("no job 42"), std::string::npos) << missing.out;
}

TEST(FarmE2E, ACancelledJobStopsAndKeepsWhatItCommitted) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("cancel");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  farm.StartWorker("--target " + kTarget);
  auto r = RunKilnBounded("submit --detach --insecure --farm " + farm.address() + " --workload " + workload.path() +
                              " --target " + kTarget + " --trials 200 --trials-per-iter 2" + kFast,
                          60);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("detached from job 1"), std::string::npos) << r.out;
  ASSERT_TRUE(farm.WaitForRecords(2)) << farm.Logs();
  auto c = RunKilnBounded("jobs cancel 1 --json --insecure --farm " + farm.address(), 60);
  ASSERT_EQ(c.code, 0) << c.out;
  auto info = nlohmann::json::parse(c.out);
  EXPECT_EQ(info["state"], "JOB_STATE_CANCELLED") << c.out;
  const int64_t at_cancel = farm.Records();
  EXPECT_LT(at_cancel, 200);
  // Nothing more is measured for it, and it stays cancelled.
  auto watch = RunKilnBounded("jobs watch 1 --insecure --farm " + farm.address(), 60);
  EXPECT_EQ(watch.code, 1) << watch.out;
  EXPECT_NE(watch.out.find("job 1 cancelled"), std::string::npos) << watch.out;
  EXPECT_EQ(farm.Records(), at_cancel);
  EXPECT_FALSE(farm.TraceHashes().second);
}

// A worker's noise figures cross the wire with its results: the records the
// coordinator commits carry the machine load and the spread its local runner
// measured, and `kiln submit` warns about a busy machine as `kiln tune` does.
// Threads of this test keep every CPU busy while the worker measures.
TEST(FarmE2E, AWorkersNoiseFiguresArriveInTheDatabase) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("noise");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  farm.StartWorker("--target " + kTarget);
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    hogs.emplace_back([&stop] {
      volatile uint64_t x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  }
  // Repeats long enough for the CPU counters behind machine_load to tick
  // (every 10 ms; rpc/machine_load.h).
  auto r = RunKilnBounded("submit --insecure --farm " + farm.address() + " --workload " + workload.path() +
                          " --target " + kTarget +
                          " --trials 4 --trials-per-iter 4 --seed 5 --strategy replay --number 1 --repeat 3 "
                          "--min-repeat-ms 30");
  stop.store(true);
  for (std::thread& t : hogs) t.join();
  ASSERT_EQ(r.code, 0) << r.out << farm.Logs();

  kiln::database::Database db =
      kiln::database::Database::Open(farm.db(), kiln::database::Database::Mode::kReadOnly);
  int ok = 0, busy = 0;
  db.ForEachRecord([&](auto, const kiln::database::TuningRecord& rec) {
    if (rec.status != "ok") return;
    ++ok;
    EXPECT_GE(rec.machine_load, 0) << rec.trace_hash;  // known: -1 would mean it was lost on the way
    EXPECT_LE(rec.machine_load, 1) << rec.trace_hash;
    EXPECT_EQ(rec.wide_spread, kiln::search::IsWideSpread(rec.run_seconds)) << rec.trace_hash;
    if (rec.machine_load > kiln::search::kBusyMachineLoad) ++busy;
  });
  ASSERT_GT(ok, 0) << farm.Logs();
  EXPECT_GT(busy, 0) << "every CPU was busy, yet no record says so";
  EXPECT_NE(r.out.find("warning: the machine was busy during "), std::string::npos) << r.out;
}

// The learned search on the farm: an evolutionary job's XGBoost model first
// learns from every record the farm's database holds for the target (here an
// earlier replay job's, of another workload), then from its own batches. It
// starts from the coordinator's prior model (`farm serve --prior-model`)
// when that was trained on a CPU with the job target's vector units.
TEST(FarmE2E, AnEvolutionaryJobLearnsFromTheFarmsEarlierRecords) {
  TempFile gmm(SmallGmmText());
  std::string sfm_text;
  for (const auto& c : kiln::testing::ReducedSuite()) {
    if (std::string(c.name) == "SFM") sfm_text = kiln::ir::ToText(c.make());
  }
  TempFile sfm(sfm_text);
  FarmCluster farm("learned");
  // A prior model of the jobs' target, trained on a local replay run.
  const std::string local = farm.path("local.db"), model = farm.path("prior.model");
  auto tuned =
      RunKilnBounded("tune --workload " + gmm.path() + " --target " + kTarget +
                     " --trials 8 --trials-per-iter 4 --strategy replay --db " + local + kFast);
  ASSERT_EQ(tuned.code, 0) << tuned.out;
  auto trained =
      RunKilnBounded("model train --db " + local + " --target " + kTarget + " -o " + model);
  ASSERT_EQ(trained.code, 0) << trained.out;
  ASSERT_TRUE(
      farm.StartCoordinator(kCoordinatorFlags + std::string(" --verbose --prior-model ") + model))
      << farm.Logs();
  farm.StartWorker("--target " + kTarget);
  auto first = RunKilnBounded(
      "submit --insecure --farm " + farm.address() + " --workload " + gmm.path() + " --target " +
      kTarget + " --trials 40 --trials-per-iter 8 --seed 2 --strategy replay" + kFast);
  ASSERT_EQ(first.code, 0) << first.out << farm.Logs();
  auto second = RunKilnBounded(
      "submit --insecure --farm " + farm.address() + " --workload " + sfm.path() + " --target " +
      kTarget + " --trials 8 --trials-per-iter 4 --seed 2 --strategy evolutionary" + kFast);
  ASSERT_EQ(second.code, 0) << second.out << farm.Logs();
  EXPECT_NE(second.out.find("job 2 done: 8 records"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("running: the xgb model learned from 40 record(s) of the target in "
                            "the farm's database, starting from " +
                            model + "\n"),
            std::string::npos)
      << second.out;
  EXPECT_NE(farm.Logs().find("job 2: the xgb model starts from " + model +
                             ": trained on 'llvm -num-cores=1', the same vector units as 'llvm "
                             "-num-cores=1'"),
            std::string::npos)
      << farm.Logs();
  EXPECT_NE(farm.Logs().find("job 2: the xgb model learned from 40 stored record(s) of 'llvm "
                             "-num-cores=1' (trained; 0 do not replay)"),
            std::string::npos)
      << farm.Logs();
  // 48 records hold out 9, too few to check the prior against: it stays.
  EXPECT_NE(farm.Logs().find("job 2: the xgb model's prior was kept at the end"), std::string::npos)
      << farm.Logs();
  auto [hashes, dup] = farm.TraceHashes();
  EXPECT_EQ(hashes.size(), 48u);
  EXPECT_FALSE(dup);
  // The search that found them is the evolutionary one (its log, at --verbose).
  EXPECT_NE(farm.Logs().find("evolutionary search: round 0:"), std::string::npos) << farm.Logs();
}

#endif  // KILN_HAVE_RUNNER

}  // namespace
