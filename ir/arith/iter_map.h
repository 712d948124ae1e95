// Affine iteration maps (TVM's DetectIterMap).
//
// Given index expressions over a set of loop-like iterators, decide whether
// the indices are an affine, bijective (or surjective) map of the iterators,
// and if so express each as an IterSumExpr: a sum of IterSplitExprs plus a
// base that does not depend on the iterators. Split / fuse / compute_at use
// this to check that block bindings are affine.
//
// Iterator extents and all factors must be integer constants.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "ir/arith/analyzer.h"
#include "ir/expr.h"

namespace kiln::ir::arith {

struct IterMarkNode;
// An iterator with an extent: an input iterator or a fusion of splits.
// Marks are shared: two indices using the same fused iterator hold the same
// mark.
using IterMark = std::shared_ptr<const IterMarkNode>;

// floormod(floordiv(source, lower_factor), extent) * scale
struct IterSplitExpr {
  IterMark source;
  int64_t lower_factor = 1;
  int64_t extent = 1;
  int64_t scale = 1;
};

// Splits of a sum: index sums have few terms, and the rewriter makes a sum
// for every subexpression it visits, so short lists stay inline.
using IterSplitList = absl::InlinedVector<IterSplitExpr, 4>;

// sum(args) + base; args are ordered from the largest scale to the smallest.
struct IterSumExpr {
  IterSplitList args;
  Expr base;
};

struct IterMarkNode {
  // Exactly one is set: an input iterator (its value minus its range's
  // minimum ranges over [0, extent)), or the fused sum, whose base is 0.
  Var var;
  Expr var_min;
  IterSumExpr sum;
  int64_t extent = 1;
};

// For messages: the variable's name, or "fused(i, (j // 4))". Made only when
// a message needs it, not for every mark (most maps are fine).
std::string IterMarkName(const IterMarkNode& m);

enum class IterMapLevel {
  // Every point of the iterator space maps to a distinct index tuple and every
  // iterator (with extent > 1) is used.
  kBijective,
  // Distinct parts of iterators may go unused, but no iterator digit feeds
  // two indices: the indices jointly cover their box.
  kSurjective,
};

struct IterMapResult {
  std::vector<IterSumExpr> indices;  // one per input index, empty on failure
  std::vector<std::string> errors;   // why not; empty on success
  bool ok() const { return errors.empty(); }
};

// iters: the input iterators with their ranges (constant extents), in order.
// predicate: true (or undefined), or a conjunction of `fused < bound` that
// limits a fused iterator to its first `bound` values, as non-divisible splits
// produce.
IterMapResult DetectIterMap(const std::vector<Expr>& indices,
                            const std::vector<std::pair<Var, Range>>& iters, const Expr& predicate,
                            IterMapLevel level, Analyzer* analyzer);

// One index split between outer and inner iterators (TVM's SubspaceDivide):
//   index = outer * inner_extent + inner + base
// where outer uses only outer iterators and ranges over [0, outer_extent),
// and inner uses only the sub-iterators and ranges over [0, inner_extent).
struct DividedIndex {
  Expr outer, inner, base;
  int64_t outer_extent = 1, inner_extent = 1;
};

struct SubspaceDivision {
  std::vector<DividedIndex> indices;  // one per input index, empty on failure
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
};

// Detects the iteration map of indices (as DetectIterMap), then divides each
// index into a part over the outer iterators and a part over sub_iters, as
// blockize needs. Fails where an index mixes the two in a way that is not
// outer-major (e.g. inner * 4 + outer).
SubspaceDivision SubspaceDivide(const std::vector<Expr>& indices,
                                const std::vector<std::pair<Var, Range>>& iters,
                                const std::vector<Var>& sub_iters, const Expr& predicate,
                                IterMapLevel level, Analyzer* analyzer);

// The expression an IterSumExpr / IterSplitExpr stands for.
Expr NormalizeIterMapToExpr(const IterSumExpr& sum, DataType t = DataType::Int32());
Expr NormalizeIterMapToExpr(const IterSplitExpr& split, DataType t = DataType::Int32());
// The expression a mark's value (in [0, extent)) stands for.
Expr IterMarkSource(const IterMark& mark, DataType t = DataType::Int32());

}  // namespace kiln::ir::arith
