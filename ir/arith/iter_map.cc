#include "ir/arith/iter_map.h"

#include <algorithm>
#include <optional>
#include <set>

#include "ir/arith/expr_compare.h"
#include "ir/arith/linear_sum.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"

namespace kiln::ir::arith {

namespace {

bool SameSplitPlace(const IterSplitExpr& a, const IterSplitExpr& b) {
  return a.source == b.source && a.lower_factor == b.lower_factor && a.extent == b.extent;
}

std::string SplitName(const IterSplitExpr& s) {
  std::string r = IterMarkName(*s.source);
  if (s.lower_factor != 1) r = "(" + r + " // " + std::to_string(s.lower_factor) + ")";
  if (s.lower_factor * s.extent != s.source->extent)
    r = "(" + r + " % " + std::to_string(s.extent) + ")";
  if (s.scale != 1) r += " * " + std::to_string(s.scale);
  return r;
}

}  // namespace

std::string IterMarkName(const IterMarkNode& m) {
  if (m.var.defined()) return m.var.name();
  std::string name = "fused(";
  for (size_t i = 0; i < m.sum.args.size(); ++i) name += (i ? ", " : "") + SplitName(m.sum.args[i]);
  return name + ")";
}

namespace {

// floormod(a, c) for c > 0.
int64_t FloorModConst(int64_t a, int64_t c) {
  int64_t m = a % c;
  return m < 0 ? m + c : m;
}

// Thrown inside the rewriter; turned into an error string per index.
struct IterMapFailure {
  std::string message;
};

[[noreturn]] void Fail(std::string message) { throw IterMapFailure{std::move(message)}; }

class IterMapRewriter {
 public:
  IterMapRewriter(Analyzer* an, DataType t) : an_(an), dtype_(t) {}

  // Input marks are nodes of their own: node memory is recycled per thread,
  // while one block for all of them would be a large allocation, which
  // glibc's malloc serves only after merging its small free chunks.
  void ReserveInputs(size_t n) {
    inputs_.reserve(n);
    input_order_.reserve(n);
  }

  void AddInput(const Var& v, const Range& r) {
    int64_t ext;
    if (!AsConstInt(an_->Simplify(r.extent), &ext)) {
      Fail("iterator " + v.name() + " has a non-constant extent");
    }
    if (ext <= 0)
      Fail("iterator " + v.name() + " has an empty range (extent " + std::to_string(ext) + ")");
    std::shared_ptr<IterMarkNode> m = MakeNode<IterMarkNode>();
    m->var = v;
    m->var_min = an_->Simplify(r.min);
    m->extent = ext;
    inputs_.push_back({v.get(), m});
    input_order_.push_back(m);
  }

  const std::vector<std::shared_ptr<IterMarkNode>>& inputs() const { return input_order_; }
  const std::vector<std::shared_ptr<IterMarkNode>>& fused() const { return fused_; }

  IterSumExpr Rewrite(const Expr& e) {
    bool uses = false;
    return Rewrite(e, &uses);
  }

  // Sets *uses when e uses an iterator. Finding that out while rewriting,
  // rather than by a walk at every level, keeps the rewrite linear.
  IterSumExpr Rewrite(const Expr& e, bool* uses) {
    *uses = false;
    if (!e.defined()) Fail("undefined index");
    if (e.kind() == ExprKind::kIntImm) return Base(e);
    if (const auto* v = e.as<VarNode>()) {
      const IterMark* found = FindInput(v);
      if (found == nullptr) return Base(e);
      *uses = true;
      const IterMark& m = *found;
      IterSumExpr s = Base(m->var_min);
      if (m->extent > 1) s.args.push_back({m, 1, m->extent, 1});
      return s;
    }
    const auto* b = e.as<BinaryNode>();
    bool affine_op = e.kind() == ExprKind::kAdd || e.kind() == ExprKind::kSub ||
                     e.kind() == ExprKind::kMul || e.kind() == ExprKind::kFloorDiv ||
                     e.kind() == ExprKind::kFloorMod || e.kind() == ExprKind::kDiv ||
                     e.kind() == ExprKind::kMod;
    if (b == nullptr || !affine_op || !e.dtype().is_int() || !e.dtype().is_scalar()) {
      if (!UsesIters(e)) return Base(e);
      *uses = true;
      if (!e.dtype().is_int() || !e.dtype().is_scalar()) {
        Fail("iterators used in an expression of type " + e.dtype().str());
      }
      Fail("iterators used under an operation that is not + - * // %");
    }
    switch (e.kind()) {
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        bool ua = false, ub = false;
        IterSumExpr x = Rewrite(b->a, &ua), y = Rewrite(b->b, &ub);
        if (!ua && !ub) return Base(e);
        *uses = true;
        int64_t sign = e.kind() == ExprKind::kAdd ? 1 : -1;
        for (auto s : y.args) {
          s.scale *= sign;
          AddSplit(&x, s);
        }
        x.base = FoldBases(sign > 0 ? ExprKind::kAdd : ExprKind::kSub, x.base, y.base);
        return x;
      }
      case ExprKind::kMul: {
        bool ua = false, ub = false;
        IterSumExpr x = Rewrite(b->a, &ua), y = Rewrite(b->b, &ub);
        if (!ua && !ub) return Base(e);
        *uses = true;
        if (!x.args.empty() && !y.args.empty())
          Fail("product of two iterator expressions is not affine");
        if (x.args.empty()) std::swap(x, y);
        int64_t c;
        if (!AsConstInt(y.base, &c)) Fail("iterators scaled by a non-constant factor");
        IterSumExpr r = Base(FoldBases(ExprKind::kMul, x.base, y.base));
        for (auto s : x.args) {
          if (__builtin_mul_overflow(s.scale, c, &s.scale)) Fail("iterator coefficient overflows");
          AddSplit(&r, s);
        }
        return r;
      }
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        bool ua = false;
        IterSumExpr x = Rewrite(b->a, &ua);
        if (!ua && !UsesIters(b->b)) return Base(e);
        *uses = true;
        return DivMod(e.kind(), std::move(x), b->b);
      }
      default: {  // kDiv, kMod
        bool ua = false;
        IterSumExpr x = Rewrite(b->a, &ua);
        if (!ua && !UsesIters(b->b)) return Base(e);
        *uses = true;
        // Truncation equals flooring on the non-negative values iterators take.
        if (!an_->CanProveGE(b->a, 0) && !NonNegative(x)) {
          Fail("truncating division of a value that may be negative");
        }
        return DivMod(e.kind() == ExprKind::kDiv ? ExprKind::kFloorDiv : ExprKind::kFloorMod, x,
                      b->b);
      }
    }
  }

  // Fuses a sum into one split of a (possibly new) mark, leaving the base
  // aside. Empty sums are not fusable (the caller treats them as constants).
  IterSplitExpr Fuse(const IterSumExpr& s) {
    if (s.args.size() == 1) {
      if (s.args[0].scale <= 0)
        Fail("iterator " + SplitName(s.args[0]) + " has a non-positive coefficient");
      return s.args[0];
    }
    for (const auto& a : s.args) {
      if (a.scale <= 0) Fail("iterator " + SplitName(a) + " has a non-positive coefficient");
    }
    int64_t s0 = s.args[0].scale;
    for (const auto& a : s.args) s0 = std::min(s0, a.scale);
    // Walk from the innermost term: each next scale must be the previous
    // scale times the previous extent, or terms overlap / leave gaps.
    IterSplitList chain;
    std::vector<bool> used(s.args.size(), false);
    int64_t expected = s0;
    for (size_t step = 0; step < s.args.size(); ++step) {
      int found = -1;
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (used[i] || s.args[i].scale != expected) continue;
        if (found >= 0) {
          Fail("terms " + SplitName(s.args[static_cast<size_t>(found)]) + " and " +
               SplitName(s.args[i]) + " have the same scale and overlap");
        }
        found = static_cast<int>(i);
      }
      if (found < 0) {
        std::string rest;
        for (size_t i = 0; i < s.args.size(); ++i) {
          if (!used[i]) rest += (rest.empty() ? "" : ", ") + SplitName(s.args[i]);
        }
        Fail("not a fused iterator: expected a term with scale " + std::to_string(expected) +
             " among " + rest + " (terms overlap or leave gaps)");
      }
      used[static_cast<size_t>(found)] = true;
      chain.push_back(s.args[static_cast<size_t>(found)]);
      if (__builtin_mul_overflow(expected, chain.back().extent, &expected))
        Fail("fused extent overflows");
    }
    // Adjacent pieces of one mark that are contiguous merge back together:
    // (i // 4) * 4 + i % 4 is i.
    IterSplitList merged;
    for (const auto& piece : chain) {
      if (!merged.empty()) {
        IterSplitExpr& inner = merged.back();
        if (inner.source == piece.source &&
            piece.lower_factor == inner.lower_factor * inner.extent &&
            piece.scale == inner.scale * inner.extent) {
          inner.extent *= piece.extent;
          continue;
        }
      }
      merged.push_back(piece);
    }
    if (merged.size() == 1) return merged[0];
    IterSumExpr norm;
    norm.base = IntImm(0, dtype_);
    int64_t total = 1;
    for (auto it = merged.rbegin(); it != merged.rend(); ++it) {
      IterSplitExpr p = *it;
      p.scale /= s0;
      total *= p.extent;
      norm.args.push_back(p);
    }
    return {FusedMark(norm, total), 1, 0, s0};
  }

  // A mark's extent may have been narrowed by the predicate.
  static IterSplitExpr WithMarkExtent(IterSplitExpr s) {
    if (s.extent == 0) s.extent = s.source->extent;
    return s;
  }

  void NarrowMark(const IterMark& m, int64_t bound) {
    for (auto& in : input_order_) {
      if (in == m) in->extent = std::min(in->extent, bound);
    }
    for (auto& f : fused_) {
      if (f == m) f->extent = std::min(f->extent, bound);
    }
  }

 private:
  IterSumExpr Base(const Expr& e) {
    IterSumExpr s;
    s.base = e;
    return s;
  }

  // The simplified a + b, a - b or a * b of two bases. Constants of one type
  // fold directly, as the simplifier would fold them (wrapping at the type's
  // width), without building the expression first.
  Expr FoldBases(ExprKind kind, const Expr& a, const Expr& b) {
    const auto* x = a.as<IntImmNode>();
    const auto* y = b.as<IntImmNode>();
    DataType t = a.dtype();
    if (x && y && t == b.dtype() && t.is_int() && t.is_scalar()) {
      uint64_t ux = static_cast<uint64_t>(x->value), uy = static_cast<uint64_t>(y->value);
      uint64_t r = kind == ExprKind::kAdd ? ux + uy : kind == ExprKind::kSub ? ux - uy : ux * uy;
      return IntImm(WrapInt(t, static_cast<int64_t>(r)), t);
    }
    return an_->Simplify(Binary(kind, a, b));
  }

  // Loop nests are shallow: a linear search beats hashing here.
  const IterMark* FindInput(const VarNode* v) const {
    for (const auto& [var, mark] : inputs_) {
      if (var == v) return &mark;
    }
    return nullptr;
  }

  bool UsesIters(const Expr& e) const {
    struct Finder : IRVisitor {
      const IterMapRewriter* rw;
      bool found = false;
      void VisitVar(const VarNode* v) override { found = found || rw->FindInput(v) != nullptr; }
    } f;
    f.rw = this;
    f.VisitExpr(e);
    return f.found;
  }

  bool NonNegative(const IterSumExpr& s) {
    for (const auto& a : s.args) {
      if (a.scale < 0) return false;
    }
    return an_->CanProveGE(s.base, 0);
  }

  // Adds a split, merging it with one at the same place.
  void AddSplit(IterSumExpr* s, const IterSplitExpr& t) {
    for (size_t i = 0; i < s->args.size(); ++i) {
      if (SameSplitPlace(s->args[i], t)) {
        s->args[i].scale += t.scale;
        if (s->args[i].scale == 0) s->args.erase(s->args.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
    if (t.scale == 0) return;
    // Largest scale first keeps the order stable and readable.
    auto pos = std::find_if(s->args.begin(), s->args.end(),
                            [&](const IterSplitExpr& a) { return a.scale < t.scale; });
    s->args.insert(pos, t);
  }

  IterMark FusedMark(const IterSumExpr& norm, int64_t extent) {
    for (const auto& f : fused_) {
      const auto& a = f->sum.args;
      if (a.size() != norm.args.size()) continue;
      bool same = true;
      for (size_t i = 0; i < a.size() && same; ++i) {
        same = SameSplitPlace(a[i], norm.args[i]) && a[i].scale == norm.args[i].scale;
      }
      if (same) return f;
    }
    auto m = MakeNode<IterMarkNode>();
    m->sum = norm;
    m->extent = extent;
    fused_.push_back(m);
    return m;
  }

  IterSumExpr DivMod(ExprKind kind, IterSumExpr x, const Expr& divisor) {
    bool div = kind == ExprKind::kFloorDiv;
    const char* op = div ? "//" : "%";
    int64_t c;
    if (UsesIters(divisor) || !AsConstInt(an_->Simplify(divisor), &c)) {
      Fail(std::string("iterators divided (") + op + ") by a non-constant");
    }
    if (c <= 0) Fail(std::string("iterators divided (") + op + ") by " + std::to_string(c));
    if (x.args.empty()) return Base(an_->Simplify(Binary(kind, x.base, IntImm(c, x.base.dtype()))));
    // The base must be a multiple of c, or it would mix into the split.
    Expr cexpr = IntImm(c, x.base.dtype());
    // A constant base (most often 0) is checked and divided directly, as the
    // analyzer would fold it.
    int64_t b;
    bool const_base = AsConstInt(x.base, &b) && x.base.dtype().is_int() &&
                      x.base.dtype().is_scalar() && WrapInt(x.base.dtype(), b) == b;
    bool multiple = const_base ? FloorModConst(b, c) == 0
                               : an_->CanProveEqual(FloorMod(x.base, cexpr), IntImm(0, x.base.dtype()));
    if (!multiple) {
      Fail("offset of the divided iterator expression is not a multiple of " + std::to_string(c));
    }
    Expr quotient = !div       ? IntImm(0, x.base.dtype())
                    : const_base ? IntImm(b / c, x.base.dtype())  // exact: b is a multiple
                                 : an_->Simplify(FloorDiv(x.base, cexpr));
    IterSumExpr r = Base(quotient);
    // floordiv(c*q + rest, c) = q + floordiv(rest, c); floormod drops c*q.
    IterSumExpr rest = Base(IntImm(0, x.base.dtype()));
    for (auto a : x.args) {
      if (a.scale % c != 0) {
        AddSplit(&rest, a);
      } else if (div) {
        a.scale /= c;
        AddSplit(&r, a);
      }
    }
    if (rest.args.empty()) return r;
    IterSplitExpr s = WithMarkExtent(Fuse(rest));
    if (c % s.scale != 0) {
      Fail("scale " + std::to_string(s.scale) + " of " + SplitName(s) + " and divisor " +
           std::to_string(c) + " do not divide one another");
    }
    int64_t k = c / s.scale;
    if (s.extent <= k) {
      // Every value of the term lies below c.
      if (!div) AddSplit(&r, s);
      return r;
    }
    if (s.extent % k != 0) {
      Fail("extent " + std::to_string(s.extent) + " of " + SplitName(s) + " is not divisible by " +
           std::to_string(k));
    }
    if (div) {
      AddSplit(&r, {s.source, s.lower_factor * k, s.extent / k, 1});
    } else {
      AddSplit(&r, {s.source, s.lower_factor, k, s.scale});
    }
    return r;
  }

  Analyzer* an_;
  DataType dtype_;
  std::vector<std::pair<const VarNode*, IterMark>> inputs_;
  std::vector<std::shared_ptr<IterMarkNode>> input_order_;
  std::vector<std::shared_ptr<IterMarkNode>> fused_;
};

// Splits of one mark, as digit intervals [lower, lower * extent).
struct Use {
  int64_t lower, extent;
  // Where the use comes from, for messages: index `index`, or (index < 0)
  // the wholly or partly used fusion `fusion`. Kept as data, not text: the
  // text is needed only when a check fails.
  int64_t index;
  const IterMarkNode* fusion;
};

std::string Where(const Use& u) {
  return u.index >= 0 ? "index " + std::to_string(u.index) : IterMarkName(*u.fusion);
}

// The uses of every mark in one flat list, in the order they were found:
// maps hold a handful of marks and uses, so scanning beats a map of lists.
class MarkUses {
 public:
  MarkUses() { all_.reserve(16); }  // grown once, not through 1, 2, 4, 8
  void Add(const IterMarkNode* m, const Use& u) { all_.push_back({m, u}); }
  // The uses of m, in the order they were added; false if there are none.
  bool Gather(const IterMarkNode* m, std::vector<Use>* out) const {
    out->clear();
    for (const auto& [mark, u] : all_) {
      if (mark == m) out->push_back(u);
    }
    return !out->empty();
  }

 private:
  std::vector<std::pair<const IterMarkNode*, Use>> all_;
};

// Sorts `uses` (scratch space of the caller) and checks them.
void CheckUses(const IterMarkNode& m, std::vector<Use>& uses, IterMapLevel level,
               std::vector<std::string>* errors) {
  // A stable insertion sort: the lists hold a few uses, and std::stable_sort
  // would allocate a buffer for them.
  for (size_t i = 1; i < uses.size(); ++i) {
    for (size_t j = i; j > 0 && uses[j].lower < uses[j - 1].lower; --j) {
      std::swap(uses[j], uses[j - 1]);
    }
  }
  int64_t next = 1;
  for (size_t i = 0; i < uses.size(); ++i) {
    const Use& u = uses[i];
    if (u.lower < next) {
      errors->push_back("iterator " + IterMarkName(m) + " is used twice (overlap): by " + Where(uses[i - 1]) +
                        " and " + Where(u));
      return;
    }
    if (u.lower > next && level == IterMapLevel::kBijective) {
      errors->push_back("iterator " + IterMarkName(m) + " is not fully used: the part below " +
                        std::to_string(u.lower) + " from " + std::to_string(next) +
                        " appears in no index");
      return;
    }
    next = u.lower * u.extent;
  }
  if (level == IterMapLevel::kBijective && next != m.extent) {
    errors->push_back("iterator " + IterMarkName(m) + " (extent " + std::to_string(m.extent) +
                      ") is only covered up to " + std::to_string(next) + " by the indices");
  }
}

}  // namespace

IterMapResult DetectIterMap(const std::vector<Expr>& indices,
                            const std::vector<std::pair<Var, Range>>& iters, const Expr& predicate,
                            IterMapLevel level, Analyzer* analyzer) {
  IterMapResult result;
  if (analyzer == nullptr) throw IRError("DetectIterMap: no analyzer");
  DataType t = indices.empty() ? DataType::Int32() : indices[0].dtype();
  IterMapRewriter rw(analyzer, t);
  try {
    rw.ReserveInputs(iters.size());
    for (const auto& [v, r] : iters) rw.AddInput(v, r);
  } catch (const IterMapFailure& f) {
    result.errors.push_back(f.message);
    return result;
  }
  // The predicate: a conjunction of `fused < bound`.
  std::vector<Expr> conds;
  std::vector<Expr> pending;
  if (predicate.defined()) pending.push_back(predicate);
  while (!pending.empty()) {
    Expr c = pending.back();
    pending.pop_back();
    if (c.kind() == ExprKind::kAnd) {
      const auto* b = c.as<BinaryNode>();
      pending.push_back(b->b);
      pending.push_back(b->a);
      continue;
    }
    conds.push_back(c);
  }
  for (const auto& c : conds) {
    int64_t v;
    if (AsConstInt(analyzer->Simplify(c), &v) && v != 0) continue;
    const auto* cmp = c.as<BinaryNode>();
    if (cmp == nullptr || (c.kind() != ExprKind::kLT && c.kind() != ExprKind::kLE)) {
      result.errors.push_back("predicate term is not of the form `fused < bound`");
      continue;
    }
    try {
      IterSumExpr lhs = rw.Rewrite(cmp->a);
      int64_t bound;
      if (!AsConstInt(analyzer->Simplify(Sub(cmp->b, lhs.base)), &bound)) {
        throw IterMapFailure{"predicate bound is not a constant"};
      }
      if (c.kind() == ExprKind::kLE) ++bound;
      if (lhs.args.empty()) throw IterMapFailure{"predicate does not use the iterators"};
      IterSplitExpr s = IterMapRewriter::WithMarkExtent(rw.Fuse(lhs));
      if (s.scale != 1 || s.lower_factor != 1 || s.extent != s.source->extent) {
        throw IterMapFailure{"predicate must bound a whole fused iterator with unit scale"};
      }
      if (bound <= 0) throw IterMapFailure{"predicate admits no iteration"};
      rw.NarrowMark(s.source, bound);
    } catch (const IterMapFailure& f) {
      result.errors.push_back("predicate: " + f.message);
    }
  }
  if (!result.errors.empty()) return result;

  std::vector<IterSumExpr> sums;
  for (size_t i = 0; i < indices.size(); ++i) {
    try {
      IterSumExpr s = rw.Rewrite(indices[i]);
      if (!s.args.empty()) {
        IterSplitExpr f = IterMapRewriter::WithMarkExtent(rw.Fuse(s));
        s.args = {f};
      }
      s.base = analyzer->Simplify(s.base);
      sums.push_back(std::move(s));
    } catch (const IterMapFailure& f) {
      result.errors.push_back("index " + std::to_string(i) + ": " + f.message);
    }
  }
  if (!result.errors.empty()) return result;

  // Every digit of every mark feeds at most one index (and, when bijective,
  // exactly one).
  MarkUses uses;
  std::vector<Use> list, fused_uses;  // reused scratch lists
  for (size_t i = 0; i < sums.size(); ++i) {
    for (const auto& a : sums[i].args) {
      uses.Add(a.source.get(), {a.lower_factor, a.extent, static_cast<int64_t>(i), nullptr});
    }
  }
  // Outer fusions are made after their parts: walk newest first so that a
  // used fusion marks its parts used before they are looked at.
  for (auto it = rw.fused().rbegin(); it != rw.fused().rend(); ++it) {
    const auto& f = *it;
    if (!uses.Gather(f.get(), &fused_uses)) continue;
    list = fused_uses;  // CheckUses sorts its list; the loop below wants found order
    std::vector<std::string> overlap;
    CheckUses(*f, list, IterMapLevel::kBijective, &overlap);
    if (overlap.empty()) {
      // Wholly used: so is every part.
      for (const auto& a : f->sum.args) {
        uses.Add(a.source.get(), {a.lower_factor, a.extent, -1, f.get()});
      }
      continue;
    }
    for (const Use& u : fused_uses) {
      // The used digits [lo, hi) of the fusion, mapped onto each part, which
      // occupies digits [scale, scale * extent).
      int64_t lo = u.lower, hi = u.lower * u.extent;
      for (const auto& a : f->sum.args) {
        int64_t plo = std::max(lo, a.scale), phi = std::min(hi, a.scale * a.extent);
        if (plo >= phi) continue;
        int64_t la = plo / a.scale, lb = phi / a.scale;
        if (plo % a.scale != 0 || phi % a.scale != 0 || lb % la != 0) {
          result.errors.push_back("iterator " + IterMarkName(*f) + " is used in part, split across " +
                                  SplitName(a));
          continue;
        }
        uses.Add(a.source.get(), {a.lower_factor * la, lb / la, -1, f.get()});
      }
    }
  }
  auto check = [&](const IterMarkNode& m) {
    if (!uses.Gather(&m, &list)) {
      if (level == IterMapLevel::kBijective && m.extent > 1 && m.var.defined()) {
        result.errors.push_back("iterator " + IterMarkName(m) + " is not used by any index");
      }
      return;
    }
    CheckUses(m, list, level, &result.errors);
  };
  for (const auto& m : rw.inputs()) check(*m);
  // A fusion may be used in part (its other digits reach the indices
  // directly); only overlap within it is an error.
  for (const auto& m : rw.fused()) {
    if (uses.Gather(m.get(), &list)) CheckUses(*m, list, IterMapLevel::kSurjective, &result.errors);
  }
  if (!result.errors.empty()) return result;
  result.indices = std::move(sums);
  return result;
}

Expr IterMarkSource(const IterMark& mark, DataType t) {
  if (mark->var.defined()) {
    if (IsConstInt(mark->var_min, 0)) return mark->var;
    return Sub(mark->var, mark->var_min);
  }
  return NormalizeIterMapToExpr(mark->sum, t);
}

Expr NormalizeIterMapToExpr(const IterSplitExpr& s, DataType t) {
  Expr e = IterMarkSource(s.source, t);
  if (s.lower_factor != 1) e = FloorDiv(e, IntImm(s.lower_factor, t));
  if (s.lower_factor * s.extent < s.source->extent) e = FloorMod(e, IntImm(s.extent, t));
  if (s.scale != 1) e = Mul(e, IntImm(s.scale, t));
  return e;
}

Expr NormalizeIterMapToExpr(const IterSumExpr& sum, DataType t) {
  Expr e;
  for (const auto& a : sum.args) {
    Expr x = NormalizeIterMapToExpr(a, t);
    e = e.defined() ? Add(e, x) : x;
  }
  if (!e.defined()) return sum.base.defined() ? sum.base : IntImm(0, t);
  if (sum.base.defined() && !IsConstInt(sum.base, 0)) e = Add(e, sum.base);
  return e;
}

namespace {

// Whether a mark depends on sub-iterators / on other iterators.
struct Deps {
  bool sub = false, outer = false;
};

Deps MarkDeps(const IterMark& m, const std::set<const VarNode*>& sub) {
  if (m->var.defined()) {
    bool in = sub.count(m->var.get()) > 0;
    return {in, !in};
  }
  Deps d;
  for (const auto& a : m->sum.args) {
    Deps x = MarkDeps(a.source, sub);
    d.sub = d.sub || x.sub;
    d.outer = d.outer || x.outer;
  }
  return d;
}

IterSumExpr SumOf(IterSplitList args) {
  IterSumExpr s;
  s.args = std::move(args);
  return s;
}

}  // namespace

SubspaceDivision SubspaceDivide(const std::vector<Expr>& indices,
                                const std::vector<std::pair<Var, Range>>& iters,
                                const std::vector<Var>& sub_iters, const Expr& predicate,
                                IterMapLevel level, Analyzer* analyzer) {
  SubspaceDivision result;
  IterMapResult map = DetectIterMap(indices, iters, predicate, level, analyzer);
  if (!map.ok()) {
    result.errors = std::move(map.errors);
    return result;
  }
  std::set<const VarNode*> sub;
  for (const auto& v : sub_iters) sub.insert(v.get());
  for (size_t i = 0; i < map.indices.size(); ++i) {
    const IterSumExpr& s = map.indices[i];
    DataType t = indices[i].dtype();
    DividedIndex d;
    d.base = s.base.defined() ? s.base : IntImm(0, t);
    d.outer = IntImm(0, t);
    d.inner = IntImm(0, t);
    std::string where = "index " + std::to_string(i) + ": ";
    if (s.args.empty()) {
      result.indices.push_back(d);
      continue;
    }
    const IterSplitExpr& split = s.args[0];
    Deps deps = MarkDeps(split.source, sub);
    if (!deps.sub || !deps.outer) {
      // A scaled piece hits every scale-th value of its box.
      (deps.sub ? d.inner : d.outer) = NormalizeIterMapToExpr(SumOf({split}), t);
      (deps.sub ? d.inner_extent : d.outer_extent) = (split.extent - 1) * split.scale + 1;
      result.indices.push_back(d);
      continue;
    }
    // Mixed: a whole fused iterator whose outer-major terms are all outer and
    // whose minor terms are all inner.
    const IterMarkNode& m = *split.source;
    int64_t full = 1;
    for (const auto& a : m.sum.args) full *= a.extent;
    if (split.lower_factor != 1 || split.extent != m.extent || full != m.extent) {
      result.errors.push_back(where + "only part of the fused iterator " + IterMarkName(m) +
                              " is used, so it cannot be divided");
      continue;
    }
    IterSplitList outer, inner;
    bool bad = false;
    for (const auto& a : m.sum.args) {
      Deps x = MarkDeps(a.source, sub);
      if (x.sub && x.outer) bad = true;
      if (x.sub) {
        inner.push_back(a);
      } else {
        if (!inner.empty()) bad = true;  // an outer term below an inner one
        outer.push_back(a);
      }
    }
    if (bad) {
      result.errors.push_back(where + "the fused iterator " + IterMarkName(m) +
                              " interleaves outer and inner iterators");
      continue;
    }
    if (split.scale != 1) {
      result.errors.push_back(where + "the fused iterator " + IterMarkName(m) + " is scaled by " +
                              std::to_string(split.scale) + " and cannot be divided");
      continue;
    }
    int64_t inner_extent = 1, outer_extent = 1;
    for (const auto& a : inner) inner_extent *= a.extent;
    for (auto& a : outer) {
      outer_extent *= a.extent;
      a.scale /= inner_extent;  // the chain makes every outer scale a multiple
    }
    d.outer = NormalizeIterMapToExpr(SumOf(outer), t);
    d.inner = NormalizeIterMapToExpr(SumOf(inner), t);
    d.outer_extent = outer_extent;
    d.inner_extent = inner_extent;
    result.indices.push_back(d);
  }
  if (!result.errors.empty()) result.indices.clear();
  return result;
}

}  // namespace kiln::ir::arith
