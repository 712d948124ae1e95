#include "ir/schedule/random_engine.h"

#include <random>
#include <stdexcept>

namespace kiln::ir {

void RandomEngine::Seed(int64_t seed) {
  if (seed == -1) seed = static_cast<int64_t>(std::random_device()());
  seed %= kModulus;
  if (seed < 0) seed += kModulus;
  if (seed == 0) seed = 1;
  state_ = seed;
}

int64_t RandomEngine::SampleInt(int64_t lo, int64_t hi) {
  if (hi <= lo) throw std::invalid_argument("SampleInt: empty range");
  const int64_t span = hi - lo;
  const int64_t range = kModulus - 1;  // Next() - 1 is uniform in [0, range)
  if (span > range) throw std::invalid_argument("SampleInt: range too large");
  const int64_t limit = range - range % span;  // reject the biased tail
  int64_t x;
  do {
    x = Next() - 1;
  } while (x >= limit);
  return lo + x % span;
}

int64_t RandomEngine::SampleCategorical(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) {
    if (!(w >= 0)) throw std::invalid_argument("SampleCategorical: negative or NaN weight");
    total += w;
  }
  if (!(total > 0)) throw std::invalid_argument("SampleCategorical: weights sum to zero");
  double x = SampleUniform() * total;
  double acc = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    if (x < acc && weights[i] > 0) return static_cast<int64_t>(i);
  }
  // Rounding left x at the very top: the last positive weight.
  for (size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return static_cast<int64_t>(i);
  }
  return 0;
}

std::vector<int64_t> RandomEngine::SampleWithoutReplacement(int64_t n, int64_t k) {
  if (k < 0 || k > n) throw std::invalid_argument("SampleWithoutReplacement: k out of range");
  std::vector<int64_t> pool(n);
  for (int64_t i = 0; i < n; ++i) pool[i] = i;
  std::vector<int64_t> out;
  out.reserve(k);
  for (int64_t i = 0; i < k; ++i) {
    int64_t j = SampleInt(i, n);
    std::swap(pool[i], pool[j]);
    out.push_back(pool[i]);
  }
  return out;
}

}  // namespace kiln::ir
