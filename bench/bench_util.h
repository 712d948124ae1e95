// Timing helper shared by the benchmarks.
#pragma once

#include <algorithm>
#include <chrono>

namespace kiln::bench {

// Best wall time of `rounds` runs of f, in seconds (the least disturbed run
// on a shared, noisy machine).
template <typename F>
double BestSeconds(int rounds, F&& f) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace kiln::bench
