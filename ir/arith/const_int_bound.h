// Constant integer bounds of integer expressions (TVM's const_int_bound).
//
// The analyzer answers "what constant interval must e lie in", given bounds on
// the free variables. Results are sound over-approximations under the usual
// index-arithmetic assumption that the expression does not overflow its type;
// anything it cannot reason about gets the range of its data type.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace kiln::ir::arith {

struct ConstIntBound {
  // Unbounded ends. They double as int64's extremes: an int64 that may reach
  // INT64_MIN is indistinguishable from an unbounded one, which is harmless.
  static constexpr int64_t kNegInf = INT64_MIN, kPosInf = INT64_MAX;
  int64_t min_value = kNegInf, max_value = kPosInf;  // inclusive

  bool is_const() const { return min_value == max_value; }
  bool is_everything() const { return min_value == kNegInf && max_value == kPosInf; }
  bool is_non_negative() const { return min_value >= 0; }
  bool is_positive() const { return min_value > 0; }
  bool contains(int64_t v) const { return min_value <= v && v <= max_value; }
  bool operator==(const ConstIntBound&) const = default;

  static ConstIntBound Make(int64_t lo, int64_t hi) { return {lo, hi}; }
  static ConstIntBound Single(int64_t v) { return {v, v}; }
  static ConstIntBound Everything() { return {}; }
  // The values representable in t (bool is [0, 1]; non-integer types are
  // unbounded).
  static ConstIntBound OfType(DataType t);

  std::string str() const;  // "[lo, hi]" with -inf / +inf for open ends
};

// Interval arithmetic on bounds (saturating; infinities absorb).
ConstIntBound BoundAdd(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound BoundMul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound BoundUnion(const ConstIntBound& a, const ConstIntBound& b);

class ConstIntBoundAnalyzer {
 public:
  // v ranges over [min, min + extent). Non-constant min / extent are bounded
  // through the analyzer itself. Replaces any earlier bound of v.
  void Bind(const Var& v, const Range& r);
  // Sets v's bound to b, replacing any earlier one.
  void Update(const Var& v, ConstIntBound b);
  // Forgets v's bound.
  void Unbind(const Var& v);
  // The bound recorded for v, if any.
  bool Lookup(const VarNode* v, ConstIntBound* out) const;

  ConstIntBound operator()(const Expr& e) const;

 private:
  // Keeps the Var alive so its address cannot be reused by another variable.
  struct Entry {
    Var var;
    ConstIntBound bound;
  };
  // Analyzers are made per check and bind a loop nest's few variables, so
  // the bounds are a flat list searched linearly; a hash index is built only
  // once a list grows long (large programs), keeping lookups O(1) there.
  static constexpr size_t kLinearLimit = 16;
  const Entry* Find(const VarNode* v) const;
  std::vector<Entry> entries_;
  std::unordered_map<const VarNode*, size_t> index_;  // empty until the limit
};

}  // namespace kiln::ir::arith
