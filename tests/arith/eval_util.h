// A tiny reference evaluator for integer / bool expressions, used by the arith
// tests to check analyses against brute force over small domains.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "ir/op.h"

namespace kiln::ir::arith::testing {

using Env = std::unordered_map<const VarNode*, int64_t>;

// Wraps v into the value range of integer type t (two's complement).
inline int64_t WrapTo(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits() >= 64) return v;
  uint64_t mask = (uint64_t{1} << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits() - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

inline int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
// In unsigned arithmetic: the product may leave int64 although the result fits.
inline int64_t FloorModI(int64_t a, int64_t b) {
  uint64_t q = static_cast<uint64_t>(FloorDivI(a, b));
  return static_cast<int64_t>(static_cast<uint64_t>(a) - q * static_cast<uint64_t>(b));
}

// nullopt when the expression divides by zero or uses something unsupported.
inline std::optional<int64_t> Eval(const Expr& e, const Env& env) {
  DataType t = e.dtype();
  if (const auto* i = e.as<IntImmNode>()) return i->value;
  if (const auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return std::nullopt;
    return it->second;
  }
  if (const auto* b = e.as<BinaryNode>()) {
    auto x = Eval(b->a, env), y = Eval(b->b, env);
    if (!x || !y) return std::nullopt;
    int64_t a = *x, c = *y;
    uint64_t ua = static_cast<uint64_t>(a), uc = static_cast<uint64_t>(c);
    switch (e.kind()) {
      case ExprKind::kAdd:
        return WrapTo(t, static_cast<int64_t>(ua + uc));
      case ExprKind::kSub:
        return WrapTo(t, static_cast<int64_t>(ua - uc));
      case ExprKind::kMul:
        return WrapTo(t, static_cast<int64_t>(ua * uc));
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        if (c == 0) return std::nullopt;
        bool div = e.kind() == ExprKind::kDiv || e.kind() == ExprKind::kFloorDiv;
        // x / -1 is the wrapped negation (INT64_MIN / -1 would trap).
        if (c == -1) return div ? WrapTo(t, static_cast<int64_t>(0 - ua)) : 0;
        switch (e.kind()) {
          case ExprKind::kDiv:
            return WrapTo(t, a / c);
          case ExprKind::kMod:
            return WrapTo(t, a % c);
          case ExprKind::kFloorDiv:
            return WrapTo(t, FloorDivI(a, c));
          default:
            return WrapTo(t, FloorModI(a, c));
        }
      }
      case ExprKind::kMin:
        return std::min(a, c);
      case ExprKind::kMax:
        return std::max(a, c);
      case ExprKind::kEQ:
        return a == c;
      case ExprKind::kNE:
        return a != c;
      case ExprKind::kLT:
        return a < c;
      case ExprKind::kLE:
        return a <= c;
      case ExprKind::kGT:
        return a > c;
      case ExprKind::kGE:
        return a >= c;
      case ExprKind::kAnd:
        return (a != 0) && (c != 0);
      case ExprKind::kOr:
        return (a != 0) || (c != 0);
      default:
        return std::nullopt;
    }
  }
  if (const auto* n = e.as<NotNode>()) {
    auto x = Eval(n->a, env);
    if (!x) return std::nullopt;
    return *x == 0;
  }
  if (const auto* s = e.as<SelectNode>()) {
    auto c = Eval(s->condition, env), x = Eval(s->true_value, env), y = Eval(s->false_value, env);
    if (!c || !x || !y) return std::nullopt;
    return *c ? *x : *y;
  }
  if (const auto* c = e.as<CastNode>()) {
    auto x = Eval(c->value, env);
    if (!x) return std::nullopt;
    return WrapTo(t, *x);
  }
  return std::nullopt;
}

// A compact infix spelling for failure messages.
inline std::string Str(const Expr& e) {
  if (!e.defined()) return "<undef>";
  if (const auto* i = e.as<IntImmNode>()) return std::to_string(i->value);
  if (const auto* f = e.as<FloatImmNode>()) return std::to_string(f->value);
  if (const auto* v = e.as<VarNode>()) return v->name;
  if (const auto* b = e.as<BinaryNode>()) {
    static const char* kSym[] = {"+",  "-",     "*",     "/",     " truncmod ", "//",
                                 "%",  " min ", " max ", "==",    "!=",         "<",
                                 "<=", ">",     ">=",    " and ", " or "};
    int k = static_cast<int>(e.kind()) - static_cast<int>(ExprKind::kAdd);
    return "(" + Str(b->a) + kSym[k] + Str(b->b) + ")";
  }
  if (const auto* n = e.as<NotNode>()) return "!" + Str(n->a);
  if (const auto* s = e.as<SelectNode>()) {
    return "select(" + Str(s->condition) + ", " + Str(s->true_value) + ", " + Str(s->false_value) +
           ")";
  }
  if (const auto* c = e.as<CastNode>()) return e.dtype().str() + "(" + Str(c->value) + ")";
  return "<expr>";
}

// Random integer expressions over vars, with small constants, built through
// the checked constructors.
class ExprGen {
 public:
  ExprGen(std::vector<Var> vars, uint64_t seed) : vars_(std::move(vars)), rng_(seed) {}

  Expr Int(int depth) {
    DataType t = vars_[0].dtype();
    if (depth <= 0 || Pick(4) == 0) {
      if (Pick(3) == 0) return IntImm(Pick(9) - 4, t);
      return vars_[Pick(static_cast<int>(vars_.size()))];
    }
    int k = Pick(14);
    auto sub = [&] { return Int(depth - 1); };
    auto cst = [&] { return IntImm(Pick(7) + 1, t); };  // positive divisor
    switch (k) {
      case 0:
        return Add(sub(), sub());
      case 1:
        return Sub(sub(), sub());
      case 2:
        return Mul(sub(), IntImm(Pick(7) - 3, t));
      case 3:
        return FloorDiv(sub(), cst());
      case 4:
        return FloorMod(sub(), cst());
      case 5:
        return Min(sub(), sub());
      case 6:
        return Max(sub(), sub());
      case 7:
        return Select(Bool(depth - 1), sub(), sub());
      case 8:
        return Div(sub(), cst());
      case 9:
        return TruncMod(sub(), cst());
      case 10:
        return Mul(sub(), sub());
      case 11: {  // split pieces that recombine (or nearly do)
        Expr x = sub(), c = cst();
        int64_t k = Pick(5) - 2, cv = c.as<IntImmNode>()->value;
        return Add(Mul(FloorDiv(x, c), IntImm(k * cv + (Pick(4) == 0 ? 1 : 0), t)),
                   Mul(FloorMod(x, c), IntImm(k, t)));
      }
      case 12: {
        Expr x = sub(), c = cst();
        return Sub(Add(x, sub()), Mul(FloorDiv(x, c), c));
      }
      default:
        return Add(Mul(sub(), IntImm(Pick(5) + 1, t)), sub());
    }
  }

  Expr Bool(int depth) {
    int k = Pick(9);
    if (depth <= 0 && k >= 6) k = Pick(6);
    switch (k) {
      case 0:
        return LT(Int(depth), Int(depth));
      case 1:
        return LE(Int(depth), Int(depth));
      case 2:
        return EQ(Int(depth), Int(depth));
      case 3:
        return NE(Int(depth), Int(depth));
      case 4:
        return GE(Int(depth), Int(depth));
      case 5:
        return GT(Int(depth), Int(depth));
      case 6:
        return And(Bool(depth - 1), Bool(depth - 1));
      case 7:
        return Or(Bool(depth - 1), Bool(depth - 1));
      default:
        return Not(Bool(depth - 1));
    }
  }

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

 private:
  std::vector<Var> vars_;
  std::mt19937_64 rng_;
};

// Calls f(env) for every point of the box lo[i] <= vars[i] <= hi[i].
template <typename F>
void ForEachPoint(const std::vector<Var>& vars, const std::vector<int64_t>& lo,
                  const std::vector<int64_t>& hi, F&& f) {
  Env env;
  std::vector<int64_t> cur = lo;
  while (true) {
    for (size_t i = 0; i < vars.size(); ++i) env[vars[i].get()] = cur[i];
    f(env);
    size_t i = 0;
    for (; i < vars.size(); ++i) {
      if (++cur[i] <= hi[i]) break;
      cur[i] = lo[i];
    }
    if (i == vars.size()) return;
  }
}

}  // namespace kiln::ir::arith::testing
