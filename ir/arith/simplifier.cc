#include "ir/arith/simplifier.h"

#include <cmath>
#include <numeric>
#include <optional>

#include "ir/arith/analyzer.h"
#include "ir/arith/expr_compare.h"
#include "ir/buffer.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::arith {

namespace {

using B = ConstIntBound;

// The canonical linear form is used for scalar signed integers only: unsigned
// subtraction wraps in normal use, which bound reasoning cannot follow.
bool IsLinear(DataType t) { return t.is_int() && t.is_scalar(); }

int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// In unsigned arithmetic: the product may leave int64 although the result fits.
int64_t FloorModI(int64_t a, int64_t b) {
  uint64_t q = static_cast<uint64_t>(FloorDivI(a, b));
  return static_cast<int64_t>(static_cast<uint64_t>(a) - q * static_cast<uint64_t>(b));
}

int64_t NegWrap(int64_t v) { return static_cast<int64_t>(0 - static_cast<uint64_t>(v)); }

uint64_t AbsU(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

// The same floor bucket [m*c, m*c + c - 1] holds the whole bound.
bool SameBucket(const B& b, int64_t c, int64_t* m) {
  if (b.min_value == B::kNegInf || b.max_value == B::kPosInf) return false;
  int64_t lo = FloorDivI(b.min_value, c), hi = FloorDivI(b.max_value, c);
  if (lo != hi) return false;
  *m = lo;
  return true;
}

// Folds an integer binary operation on constants of type t; nullopt where the
// operation has no defined value (division by zero).
std::optional<int64_t> FoldInt(ExprKind kind, DataType t, int64_t a, int64_t b) {
  bool is_unsigned = t.is_uint() || t.is_bool();
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto wrap = [&](uint64_t v) { return WrapInt(t, static_cast<int64_t>(v)); };
  auto cmp = [&](auto f) -> int64_t { return is_unsigned ? f(ua, ub) : f(a, b); };
  switch (kind) {
    case ExprKind::kAdd:
      return wrap(ua + ub);
    case ExprKind::kSub:
      return wrap(ua - ub);
    case ExprKind::kMul:
      return wrap(ua * ub);
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorMod: {
      if (b == 0) return std::nullopt;
      bool div = kind == ExprKind::kDiv || kind == ExprKind::kFloorDiv;
      if (is_unsigned) return wrap(div ? ua / ub : ua % ub);
      if (b == -1) return div ? wrap(0 - ua) : 0;  // avoids INT64_MIN / -1
      if (kind == ExprKind::kDiv) return wrap(static_cast<uint64_t>(a / b));
      if (kind == ExprKind::kMod) return wrap(static_cast<uint64_t>(a % b));
      if (kind == ExprKind::kFloorDiv) return wrap(static_cast<uint64_t>(FloorDivI(a, b)));
      return wrap(static_cast<uint64_t>(FloorModI(a, b)));
    }
    case ExprKind::kMin:
      return cmp([](auto x, auto y) { return static_cast<int64_t>(x < y ? x : y); });
    case ExprKind::kMax:
      return cmp([](auto x, auto y) { return static_cast<int64_t>(x > y ? x : y); });
    case ExprKind::kEQ:
      return a == b;
    case ExprKind::kNE:
      return a != b;
    case ExprKind::kLT:
      return cmp([](auto x, auto y) -> int64_t { return x < y; });
    case ExprKind::kLE:
      return cmp([](auto x, auto y) -> int64_t { return x <= y; });
    case ExprKind::kGT:
      return cmp([](auto x, auto y) -> int64_t { return x > y; });
    case ExprKind::kGE:
      return cmp([](auto x, auto y) -> int64_t { return x >= y; });
    case ExprKind::kAnd:
      return (a != 0) && (b != 0);
    case ExprKind::kOr:
      return (a != 0) || (b != 0);
    default:
      return std::nullopt;
  }
}

double RoundTo(DataType t, double v) {
  return t.bits() == 32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// Folds a float binary operation; comparisons give 0/1. Division by zero and
// half-precision types are left alone.
std::optional<double> FoldFloat(ExprKind kind, DataType t, double a, double b) {
  if (!(t.is_float() && (t.bits() == 32 || t.bits() == 64))) return std::nullopt;
  switch (kind) {
    case ExprKind::kAdd:
      return RoundTo(t, a + b);
    case ExprKind::kSub:
      return RoundTo(t, a - b);
    case ExprKind::kMul:
      return RoundTo(t, a * b);
    case ExprKind::kDiv:
      if (b == 0) return std::nullopt;
      return RoundTo(t, a / b);
    case ExprKind::kFloorDiv:
      if (b == 0) return std::nullopt;
      return RoundTo(t, std::floor(a / b));
    case ExprKind::kMod:
      if (b == 0) return std::nullopt;
      return RoundTo(t, std::fmod(a, b));
    case ExprKind::kFloorMod:
      if (b == 0) return std::nullopt;
      return RoundTo(t, a - std::floor(a / b) * b);
    case ExprKind::kMin:
      return std::fmin(a, b);
    case ExprKind::kMax:
      return std::fmax(a, b);
    case ExprKind::kEQ:
      return a == b;
    case ExprKind::kNE:
      return a != b;
    case ExprKind::kLT:
      return a < b;
    case ExprKind::kLE:
      return a <= b;
    case ExprKind::kGT:
      return a > b;
    case ExprKind::kGE:
      return a >= b;
    default:
      return std::nullopt;
  }
}

// Decides `d kind 0` from the bound of d; nullopt if the bound does not say.
std::optional<bool> DecideAgainstZero(ExprKind kind, const B& d) {
  switch (kind) {
    case ExprKind::kLT:
      if (d.max_value < 0) return true;
      if (d.min_value >= 0) return false;
      break;
    case ExprKind::kLE:
      if (d.max_value <= 0) return true;
      if (d.min_value > 0) return false;
      break;
    case ExprKind::kGT:
      if (d.min_value > 0) return true;
      if (d.max_value <= 0) return false;
      break;
    case ExprKind::kGE:
      if (d.min_value >= 0) return true;
      if (d.max_value < 0) return false;
      break;
    case ExprKind::kEQ:
      if (d.min_value == 0 && d.max_value == 0) return true;
      if (!d.contains(0)) return false;
      break;
    case ExprKind::kNE:
      if (d.min_value == 0 && d.max_value == 0) return false;
      if (!d.contains(0)) return true;
      break;
    default:
      break;
  }
  return std::nullopt;
}

// Decides `a kind b` from separate bounds of a and b.
std::optional<bool> DecideByBounds(ExprKind kind, const B& a, const B& b) {
  switch (kind) {
    case ExprKind::kLT:
      if (a.max_value < b.min_value) return true;
      if (a.min_value >= b.max_value) return false;
      break;
    case ExprKind::kLE:
      if (a.max_value <= b.min_value) return true;
      if (a.min_value > b.max_value) return false;
      break;
    case ExprKind::kGT:
      return DecideByBounds(ExprKind::kLT, b, a);
    case ExprKind::kGE:
      return DecideByBounds(ExprKind::kLE, b, a);
    case ExprKind::kEQ:
      if (a.is_const() && b.is_const() && a.min_value == b.min_value) return true;
      if (a.max_value < b.min_value || b.max_value < a.min_value) return false;
      break;
    case ExprKind::kNE:
      if (a.max_value < b.min_value || b.max_value < a.min_value) return true;
      break;
    default:
      break;
  }
  return std::nullopt;
}

ExprKind NegateCompare(ExprKind k) {
  switch (k) {
    case ExprKind::kLT:
      return ExprKind::kGE;
    case ExprKind::kLE:
      return ExprKind::kGT;
    case ExprKind::kGT:
      return ExprKind::kLE;
    case ExprKind::kGE:
      return ExprKind::kLT;
    case ExprKind::kEQ:
      return ExprKind::kNE;
    default:
      return ExprKind::kEQ;
  }
}

Expr MakeConstLike(DataType t, int64_t v) {
  if (t.is_bool()) return BoolImm(v != 0);
  return IntImm(v, t);
}

}  // namespace

ConstIntBound Simplifier::Bound(const LinearSum& s) const {
  B r = B::Single(s.constant);
  for (const auto& t : s.terms) {
    r = BoundAdd(r, BoundMul(an_.const_int_bound(t.expr), B::Single(t.coeff)));
  }
  return r;
}

Expr Simplifier::Simplify(const Expr& e) {
  if (!e.defined()) return e;
  if (IsLinear(e.dtype())) {
    // Constants and unbound variables are their own canonical form: the
    // round trip through a LinearSum would only rebuild the same node.
    if (const auto* imm = e.as<IntImmNode>(); imm && WrapInt(e.dtype(), imm->value) == imm->value) {
      return e;
    }
    if (const auto* v = e.as<VarNode>(); v && (expanding_ > 0 || !an_.LookupValue(v).defined())) {
      return e;
    }
    LinearSum sum = Sum(e);
    // Already canonical: hand back the same node rather than a copy.
    if (sum.ToExprEquals(e)) return e;
    return sum.ToExpr();
  }
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm:
      return e;
    case ExprKind::kVar: {
      if (expanding_ == 0) {
        if (Expr v = an_.LookupValue(e.as<VarNode>()); v.defined()) return v;
      }
      return e;
    }
    default:
      break;
  }
  if (const auto* b = e.as<BinaryNode>()) return SimplifyBinary(e, b);
  if (const auto* n = e.as<NotNode>()) return SimplifyNot(Simplify(n->a));
  return SimplifyOther(e);
}

Expr Simplifier::SimplifyBinary(const Expr& e, const BinaryNode* op) {
  ExprKind kind = e.kind();
  if (IsComparison(kind)) return SimplifyCompare(kind, op->a, op->b);
  Expr a = Simplify(op->a), b = Simplify(op->b);
  if (kind == ExprKind::kAnd || kind == ExprKind::kOr) return SimplifyLogic(kind, a, b);
  DataType t = e.dtype();
  int64_t ia, ib;
  if (AsConstInt(a, &ia) && AsConstInt(b, &ib)) {
    if (auto v = FoldInt(kind, t, ia, ib)) return MakeConstLike(t, *v);
  }
  double fa, fb;
  if (AsConstFloat(a, &fa) && AsConstFloat(b, &fb)) {
    if (auto v = FoldFloat(kind, t, fa, fb)) return FloatImm(*v, t);
  }
  if ((kind == ExprKind::kMin || kind == ExprKind::kMax) && ExprEqual(a, b)) return a;
  return Binary(kind, a, b);
}

Expr Simplifier::SimplifyCompare(ExprKind kind, const Expr& a0, const Expr& b0) {
  DataType t = a0.dtype();
  if (IsLinear(t)) {
    LinearSum sa = Sum(a0), sb = Sum(b0);
    LinearSum d = sa;
    d.Add(sb, -1);
    if (auto v = DecideAgainstZero(kind, Bound(d))) return BoolImm(*v);
    // Canonical sides from d = a - b: positive terms on the left, the rest
    // and the constant on the right (`x + 2 < 5` becomes `x < 3`,
    // `i*4 + j < i*4 + 8` becomes `j < 8`).
    LinearSum left = LinearSum::Const(t, 0), right = LinearSum::Const(t, 0);
    for (const auto& term : d.terms) {
      if (term.coeff > 0) {
        left.AddTerm(term.expr, term.coeff);
      } else {
        right.AddTerm(term.expr, NegWrap(term.coeff));
      }
    }
    if (left.is_const()) {
      left.constant = d.constant;
    } else {
      right.AddConst(NegWrap(d.constant));
    }
    return Binary(kind, left.ToExpr(), right.ToExpr());
  }
  Expr a = Simplify(a0), b = Simplify(b0);
  int64_t ia, ib;
  if (AsConstInt(a, &ia) && AsConstInt(b, &ib)) {
    if (auto v = FoldInt(kind, t, ia, ib)) return BoolImm(*v != 0);
  }
  double fa, fb;
  if (AsConstFloat(a, &fa) && AsConstFloat(b, &fb)) {
    if (auto v = FoldFloat(kind, t, fa, fb)) return BoolImm(*v != 0);
  }
  if ((t.is_integer() || t.is_bool()) && t.is_scalar()) {
    if (auto v = DecideByBounds(kind, an_.const_int_bound(a), an_.const_int_bound(b))) {
      return BoolImm(*v);
    }
    if (ExprEqual(a, b)) {
      return BoolImm(kind == ExprKind::kEQ || kind == ExprKind::kLE || kind == ExprKind::kGE);
    }
  }
  return Binary(kind, a, b);
}

Expr Simplifier::SimplifyLogic(ExprKind kind, const Expr& a, const Expr& b) {
  bool is_and = kind == ExprKind::kAnd;
  int64_t v;
  // x && true = x, x && false = false; dually for ||.
  if (AsConstInt(a, &v) && a.dtype().is_scalar()) return (v != 0) == is_and ? b : a;
  if (AsConstInt(b, &v) && b.dtype().is_scalar()) return (v != 0) == is_and ? a : b;
  if (ExprEqual(a, b)) return a;
  return Binary(kind, a, b);
}

Expr Simplifier::SimplifyNot(const Expr& a) {
  int64_t v;
  if (AsConstInt(a, &v)) return BoolImm(v == 0);
  if (const auto* n = a.as<NotNode>()) return n->a;
  if (const auto* c = a.as<BinaryNode>(); c && IsComparison(a.kind())) {
    // Not for floats: NaN makes `!(x < y)` differ from `x >= y`.
    if (c->a.dtype().is_integer()) return Binary(NegateCompare(a.kind()), c->a, c->b);
  }
  return Not(a);
}

Expr Simplifier::SimplifyOther(const Expr& e) {
  if (const auto* s = e.as<SelectNode>()) {
    Expr c = Simplify(s->condition);
    int64_t v;
    if (AsConstInt(c, &v)) return Simplify(v ? s->true_value : s->false_value);
    Expr t = Simplify(s->true_value), f = Simplify(s->false_value);
    if (ExprEqual(t, f)) return t;
    return Select(c, t, f);
  }
  if (const auto* cast = e.as<CastNode>()) {
    Expr v = Simplify(cast->value);
    DataType t = e.dtype();
    int64_t iv;
    double fv;
    if (t.is_scalar() && AsConstInt(v, &iv)) {
      bool from_unsigned = v.dtype().is_uint() || v.dtype().is_bool();
      if (t.is_integer() || t.is_bool()) return MakeConstLike(t, WrapInt(t, iv));
      if (t.is_float() && (t.bits() == 32 || t.bits() == 64)) {
        double d = from_unsigned ? static_cast<double>(static_cast<uint64_t>(iv))
                                 : static_cast<double>(iv);
        return FloatImm(RoundTo(t, d), t);
      }
    }
    if (t.is_scalar() && AsConstFloat(v, &fv)) {
      if (t.is_bool()) return BoolImm(fv != 0);
      if (t.is_float() && (t.bits() == 32 || t.bits() == 64)) return FloatImm(RoundTo(t, fv), t);
      B range = B::OfType(t);
      // Out-of-range float to int conversion is undefined: leave it.
      if (t.is_integer() && std::isfinite(fv) && fv > -9.2e18 && fv < 9.2e18) {
        double tr = std::trunc(fv);
        if (tr >= static_cast<double>(range.min_value) &&
            tr <= static_cast<double>(range.max_value)) {
          return IntImm(static_cast<int64_t>(tr), t);
        }
      }
    }
    return Cast(t, v);
  }
  if (const auto* c = e.as<CallNode>()) {
    if (c->op == CallOp::kIfThenElse) {
      Expr cond = Simplify(c->args[0]);
      int64_t v;
      if (AsConstInt(cond, &v)) return Simplify(v ? c->args[1] : c->args[2]);
      Expr t = Simplify(c->args[1]), f = Simplify(c->args[2]);
      if (ExprEqual(t, f)) return t;
      return IfThenElse(cond, t, f);
    }
    std::vector<Expr> args;
    for (const auto& a : c->args) args.push_back(Simplify(a));
    return Call(c->op, std::move(args));
  }
  if (const auto* l = e.as<BufferLoadNode>()) {
    std::vector<Expr> idx;
    for (const auto& i : l->indices) idx.push_back(Simplify(i));
    return BufferLoad(l->buffer, std::move(idx));
  }
  if (const auto* r = e.as<RampNode>())
    return Ramp(Simplify(r->base), Simplify(r->stride), r->lanes);
  if (const auto* b = e.as<BroadcastNode>()) return Broadcast(Simplify(b->value), b->lanes);
  return e;
}

LinearSum Simplifier::Sum(const Expr& e) {
  DataType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return LinearSum::Const(t, e.as<IntImmNode>()->value);
    case ExprKind::kVar: {
      if (expanding_ == 0) {
        if (Expr v = an_.LookupValue(e.as<VarNode>()); v.defined() && IsLinear(v.dtype())) {
          ++expanding_;
          LinearSum s = Sum(v);
          --expanding_;
          return s;
        }
      }
      return LinearSum::Atom(e);
    }
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      const auto* op = e.as<BinaryNode>();
      LinearSum s = Sum(op->a);
      s.Add(Sum(op->b), e.kind() == ExprKind::kAdd ? 1 : -1);
      MergeDivModPairs(&s);
      return s;
    }
    case ExprKind::kMul: {
      const auto* op = e.as<BinaryNode>();
      return SumMul(Sum(op->a), Sum(op->b));
    }
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      return SumDivision(e.kind(), e.as<BinaryNode>());
    case ExprKind::kMin:
    case ExprKind::kMax: {
      const auto* op = e.as<BinaryNode>();
      return SumMinMax(e.kind(), Sum(op->a), Sum(op->b));
    }
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      Expr c = Simplify(s->condition);
      int64_t v;
      if (AsConstInt(c, &v)) return Sum(v ? s->true_value : s->false_value);
      LinearSum a = Sum(s->true_value), b = Sum(s->false_value);
      LinearSum d = a;
      d.Add(b, -1);
      if (d.is_const() && d.constant == 0) return a;
      return LinearSum::Atom(Select(c, a.ToExpr(), b.ToExpr()));
    }
    default:
      break;
  }
  Expr r = SimplifyOther(e);
  int64_t v;
  if (AsConstInt(r, &v)) return LinearSum::Const(t, v);
  return LinearSum::Atom(r);
}

void Simplifier::MergeDivModPairs(LinearSum* s) {
  // k*c * (x // c) + k * (x % c) = k * x, for floor and for truncating pairs.
  // When x is itself z // a (floor, a > 0), the division's canonical form is
  // z // (a*c) (nested divisions fold, SumFloorDiv), so that pairs too:
  // k*c * (z // (a*c)) + k * ((z // a) % c) = k * (z // a), the digits of a
  // split fused back (f // 14 * 112 + f // 2 % 7 * 16 = f // 2 * 16). The
  // low digits fuse the same way: with a = b*d, k * ((z // b) % d) +
  // k*d * ((z // a) % c) = k * ((z // b) % (d*c)), and z % d for b = 1
  // (f % 16 * 32 + f // 16 % 2 * 512 = f % 32 * 32).
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < s->terms.size() && !changed; ++i) {
      const auto* mod = s->terms[i].expr.as<BinaryNode>();
      if (!mod) continue;
      ExprKind mk = s->terms[i].expr.kind();
      if (mk != ExprKind::kFloorMod && mk != ExprKind::kMod) continue;
      ExprKind dk = mk == ExprKind::kFloorMod ? ExprKind::kFloorDiv : ExprKind::kDiv;
      int64_t c, k = s->terms[i].coeff, kc;
      if (!AsConstInt(mod->b, &c) || __builtin_mul_overflow(k, c, &kc)) continue;
      Expr z;  // x = z // a: the division may be z // (a*c)
      int64_t a = 0, ac = 0;
      if (const auto* in = mod->a.as<BinaryNode>();
          in && mk == ExprKind::kFloorMod && mod->a.kind() == ExprKind::kFloorDiv) {
        if (AsConstInt(in->b, &a) && a > 0 && c > 0 && !__builtin_mul_overflow(a, c, &ac))
          z = in->a;
      }
      for (size_t j = 0; j < s->terms.size(); ++j) {
        const auto* div = s->terms[j].expr.as<BinaryNode>();
        if (!div || s->terms[j].expr.kind() != dk || s->terms[j].coeff != kc) continue;
        bool same = ExprEqual(div->b, mod->b) && ExprEqual(div->a, mod->a);
        int64_t d;
        bool nested = z.defined() && AsConstInt(div->b, &d) && d == ac && ExprEqual(div->a, z);
        if (!same && !nested) continue;
        Expr x = mod->a;
        LinearSum::Terms kept;
        for (size_t t = 0; t < s->terms.size(); ++t) {
          if (t != i && t != j) kept.push_back(s->terms[t]);
        }
        s->terms = std::move(kept);
        s->Add(Sum(x), k);
        changed = true;
        break;
      }
      if (changed || !z.defined()) continue;
      // The low digits: (z // b) % d with b*d = a (z % d when b = 1).
      for (size_t j = 0; j < s->terms.size(); ++j) {
        const auto* low = s->terms[j].expr.as<BinaryNode>();
        int64_t d;
        if (j == i || !low || s->terms[j].expr.kind() != ExprKind::kFloorMod ||
            !AsConstInt(low->b, &d) || d <= 0 || a % d != 0 || k % d != 0 ||
            s->terms[j].coeff != k / d) {
          continue;
        }
        const int64_t b = a / d;
        int64_t lb;
        const auto* ldiv = low->a.as<BinaryNode>();
        bool digits = b == 1 ? ExprEqual(low->a, z)
                             : ldiv && low->a.kind() == ExprKind::kFloorDiv &&
                                   AsConstInt(ldiv->b, &lb) && lb == b && ExprEqual(ldiv->a, z);
        if (!digits) continue;
        LinearSum fused = SumFloorMod(Sum(low->a), d * c);
        fused.Scale(k / d);
        LinearSum::Terms kept;
        for (size_t t = 0; t < s->terms.size(); ++t) {
          if (t != i && t != j) kept.push_back(s->terms[t]);
        }
        s->terms = std::move(kept);
        s->Add(fused);
        changed = true;
        break;
      }
    }
    // k * x - k*c * (x // c) = k * (x % c), when the sum holds all of k * x.
    for (size_t j = 0; j < s->terms.size() && !changed; ++j) {
      const auto* div = s->terms[j].expr.as<BinaryNode>();
      ExprKind dk = s->terms[j].expr.kind();
      if (!div || (dk != ExprKind::kFloorDiv && dk != ExprKind::kDiv)) continue;
      int64_t c;
      if (!AsConstInt(div->b, &c) || c <= 0 || s->terms[j].coeff % c != 0) continue;
      int64_t k = -(s->terms[j].coeff / c);
      LinearSum x = Sum(div->a);
      if (x.is_const()) continue;
      bool all = true;
      for (const auto& xt : x.terms) {
        bool found = false;
        for (size_t t = 0; t < s->terms.size() && !found; ++t) {
          found = t != j && ExprEqual(s->terms[t].expr, xt.expr) &&
                  s->terms[t].coeff == static_cast<int64_t>(static_cast<uint64_t>(xt.coeff) *
                                                            static_cast<uint64_t>(k));
        }
        all = all && found;
      }
      if (!all) continue;
      LinearSum mod =
          dk == ExprKind::kFloorDiv ? SumFloorMod(x, c) : SumTrunc(ExprKind::kMod, x, c);
      mod.Scale(k);
      s->terms.erase(s->terms.begin() + static_cast<std::ptrdiff_t>(j));
      s->Add(x, -k);
      s->Add(mod);
      changed = true;
    }
  }
}

LinearSum Simplifier::SumMul(LinearSum a, LinearSum b) {
  if (a.is_const()) {
    b.Scale(a.constant);
    return b;
  }
  if (b.is_const()) {
    a.Scale(b.constant);
    return a;
  }
  // A non-linear product: pull the constant factors out of single terms so
  // that (2x) * y and x * (2y) meet as 2 * (x * y).
  auto factor = [](const LinearSum& s, int64_t* k) {
    if (s.constant == 0 && s.terms.size() == 1) {
      *k = s.terms[0].coeff;
      return s.terms[0].expr;
    }
    *k = 1;
    return s.ToExpr();
  };
  int64_t ka, kb;
  Expr ta = factor(a, &ka), tb = factor(b, &kb);
  Expr prod = ExprCompare(ta, tb) <= 0 ? Mul(ta, tb) : Mul(tb, ta);
  LinearSum r = LinearSum::Atom(prod);
  r.Scale(static_cast<int64_t>(static_cast<uint64_t>(ka) * static_cast<uint64_t>(kb)));
  return r;
}

LinearSum Simplifier::SumDivision(ExprKind kind, const BinaryNode* op) {
  LinearSum a = Sum(op->a), b = Sum(op->b);
  DataType t = a.dtype;
  if (a.is_const() && b.is_const()) {
    if (auto v = FoldInt(kind, t, a.constant, b.constant)) return LinearSum::Const(t, *v);
  }
  if (b.is_const() && b.constant > 0) {
    int64_t c = b.constant;
    switch (kind) {
      case ExprKind::kFloorDiv:
        return SumFloorDiv(std::move(a), c);
      case ExprKind::kFloorMod:
        return SumFloorMod(std::move(a), c);
      default:
        return SumTrunc(kind, std::move(a), c);
    }
  }
  // Division by zero, by a negative constant or by an expression stays as is.
  return LinearSum::Atom(Binary(kind, a.ToExpr(), b.ToExpr()));
}

namespace {

// gcd of c and every coefficient and the constant of a.
uint64_t CommonDivisor(const LinearSum& a, int64_t c) {
  uint64_t g = static_cast<uint64_t>(c);
  for (const auto& t : a.terms) g = std::gcd(g, AbsU(t.coeff));
  return std::gcd(g, AbsU(a.constant));
}

void DivideExactly(LinearSum* a, int64_t g) {
  for (auto& t : a->terms) t.coeff /= g;
  a->constant /= g;
}

}  // namespace

LinearSum Simplifier::SumFloorDiv(LinearSum a, int64_t c) {
  DataType t = a.dtype;
  if (a.is_const()) return LinearSum::Const(t, FloorDivI(a.constant, c));
  // floordiv(g*x, g*c) = floordiv(x, c).
  if (uint64_t g = CommonDivisor(a, c); g > 1) {
    DivideExactly(&a, static_cast<int64_t>(g));
    c /= static_cast<int64_t>(g);
  }
  if (c == 1) return a;
  // floordiv(c*q + r, c) = q + floordiv(r, c) holds for every integer q.
  LinearSum q = LinearSum::Const(t, 0), r = LinearSum::Const(t, a.constant);
  for (const auto& term : a.terms) {
    if (term.coeff % c == 0) {
      q.AddTerm(term.expr, term.coeff / c);
    } else {
      r.AddTerm(term.expr, term.coeff);
    }
  }
  int64_t m;
  if (SameBucket(Bound(r), c, &m)) {
    q.AddConst(m);
    return q;
  }
  // floordiv(floordiv(x, c1), c2) = floordiv(x, c1 * c2) for positive c1, c2.
  if (const Expr* atom = r.as_atom()) {
    if (const auto* inner = atom->as<BinaryNode>(); inner && atom->kind() == ExprKind::kFloorDiv) {
      int64_t c1, prod;
      if (AsConstInt(inner->b, &c1) && c1 > 0 && !__builtin_mul_overflow(c1, c, &prod) &&
          WrapInt(t, prod) == prod) {
        q.Add(SumFloorDiv(Sum(inner->a), prod));
        return q;
      }
    }
  }
  q.AddTerm(FloorDiv(r.ToExpr(), IntImm(c, t)), 1);
  return q;
}

LinearSum Simplifier::SumFloorMod(LinearSum a, int64_t c) {
  DataType t = a.dtype;
  if (a.is_const()) return LinearSum::Const(t, FloorModI(a.constant, c));
  // floormod(g*x, g*c) = g * floormod(x, c).
  if (uint64_t g = CommonDivisor(a, c); g > 1) {
    DivideExactly(&a, static_cast<int64_t>(g));
    LinearSum r = SumFloorMod(std::move(a), c / static_cast<int64_t>(g));
    r.Scale(static_cast<int64_t>(g));
    return r;
  }
  if (c == 1) return LinearSum::Const(t, 0);
  // Multiples of c vanish: drop them from coefficients and the constant.
  LinearSum r = LinearSum::Const(t, FloorModI(a.constant, c));
  for (const auto& term : a.terms) r.AddTerm(term.expr, term.coeff % c);
  if (r.is_const()) return r;
  int64_t m;
  int64_t shift;
  if (SameBucket(Bound(r), c, &m) && !__builtin_mul_overflow(m, c, &shift)) {
    r.AddConst(NegWrap(shift));
    return r;
  }
  // floormod(floormod(x, k*c), c) = floormod(x, c).
  if (const Expr* atom = r.as_atom()) {
    if (const auto* inner = atom->as<BinaryNode>(); inner && atom->kind() == ExprKind::kFloorMod) {
      int64_t c1;
      if (AsConstInt(inner->b, &c1) && c1 > 0 && c1 % c == 0) return SumFloorMod(Sum(inner->a), c);
    }
  }
  return LinearSum::Atom(FloorMod(r.ToExpr(), IntImm(c, t)));
}

LinearSum Simplifier::SumTrunc(ExprKind kind, LinearSum a, int64_t c) {
  DataType t = a.dtype;
  bool div = kind == ExprKind::kDiv;
  B bound = Bound(a);
  // On non-negative values truncation and flooring agree.
  if (bound.min_value >= 0)
    return div ? SumFloorDiv(std::move(a), c) : SumFloorMod(std::move(a), c);
  if (bound.min_value > -c && bound.max_value < c) {
    return div ? LinearSum::Const(t, 0) : a;
  }
  if (c == 1) return div ? a : LinearSum::Const(t, 0);
  return LinearSum::Atom(Binary(kind, a.ToExpr(), IntImm(c, t)));
}

LinearSum Simplifier::SumMinMax(ExprKind kind, LinearSum a, LinearSum b) {
  DataType t = a.dtype;
  if (a.is_const() && b.is_const()) {
    return LinearSum::Const(t, *FoldInt(kind, t, a.constant, b.constant));
  }
  LinearSum d = a;
  d.Add(b, -1);
  B bd = Bound(d);
  bool is_min = kind == ExprKind::kMin;
  if (bd.max_value <= 0) return is_min ? a : b;  // a <= b
  if (bd.min_value >= 0) return is_min ? b : a;  // a >= b
  Expr x = a.ToExpr(), y = b.ToExpr();
  if (ExprCompare(x, y) > 0) std::swap(x, y);
  return LinearSum::Atom(Binary(kind, x, y));
}

}  // namespace kiln::ir::arith
