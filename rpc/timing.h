// The timing protocol of docs/ARCHITECTURE.md §10, independent of what is timed:
// one warm-up call, then `repeat` repeats of `number` calls; while a repeat is
// shorter than min_repeat_ms, `number` grows and the repeat is timed again.
// Two departures from TVM:
// - a warm-up call that lasts at least kLongCallSecs (or the caller's
//   shorter `long_call_secs`) and min_repeat_ms is itself the first repeat,
//   and every repeat is one call, so a slow candidate costs `repeat` calls
//   rather than 1 + number * repeat (on a small machine a random conv3d
//   candidate takes ~10 s a call);
// - the caller may hand in the time of a call it just made on the same
//   data (the runner's checked first call, rpc/runner_main/runner_main.cc):
//   that call was the warm-up, and none is made here.
#pragma once

#include <functional>
#include <vector>

#include "search/measure.h"

namespace kiln::rpc {

inline constexpr double kLongCallSecs = 1.0;

// How the protocol starts: by default with a warm-up call of its own.
struct TimingStart {
  // >= 0: the seconds of the call the caller just made, which serves as the
  // warm-up (and, when long, as the first repeat); < 0: make a warm-up call.
  double warm_secs = -1;
  // A warm-up at least this long (and min_repeat_ms) is a long call.
  double long_call_secs = kLongCallSecs;
};

// Returns every repeat's mean seconds per call. `flush` (may be empty) runs
// before each timed run of `number` calls when config.flush_cache is set,
// outside the timed region. Throws std::invalid_argument for number < 1,
// repeat < 1 or a negative / non-finite min_repeat_ms.
std::vector<double> TimeCalls(const std::function<void()>& call, const search::TimingConfig& config,
                              const std::function<void()>& flush, const TimingStart& start = {});

// The same protocol for a clock other than the host's: run(n) makes n calls
// and returns the seconds they took (the GPU runner records CUDA events
// around n launches, rpc/runner_main/cuda_run.cc). TimeCalls is this with
// the steady clock.
std::vector<double> TimeBatches(const std::function<double(int64_t)>& run,
                                const search::TimingConfig& config,
                                const std::function<void()>& flush, const TimingStart& start = {});

// Evicts the CPU caches by streaming through a buffer larger than the last
// level cache (the memory is kept between calls).
void FlushCpuCache();

}  // namespace kiln::rpc
