// Per-store features of a scheduled program (TVM's PerStoreFeature layout,
// 164 values per row; every feature is listed in cost_model/FEATURES.md).
//
// The scheduled PrimFunc is first lowered by Kiln's own passes up to, but not
// including, buffer flattening (ir/transform/passes.h): allocations are
// placed and compacted, blocks become loops, extent-one loops are dropped,
// and every buffer keeps its multi-dimensional accesses. Then every
// BufferStore of a non-constant value contributes one row for the buffer it
// writes; rows are ordered by the first store to each buffer, and the last
// store to a buffer decides its row (as in TVM).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::cost_model {

// Row length with TVM's defaults (5 buffers per store, 10 curve samples).
inline constexpr int kNumFeatures = 164;

struct FeatureOptions {
  int cache_line_bytes = 64;
  // When unset, a program counts as GPU code iff it has a loop bound to
  // blockIdx.* / threadIdx.* / vthread* (the cost model never sees targets).
  bool force_gpu = false;
};

// One program's rows: row-major, rows × kNumFeatures values.
struct FeatureRows {
  int64_t rows = 0;
  std::vector<float> values;
  const float* row(int64_t i) const { return values.data() + i * kNumFeatures; }
};

// The feature names in row order ("float_mad", "B0.bytes", ...), as in
// cost_model/FEATURES.md.
const std::vector<std::string>& FeatureNames();
// Index of a feature by name; throws std::out_of_range for an unknown name.
int FeatureIndex(const std::string& name);

// The lowering the features are computed on (PlanBufferAllocationAtLca,
// BlocksToLoops, CompactBufferAllocation, Simplify). Throws ir::IRError.
ir::PrimFunc LowerForFeatures(const ir::PrimFunc& scheduled);

// Features of one scheduled program. Throws ir::IRError when the program
// cannot be lowered.
FeatureRows ExtractFeatures(const ir::PrimFunc& scheduled, const FeatureOptions& options = {});

// Features of many programs, results in input order whatever num_threads is
// (each program is extracted independently, on support::ParallelFor). A
// program that fails to lower gets zero rows, and its error message is put
// in *errors[i] when errors is given (empty string on success).
std::vector<FeatureRows> ExtractFeaturesBatch(const std::vector<ir::PrimFunc>& scheduled,
                                              int num_threads = 1,
                                              const FeatureOptions& options = {},
                                              std::vector<std::string>* errors = nullptr);

}  // namespace kiln::cost_model
