// The timing protocol of docs/ARCHITECTURE.md §10, independent of what is timed:
// one warm-up call, then `repeat` repeats of `number` calls; while a repeat is
// shorter than min_repeat_ms, `number` grows and the repeat is timed again.
// One departure from TVM: a warm-up call that lasts at least kLongCallSecs
// (and min_repeat_ms) is itself the first repeat, and every repeat is one
// call, so a slow candidate costs `repeat` calls rather than 1 + number *
// repeat (on a small machine a random conv3d candidate takes ~10 s a call).
#pragma once

#include <functional>
#include <vector>

#include "search/measure.h"

namespace kiln::rpc {

inline constexpr double kLongCallSecs = 1.0;

// Returns every repeat's mean seconds per call. `flush` (may be empty) runs
// before each timed run of `number` calls when config.flush_cache is set,
// outside the timed region. Throws std::invalid_argument for number < 1,
// repeat < 1 or a negative / non-finite min_repeat_ms.
std::vector<double> TimeCalls(const std::function<void()>& call, const search::TimingConfig& config,
                              const std::function<void()>& flush);

// The same protocol for a clock other than the host's: run(n) makes n calls
// and returns the seconds they took (the GPU runner records CUDA events
// around n launches, rpc/runner_main/cuda_run.cc). TimeCalls is this with
// the steady clock.
std::vector<double> TimeBatches(const std::function<double(int64_t)>& run,
                                const search::TimingConfig& config,
                                const std::function<void()>& flush);

// Evicts the CPU caches by streaming through a buffer larger than the last
// level cache (the memory is kept between calls).
void FlushCpuCache();

}  // namespace kiln::rpc
