// Kiln's schedule RNG: the Park–Miller "minimal standard" generator TVM uses
// (multiplier 48271, modulus 2^31 - 1), with TVM's fork-seed rule, so that a
// seed means the same decisions here as there.
//
// Every sampling routine below is written out by hand rather than through
// <random> distributions: those are implementation-defined and would give
// different decisions on another standard library.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::ir {

class RandomEngine {
 public:
  static constexpr int64_t kModulus = 2147483647;  // 2^31 - 1
  static constexpr int64_t kMultiplier = 48271;

  // seed is reduced into [1, modulus); -1 draws one from std::random_device.
  explicit RandomEngine(int64_t seed = 1) { Seed(seed); }
  void Seed(int64_t seed);
  int64_t state() const { return state_; }

  // Next value in [1, modulus).
  int64_t Next() {
    state_ = (state_ * kMultiplier) % kModulus;
    return state_;
  }
  // A new seed for a child engine, as TVM's ForkSeed: (next * 32767) mod 1999999973.
  int64_t ForkSeed() { return (Next() * 32767) % 1999999973; }

  // Uniform integer in [lo, hi) (hi > lo), without modulo bias.
  int64_t SampleInt(int64_t lo, int64_t hi);
  // Uniform real in [0, 1).
  double SampleUniform() { return static_cast<double>(Next() - 1) / (kModulus - 1); }
  // Index i with probability weights[i] / sum(weights). Weights must be >= 0
  // with a positive sum.
  int64_t SampleCategorical(const std::vector<double>& weights);
  // k distinct values from [0, n), in the order drawn.
  std::vector<int64_t> SampleWithoutReplacement(int64_t n, int64_t k);

 private:
  int64_t state_ = 1;
};

}  // namespace kiln::ir
