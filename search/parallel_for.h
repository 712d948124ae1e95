// The search's one way of running work in parallel: indices [0, n) split
// over `threads` workers in a fixed stride. Callers write results into slot i
// and merge in index order, and every slot draws from its own RNG forked
// from (seed, round, index), so results never depend on the thread count
// (DESIGN.md, determinism).
#pragma once

#include <algorithm>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace kiln::search {

inline void ParallelFor(int n, int threads, const std::function<void(int)>& fn) {
  threads = std::max(1, std::min(threads, n));
  if (threads <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  auto work = [&](int t) {
    try {
      for (int i = t; i < n; i += threads) fn(i);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace kiln::search
