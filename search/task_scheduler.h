// Which task of a multi-task tuning run gets the next batch (TVM's task
// schedulers; the policy only: the driver that measures is search/tune.h's
// loop run one batch at a time per task).
//
// Round-robin gives every live task a batch in turn. The gradient scheduler
// (TVM's default, a simplification of Ansor's) first gives each task one
// batch, then picks the task whose weighted latency is expected to drop the
// most: for a task with best-latency history b[0..n-1] (one entry per batch),
//   g1 = (b[n-1-w] - b[n-1]) / w   when n > w, else 0   (recent progress)
//   g2 = b[n-1] / n                                     (1/n decay)
//   g  = (alpha * g1 + (1 - alpha) * g2) * weight
// with alpha 0.2 and window w 3. A task with no valid result yet has g -1e9;
// when every live task has the same g, a live task is drawn at random from
// the scheduler's own seeded generator, so a run repeats exactly.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::search {

enum class TaskSchedulerKind { kRoundRobin, kGradient };
// "round-robin" / "gradient"; std::invalid_argument naming the value otherwise.
TaskSchedulerKind ParseTaskSchedulerKind(const std::string& name);

struct TaskSchedulerConfig {
  TaskSchedulerKind kind = TaskSchedulerKind::kGradient;
  double alpha = 0.2;
  int window = 3;
  uint64_t seed = 0;
};

class TaskScheduler {
 public:
  // One weight per task (how many times a model runs that kernel; > 0).
  // Throws std::invalid_argument for no tasks, a bad weight or a bad config.
  TaskScheduler(std::vector<double> weights, TaskSchedulerConfig config = {});

  // The task to give the next batch, or -1 when every task is finished.
  int Next();
  // After a batch of `task`: its best latency so far in seconds (+inf, or
  // any value that is not finite and positive, when it has none yet).
  void Report(int task, double best_secs);
  // The task gets no more batches (its budget is met or its space is empty).
  void Finish(int task);

  bool finished(int task) const { return tasks_.at(static_cast<size_t>(task)).finished; }
  int num_tasks() const { return static_cast<int>(tasks_.size()); }
  // Sum of weight x best latency over the tasks that have a result (TVM's
  // "Total latency").
  double WeightedLatency() const;
  // The last reported best of a task (+inf when none).
  double best(int task) const;

 private:
  struct Task {
    double weight;
    std::vector<double> history;  // best latency after each reported batch
    bool finished = false;
  };
  int NextRoundRobin();
  int NextGradient();
  double Gradient(const Task& t) const;

  std::vector<Task> tasks_;
  TaskSchedulerConfig config_;
  std::mt19937_64 rng_;
  int cursor_ = -1;  // round-robin position
};

}  // namespace kiln::search
