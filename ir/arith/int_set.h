// Symbolic integer interval sets (TVM's IntervalSet / EvalSet).
//
// A set is [min, max], both inclusive and symbolic; an undefined end is
// unbounded. Evaluating an expression over interval domains of its variables
// gives an interval that contains every value it can take; region analysis
// turns such intervals into Ranges (min, extent).
#pragma once

#include <unordered_map>
#include <vector>

#include "ir/arith/analyzer.h"
#include "ir/expr.h"

namespace kiln::ir::arith {

struct IntervalSet {
  Expr min, max;  // inclusive; undefined = unbounded on that side

  static IntervalSet SinglePoint(const Expr& v) { return {v, v}; }
  static IntervalSet Interval(const Expr& lo, const Expr& hi) { return {lo, hi}; }
  static IntervalSet Everything() { return {}; }
  // [r.min, r.min + r.extent - 1], simplified.
  static IntervalSet FromRange(const Range& r, Analyzer* an);

  bool has_lower_bound() const { return min.defined(); }
  bool has_upper_bound() const { return max.defined(); }
  bool is_bounded() const { return min.defined() && max.defined(); }
  bool is_everything() const { return !min.defined() && !max.defined(); }
  // min and max are the same expression (structurally).
  bool is_single_point() const;
};

using IntSetMap = std::unordered_map<const VarNode*, IntervalSet>;

// An interval holding every value of e when each variable in dom ranges over
// its set (variables not in dom are fixed symbols). Ends are simplified.
IntervalSet EvalSet(const Expr& e, const IntSetMap& dom, Analyzer* an);
// Domains from loop-style ranges.
IntSetMap DomainFromRanges(const std::unordered_map<const VarNode*, Range>& ranges, Analyzer* an);

// The smallest interval holding both; unbounded if either side is.
IntervalSet Union(const IntervalSet& a, const IntervalSet& b, Analyzer* an);
IntervalSet Union(const std::vector<IntervalSet>& sets, Analyzer* an);
IntervalSet Intersect(const IntervalSet& a, const IntervalSet& b, Analyzer* an);

// The Range (min, extent) of a bounded interval; throws IRError naming `what`
// when a side is unbounded.
Range ToRange(const IntervalSet& s, Analyzer* an, const char* what = "interval");

// Region analysis: for accesses buffer[idx_0, ..., idx_{n-1}] (one index tuple
// per access, all of the same rank), the per-dimension Range covering every
// accessed element when the variables range over dom.
std::vector<Range> CoverRegion(const std::vector<std::vector<Expr>>& accesses, const IntSetMap& dom,
                               Analyzer* an);

}  // namespace kiln::ir::arith
