// Prints the time to print, parse and hash the whole workload suite (best of
// several rounds). Figures only: benchmarks never assert on time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "ir/text/parser.h"
#include "ir/text/printer.h"
#include "ir/structural_hash.h"
#include "ir/workloads/suite.h"

namespace {

using kiln::bench::BestSeconds;

}  // namespace

int main() {
  using namespace kiln::ir;
  std::vector<PrimFunc> funcs;
  for (const auto& c : SuiteConfigs()) funcs.push_back(MakeWorkload(c.name, c.index));
  std::vector<std::string> texts;
  size_t bytes = 0;
  for (const auto& f : funcs) {
    texts.push_back(ToText(f));
    bytes += texts.back().size();
  }
  const int rounds = 20;
  uint64_t sink = 0;
  double build = BestSeconds(rounds, [&] {
    for (const auto& c : SuiteConfigs()) sink += MakeWorkload(c.name, c.index).params.size();
  });
  double print = BestSeconds(rounds, [&] {
    for (const auto& f : funcs) sink += ToText(f).size();
  });
  double parse = BestSeconds(rounds, [&] {
    for (const auto& t : texts) sink += ParseFunc(t).params.size();
  });
  double hash = BestSeconds(rounds, [&] {
    for (const auto& f : funcs) sink += StructuralHash(f);
  });
  std::printf("suite: %zu functions, %zu bytes of text (best of %d rounds)\n", funcs.size(), bytes,
              rounds);
  std::printf("  build (compute frontend): %8.3f ms\n", build * 1e3);
  std::printf("  print:                    %8.3f ms  (%.1f MB/s)\n", print * 1e3, bytes / print / 1e6);
  std::printf("  parse:                    %8.3f ms  (%.1f MB/s)\n", parse * 1e3, bytes / parse / 1e6);
  std::printf("  structural hash:          %8.3f ms  (%.1f us/function)\n", hash * 1e3,
              hash * 1e6 / funcs.size());
  std::printf("  parse / print ratio:      %8.2f\n", parse / print);
  return sink == 42 ? 1 : 0;  // keeps the work observable
}
