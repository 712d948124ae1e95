// UpdateCostModel: the model learns from every measured candidate of the
// batch; failures are learned as the slowest possible (+inf seconds), as the
// model's label (best cost / cost) makes them ~0.
#include "database/record.h"
#include "search/measure_callback.h"
#include "search/measured_set.h"

namespace kiln::search {
namespace {

class UpdateCostModel : public MeasureCallback {
 public:
  explicit UpdateCostModel(std::string workload_key) : workload_key_(std::move(workload_key)) {}
  std::string Name() const override { return "UpdateCostModel"; }

  void Apply(const TuningState& state, const std::vector<Candidate>& batch,
             const std::vector<MeasureResult>& results) override {
    if (state.cost_model == nullptr) return;
    std::vector<cost_model::Sample> samples;
    for (size_t i = 0; i < batch.size() && i < results.size(); ++i) {
      const MeasureResult& r = results[i];
      if (r.status == MeasureStatus::kInfraError) continue;
      const double median = r.status == MeasureStatus::kOk ? database::Median(r.run_secs) : 0;
      samples.push_back({batch[i].scheduled, workload_key_,
                         SampleSeconds(r.status == MeasureStatus::kOk, r.verified, median)});
    }
    if (!samples.empty()) state.cost_model->Update(samples);
  }

 private:
  std::string workload_key_;
};

}  // namespace

MeasureCallbackPtr MakeUpdateCostModel(std::string workload_key) {
  return std::make_unique<UpdateCostModel>(std::move(workload_key));
}

}  // namespace kiln::search
