// Group 2 of the per-store features: how the store and the loads in its
// value touch each buffer (bytes, cache lines, reuse, stride), 18 values per
// buffer for the 5 buffers with the most cache lines (cost_model/FEATURES.md).
#pragma once

#include <cstdint>
#include <vector>

#include "cost_model/loop_nest.h"
#include "ir/stmt.h"

namespace kiln::cost_model::internal {

inline constexpr int kBuffersPerStore = 5;
inline constexpr int kBufferFeatures = 18;

// Appends kBuffersPerStore × kBufferFeatures values to *out, records this
// store's touched element counts in *touched, and sets for_touched_bytes[i]
// to the bytes all its buffers touch under one iteration of loop i (the
// arithmetic-intensity curve's denominators).
void AppendBufferAccessFeatures(const ir::BufferStoreNode* store, const LoopNest& nest,
                                int cache_line_bytes, TouchedUnderLoop* touched,
                                std::vector<int64_t>* for_touched_bytes, std::vector<float>* out);

}  // namespace kiln::cost_model::internal
