#include "cost_model/random_model.h"

#include "ir/structural_hash.h"
#include "support/split_mix.h"

namespace kiln::cost_model {

void RandomModel::Update(const std::vector<Sample>& /*samples*/) {}

std::vector<double> RandomModel::Predict(const std::vector<ir::PrimFunc>& scheduled) {
  std::vector<double> scores;
  scores.reserve(scheduled.size());
  for (const ir::PrimFunc& f : scheduled) {
    const uint64_t h = support::SplitMix64(ir::StructuralHash(f) ^ support::SplitMix64(seed_));
    scores.push_back(static_cast<double>(h >> 11) * 0x1.0p-53);  // top 53 bits → [0, 1)
  }
  return scores;
}

}  // namespace kiln::cost_model
