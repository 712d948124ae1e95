#include "ir/arith/linear_sum.h"

#include "ir/arith/expr_compare.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::arith {

namespace {

int64_t WrapAdd(DataType t, int64_t a, int64_t b) {
  return WrapInt(t, static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
}

int64_t WrapMul(DataType t, int64_t a, int64_t b) {
  return WrapInt(t, static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)));
}

}  // namespace

LinearSum LinearSum::Const(DataType t, int64_t v) {
  LinearSum s;
  s.dtype = t;
  s.constant = WrapInt(t, v);
  return s;
}

LinearSum LinearSum::Atom(const Expr& e) {
  LinearSum s;
  s.dtype = e.dtype();
  s.terms.push_back({e, 1});
  return s;
}

const Expr* LinearSum::as_atom() const {
  if (constant == 0 && terms.size() == 1 && terms[0].coeff == 1) return &terms[0].expr;
  return nullptr;
}

void LinearSum::AddTerm(const Expr& e, int64_t coeff) {
  coeff = WrapInt(dtype, coeff);
  if (coeff == 0) return;
  // Insert after every term that sorts before or ties with e, merging with
  // an identical one.
  size_t pos = 0;
  for (; pos < terms.size(); ++pos) {
    int c = ExprCompare(terms[pos].expr, e);
    if (c == 0 && ExprEqual(terms[pos].expr, e)) {
      terms[pos].coeff = WrapAdd(dtype, terms[pos].coeff, coeff);
      if (terms[pos].coeff == 0) terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(pos));
      return;
    }
    if (c > 0) break;
  }
  terms.insert(terms.begin() + static_cast<std::ptrdiff_t>(pos), Term{e, coeff});
}

void LinearSum::AddConst(int64_t v) { constant = WrapAdd(dtype, constant, v); }

void LinearSum::Add(const LinearSum& other, int64_t scale) {
  for (const auto& t : other.terms) AddTerm(t.expr, WrapMul(dtype, t.coeff, scale));
  AddConst(WrapMul(dtype, other.constant, scale));
}

void LinearSum::Scale(int64_t k) {
  k = WrapInt(dtype, k);
  if (k == 0) {
    terms.clear();
    constant = 0;
    return;
  }
  size_t kept = 0;
  for (auto& t : terms) {
    int64_t c = WrapMul(dtype, t.coeff, k);
    if (c == 0) continue;  // may vanish by wraparound
    t.coeff = c;
    if (&terms[kept] != &t) terms[kept] = std::move(t);
    ++kept;
  }
  terms.resize(kept);
  constant = WrapMul(dtype, constant, k);
}

Expr LinearSum::ToExpr() const {
  auto lit = [&](int64_t v) { return IntImm(v, dtype); };
  auto scaled = [&](const Term& t) {
    return t.coeff == 1 ? t.expr : ir::Mul(t.expr, lit(t.coeff));
  };
  Expr result;
  for (const auto& t : terms) {
    if (t.coeff > 0) result = result.defined() ? ir::Add(result, scaled(t)) : scaled(t);
  }
  int64_t c = constant;
  if (!result.defined() && c > 0) {
    result = lit(c);
    c = 0;
  }
  // -v fits the type unless v is its minimum; such a value is added as is.
  auto negatable = [&](int64_t v) { return v != INT64_MIN && WrapInt(dtype, -v) == -v; };
  for (const auto& t : terms) {
    if (t.coeff >= 0) continue;
    if (!result.defined()) {
      result = scaled(t);
    } else if (negatable(t.coeff)) {
      result = ir::Sub(result, scaled(Term{t.expr, -t.coeff}));
    } else {
      result = ir::Add(result, scaled(t));
    }
  }
  if (!result.defined()) return lit(c);
  if (c > 0) return ir::Add(result, lit(c));
  if (c < 0) return negatable(c) ? ir::Sub(result, lit(-c)) : ir::Add(result, lit(c));
  return result;
}

namespace {

// One operand of the chain ToExpr builds: coeff * expr (coeff 1: expr
// itself), or the literal coeff when expr is null.
struct Operand {
  const Expr* expr;
  int64_t coeff;
};

bool IsLiteral(const Expr& e, DataType t, int64_t v) {
  const auto* imm = e.as<IntImmNode>();
  return imm != nullptr && e.dtype() == t && imm->value == v;
}

bool OperandEquals(const Operand& o, const Expr& e, DataType t) {
  if (o.expr == nullptr) return IsLiteral(e, t, o.coeff);
  if (o.coeff == 1) return ExprEqual(*o.expr, e);
  const auto* mul = e.as<BinaryNode>();
  return mul != nullptr && e.kind() == ExprKind::kMul && e.dtype() == t &&
         IsLiteral(mul->b, t, o.coeff) && ExprEqual(*o.expr, mul->a);
}

}  // namespace

bool LinearSum::ToExprEquals(const Expr& e) const {
  // The steps of ToExpr, in order: the first operand, then (kind, operand)
  // pairs each applied to the result so far. The result is left-deep, so it
  // is matched from the outermost step inwards.
  struct Step {
    ExprKind kind;
    Operand operand;
  };
  absl::InlinedVector<Step, 8> steps;
  auto push = [&](ExprKind k, Operand o) { steps.push_back({k, o}); };
  auto negatable = [&](int64_t v) { return v != INT64_MIN && WrapInt(dtype, -v) == -v; };
  bool started = false;
  for (const auto& t : terms) {
    if (t.coeff <= 0) continue;
    push(ExprKind::kAdd, {&t.expr, t.coeff});
    started = true;
  }
  int64_t c = constant;
  if (!started && c > 0) {
    push(ExprKind::kAdd, {nullptr, c});
    started = true;
    c = 0;
  }
  for (const auto& t : terms) {
    if (t.coeff >= 0) continue;
    if (!started) {
      push(ExprKind::kAdd, {&t.expr, t.coeff});
      started = true;
    } else if (negatable(t.coeff)) {
      push(ExprKind::kSub, {&t.expr, -t.coeff});
    } else {
      push(ExprKind::kAdd, {&t.expr, t.coeff});
    }
  }
  if (!started) return IsLiteral(e, dtype, c);
  if (c > 0) {
    push(ExprKind::kAdd, {nullptr, c});
  } else if (c < 0) {
    if (negatable(c)) {
      push(ExprKind::kSub, {nullptr, -c});
    } else {
      push(ExprKind::kAdd, {nullptr, c});
    }
  }
  const Expr* cur = &e;
  for (size_t i = steps.size(); i-- > 1;) {
    const auto* b = cur->as<BinaryNode>();
    if (b == nullptr || cur->kind() != steps[i].kind || cur->dtype() != dtype ||
        !OperandEquals(steps[i].operand, b->b, dtype)) {
      return false;
    }
    cur = &b->a;
  }
  return OperandEquals(steps[0].operand, *cur, dtype);
}

}  // namespace kiln::ir::arith
