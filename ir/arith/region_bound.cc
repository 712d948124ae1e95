// ir/arith/region_bound.h: region bounds and the cover proof.
#include "ir/arith/region_bound.h"

#include <unordered_map>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/arith/iter_map.h"
#include "ir/op.h"
#include "ir/text/printer.h"

namespace kiln::ir::arith {

namespace {

IntSetMap Domain(const std::vector<std::pair<Var, Range>>& loops, Analyzer* an) {
  std::unordered_map<const VarNode*, Range> ranges;
  for (const auto& [v, r] : loops) ranges[v.get()] = r;
  return DomainFromRanges(ranges, an);
}

}  // namespace

std::optional<Box> ProducedLowerBound(const std::vector<Range>& region,
                                      const std::vector<std::pair<Var, Range>>& loops,
                                      const Expr& predicate, Analyzer* an) {
  std::vector<Expr> mins;
  for (const Range& r : region) mins.push_back(r.min);
  Expr pred = predicate;
  if (pred.defined() && IsConstInt(pred, 1)) pred = Expr();
  if (loops.empty()) {
    if (pred.defined() && !an->CanProve(pred)) return std::nullopt;
    Box out;
    for (const Range& r : region) {
      out.push_back({an->Simplify(r.min), an->Simplify(r.min + r.extent - 1)});
    }
    return out;
  }
  IterMapResult res = DetectIterMap(mins, loops, pred, IterMapLevel::kSurjective, an);
  if (!res.ok()) return std::nullopt;
  Box out;
  for (size_t i = 0; i < region.size(); ++i) {
    const IterSumExpr& sum = res.indices[i];
    Expr ext = an->Simplify(region[i].extent);
    Expr base = an->Simplify(sum.base);
    if (sum.args.empty()) {
      out.push_back({base, an->Simplify(base + ext - 1)});
      continue;
    }
    if (sum.args.size() != 1) return std::nullopt;
    const IterSplitExpr& s = sum.args[0];
    if (s.scale <= 0 || !an->CanProveGE(ext - s.scale, 0)) return std::nullopt;
    out.push_back(
        {base, an->Simplify(base + IntImm(s.extent * s.scale, ext.dtype()) + ext - (s.scale + 1))});
  }
  return out;
}

Box ConsumedUpperBound(const std::vector<Range>& region,
                       const std::vector<std::pair<Var, Range>>& loops, Analyzer* an) {
  IntSetMap dom = Domain(loops, an);
  Box out;
  for (const Range& r : region) {
    IntervalSet lo = EvalSet(r.min, dom, an);
    // A point access (extent 1, the common case) ends where it starts.
    if (IsConstInt(r.extent, 1)) {
      out.push_back({lo.min, lo.max});
      continue;
    }
    IntervalSet hi = EvalSet(r.min + r.extent - 1, dom, an);
    out.push_back({lo.min, hi.max});
  }
  return out;
}

bool Covers(const Box& produced, const Box& consumed, const Buffer& buffer, Analyzer* an) {
  for (size_t d = 0; d < produced.size(); ++d) {
    if (!consumed[d].min.defined() || !consumed[d].max.defined()) return false;
    // Clamping both sides to the buffer is monotone, so bounds that nest
    // unclamped nest clamped too: try that cheaper proof first.
    if (an->CanProve(LE(produced[d].min, consumed[d].min)) &&
        an->CanProve(LE(consumed[d].max, produced[d].max))) {
      continue;
    }
    Expr top = buffer.shape()[d] - 1;
    Expr zero = IntImm(0, top.dtype());
    Expr pmin = an->Simplify(Max(produced[d].min, zero));
    Expr pmax = an->Simplify(Min(produced[d].max, top));
    Expr cmin = an->Simplify(Max(consumed[d].min, zero));
    Expr cmax = an->Simplify(Min(consumed[d].max, top));
    if (!an->CanProve(LE(pmin, cmin)) || !an->CanProve(LE(cmax, pmax))) return false;
  }
  return true;
}

void MergeBoxes(std::vector<Box>* boxes, Analyzer* an) {
  auto same = [&](const Expr& a, const Expr& b) { return an->CanProveEqual(a, b); };
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t x = 0; x < boxes->size() && !merged; ++x) {
      for (size_t y = 0; y < boxes->size() && !merged; ++y) {
        if (x == y) continue;
        Box& a = (*boxes)[x];
        const Box& b = (*boxes)[y];
        int differing = -1;
        bool ok = true;
        for (size_t d = 0; d < a.size() && ok; ++d) {
          if (same(a[d].min, b[d].min) && same(a[d].max, b[d].max)) continue;
          if (differing >= 0) ok = false;
          differing = static_cast<int>(d);
        }
        if (!ok || differing < 0) continue;
        DimBound& ia = a[differing];
        const DimBound& ib = b[differing];
        // a then b, with b starting at most one past the end of a.
        if (an->CanProve(LE(ia.min, ib.min)) && an->CanProve(LE(ib.min, ia.max + 1))) {
          if (an->CanProve(LT(ia.max, ib.max))) ia.max = ib.max;
          boxes->erase(boxes->begin() + y);
          merged = true;
        }
      }
    }
  }
}

std::string BoxText(const Box& r) {
  std::string s = "[";
  for (size_t i = 0; i < r.size(); ++i) {
    if (i) s += ", ";
    s += (r[i].min.defined() ? ToText(r[i].min) : "-inf") + " : " +
         (r[i].max.defined() ? ToText(r[i].max) : "inf");
  }
  return s + "]";
}

}  // namespace kiln::ir::arith
