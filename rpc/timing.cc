#include "rpc/timing.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::rpc {

std::vector<double> TimeBatches(const std::function<double(int64_t)>& run,
                                const search::TimingConfig& config,
                                const std::function<void()>& flush, const TimingStart& start) {
  if (config.number < 1 || config.repeat < 1 || !std::isfinite(config.min_repeat_ms) ||
      config.min_repeat_ms < 0) {
    throw std::invalid_argument("bad timing config: number " + std::to_string(config.number) +
                                ", repeat " + std::to_string(config.repeat) + ", min_repeat_ms " +
                                std::to_string(config.min_repeat_ms) +
                                " (number and repeat must be >= 1, min_repeat_ms finite and >= 0)");
  }
  if (!std::isfinite(start.warm_secs) || !std::isfinite(start.long_call_secs) ||
      start.long_call_secs <= 0) {
    throw std::invalid_argument("bad timing start: warm_secs " + std::to_string(start.warm_secs) +
                                ", long_call_secs " + std::to_string(start.long_call_secs) +
                                " (both finite, long_call_secs > 0)");
  }
  const double min_repeat_s = config.min_repeat_ms / 1000.0;
  // Warm-up: page faults, lazy thread-pool start, instruction cache.
  const double warm_s = start.warm_secs >= 0 ? start.warm_secs : run(1);
  if (warm_s >= start.long_call_secs && warm_s >= min_repeat_s) {
    // A long call: what a warm-up hides (microseconds to milliseconds) is
    // noise at this length, and a repeat of one call already lasts
    // min_repeat_ms. So the warm-up counts as the first repeat and each
    // repeat is one call. A candidate taking seconds per call then costs
    // `repeat` calls instead of 1 + number * repeat, and one that is a little
    // faster than the timeout still finishes instead of being killed. The
    // runner shortens the length for a candidate far slower than the
    // workload's best (search::TimingConfig::slow_call_secs).
    std::vector<double> secs{warm_s};
    for (int r = 1; r < config.repeat; ++r) {
      if (config.flush_cache && flush) flush();
      secs.push_back(run(1));
    }
    return secs;
  }
  // An upper bound on `number` so a call measured as zero time cannot grow it forever.
  constexpr int64_t kMaxNumber = int64_t{1} << 30;
  int64_t number = config.number;
  std::vector<double> secs;
  for (int r = 0; r < config.repeat; ++r) {
    for (;;) {
      if (config.flush_cache && flush) flush();
      double elapsed = run(number);
      if (elapsed >= min_repeat_s || number >= kMaxNumber) {
        secs.push_back(elapsed / static_cast<double>(number));
        break;
      }
      // Aim a little past the minimum (x1.618) so the next try usually succeeds;
      // at least double when the elapsed time is too small to extrapolate from.
      double per_call = elapsed / static_cast<double>(number);
      double want = per_call > 0 ? min_repeat_s / per_call * 1.618 : 2.0 * number;
      int64_t grown = static_cast<int64_t>(std::min<double>(want, static_cast<double>(kMaxNumber)));
      number = std::max(grown, number * 2 > kMaxNumber ? kMaxNumber : number + 1);
    }
  }
  return secs;
}

std::vector<double> TimeCalls(const std::function<void()>& call, const search::TimingConfig& config,
                              const std::function<void()>& flush, const TimingStart& start) {
  using Clock = std::chrono::steady_clock;
  return TimeBatches(
      [&](int64_t n) {
        auto t0 = Clock::now();
        for (int64_t i = 0; i < n; ++i) call();
        return std::chrono::duration<double>(Clock::now() - t0).count();
      },
      config, flush, start);
}

void FlushCpuCache() {
  static std::vector<uint8_t> buffer = [] {
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t bytes = llc > 0 ? static_cast<size_t>(llc) * 2 : size_t{64} << 20;
    return std::vector<uint8_t>(bytes, 1);
  }();
  // Read-modify-write every cache line; volatile keeps the loop.
  volatile uint8_t* p = buffer.data();
  for (size_t i = 0; i < buffer.size(); i += 64) p[i] = static_cast<uint8_t>(p[i] + 1);
}

}  // namespace kiln::rpc
