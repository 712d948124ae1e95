// Block and loop predicates the schedule rules and postprocs decide by
// (TVM's meta-schedule analysis: NeedsMultiLevelTiling,
// NeedsRFactorOrCrossThreadReduction, GetLoopIterType, ...).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/schedule/schedule.h"

namespace kiln::search {

// How the blocks directly under `loop` use its variable: data-parallel,
// reduction, or opaque (both, or an ordered/opaque iter var).
ir::IterType LoopIterType(const ir::ForNode* loop);
// Every iter var of the block is data-parallel.
bool IsSpatialBlock(const ir::BlockNode& block);
// Every block of the function (root aside) is spatial.
bool IsSpatialFunc(const ir::PrimFunc& func);
// The block carries annotation `key`.
bool HasAnn(const ir::BlockNode& block, const std::string& key);
// The integer value of annotation `key`, if it is an integer.
std::optional<int64_t> IntAnn(const ir::Annotations& anns, const std::string& key);
// The block is the root of the function.
bool IsRootBlock(const ir::Schedule& sch, ir::BlockRV block);

// The block's data-parallel iter vars, less those over a unit domain (they
// index nothing useful), in the block's order.
std::vector<const ir::VarNode*> NonUnitSpatialVars(const ir::BlockNode& block);

// 1 write, >= 1 read, not spatial, trivial binding, not yet tiled, and some
// read leaves a (non-unit) spatial iter var unused: there is reuse to tile for.
bool NeedsMultiLevelTiling(const ir::Schedule& sch, ir::BlockRV block);
// The products of the extents of the data-parallel and of the reduction loops
// above the block; -1 / -1 if a loop is opaque or has a non-constant extent.
std::pair<int64_t, int64_t> CumulativeSpaceAndReductionLength(const ir::Schedule& sch,
                                                               ir::BlockRV block);
// A reduction block worth an rfactor: trivially bound, untiled, perfectly
// nested spatial/reduction loops with a reduction among them; if it also
// wants tiling, only when its spatial extent is small against both the
// reduction and max_parallel_extent; otherwise when the reduction is longer
// than max_parallel_basic.
bool NeedsRFactor(const ir::Schedule& sch, ir::BlockRV block, int64_t max_parallel_extent,
                  int64_t max_parallel_basic);

// The block's body calls one of `ops` (CallOpName spellings) / holds an
// if-then-else (statement, select or the lazy intrinsic).
bool HasOp(const ir::BlockRealizeNode& realize, const std::vector<std::string>& ops);
bool HasIfThenElse(const ir::BlockRealizeNode& realize);

// TVM's AnalyzeReadWritePattern for one read against the single write: every
// read index is a write index variable (plus a constant) or a constant.
struct ReadWritePattern {
  bool exists = false;
  bool surjective = false;
  bool injective = false;
  bool ordered = false;
};
ReadWritePattern AnalyzeReadWritePattern(const ir::BufferRegion& read,
                                         const ir::BufferRegion& write);

// One read, one write, over the same region: a cache_write's copy-out block.
bool IsWriteCache(const ir::BlockNode& block);

// The coefficient of `var` in an index built of +, * by constants and `var`
// (0 when it does not occur linearly): TVM's StrideExtractor.
int64_t StrideOf(const ir::Expr& index, const ir::VarNode* var);

}  // namespace kiln::search
