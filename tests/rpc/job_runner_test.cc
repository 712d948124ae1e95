// How a farm job divides its trials among its workloads, its state names
// (stored in the database's jobs table), and the events its watchers see.
#include "rpc/farm/job_runner.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

namespace kiln::rpc::farm {
namespace {

v1::TuningJob Job(int64_t trials, std::vector<double> weights) {
  v1::TuningJob j;
  j.set_trials(trials);
  for (double w : weights) j.add_workloads()->set_weight(w);
  return j;
}

int64_t Sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(JobRunner, SplitsTrialsByWeightSummingToTheJobs) {
  EXPECT_EQ(SplitTrials(Job(10, {1})), (std::vector<int64_t>{10}));
  EXPECT_EQ(SplitTrials(Job(12, {1, 2})), (std::vector<int64_t>{4, 8}));
  // Weight 0 counts as 1; every workload gets at least one trial.
  EXPECT_EQ(SplitTrials(Job(9, {0, 0, 0})), (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(SplitTrials(Job(3, {1000, 1, 1})), (std::vector<int64_t>{1, 1, 1}));
  for (int64_t trials : {3, 7, 100, 1001}) {
    auto s = SplitTrials(Job(trials, {0.5, 3, 1.25}));
    EXPECT_EQ(Sum(s), trials) << trials;
    for (int64_t t : s) EXPECT_GE(t, 1);
  }
}

TEST(JobRunner, StateNamesRoundTrip) {
  for (v1::JobState s : {v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING, v1::JOB_STATE_DONE, v1::JOB_STATE_FAILED,
                         v1::JOB_STATE_CANCELLED}) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
  EXPECT_EQ(ParseJobState("paused"), v1::JOB_STATE_UNSPECIFIED);
}

v1::JobEvent Status(const std::string& message, bool done = false) {
  v1::JobEvent e;
  e.set_state(done ? v1::JOB_STATE_DONE : v1::JOB_STATE_RUNNING);
  e.set_message(message);
  e.set_done(done);
  return e;
}

v1::JobEvent Progress(int64_t done_trials) {
  v1::JobEvent e = Status("");
  e.mutable_progress()->set_trials_done(done_trials);
  return e;
}

// What a watcher reads from `version` on, until the job's end.
std::vector<std::string> Watch(JobHandle& h, int64_t version = 0) {
  std::vector<std::string> seen;
  v1::JobEvent e;
  while (h.NextEvent(&version, &e, 2000)) {
    seen.push_back(e.has_progress() ? "progress " + std::to_string(e.progress().trials_done())
                                    : e.message());
    if (e.done()) break;
  }
  return seen;
}

// A short-lived status (e.g. "the xgb model learned from N records") must
// reach a watcher that reads late: the farm's test of it once failed under
// load when only the latest event was kept.
TEST(JobHandle, AWatcherSeesEveryStatusAndTheLatestProgressHoweverLateItReads) {
  JobHandle h(1, v1::TuningJob{});
  EXPECT_FALSE(h.finished());
  h.Publish(Status("waiting for a worker"));
  h.Publish(Status("the model learned"));
  h.Publish(Progress(4));
  h.Publish(Progress(8));
  h.Publish(Status("done", true));
  EXPECT_TRUE(h.finished());
  EXPECT_EQ(Watch(h), (std::vector<std::string>{"waiting for a worker", "the model learned",
                                                "progress 8", "done"}));

  // A watcher reading while the job runs sees the same statuses in order.
  JobHandle live(2, v1::TuningJob{});
  std::vector<std::string> seen;
  std::thread watcher([&] { seen = Watch(live); });
  live.Publish(Status("waiting for a worker"));
  live.Publish(Status("the model learned"));
  for (int i = 1; i <= 50; ++i) live.Publish(Progress(i));
  live.Publish(Status("done", true));
  watcher.join();
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[0], "waiting for a worker");
  EXPECT_EQ(seen[1], "the model learned");
  EXPECT_EQ(seen[seen.size() - 2], "progress 50");
  EXPECT_EQ(seen.back(), "done");
}

TEST(JobHandle, KeepsABoundedNumberOfEvents) {
  JobHandle h(1, v1::TuningJob{});
  const int n = static_cast<int>(JobHandle::kMaxKeptEvents) + 10;
  for (int i = 0; i < n; ++i) h.Publish(Status("status " + std::to_string(i), i == n - 1));
  std::vector<std::string> seen = Watch(h);
  ASSERT_EQ(seen.size(), JobHandle::kMaxKeptEvents);
  EXPECT_EQ(seen.front(), "status 10");
  EXPECT_EQ(seen.back(), "status " + std::to_string(n - 1));
}

}  // namespace
}  // namespace kiln::rpc::farm
