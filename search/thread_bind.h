// Binding a block's outer loops to GPU threads, shared by the AutoBind rule
// and the RewriteUnboundBlock postprocessor (TVM's BindBlockThreadIdx).
#pragma once

#include <cstdint>
#include <functional>

#include "ir/schedule/schedule.h"

namespace kiln::search {

// The loops above the block, outermost first: do they include a blockIdx /
// a threadIdx binding?
struct ThreadScope {
  bool block_idx = false;
  bool thread_idx = false;
};
ThreadScope ThreadScopeOf(ir::Schedule& sch, ir::BlockRV block);

// Fuses the block's leading data-parallel loops (stopping at the first loop
// that is not serial or whose body holds more than one statement; a unit
// loop is added when there is none), then splits the fused loop into
// [blocks, threads] with threads = get_factor(min(extent, max_threads)) and
// binds blockIdx.x / threadIdx.x; when the extent exceeds max_threadblocks ×
// max_threads it splits into [rest, max_threadblocks, max_threads] and binds
// the last two (the rest runs serially inside each thread). Does nothing for
// the root, a tiled block, or a block already under both kinds of binding;
// a block under threadIdx loops only gets the spatial loops above the first
// of them fused and bound to blockIdx.x.
// Throws ir::ScheduleError when blockIdx is bound and threadIdx is not.
void BindBlockThreadIdx(ir::Schedule& sch, ir::BlockRV block, int64_t max_threadblocks,
                        int64_t max_threads,
                        const std::function<ir::Factor(int64_t max_extent)>& get_factor);

}  // namespace kiln::search
