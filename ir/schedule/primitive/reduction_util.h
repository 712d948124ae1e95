// What decompose_reduction and rfactor need to know about a reduction block:
// whether it is one (TVM's CheckReductionBlock), and which commutative
// reducer its init and update implement (TVM's ReducerRegistry).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/prim_func.h"
#include "ir/schedule/stmt_path.h"
#include "ir/stmt.h"

namespace kiln::ir {

enum class ReducerKind : uint8_t { kSum, kProduct, kMin, kMax };

// A commutative, associative combiner with its identity for one data type.
struct Reducer {
  ReducerKind kind = ReducerKind::kSum;
  DataType dtype;

  // 0, 1, the largest value, the smallest value.
  Expr Identity() const;
  // x + y, x * y, min(x, y), max(x, y).
  Expr Combine(Expr x, Expr y) const;
  // "sum", "product", "min", "max".
  const char* Name() const;
};

// A reduction block's single init store and single update store, split into
// the reducer and its two operands: update = combine(lhs, rhs), where lhs
// loads exactly the element the update stores.
struct ReductionParts {
  const BufferStoreNode* init = nullptr;
  const BufferStoreNode* update = nullptr;
  Reducer reducer;
  Expr lhs;
  Expr rhs;
};

// The reducer the block implements, or a message saying why none of sum,
// product, min and max matches.
struct ReducerMatch {
  std::optional<ReductionParts> parts;
  std::string why_not;
};
ReducerMatch MatchReducer(const BlockNode& block);

// Throws ScheduleError(primitive, why) unless IsReductionBlock (analysis.h)
// holds for the block at `path`.
void CheckReductionBlock(const StmtPath& path, const std::string& primitive);

// `base`, or `base` with the first "_1", "_2", ... suffix that no block of f
// uses.
std::string UniqueBlockName(const PrimFunc& f, const std::string& base);

// The conjuncts of a predicate (`a && b && c` gives a, b, c); true gives none.
std::vector<Expr> SplitConjuncts(const Expr& predicate);
// The conjunction of `conjuncts` (true when empty).
Expr JoinConjuncts(const std::vector<Expr>& conjuncts);

}  // namespace kiln::ir
