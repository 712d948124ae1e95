#include "cost_model/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kiln::cost_model {
namespace {

std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = avg;
    i = j + 1;
  }
  return rank;
}

std::vector<size_t> TopIndices(const std::vector<double>& v, size_t k) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  order.resize(std::min(k, order.size()));
  return order;
}

}  // namespace

double SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("SpearmanCorrelation: sizes differ");
  const size_t n = x.size();
  if (n < 2) return 0;
  const std::vector<double> rx = Ranks(x), ry = Ranks(y);
  const double mean = (static_cast<double>(n) - 1) / 2.0;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

double TopKRecall(const std::vector<double>& score, const std::vector<double>& truth, int k) {
  if (score.size() != truth.size()) throw std::invalid_argument("TopKRecall: sizes differ");
  if (score.empty() || k <= 0) return 0;
  const size_t kk = std::min(static_cast<size_t>(k), score.size());
  const std::vector<size_t> best = TopIndices(truth, kk), picked = TopIndices(score, kk);
  size_t hit = 0;
  for (size_t i : best) hit += std::count(picked.begin(), picked.end(), i);
  return static_cast<double>(hit) / static_cast<double>(kk);
}

double TopKBestRatio(const std::vector<double>& score, const std::vector<double>& truth, int k) {
  if (score.size() != truth.size()) throw std::invalid_argument("TopKBestRatio: sizes differ");
  if (score.empty() || k <= 0) return 0;
  const double best = *std::max_element(truth.begin(), truth.end());
  if (!(best > 0)) return 0;
  double found = 0;
  for (size_t i : TopIndices(score, static_cast<size_t>(k))) found = std::max(found, truth[i]);
  return found / best;
}

}  // namespace kiln::cost_model
