// Structural matching of a blockized block against a tensor intrinsic's
// description (tensor_intrin.h). Tensorize uses it to decide, and the
// lowering pass LowerTensorIntrin uses it again to find the operands.
//
// The block must be an "outer" block as blockize makes it: no init, a body
// that is a chain of loops over one inner block with a true predicate. The
// description is the same shape. The two match when
//   - the non-unit loops pair up in order with equal constant extents, and
//     each loop drives iterators of the same kind (spatial / reduction);
//   - the inner bodies are the same store with the same expression tree
//     (operators, constants, casts, dtypes), where each description
//     operand stands for one buffer of the block with the same dtype and
//     storage scope, and every access of it is the operand's index shifted
//     by an offset that does not depend on the loops (the trailing
//     dimensions; leading dimensions of a higher-rank buffer stay fixed).
// The offset is the tile's origin: an expression over the outer block's
// iterators, where the implementation's pointer or fragment points.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/stmt.h"

namespace kiln::ir {

struct TensorIntrinOperand {
  Buffer buffer;               // the block's buffer for this operand
  std::vector<Expr> origin;    // index of the tile's first element
  std::vector<int64_t> extent;  // tile extent per dimension (1 for leading ones)
};

struct TensorIntrinMatch {
  // One per description parameter, in the description's order.
  std::vector<TensorIntrinOperand> operands;
};

// Matches the block `outer` realizes against `intrin`. On a mismatch returns
// nullopt and sets *why to what did not match (a sentence naming the buffer,
// loop or expression).
std::optional<TensorIntrinMatch> MatchTensorIntrin(const BlockRealizeNode& outer,
                                                   const TensorIntrin& intrin, std::string* why);

// Tensorize marks a matched block with the annotation kTensorIntrinAttr
// (tensor_intrin.h) = the intrinsic's name.

}  // namespace kiln::ir
