// Kiln's one way of running independent work items in parallel: indices
// [0, n) handed out to `threads` workers (the calling thread among them),
// each taking the next index not yet taken. Callers write the result of item
// i into slot i and merge in index order, and every item that draws random
// numbers draws from its own stream forked from (seed, round, index)
// (support/split_mix.h), so results never depend on the thread count or on
// which worker ran which item (docs/ARCHITECTURE.md, data flow).
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace kiln::support {

// Runs fn(i) for every i in [0, n) on at most `threads` threads; rethrows
// the first exception (by index) after all workers stopped.
inline void ParallelFor(int n, int threads, const std::function<void(int)>& fn) {
  threads = std::max(1, std::min(threads, n));
  if (threads <= 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::atomic<int> next{0};
  auto work = [&] {
    for (int i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[static_cast<size_t>(i)] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace kiln::support
