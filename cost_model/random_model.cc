#include "cost_model/random_model.h"

#include "ir/structural_hash.h"

namespace kiln::cost_model {
namespace {

// SplitMix64's finalizer: mixes the structural hash with the seed so that
// different seeds give unrelated orders.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void RandomModel::Update(const std::vector<Sample>& /*samples*/) {}

std::vector<double> RandomModel::Predict(const std::vector<ir::PrimFunc>& scheduled) {
  std::vector<double> scores;
  scores.reserve(scheduled.size());
  for (const ir::PrimFunc& f : scheduled) {
    const uint64_t h = Mix(ir::StructuralHash(f) ^ Mix(seed_));
    scores.push_back(static_cast<double>(h >> 11) * 0x1.0p-53);  // top 53 bits → [0, 1)
  }
  return scores;
}

}  // namespace kiln::cost_model
