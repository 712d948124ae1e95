// Bounds of the regions blocks access, and the proof that what producers
// write covers what a consumer reads (TVM's region_cover, split from its
// scope-level query so that the lowering can use it too): producers are
// bounded from below (what they certainly write), consumers from above
// (what they may read). Used by ir/schedule/region_cover.cc (is a block's
// input complete in its scope) and ir/transform/plan_buffer_allocation.cc
// (does each iteration of a loop write everything it reads).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/buffer.h"
#include "ir/expr.h"

namespace kiln::ir::arith {

class Analyzer;

// One dimension of a box: both ends inclusive; an undefined end is unbounded.
struct DimBound {
  Expr min, max;
};
using Box = std::vector<DimBound>;

// The box a producer certainly writes when `loops` run over their domains
// (a lower bound; nullopt when it cannot be shown to be a full box). Each
// dimension's start must be a single affine split of the loops whose stride
// does not exceed the written extent; `predicate` (may be undefined) must be
// one DetectIterMap accepts.
std::optional<Box> ProducedLowerBound(const std::vector<Range>& region,
                                      const std::vector<std::pair<Var, Range>>& loops,
                                      const Expr& predicate, Analyzer* an);

// The box a consumer may read when `loops` run over their domains (an upper
// bound).
Box ConsumedUpperBound(const std::vector<Range>& region,
                       const std::vector<std::pair<Var, Range>>& loops, Analyzer* an);

// Whether `produced` contains `consumed` within the buffer's shape (what lies
// outside the buffer is never accessed, so it needs no producer).
bool Covers(const Box& produced, const Box& consumed, const Buffer& buffer, Analyzer* an);

// Unites boxes that agree on every dimension but one, where they touch or
// overlap: the union is then itself a box (a sound lower bound of what the
// producers write together). Repeats until nothing merges.
void MergeBoxes(std::vector<Box>* boxes, Analyzer* an);

// "[min : max, ...]" for messages.
std::string BoxText(const Box& box);

}  // namespace kiln::ir::arith
