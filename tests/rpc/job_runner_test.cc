// How a farm job divides its trials among its workloads, and its state names
// (stored in the database's jobs table).
#include "rpc/farm/job_runner.h"

#include <gtest/gtest.h>

#include <numeric>

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

}  // namespace
}  // namespace kiln::rpc::farm
