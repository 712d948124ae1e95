// rpc::LocalRunner against the real kiln-runner child and the real LLVM
// backend: every fault a candidate can commit (through the test-only hook)
// comes back as the right error kind with a message a person can act on,
// the candidate after each fault is measured normally, results keep batch
// order, and the child is recycled after a crash. Compiled only where
// kiln-runner builds (KILN_HAVE_RUNNER, see tests/CMakeLists.txt).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "ir/schedule/schedule.h"
#include "ir/target.h"
#include "ir/workloads/suite.h"
#include "search/measure.h"
#if KILN_HAVE_RUNNER
#include "rpc/local_runner.h"
#endif

namespace kiln::rpc {
namespace {

#if KILN_HAVE_RUNNER

using ::testing::HasSubstr;
using ::testing::Not;
using search::MeasureCandidate;
using search::MeasureResult;
using search::MeasureStatus;
using search::MeasureTask;

// Short limits: the tests check containment and reporting, not speed.
constexpr double kTimeoutSecs = 3;
constexpr int kRepeat = 2;
constexpr int64_t kMemoryLimitMb = 2048;

MeasureTask Task(const std::string& target = "llvm -num-cores=1") {
  MeasureTask task;
  task.workload = ir::Matmul(64, 64, 64);
  task.target = ir::Target::Parse(target);
  task.timing.number = 1;
  task.timing.repeat = kRepeat;
  task.timing.min_repeat_ms = 1;
  task.timing.timeout_s = kTimeoutSecs;
  task.input_seed = 7;
  return task;
}

// The unscheduled matmul, or a tiled one (split i by 8, j by 16, reorder).
MeasureCandidate Candidate(bool tiled) {
  ir::Schedule sch(Task().workload);
  if (tiled) {
    ir::BlockRV c = sch.GetBlock("C");
    std::vector<ir::LoopRV> l = sch.GetLoops(c);  // i, j, k
    auto i = sch.Split(l[0], {std::monostate{}, int64_t{8}});
    auto j = sch.Split(l[1], {std::monostate{}, int64_t{16}});
    sch.Reorder({i[0], j[0], l[2], i[1], j[1]});
  }
  return {sch.func(), sch.trace().AsJSONString()};
}

// The outer loop of C is parallel: the kernel uses the runtime thread pool.
MeasureCandidate ParallelCandidate() {
  ir::Schedule sch(Task().workload);
  ir::BlockRV c = sch.GetBlock("C");
  sch.Parallel(sch.GetLoops(c)[0]);
  return {sch.func(), sch.trace().AsJSONString()};
}

// A candidate the compiler refuses: its name is not a C identifier.
MeasureCandidate Unbuildable() {
  MeasureCandidate c = Candidate(false);
  c.scheduled.name = "not a kernel name";
  return c;
}

void ExpectMeasured(const MeasureResult& r, const std::string& what) {
  EXPECT_EQ(r.status, MeasureStatus::kOk) << what << ": " << r.message;
  EXPECT_TRUE(r.verified) << what;
  EXPECT_EQ(r.message, "") << what;
  ASSERT_EQ(r.run_secs.size(), static_cast<size_t>(kRepeat)) << what;
  for (double s : r.run_secs) EXPECT_GT(s, 0) << what;
  EXPECT_GT(r.MedianSecs(), 0) << what;
  EXPECT_GT(r.build_secs, 0) << what;
}

void ExpectFailed(const MeasureResult& r, MeasureStatus status, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << ": got " << search::MeasureStatusName(r.status) << ": "
                              << r.message;
  EXPECT_FALSE(r.verified) << what;
  EXPECT_TRUE(r.run_secs.empty()) << what;
  EXPECT_NE(r.message, "") << what;
  EXPECT_EQ(r.MedianSecs(), std::numeric_limits<double>::infinity()) << what;
}

TEST(LocalRunnerTest, EveryFaultIsContainedAndTheNextCandidateIsMeasured) {
  // Each fault is followed by a healthy candidate (alternately unscheduled and
  // tiled, so both the fresh child and the warm one run real schedules).
  const std::vector<TestFault> faults = {
      TestFault::kSegfault,       TestFault::kNone, TestFault::kAbort,         TestFault::kNone,
      TestFault::kDivideByZero,   TestFault::kNone, TestFault::kInfiniteLoop,  TestFault::kNone,
      TestFault::kUnboundedAlloc, TestFault::kNone, TestFault::kWrongValues,   TestFault::kNone,
      TestFault::kNone,           TestFault::kNone,
  };
  LocalRunnerOptions options;
  options.test_faults = faults;
  options.memory_limit_mb = kMemoryLimitMb;
  LocalRunner runner(options);
  std::vector<MeasureCandidate> batch;
  for (size_t i = 0; i < faults.size(); ++i) batch.push_back(Candidate(i % 4 == 3));
  batch[12] = Unbuildable();  // a build error, then a healthy candidate
  const std::vector<MeasureResult> r = runner.Measure(Task(), batch);
  ASSERT_EQ(r.size(), batch.size());

  ExpectFailed(r[0], MeasureStatus::kRunCrash, "segfault");
  EXPECT_THAT(r[0].message, HasSubstr("SIGSEGV"));
  ExpectFailed(r[2], MeasureStatus::kRunCrash, "abort");
  EXPECT_THAT(r[2].message, HasSubstr("SIGABRT"));
  ExpectFailed(r[4], MeasureStatus::kRunCrash, "divide by zero");
  EXPECT_THAT(r[4].message, HasSubstr("SIGFPE"));
  ExpectFailed(r[6], MeasureStatus::kTimeout, "infinite loop");
  EXPECT_THAT(r[6].message, HasSubstr("longer than the limit of 3 s"));
  ExpectFailed(r[8], MeasureStatus::kRunCrash, "unbounded allocation");
  EXPECT_THAT(r[8].message, HasSubstr("out of memory"));
  EXPECT_THAT(r[8].message, HasSubstr("2048 MiB"));
  ExpectFailed(r[10], MeasureStatus::kWrongResult, "wrong values");
  // The hook corrupts the first element of the output; the message names it.
  EXPECT_THAT(r[10].message, HasSubstr("C[0, 0]: expected"));
  EXPECT_THAT(r[10].message, HasSubstr("1 of 4096 elements differ"));
  ExpectFailed(r[12], MeasureStatus::kBuildError, "unbuildable");
  EXPECT_THAT(r[12].message, HasSubstr("'not a kernel name' is not a C identifier"));
  for (size_t i = 1; i < r.size(); i += 2) ExpectMeasured(r[i], "candidate " + std::to_string(i));
  // One child to start with and one after each of the six faults that end or
  // may poison it (a wrong result may come from stray writes into the child's
  // reference outputs); a build error never reaches the child.
  EXPECT_EQ(runner.stats().children_started, 7);
  EXPECT_EQ(runner.stats().references_built, 1);
  // Only the first child ran the reference; the others were given its outputs.
  EXPECT_EQ(runner.stats().references_run, 1);
}

TEST(LocalRunnerTest, AStackOverflowAndAStrayWriteAreContained) {
  LocalRunnerOptions options;
  options.test_faults = {TestFault::kStackOverflow, TestFault::kNone, TestFault::kStrayWrite,
                         TestFault::kNone};
  LocalRunner runner(options);
  const std::vector<MeasureResult> r =
      runner.Measure(Task(), {Candidate(false), Candidate(true), Candidate(true), Candidate(false)});
  ASSERT_EQ(r.size(), 4u);
  ExpectFailed(r[0], MeasureStatus::kRunCrash, "stack overflow");
  EXPECT_THAT(r[0].message, HasSubstr("SIGSEGV"));
  // The write into the input A is seen: every argument is compared.
  ExpectFailed(r[2], MeasureStatus::kWrongResult, "stray write");
  EXPECT_THAT(r[2].message, HasSubstr("A[0, 0]: expected"));
  ExpectMeasured(r[1], "after the stack overflow");
  ExpectMeasured(r[3], "after the stray write");
  EXPECT_EQ(runner.stats().children_started, 3);
}

TEST(LocalRunnerTest, AMeasurementCarriesItsNoiseFigures) {
  LocalRunner runner;
  MeasureTask task = Task();
  task.timing.repeat = 3;
  task.timing.min_repeat_ms = 20;  // the CPU counters behind machine_load tick every 10 ms
  const std::vector<MeasureResult> r = runner.Measure(task, {Candidate(true)});
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].status, MeasureStatus::kOk) << r[0].message;
  // Linux: the other processes' share of the CPUs is known, between 0 and 1.
  EXPECT_GE(r[0].machine_load, 0);
  EXPECT_LE(r[0].machine_load, 1);
  EXPECT_EQ(r[0].wide_spread, search::IsWideSpread(r[0].run_secs));
}

TEST(LocalRunnerTest, TheChildIsRecycledAfterACrash) {
  LocalRunnerOptions options;
  options.test_faults = {TestFault::kNone, TestFault::kSegfault};
  LocalRunner runner(options);
  // The second candidate kills the child at the end of the batch ...
  std::vector<MeasureResult> first = runner.Measure(Task(), {Candidate(false), Candidate(true)});
  ASSERT_EQ(first.size(), 2u);
  ExpectMeasured(first[0], "first batch, candidate 0");
  ExpectFailed(first[1], MeasureStatus::kRunCrash, "first batch, candidate 1");
  // ... and the next batch gets a fresh one.
  EXPECT_EQ(runner.stats().children_started, 1);
  std::vector<MeasureResult> second = runner.Measure(Task(), {Candidate(true)});
  ASSERT_EQ(second.size(), 1u);
  ExpectMeasured(second[0], "second batch");
  EXPECT_EQ(runner.stats().children_started, 2);
  // The same again for a batch that only crashes.
  std::vector<MeasureResult> third = runner.Measure(Task(), {Candidate(true), Candidate(false)});
  ExpectMeasured(third[0], "third batch, candidate 0");
  ExpectFailed(third[1], MeasureStatus::kRunCrash, "third batch, candidate 1");
  ExpectMeasured(runner.Measure(Task(), {Candidate(false)})[0], "fourth batch");
  EXPECT_EQ(runner.stats().children_started, 3);
  // The reference was built and run once: the task did not change.
  EXPECT_EQ(runner.stats().references_built, 1);
  EXPECT_EQ(runner.stats().references_run, 1);
}

TEST(LocalRunnerTest, ResultsComeBackInBatchOrder) {
  // Builds finish in any order on parallel threads; results must not.
  LocalRunnerOptions options;
  options.build_threads = 4;
  options.test_faults = {TestFault::kNone, TestFault::kWrongValues, TestFault::kNone,
                         TestFault::kAbort, TestFault::kNone};
  LocalRunner runner(options);
  std::vector<MeasureCandidate> batch = {Candidate(true), Candidate(false), Unbuildable(),
                                         Candidate(false), Candidate(true), Unbuildable()};
  std::vector<MeasureResult> r = runner.Measure(Task(), batch);
  ASSERT_EQ(r.size(), batch.size());
  ExpectMeasured(r[0], "0");
  ExpectFailed(r[1], MeasureStatus::kWrongResult, "1");
  ExpectFailed(r[2], MeasureStatus::kBuildError, "2");
  ExpectFailed(r[3], MeasureStatus::kRunCrash, "3");
  ExpectMeasured(r[4], "4");
  ExpectFailed(r[5], MeasureStatus::kBuildError, "5");
  EXPECT_TRUE(runner.Measure(Task(), {}).empty());
}

TEST(LocalRunnerTest, AllCandidatesOfABatchCanFail) {
  LocalRunner runner;
  std::vector<MeasureResult> r = runner.Measure(Task(), {Unbuildable(), Unbuildable()});
  ASSERT_EQ(r.size(), 2u);
  ExpectFailed(r[0], MeasureStatus::kBuildError, "0");
  ExpectFailed(r[1], MeasureStatus::kBuildError, "1");
}

TEST(LocalRunnerTest, ABadTimingConfigIsAnInfraErrorForEveryCandidate) {
  LocalRunner runner;
  auto bad = [](auto edit) {
    MeasureTask t = Task();
    edit(t.timing);
    return t;
  };
  const std::vector<MeasureTask> tasks = {
      bad([](search::TimingConfig& c) { c.number = 0; }),
      bad([](search::TimingConfig& c) { c.repeat = -1; }),
      bad([](search::TimingConfig& c) { c.min_repeat_ms = std::nan(""); }),
      bad([](search::TimingConfig& c) { c.timeout_s = 0; }),
  };
  for (const MeasureTask& task : tasks) {
    std::vector<MeasureResult> r = runner.Measure(task, {Candidate(false), Candidate(true)});
    ASSERT_EQ(r.size(), 2u);
    for (const MeasureResult& m : r) {
      ExpectFailed(m, MeasureStatus::kInfraError, "bad timing");
      EXPECT_THAT(m.message, HasSubstr("bad timing config"));
    }
  }
  EXPECT_EQ(runner.stats().children_started, 0);
  ExpectMeasured(runner.Measure(Task(), {Candidate(true)})[0], "after bad timing configs");
}

TEST(LocalRunnerTest, AMissingRunnerIsAnInfraError) {
  LocalRunnerOptions options;
  options.runner_path = "/nonexistent-dir/kiln-runner";
  LocalRunner runner(options);
  std::vector<MeasureResult> r = runner.Measure(Task(), {Candidate(false), Unbuildable()});
  ASSERT_EQ(r.size(), 2u);
  ExpectFailed(r[0], MeasureStatus::kInfraError, "missing runner");
  EXPECT_THAT(r[0].message, HasSubstr("/nonexistent-dir/kiln-runner"));
  // A build error is still a build error: it never reached the runner.
  ExpectFailed(r[1], MeasureStatus::kBuildError, "unbuildable");
}

TEST(LocalRunnerTest, AnUnbuildableReferenceIsAnInfraErrorForEveryCandidate) {
  LocalRunner runner;
  MeasureTask task = Task();
  task.workload.name = "no kernel name";
  std::vector<MeasureResult> r = runner.Measure(task, {Candidate(false), Candidate(true)});
  ASSERT_EQ(r.size(), 2u);
  for (const MeasureResult& m : r) {
    ExpectFailed(m, MeasureStatus::kInfraError, "bad reference");
    EXPECT_THAT(m.message, HasSubstr("reference"));
    EXPECT_THAT(m.message, HasSubstr("not a C identifier"));
  }
  // The runner is still usable for a good task.
  ExpectMeasured(runner.Measure(Task(), {Candidate(true)})[0], "after a bad reference");
}

TEST(LocalRunnerTest, ADifferentSeedOrWorkloadIsMeasuredAgainstItsOwnReference) {
  LocalRunner runner;
  MeasureTask a = Task();
  MeasureTask b = Task();
  b.input_seed = 8;
  ExpectMeasured(runner.Measure(a, {Candidate(true)})[0], "seed 7");
  ExpectMeasured(runner.Measure(b, {Candidate(true)})[0], "seed 8");
  // Another workload: its own arguments and reference, then back to the first.
  MeasureTask small = Task();
  small.workload = ir::Matmul(32, 32, 32);
  MeasureCandidate own{small.workload, ""};
  ExpectMeasured(runner.Measure(small, {own})[0], "32^3");
  ExpectMeasured(runner.Measure(a, {Candidate(false)})[0], "back to 64^3");
  ExpectMeasured(runner.Measure(b, {Candidate(false)})[0], "back to seed 8");
  // Each reference was built and run once: alternating tasks keep theirs.
  EXPECT_EQ(runner.stats().references_built, 3);
  EXPECT_EQ(runner.stats().references_run, 3);
}

// The kiln-runner children of this process: pids whose parent is us.
std::vector<int> RunnerChildren() {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = ::readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so parse after ')'.
    const size_t close = line.rfind(')');
    const size_t open = line.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == ::getpid() && line.substr(open + 1, close - open - 1) == "kiln-runner") {
      pids.push_back(pid);
    }
  }
  ::closedir(proc);
  return pids;
}

int ThreadsOf(int pid) {
  int n = 0;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (d == nullptr) return -1;
  while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

TEST(LocalRunnerTest, TheKernelThreadPoolHasTheTargetsCoresAndNoMore) {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  // Never more threads than this machine has cores, even for a target that
  // claims more: the child is the only thing running while a kernel is timed.
  for (int cores : {1, 2, hw, hw + 3}) {
    LocalRunner runner;
    std::vector<MeasureResult> r =
        runner.Measure(Task("llvm -num-cores=" + std::to_string(cores)), {ParallelCandidate()});
    ExpectMeasured(r[0], "num-cores=" + std::to_string(cores));
    std::vector<int> children = RunnerChildren();
    ASSERT_EQ(children.size(), 1u) << "one child runs the candidates, one at a time";
    // The main thread runs the first chunk; the pool adds cores - 1 workers.
    EXPECT_EQ(ThreadsOf(children[0]), std::max(1, std::min(cores, hw))) << "num-cores=" << cores;
  }
  EXPECT_TRUE(RunnerChildren().empty()) << "a destroyed runner leaves no child behind";
}

#else

TEST(LocalRunnerTest, NeedsKilnRunner) {
  GTEST_SKIP() << "kiln-runner is not built here (no LLVM backend)";
}

#endif

}  // namespace
}  // namespace kiln::rpc
