// The timing protocol of metaschedule.md §10, independent of what is timed:
// one warm-up call, then `repeat` repeats of `number` calls; while a repeat is
// shorter than min_repeat_ms, `number` grows and the repeat is timed again.
#pragma once

#include <functional>
#include <vector>

#include "search/measure.h"

namespace kiln::rpc {

// Returns every repeat's mean seconds per call. `flush` (may be empty) runs
// before each timed run of `number` calls when config.flush_cache is set,
// outside the timed region. Throws std::invalid_argument for number < 1,
// repeat < 1 or a negative / non-finite min_repeat_ms.
std::vector<double> TimeCalls(const std::function<void()>& call, const search::TimingConfig& config,
                              const std::function<void()>& flush);

// Evicts the CPU caches by streaming through a buffer larger than the last
// level cache (the memory is kept between calls).
void FlushCpuCache();

}  // namespace kiln::rpc
