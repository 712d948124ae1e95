// The farm under faults, over loopback with real processes: a worker killed
// with leases in flight, the coordinator killed mid-job and restarted on the
// same database, a worker stopped past its lease deadline and woken. Each
// job ends with exactly its records: none lost, none doubled.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/text/printer.h"
#include "tests/common/reduced_suite.h"
#include "tests/rpc/farm_cluster.h"

namespace {

using kiln::testing::FarmCluster;
using kiln::testing::RunKilnBounded;
using kiln::testing::TempFile;

const std::string kTarget = "'llvm -num-cores=1'";
const std::string kFast = " --number 1 --repeat 1 --min-repeat-ms 1";
const std::string kCoordinatorFlags = "--lease-seconds 3 --heartbeat-seconds 0.5 --threads 1";

std::string SmallGmmText() {
  for (const auto& c : kiln::testing::ReducedSuite()) {
    if (std::string(c.name) == "GMM") return kiln::ir::ToText(c.make());
  }
  return "";
}

// Submits without following; returns the job id (0 on failure).
int64_t SubmitDetached(const FarmCluster& farm, const std::string& workload, int trials) {
  auto r = RunKilnBounded("submit --detach --json --insecure --farm " + farm.address() + " --workload " + workload +
                              " --target " + kTarget + " --trials " + std::to_string(trials) +
                              " --trials-per-iter 4 --seed 5" + kFast,
                          60);
  const size_t brace = r.out.find('{');
  if (r.code != 0 || brace == std::string::npos) {
    ADD_FAILURE() << r.out;
    return 0;
  }
  return nlohmann::json::parse(r.out.substr(brace))["job_id"].get<int64_t>();
}

// Follows the job to its end; returns the final event.
nlohmann::json WaitForJob(const FarmCluster& farm, int64_t id) {
  auto r = RunKilnBounded("jobs watch " + std::to_string(id) + " --json --insecure --farm " + farm.address());
  const size_t brace = r.out.find("{\n");
  EXPECT_EQ(r.code, 0) << r.out << farm.Logs();
  if (brace == std::string::npos) return nlohmann::json::object();
  return nlohmann::json::parse(r.out.substr(brace), nullptr, false);
}

#ifdef KILN_HAVE_RUNNER

TEST(FarmFaults, AKilledWorkersCandidatesAreMeasuredElsewhere) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("kill_worker");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  pid_t victim = farm.StartWorker("--target " + kTarget);
  farm.StartWorker("--target " + kTarget);
  const int64_t id = SubmitDetached(farm, workload.path(), 16);
  ASSERT_GT(id, 0);
  ASSERT_TRUE(farm.WaitForRecords(2)) << farm.Logs();
  farm.Kill(victim);  // one slot, always leased while the job has work
  EXPECT_LT(farm.Records(), 16);  // killed mid-job
  auto done = WaitForJob(farm, id);
  EXPECT_EQ(done["state"], "JOB_STATE_DONE") << done.dump();
  auto [hashes, dup] = farm.TraceHashes();
  EXPECT_EQ(hashes.size(), 16u);
  EXPECT_FALSE(dup);
}

TEST(FarmFaults, AKilledCoordinatorResumesTheJobFromTheDatabase) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("kill_coordinator");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  const std::string address = farm.address();
  farm.StartWorker("--target " + kTarget);
  const int64_t id = SubmitDetached(farm, workload.path(), 16);
  ASSERT_GT(id, 0);
  ASSERT_TRUE(farm.WaitForRecords(4)) << farm.Logs();
  farm.Kill(farm.coordinator());
  const int64_t at_kill = farm.Records();
  {
    kiln::database::Database db = kiln::database::Database::Open(farm.db());
    EXPECT_EQ(db.IntegrityCheck(), "ok");
    ASSERT_TRUE(db.Job(id).has_value());
    EXPECT_EQ(db.Job(id)->state, "running");
  }
  // Same address: the worker dials it again on its own.
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags, address)) << farm.Logs();
  auto done = WaitForJob(farm, id);
  EXPECT_EQ(done["state"], "JOB_STATE_DONE") << done.dump() << farm.Logs();
  auto [hashes, dup] = farm.TraceHashes();
  EXPECT_EQ(hashes.size(), 16u);
  EXPECT_FALSE(dup);
  EXPECT_GE(at_kill, 4);
  EXPECT_LT(at_kill, 16);
  kiln::database::Database db = kiln::database::Database::Open(farm.db(), kiln::database::Database::Mode::kReadOnly);
  EXPECT_EQ(db.IntegrityCheck(), "ok");
  EXPECT_EQ(db.Job(id)->state, "done");
}

TEST(FarmFaults, AStalledWorkerLosesItsLeasesAndItsLateResultsAddNothing) {
  TempFile workload(SmallGmmText());
  FarmCluster farm("stall_worker");
  ASSERT_TRUE(farm.StartCoordinator(kCoordinatorFlags)) << farm.Logs();
  pid_t sleeper = farm.StartWorker("--target " + kTarget);
  farm.StartWorker("--target " + kTarget);
  const int64_t id = SubmitDetached(farm, workload.path(), 12);
  ASSERT_GT(id, 0);
  ASSERT_TRUE(farm.WaitForRecords(2)) << farm.Logs();
  ::kill(sleeper, SIGSTOP);
  EXPECT_LT(farm.Records(), 12);  // stopped mid-job
  // Past the 3 s lease: the coordinator expires the sleeper's lease.
  bool expired = false;
  for (int i = 0; i < 100 && !expired; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto st = RunKilnBounded("farm status --json --insecure --farm " + farm.address(), 30);
    auto j = nlohmann::json::parse(st.out, nullptr, false);
    expired = !j.is_discarded() && j.contains("leasesExpired") && j["leasesExpired"] != "0";
  }
  ::kill(sleeper, SIGCONT);
  EXPECT_TRUE(expired) << farm.Logs();
  auto done = WaitForJob(farm, id);
  EXPECT_EQ(done["state"], "JOB_STATE_DONE") << done.dump();
  auto [hashes, dup] = farm.TraceHashes();
  EXPECT_EQ(hashes.size(), 12u);
  EXPECT_FALSE(dup);
}

#endif  // KILN_HAVE_RUNNER

}  // namespace
