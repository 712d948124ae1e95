// The loops around a store while the feature extractor walks a lowered
// program (internal to cost_model/; see feature_extractor.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/stmt.h"

namespace kiln::cost_model::internal {

// log2(|x| + 1): how TVM scales every numeric feature.
inline double Slog(double x) { return std::log2(std::fabs(x) + 1.0); }

struct LoopNest {
  std::vector<const ir::ForNode*> loops;  // outermost first
  // Constant extent of each loop, or 0 when it is not constant (TVM leaves
  // such loops out of every product).
  std::vector<int64_t> extents;
  int64_t prod = 1;                 // product of the constant extents
  std::vector<int64_t> auto_unroll;  // "pragma_auto_unroll_max_step" values > 0, outermost first
  std::vector<size_t> parallel, vectorize, unroll;  // indices into loops, by kind
  std::vector<size_t> block_x, block_y, block_z, thread_x, thread_y, thread_z, vthread;

  // Extent as used in products: the constant, or 1 when unknown.
  int64_t ExtentOr1(size_t i) const { return extents[i] > 0 ? extents[i] : 1; }
};

// For each loop, every buffer's element counts touched under one iteration
// of it, one entry per store visited so far under that loop (TVM's
// buffer_touched_under_loop): two entries for one buffer mean it is written
// or read by two stores in the loop, i.e. serial reuse.
using TouchedUnderLoop =
    std::unordered_map<const ir::ForNode*,
                       std::unordered_map<const ir::BufferNode*, std::vector<int64_t>>>;

}  // namespace kiln::cost_model::internal
