// The task schedulers' policy (search/task_scheduler.h) on hand-made latency
// histories whose gradients are computed by hand.
#include "search/task_scheduler.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace kiln::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(TaskScheduler, RoundRobinCyclesOverLiveTasks) {
  TaskScheduler s({1, 1, 1}, {TaskSchedulerKind::kRoundRobin});
  EXPECT_EQ(s.Next(), 0);
  EXPECT_EQ(s.Next(), 1);
  EXPECT_EQ(s.Next(), 2);
  EXPECT_EQ(s.Next(), 0);
  s.Finish(1);
  EXPECT_EQ(s.Next(), 2);
  EXPECT_EQ(s.Next(), 0);
  s.Finish(0);
  s.Finish(2);
  EXPECT_EQ(s.Next(), -1);
}

TEST(TaskScheduler, GradientFirstVisitsEveryTaskThenFollowsTheWeightedGradient) {
  TaskScheduler s({1, 10}, {TaskSchedulerKind::kGradient});
  EXPECT_EQ(s.Next(), 0);
  s.Report(0, 1e-3);
  EXPECT_EQ(s.Next(), 1);
  s.Report(1, 2e-4);
  // g2 only (n = 1 <= window): task 0: 1e-3 / 1 * 0.8 * 1 = 8e-4;
  // task 1: 2e-4 / 1 * 0.8 * 10 = 1.6e-3 -> task 1.
  EXPECT_EQ(s.Next(), 1);
  s.Report(1, 2e-4);
  // task 1: 2e-4 / 2 * 0.8 * 10 = 8e-4, task 0 still 8e-4: equal up to
  // rounding, so either pick (argmax, or the seeded draw for a tie) is right.
  const int tie = s.Next();
  EXPECT_TRUE(tie == 0 || tie == 1);
  s.Report(tie, tie == 0 ? 1e-3 : 2e-4);
  // The weighted latency counts each task's last best.
  EXPECT_DOUBLE_EQ(s.WeightedLatency(), 1e-3 + 10 * 2e-4);
}

TEST(TaskScheduler, GradientUsesRecentProgressOverTheWindow) {
  TaskSchedulerConfig c{TaskSchedulerKind::kGradient, 0.2, 3, 7};
  TaskScheduler s({1, 1}, c);
  // Warm-up, then give task 0 a history of four batches with strong progress.
  EXPECT_EQ(s.Next(), 0);
  s.Report(0, 8e-3);
  EXPECT_EQ(s.Next(), 1);
  s.Report(1, 1e-3);
  for (double b : {4e-3, 2e-3, 1e-3}) s.Report(0, b);
  // task 0: n = 4, g1 = (8e-3 - 1e-3) / 3, g2 = 1e-3 / 4:
  //   0.2 * 2.333e-3 + 0.8 * 2.5e-4 = 6.667e-4;  task 1: n = 1, 0.8 * 1e-3 = 8e-4.
  EXPECT_EQ(s.Next(), 1);
  s.Report(1, 1e-3);  // task 1: n = 2, 0.8 * 5e-4 = 4e-4 -> task 0 now.
  EXPECT_EQ(s.Next(), 0);
}

TEST(TaskScheduler, TasksWithoutResultsComeLastAndFinishedOnesNever) {
  TaskScheduler s({1, 1, 1});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.Next(), i);
  s.Report(0, kInf);   // every candidate failed
  s.Report(1, 1e-3);
  s.Report(2, 2e-3);
  EXPECT_EQ(s.Next(), 2);
  s.Finish(2);
  EXPECT_EQ(s.Next(), 1);
  s.Finish(1);
  EXPECT_EQ(s.Next(), 0);
  s.Finish(0);
  EXPECT_EQ(s.Next(), -1);
  EXPECT_DOUBLE_EQ(s.WeightedLatency(), 1e-3 + 2e-3);
}

TEST(TaskScheduler, TiesAreBrokenBySeedSoRunsRepeat) {
  auto picks = [](uint64_t seed) {
    TaskScheduler s({1, 1, 1, 1}, {TaskSchedulerKind::kGradient, 0.2, 3, seed});
    std::vector<int> out;
    for (int k = 0; k < 12; ++k) {
      const int i = s.Next();
      out.push_back(i);
      s.Report(i, kInf);  // no results anywhere: every g equal
    }
    return out;
  };
  EXPECT_EQ(picks(3), picks(3));
  EXPECT_NE(picks(3), picks(4));
}

TEST(TaskScheduler, RefusesBadInput) {
  EXPECT_THROW(TaskScheduler({}), std::invalid_argument);
  EXPECT_THROW(TaskScheduler({1, 0}), std::invalid_argument);
  EXPECT_THROW(TaskScheduler({1}, {TaskSchedulerKind::kGradient, 1.5, 3, 0}), std::invalid_argument);
  EXPECT_THROW(ParseTaskSchedulerKind("fifo"), std::invalid_argument);
  EXPECT_EQ(ParseTaskSchedulerKind("round-robin"), TaskSchedulerKind::kRoundRobin);
}

}  // namespace
}  // namespace kiln::search
