// Histogram of measured latencies, for the report's distribution plot.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::report {

struct Histogram {
  // edges.size() == counts.size() + 1; bin i holds [edges[i], edges[i+1]),
  // the last bin also its upper edge.
  std::vector<double> edges;
  std::vector<int64_t> counts;
  // Log-spaced bins: chosen when the values span a factor of 10 or more, as
  // a tuning run's latencies often do (a bad schedule is 100x the best).
  bool log_scale = false;
  int64_t total() const;
};

// Bins the positive finite values (others are left out) into `bins` bins
// (>= 1) between the smallest and the largest; no values, no bins. When all
// values are equal, one bin of ±5% around them.
Histogram MakeHistogram(const std::vector<double>& values, int bins);

}  // namespace kiln::report
