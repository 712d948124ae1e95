// Storage-alignment requests carried from the schedule to compaction.
//
// storage_align records (write_index, axis, factor, offset) on the block that
// writes a buffer ("buffer_dim_align"). Lowering moves the allocation away
// from that block, so PlanBufferAllocation re-records the requests on the
// allocating block, keyed by the buffer's index in its alloc_buffers, under
// kAllocDimAlign; CompactBufferAllocation turns them into strides and removes
// the annotation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace kiln::ir::transform {

inline constexpr const char* kAllocDimAlign = "lower.alloc_dim_align";

struct DimAlign {
  int64_t index = 0;  // into writes (buffer_dim_align) or alloc_buffers
  int64_t axis = 0;
  int64_t factor = 0;
  int64_t offset = 0;
};

// Reads a JSON list of 4-integer lists stored under `key`; throws IRError
// naming the block when it is malformed. Missing key: empty.
std::vector<DimAlign> ReadDimAligns(const BlockNode& block, const std::string& key);
std::string DimAlignsText(const std::vector<DimAlign>& aligns);

}  // namespace kiln::ir::transform
