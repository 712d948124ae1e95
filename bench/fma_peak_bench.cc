// The machine's fp32 peak, measured: every thread runs independent chains of
// fused multiply-adds on the widest vectors the CPU has (AVX-512, else
// AVX2 + FMA), long enough for the clock to settle, and the best of several
// runs is printed in GFLOP/s (an FMA counts 2 flops). Kernel figures mean
// most next to this number from the same run: the CPU model changes between
// machines, and so does its clock under load (bench/peers/compare.sh prints
// each tool's share of it).
//
// Usage: fma_peak_bench [--threads N] [--seconds S] [--json]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <immintrin.h>
#include <iostream>
#include <thread>
#include <vector>

#include "bench_main.h"
#include "support/cores.h"

namespace kiln::bench {
namespace {

// Enough independent chains to cover the FMA latency (4 cycles) on two
// ports: 12 in flight per thread, each a register.
constexpr int kChains = 12;

// Runs `iters` rounds of kChains FMAs; returns a value that depends on every
// chain so that the compiler keeps them.
#define KILN_FMA_CHAINS(VEC, SET1, FMA, ADD, STORE, LANES)                               \
  VEC a0 = SET1(0.1f), a1 = SET1(0.2f), a2 = SET1(0.3f), a3 = SET1(0.4f), a4 = SET1(0.5f), \
      a5 = SET1(0.6f), a6 = SET1(0.7f), a7 = SET1(0.8f), a8 = SET1(0.9f), a9 = SET1(1.0f),  \
      a10 = SET1(1.1f), a11 = SET1(1.2f);                                                 \
  const VEC m = SET1(0.9999f), c = SET1(0.0001f);                                         \
  for (int64_t i = 0; i < iters; ++i) {                                                   \
    a0 = FMA(a0, m, c);                                                                   \
    a1 = FMA(a1, m, c);                                                                   \
    a2 = FMA(a2, m, c);                                                                   \
    a3 = FMA(a3, m, c);                                                                   \
    a4 = FMA(a4, m, c);                                                                   \
    a5 = FMA(a5, m, c);                                                                   \
    a6 = FMA(a6, m, c);                                                                   \
    a7 = FMA(a7, m, c);                                                                   \
    a8 = FMA(a8, m, c);                                                                   \
    a9 = FMA(a9, m, c);                                                                   \
    a10 = FMA(a10, m, c);                                                                 \
    a11 = FMA(a11, m, c);                                                                 \
  }                                                                                       \
  VEC s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));              \
  s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));                                            \
  float lanes[LANES];                                                                     \
  STORE(lanes, s);                                                                        \
  float sum = 0;                                                                          \
  for (float v : lanes) sum += v;                                                         \
  return sum

[[gnu::target("avx512f")]] float Chains512(int64_t iters) {
  KILN_FMA_CHAINS(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps, 16);
}
[[gnu::target("avx2,fma")]] float Chains256(int64_t iters) {
  KILN_FMA_CHAINS(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps, 8);
}
#undef KILN_FMA_CHAINS

struct Isa {
  const char* name;
  int lanes;
  float (*run)(int64_t);
};

Isa BestIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", 16, Chains512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return {"avx2+fma", 8, Chains256};
  }
  throw std::runtime_error("the CPU has neither AVX-512 nor AVX2 with FMA");
}

int Run(int argc, char** argv) {
  CLI::App app{"The fp32 FMA peak of this machine, measured"};
  int threads = support::HardwareThreads();
  double seconds = 0.5;
  bool as_json = false;
  app.add_option("--threads", threads, "Threads (default: every hardware thread)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--seconds", seconds, "Length of one run")->check(CLI::Range(0.01, 60.0));
  app.add_flag("--json", as_json, "Print JSON");
  CLI11_PARSE(app, argc, argv);

  const Isa isa = BestIsa();
  // Iterations for the asked length, from a short calibration run.
  auto timed = [&](int64_t iters, int n) {
    std::vector<std::thread> pool;
    std::vector<float> sink(static_cast<size_t>(n));
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < n; ++t) {
      pool.emplace_back([&, t] { sink[static_cast<size_t>(t)] = isa.run(iters); });
    }
    for (auto& p : pool) p.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    volatile float keep = sink[0];
    (void)keep;
    return s;
  };
  int64_t iters = 1 << 16;
  while (timed(iters, 1) < 0.05) iters *= 2;
  iters = static_cast<int64_t>(static_cast<double>(iters) * seconds / timed(iters, 1));
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    const double s = timed(iters, threads);
    const double flops = 2.0 * kChains * isa.lanes * static_cast<double>(iters) * threads;
    best = std::max(best, flops / s / 1e9);
  }
  if (as_json) {
    std::cout << "{\"isa\": \"" << isa.name << "\", \"threads\": " << threads
              << ", \"gflops\": " << best << "}\n";
  } else {
    std::cout << "fp32 FMA peak: " << best << " GFLOP/s (" << isa.name << ", " << threads
              << " thread(s), best of 5 runs of " << seconds << " s)\n";
  }
  return 0;
}

}  // namespace
}  // namespace kiln::bench

int main(int argc, char** argv) { return kiln::bench::BenchMain("fma_peak_bench", kiln::bench::Run, argc, argv); }
