// Timing Kiln's kernel against peer libraries (OpenBLAS, oneDNN) in the same
// run, for the kernel benches (gemm_bench.cc, conv_bench.cc). Figures only:
// nothing here asserts.
//
// Every contender is timed in alternating blocks (a quarter of the runs
// each) so that machine noise hits all alike. Each block starts after a
// pause: the peers' worker threads (OpenBLAS's pthreads, oneDNN's OpenMP
// team) keep spinning for a while after a call returns and would take a core
// from whoever runs next (Kiln's times came out bimodal without the pause).
//
// After the pause, each contender runs untimed for `warmup` before its block
// is timed, as the tuning runner's timed repeats do (rpc/runner_main/
// runner_main.cc: calls back to back for at least min_repeat_ms). Without it,
// Kiln's 2-thread kernels ran at 1-thread speed for the first 40-60 ms after
// each pause: measured on C2D:0, 1.5 ms per call, then 0.8 ms once warm, while
// 1 thread gave 1.45 ms throughout: the woken pool worker evidently shared
// the caller's core until the scheduler moved it. oneDNN's OpenMP threads
// spin between calls and kept their cores (with OMP_WAIT_POLICY=PASSIVE they
// slowed down the same way).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::bench {

struct Contender {
  std::string name;            // "kiln", "openblas", "onednn"
  std::function<void()> run;   // one call; already warmed up and checked
  std::vector<double> seconds;  // filled by TimeInAlternatingBlocks
};

inline double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// `reps` timed runs of each contender, in blocks of max(1, reps / 4), in the
// order given, each block after `pause` and `warmup`.
inline void TimeInAlternatingBlocks(std::vector<Contender>& contenders, int reps,
                                    std::chrono::milliseconds pause = std::chrono::milliseconds(300),
                                    std::chrono::milliseconds warmup = std::chrono::milliseconds(200)) {
  const int block = std::max(1, reps / 4);
  for (int done = 0; done < reps; done += block) {
    const int n = std::min(block, reps - done);
    for (Contender& c : contenders) {
      std::this_thread::sleep_for(pause);
      const auto warm_until = std::chrono::steady_clock::now() + warmup;
      while (std::chrono::steady_clock::now() < warm_until) c.run();
      for (int r = 0; r < n; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        c.run();
        c.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  }
}

// Prints one line of figures; returns GFLOP/s at the median time.
inline double ReportContender(const Contender& c, double flops) {
  const double median = MedianOf(c.seconds), gflops = flops / median / 1e9;
  std::printf("%-8s %8.1f GFLOP/s  (median %.3f ms, runs %.3f-%.3f ms)\n", c.name.c_str(), gflops,
              median * 1e3, *std::min_element(c.seconds.begin(), c.seconds.end()) * 1e3,
              *std::max_element(c.seconds.begin(), c.seconds.end()) * 1e3);
  return gflops;
}

// "ratio    0.912  (kiln / onednn)   goal >= 0.95x oneDNN: NOT met"
inline void ReportRatio(const std::string& peer, double kiln_gflops, double peer_gflops, double goal,
                        const std::string& goal_name) {
  const double ratio = kiln_gflops / peer_gflops;
  std::printf("ratio    %8.3f  (kiln / %s)   goal >= %.2fx %s: %s\n", ratio, peer.c_str(), goal,
              goal_name.c_str(), ratio >= goal ? "met" : "NOT met");
}

// The 1-minute load average (printed with the figures: a loaded machine
// explains a low one), -1 when unknown.
inline double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  in >> load;
  return load;
}

}  // namespace kiln::bench
