// An index map: a function from the indices of one buffer layout to the
// indices of another, written as TVM writes it, "lambda i, j: (i // 4, j, i % 4)".
//
// transform_layout rewrites every access A[idx] of a buffer into
// A[map(idx)]; the map's text form is what a trace stores.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/arith/analyzer.h"
#include "ir/expr.h"

namespace kiln::ir {

struct IndexMap {
  std::vector<Var> initial_indices;
  std::vector<Expr> final_indices;

  // Parses the lambda text form; throws ParseError on malformed text.
  static IndexMap FromText(std::string_view text);
  // "lambda i, j: (i // 4, j, i % 4)"; a one-result map still prints its
  // result as a tuple ("lambda i: (i,)") so the arity is explicit.
  std::string ToText() const;

  // The final indices with each initial index replaced by indices[k],
  // simplified. Throws IRError on an arity mismatch.
  std::vector<Expr> Apply(const std::vector<Expr>& indices, arith::Analyzer* analyzer) const;
  // The extents of the image of the box [0, shape) (each final index's
  // bound, max - min + 1). Throws IRError when an index is unbounded.
  std::vector<Expr> MapShape(const std::vector<Expr>& shape, arith::Analyzer* analyzer) const;
  // Why the map is not a bijection of the box [0, shape) onto [0, MapShape),
  // or empty when it is. Requires constant extents.
  std::string NotBijectiveReason(const std::vector<Expr>& shape, arith::Analyzer* analyzer) const;
  // The inverse map over the box [0, MapShape(shape)), for maps that are
  // bijective and affine on [0, shape) (arith::DetectIterMap). Throws IRError
  // naming the reason otherwise.
  IndexMap Inverse(const std::vector<Expr>& shape, arith::Analyzer* analyzer) const;
};

}  // namespace kiln::ir
