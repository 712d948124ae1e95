#include "report/histogram.h"

#include <algorithm>
#include <cmath>

namespace kiln::report {

int64_t Histogram::total() const {
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  return n;
}

Histogram MakeHistogram(const std::vector<double>& values, int bins) {
  Histogram h;
  std::vector<double> v;
  for (double x : values) {
    if (x > 0 && std::isfinite(x)) v.push_back(x);
  }
  if (v.empty()) return h;
  bins = std::max(1, bins);
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  const double lo = *lo_it;
  const double hi = *hi_it;
  if (hi == lo) {
    h.edges = {lo * 0.95, lo * 1.05};
    h.counts = {static_cast<int64_t>(v.size())};
    return h;
  }
  h.log_scale = hi / lo >= 10;
  const double a = h.log_scale ? std::log(lo) : lo;
  const double b = h.log_scale ? std::log(hi) : hi;
  for (int i = 0; i <= bins; ++i) {
    const double t = a + (b - a) * i / bins;
    h.edges.push_back(h.log_scale ? std::exp(t) : t);
  }
  // Exact ends, whatever exp(log(x)) rounds to.
  h.edges.front() = lo;
  h.edges.back() = hi;
  h.counts.assign(static_cast<size_t>(bins), 0);
  for (double x : v) {
    const double t = h.log_scale ? std::log(x) : x;
    int i = static_cast<int>(std::floor((t - a) / (b - a) * bins));
    ++h.counts[static_cast<size_t>(std::clamp(i, 0, bins - 1))];
  }
  return h;
}

}  // namespace kiln::report
