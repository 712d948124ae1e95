// Proven value ranges of integer index expressions, for the CPU backend.
//
// Kiln's integer arithmetic wraps at its type's width (the interpreter's
// semantics), so an int32 index must in general be computed in i32 and
// sign-extended at every access, and a floor division must handle negative
// dividends. Loop variables have known ranges, though, and for the affine
// indices schedules produce, interval arithmetic proves that no intermediate
// value ever wraps. Such an index can be computed in 64 bits with no-wrap
// flags, and floor division or modulo of a value proven non-negative by a
// positive constant is a plain unsigned one: the same values, stated so that
// LLVM need not rediscover them in every build.
#pragma once

#include <optional>
#include <unordered_map>

#include "ir/arith/const_int_bound.h"
#include "ir/expr.h"

namespace kiln::codegen {

class IndexRanges {
 public:
  // v ranges over b while its loop is being emitted.
  void Bind(const ir::VarNode* v, ir::arith::ConstIntBound b) { bounds_[v] = b; }
  void Unbind(const ir::VarNode* v) { bounds_.erase(v); }

  // The range of e when it is an integer expression that never wraps: built
  // from constants, variables (a bound one ranges over its bound, any other
  // over its type), +, -, *, min, max, and floor division / modulo of a
  // non-negative value by a positive constant, with every subexpression's
  // range inside its type. nullopt otherwise (other operators, loads, calls,
  // casts, vectors, or a possible wrap).
  std::optional<ir::arith::ConstIntBound> NoWrapRange(const ir::Expr& e) const;

  // Range of the variable of a loop over [min, min + extent) of type
  // var_type, when both ends are proven not to wrap; nullopt otherwise.
  std::optional<ir::arith::ConstIntBound> LoopRange(const ir::Expr& min, const ir::Expr& extent,
                                                    ir::DataType var_type) const;

 private:
  std::unordered_map<const ir::VarNode*, ir::arith::ConstIntBound> bounds_;
};

}  // namespace kiln::codegen
