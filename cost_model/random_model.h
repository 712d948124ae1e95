// A cost model that knows nothing (TVM's RandomModel), for tests and as the
// search's baseline: a program's score is a hash of its structure and the
// model's seed, uniform in [0, 1). Unlike a model drawing from an RNG, the
// score of a program does not depend on which programs were asked before or
// in what order, so searches that use it stay deterministic under threads.
#pragma once

#include <cstdint>

#include "cost_model/cost_model.h"

namespace kiln::cost_model {

class RandomModel final : public CostModel {
 public:
  explicit RandomModel(uint64_t seed = 0) : seed_(seed) {}
  void Update(const std::vector<Sample>& samples) override;  // learns nothing
  std::vector<double> Predict(const std::vector<ir::PrimFunc>& scheduled) override;
  std::string Name() const override { return "random"; }

 private:
  uint64_t seed_;
};

}  // namespace kiln::cost_model
