#include "rpc/farm/farm_runner.h"

#include "ir/text/printer.h"
#include "ir/structural_hash.h"
#include "rpc/proto_convert.h"

namespace kiln::rpc::farm {

std::vector<search::MeasureResult> FarmRunner::Measure(const search::MeasureTask& task,
                                                       const std::vector<search::MeasureCandidate>& batch) {
  if (workload_key_ != &task || workload_.text().empty()) {
    workload_.set_text(ir::ToText(task.workload));
    workload_.set_structural_hash(ir::StructuralHashHex(task.workload));
    workload_key_ = &task;
  }
  std::vector<v1::MeasureCandidate> candidates;
  candidates.reserve(batch.size());
  for (const search::MeasureCandidate& c : batch) {
    v1::MeasureCandidate p;
    *p.mutable_workload() = workload_;
    p.mutable_target()->set_spec(task.target.ToString());
    p.mutable_trace()->set_json(c.trace_json);
    *p.mutable_timing() = ToProto(task.timing);
    p.set_input_seed(task.input_seed);
    candidates.push_back(std::move(p));
  }
  std::vector<search::MeasureResult> results =
      dispatcher_.MeasureBatch(job_id_, priority_, pool_, std::move(candidates));
  returned_ = std::chrono::steady_clock::now();
  return results;
}

}  // namespace kiln::rpc::farm
