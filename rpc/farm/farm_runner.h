// FarmRunner: the search's Runner (search/measure.h) on the farm. Measure()
// turns a batch into kiln.v1.MeasureCandidates (workload text and hash,
// target, trace, timing) and queues them with the Dispatcher as one job's
// work in one pool; it returns when workers have sent every result back.
#pragma once

#include <cstdint>
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

 private:
  Dispatcher& dispatcher_;
  const int64_t job_id_;
  const int priority_;
  const std::string pool_;
  // The last task's workload in wire form, printed once per task.
  const void* workload_key_ = nullptr;
  v1::Workload workload_;
};

}  // namespace kiln::rpc::farm
