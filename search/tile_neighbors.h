// Tile neighbours of a schedule: the traces that move one prime factor of one
// tile-size decision (SamplePerfectTile) to the adjacent level of the same
// loop, every other decision kept.
//
// EvolutionarySearch measures them after the structural neighbours of the
// best measured schedules (search/structural_neighbors.h,
// docs/ARCHITECTURE.md §7). On GMM:3 a run's model can settle on one
// register tile: a run that ended at 244 GFLOP/s had 25 of its 128 records
// at 4 x 32 and only 7, all with poor outer tiles, at 8 x 32; its best
// schedule with one factor 2 moved from the third level of i to the fourth
// (4 x 32 to 8 x 32, nothing else changed) runs at 305 GFLOP/s. The model
// ranked that mutant low for the same reason it ranks C2D:0's padding at
// the root low: what it saw of 8 x 32 came with poor other tiles.
#pragma once

#include <vector>

#include "ir/schedule/trace.h"

namespace kiln::search {

// The tile neighbours of `trace` (which must carry its decisions), as traces
// without postproc instructions, in a fixed order: the innermost pair of
// levels first, then the pairs further out; for each pair, the move that
// grows the inner level before the one that shrinks it; and at each of
// these ranks, one neighbour of every tile decision in trace order (round
// robin), so that the first few picks change each loop's register tile.
// The moved factor is the smallest prime factor of the level it leaves, so
// the product of the levels (the loop's extent) is kept; a move that would
// make the innermost level exceed the decision's max_innermost_factor is
// left out, as the sampler would never draw it.
std::vector<ir::Trace> TileNeighbors(const ir::Trace& trace);

}  // namespace kiln::search
