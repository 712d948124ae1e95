// Ranking quality of a cost model's scores against measured costs (used by
// `kiln model eval` and the tests).
#pragma once

#include <vector>

namespace kiln::cost_model {

// Spearman's rank correlation of x and y (Pearson correlation of their
// ranks, ties sharing the average rank). 0 when either side is constant or
// there are fewer than two values; std::invalid_argument when sizes differ.
double SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y);

// Of the k programs with the highest `truth`, the fraction that are among
// the k with the highest `score` (ties broken by index). k is clamped to the
// size; 0 for empty input.
double TopKRecall(const std::vector<double>& score, const std::vector<double>& truth, int k);

// The highest `truth` among the k programs with the highest `score`, over the
// highest `truth` of all (1: a batch of the model's k favourites would have
// found the best; ties broken by index). k is clamped to the size; 0 for
// empty input or when no truth is positive.
double TopKBestRatio(const std::vector<double>& score, const std::vector<double>& truth, int k);

}  // namespace kiln::cost_model
