// Redrawing a SampleCategorical decision, as the mutators that change one
// (mutate_tile_size.cc for cooperative-fetch widths, mutate_unroll.cc for
// unroll steps) both do.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "ir/schedule/random_engine.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

// The trace with the decision of the SampleCategorical at `index` redrawn
// from its probabilities without its current value. nullopt, with *why,
// when the current decision is out of range or every other value has
// probability 0 (`what` names the values in that message, e.g. "unroll
// step").
std::optional<ir::Trace> RedrawCategorical(const ir::Trace& trace, size_t index,
                                           ir::RandomEngine& rng, const std::string& what,
                                           std::string* why);

}  // namespace kiln::search
