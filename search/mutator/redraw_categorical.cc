#include "search/mutator/redraw_categorical.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::search {

std::optional<ir::Trace> RedrawCategorical(const ir::Trace& trace, size_t index,
                                           ir::RandomEngine& rng, const std::string& what,
                                           std::string* why) {
  const int64_t current = trace.GetDecision(index)->get<int64_t>();
  std::vector<double> probs = trace.insts()[index].attrs[1].get<std::vector<double>>();
  if (current < 0 || current >= static_cast<int64_t>(probs.size())) {
    *why = "categorical decision " + std::to_string(current) + " is out of range";
    return std::nullopt;
  }
  probs.erase(probs.begin() + current);
  double total = 0;
  for (double p : probs) total += p;
  if (!(total > 0)) {
    *why = "every other " + what + " has probability 0";
    return std::nullopt;
  }
  int64_t next = rng.SampleCategorical(probs);
  if (next >= current) ++next;
  return trace.WithDecision(index, nlohmann::json(next), /*remove_postproc=*/true);
}

}  // namespace kiln::search
