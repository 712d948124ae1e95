// Structural neighbours of a schedule: the traces that differ from it in one
// structural decision (where a block is computed, or a categorical draw such
// as an unroll step), every other decision kept, tile sizes included.
//
// EvolutionarySearch measures a few of the best measured schedule's
// neighbours in each batch (docs/ARCHITECTURE.md §7). The cost model cannot
// rank them: a structural decision and the tiles interact, and the model has
// seen each structure only with the tiles random samples gave it. On C2D:0
// the runs that stayed near 160 GFLOP/s had found tiles that reach about
// 300 GFLOP/s once the padding is computed at the root, a one-decision
// change the model scored low because every root sample it had measured
// carried poor tiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/schedule/trace.h"

namespace kiln::search {

// A structural decision of a trace and the values it could take instead.
struct DecisionSite {
  size_t index;                       // of the instruction in the trace
  std::string kind;                   // "SampleComputeLocation" or "SampleCategorical"
  std::vector<int64_t> alternatives;  // never empty
};

// The structural decisions of `trace` that have an alternative, in trace
// order, found by replaying it on a schedule of `workload` seeded with
// `seed` (a trace that carries every decision draws nothing). A compute
// location's alternatives are those the schedule lists at that point
// (inline, root, then the loops from outer to inner), less the current one;
// a categorical's are its other values of non-zero probability. Throws what
// the replay throws.
std::vector<DecisionSite> StructuralDecisionSites(const ir::PrimFunc& workload,
                                                  const ir::Trace& trace, int64_t seed = 1);

// The structural neighbours of `trace` (which must carry its decisions), as
// traces without postproc instructions, in a fixed order: one alternative of
// each decision in turn, round robin over the decisions (in trace order), so
// that a few picks already touch every decision. A compute location's
// alternatives come in the order the schedule lists them (inline, root, then
// the loops from outer to inner: the two marks change the program's
// structure most); a categorical's by value, those of probability 0 left
// out. Tile sizes (SamplePerfectTile) are not structural: the mutators and
// the model search them. Empty when the trace does not replay on `workload`.
std::vector<ir::Trace> StructuralNeighbors(const ir::PrimFunc& workload, const ir::Trace& trace);

}  // namespace kiln::search
