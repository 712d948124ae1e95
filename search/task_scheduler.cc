#include "search/task_scheduler.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kiln::search {
namespace {

bool Valid(double secs) { return std::isfinite(secs) && secs > 0; }

constexpr double kNoResult = -1e9;

}  // namespace

TaskSchedulerKind ParseTaskSchedulerKind(const std::string& name) {
  if (name == "round-robin") return TaskSchedulerKind::kRoundRobin;
  if (name == "gradient") return TaskSchedulerKind::kGradient;
  throw std::invalid_argument("task scheduler '" + name + "': expected 'round-robin' or 'gradient'");
}

TaskScheduler::TaskScheduler(std::vector<double> weights, TaskSchedulerConfig config)
    : config_(config), rng_(config.seed) {
  if (weights.empty()) throw std::invalid_argument("task scheduler: no tasks");
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] > 0) || !std::isfinite(weights[i])) {
      throw std::invalid_argument("task scheduler: task " + std::to_string(i) +
                                  " has weight " + std::to_string(weights[i]) +
                                  " (must be positive)");
    }
    tasks_.push_back({weights[i], {}, false});
  }
  if (!(config.alpha >= 0 && config.alpha <= 1))
    throw std::invalid_argument("task scheduler: alpha must be in [0, 1]");
  if (config.window < 1) throw std::invalid_argument("task scheduler: window must be at least 1");
}

int TaskScheduler::Next() {
  return config_.kind == TaskSchedulerKind::kRoundRobin ? NextRoundRobin() : NextGradient();
}

int TaskScheduler::NextRoundRobin() {
  const int n = num_tasks();
  for (int step = 1; step <= n; ++step) {
    const int i = (cursor_ + step) % n;
    if (!tasks_[static_cast<size_t>(i)].finished) {
      cursor_ = i;
      return i;
    }
  }
  return -1;
}

double TaskScheduler::Gradient(const Task& t) const {
  const size_t n = t.history.size();
  if (n == 0 || !Valid(t.history.back())) return kNoResult;
  const size_t w = static_cast<size_t>(config_.window);
  double g1 = 0;
  if (n > w && Valid(t.history[n - 1 - w])) g1 = (t.history[n - 1 - w] - t.history[n - 1]) / w;
  const double g2 = t.history[n - 1] / static_cast<double>(n);
  return (config_.alpha * g1 + (1 - config_.alpha) * g2) * t.weight;
}

int TaskScheduler::NextGradient() {
  // Warm-up: every live task gets one batch before gradients decide (a
  // gradient needs a first result); tasks finished before they ran, e.g. on
  // resume, need none.
  for (int step = 1; step <= num_tasks(); ++step) {
    const int i = (cursor_ + step) % num_tasks();
    const Task& t = tasks_[static_cast<size_t>(i)];
    if (!t.finished && t.history.empty()) {
      cursor_ = i;
      return i;
    }
  }
  std::vector<int> live;
  std::vector<double> g;
  for (int i = 0; i < num_tasks(); ++i) {
    if (tasks_[static_cast<size_t>(i)].finished) continue;
    live.push_back(i);
    g.push_back(Gradient(tasks_[static_cast<size_t>(i)]));
  }
  if (live.empty()) return -1;
  size_t best = 0;
  bool all_equal = true;
  for (size_t k = 1; k < live.size(); ++k) {
    if (g[k] != g[0]) all_equal = false;
    if (g[k] > g[best]) best = k;
  }
  if (all_equal && live.size() > 1) {
    std::uniform_int_distribution<size_t> pick(0, live.size() - 1);
    return live[pick(rng_)];
  }
  return live[best];
}

void TaskScheduler::Report(int task, double best_secs) {
  Task& t = tasks_.at(static_cast<size_t>(task));
  t.history.push_back(Valid(best_secs) ? best_secs : std::numeric_limits<double>::infinity());
}

void TaskScheduler::Finish(int task) { tasks_.at(static_cast<size_t>(task)).finished = true; }

double TaskScheduler::best(int task) const {
  const Task& t = tasks_.at(static_cast<size_t>(task));
  return t.history.empty() ? std::numeric_limits<double>::infinity() : t.history.back();
}

double TaskScheduler::WeightedLatency() const {
  double total = 0;
  for (const Task& t : tasks_)
    if (!t.history.empty() && Valid(t.history.back())) total += t.weight * t.history.back();
  return total;
}

}  // namespace kiln::search
