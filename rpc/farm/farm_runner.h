// FarmRunner: the search's Runner (search/measure.h) on the farm. Measure()
// turns a batch into kiln.v1.MeasureCandidates (workload text and hash,
// target, trace, timing) and queues them with the Dispatcher as one job's
// work in one pool; it returns when workers have sent every result back.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rpc/farm/dispatcher.h"
#include "search/measure.h"

namespace kiln::rpc::farm {

class FarmRunner : public search::Runner {
 public:
  FarmRunner(Dispatcher& dispatcher, int64_t job_id, int priority, std::string pool)
      : dispatcher_(dispatcher), job_id_(job_id), priority_(priority), pool_(std::move(pool)) {}
  std::vector<search::MeasureResult> Measure(const search::MeasureTask& task,
                                             const std::vector<search::MeasureCandidate>& batch) override;
  // When the last batch's results came back, once: the job thread measures
  // from it to its records committed (kiln_farm_commit_seconds).
  std::optional<std::chrono::steady_clock::time_point> TakeReturnTime() {
    auto t = returned_;
    returned_.reset();
    return t;
  }

 private:
  Dispatcher& dispatcher_;
  const int64_t job_id_;
  const int priority_;
  const std::string pool_;
  // The last task's workload in wire form, printed once per task.
  const void* workload_key_ = nullptr;
  v1::Workload workload_;
  std::optional<std::chrono::steady_clock::time_point> returned_;
};

}  // namespace kiln::rpc::farm
