// Helpers shared by the files that implement ir/schedule/analysis.h (and
// only by them): the `why` out-parameter and region membership.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "ir/buffer.h"

namespace kiln::ir::analysis_internal {

inline void SetWhy(std::string* why, const std::string& text) {
  if (why != nullptr) *why = text;
}

inline bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

}  // namespace kiln::ir::analysis_internal
