// Exact binding ranges by enumerating the loops a binding depends on.
//
// Schedules leave predicates on sums of split loops (`T.where(i0 * 2 + i1 <
// 3)` around `v = i0 * 4 + i1 * 2 + i2`) and bindings that divide a guarded
// fused loop (`v = f // 6` under `f < 24`). Interval arithmetic bounds each
// loop alone and misses that the guard couples them, so it reports bindings
// that never leave their domains. Loop extents are constants, so when the
// loops involved are few the points themselves can be visited instead.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "ir/verify/verifier.h"

namespace kiln::ir::verify_internal {

namespace {

// More points than this are left to interval arithmetic: the check runs on
// every block of every candidate schedule.
constexpr int64_t kMaxPoints = int64_t{1} << 14;

using Env = std::unordered_map<const VarNode*, int64_t>;

class VarSet : public IRVisitor {
 public:
  std::vector<const VarNode*> vars;

 protected:
  void VisitVar(const VarNode* v) override {
    for (const VarNode* u : vars) {
      if (u == v) return;
    }
    vars.push_back(v);
  }
};

std::vector<const VarNode*> VarsOf(const Expr& e) {
  VarSet s;
  s.VisitExpr(e);
  return s.vars;
}

void Conjuncts(const Expr& e, std::vector<Expr>* out) {
  if (const auto* b = e.as<BinaryNode>(); b != nullptr && b->kind == ExprKind::kAnd) {
    Conjuncts(b->a, out);
    Conjuncts(b->b, out);
    return;
  }
  out->push_back(e);
}

int64_t FloorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Evaluates a scalar integer or bool expression; false on anything it cannot
// evaluate exactly (overflow, division by zero, loads, calls, floats).
bool Eval(const Expr& e, const Env& env, int64_t* out) {
  if (!e.defined() || !e.dtype().is_scalar()) return false;
  if (const auto* imm = e.as<IntImmNode>()) {
    *out = imm->value;
    return true;
  }
  if (const auto* v = e.as<VarNode>()) {
    auto it = env.find(v);
    if (it == env.end()) return false;
    *out = it->second;
    return true;
  }
  if (const auto* n = e.as<NotNode>()) {
    int64_t a;
    if (!Eval(n->a, env, &a)) return false;
    *out = a == 0;
    return true;
  }
  if (const auto* s = e.as<SelectNode>()) {
    int64_t c;
    if (!Eval(s->condition, env, &c)) return false;
    return Eval(c != 0 ? s->true_value : s->false_value, env, out);
  }
  if (const auto* c = e.as<CastNode>()) {
    int64_t a;
    if (!c->dtype.is_integer() && !c->dtype.is_bool()) return false;
    if (!c->value.dtype().is_integer() && !c->value.dtype().is_bool()) return false;
    if (!Eval(c->value, env, &a)) return false;
    *out = c->dtype.is_bool() ? (a != 0) : a;
    return true;
  }
  const auto* b = e.as<BinaryNode>();
  if (b == nullptr) return false;
  if (!b->a.dtype().is_integer() && !b->a.dtype().is_bool()) return false;
  int64_t x, y;
  if (!Eval(b->a, env, &x) || !Eval(b->b, env, &y)) return false;
  switch (b->kind) {
    case ExprKind::kAdd:
      return !__builtin_add_overflow(x, y, out);
    case ExprKind::kSub:
      return !__builtin_sub_overflow(x, y, out);
    case ExprKind::kMul:
      return !__builtin_mul_overflow(x, y, out);
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      if (y == 0 || (y == -1 && x == INT64_MIN)) return false;
      if (b->kind == ExprKind::kDiv) {
        *out = x / y;
      } else if (b->kind == ExprKind::kMod) {
        *out = x % y;
      } else if (b->kind == ExprKind::kFloorDiv) {
        *out = FloorDivide(x, y);
      } else {
        *out = x - FloorDivide(x, y) * y;
      }
      return true;
    }
    case ExprKind::kMin:
      *out = std::min(x, y);
      return true;
    case ExprKind::kMax:
      *out = std::max(x, y);
      return true;
    case ExprKind::kEQ:
      *out = x == y;
      return true;
    case ExprKind::kNE:
      *out = x != y;
      return true;
    case ExprKind::kLT:
      *out = x < y;
      return true;
    case ExprKind::kLE:
      *out = x <= y;
      return true;
    case ExprKind::kGT:
      *out = x > y;
      return true;
    case ExprKind::kGE:
      *out = x >= y;
      return true;
    case ExprKind::kAnd:
      *out = x != 0 && y != 0;
      return true;
    case ExprKind::kOr:
      *out = x != 0 || y != 0;
      return true;
    default:
      return false;
  }
}

}  // namespace

bool Verifier::EnumeratedRange(const Expr& value, const Expr& pred, ConstIntBound* out) const {
  std::vector<const VarNode*> vars = VarsOf(value);
  // Only the conjuncts that share loops with the binding, directly or through
  // other conjuncts, constrain it; the rest hold or fail independently.
  std::vector<Expr> all, used;
  if (pred.defined()) Conjuncts(pred, &all);
  std::vector<bool> taken(all.size(), false);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t c = 0; c < all.size(); ++c) {
      if (taken[c]) continue;
      std::vector<const VarNode*> cv = VarsOf(all[c]);
      bool shares = false;
      for (const VarNode* v : cv) {
        for (const VarNode* u : vars) shares |= u == v;
      }
      if (!shares) continue;
      taken[c] = grew = true;
      used.push_back(all[c]);
      for (const VarNode* v : cv) {
        bool known = false;
        for (const VarNode* u : vars) known |= u == v;
        if (!known) vars.push_back(v);
      }
    }
  }
  // A loop's extent may depend on outer loops (`for ax in range((w + 3) // 2
  // - w // 2 + 1)` after compute_at), so the loops its range uses are
  // enumerated too, outer first.
  for (size_t k = 0; k < vars.size(); ++k) {
    auto it = loops_.find(vars[k]);
    if (it == loops_.end()) continue;
    for (const Expr* e : {&it->second.min, &it->second.extent}) {
      for (const VarNode* v : VarsOf(*e)) {
        bool known = false;
        for (const VarNode* u : vars) known |= u == v;
        if (!known) vars.push_back(v);
      }
    }
  }
  auto order = [&](const VarNode* v) {
    auto it = loops_.find(v);
    return it == loops_.end() ? size_t{0} : it->second.order + 1;
  };
  std::stable_sort(vars.begin(), vars.end(),
                   [&](const VarNode* a, const VarNode* b) { return order(a) < order(b); });
  std::vector<ConstIntBound> ranges;
  int64_t points = 1;  // an upper bound: dependent extents only shrink it
  for (const VarNode* v : vars) {
    ConstIntBound r;
    if (!analyzer_.Lookup(v, &r) || !Finite(r) || r.min_value > r.max_value) return false;
    int64_t extent;
    if (__builtin_sub_overflow(r.max_value, r.min_value, &extent) || extent >= kMaxPoints ||
        __builtin_mul_overflow(points, extent + 1, &points) || points > kMaxPoints) {
      return false;
    }
    ranges.push_back(r);
  }
  Env env;
  bool any = false, failed = false;
  ConstIntBound result = ConstIntBound::Make(0, 0);
  auto visit_point = [&]() {
    for (const Expr& c : used) {
      int64_t t;
      if (!Eval(c, env, &t)) {
        failed = true;
        return;
      }
      if (t == 0) return;
    }
    int64_t x;
    if (!Eval(value, env, &x)) {
      failed = true;
      return;
    }
    if (!any) {
      result = ConstIntBound::Make(x, x);
      any = true;
    } else {
      result.min_value = std::min(result.min_value, x);
      result.max_value = std::max(result.max_value, x);
    }
  };
  std::function<void(size_t)> walk = [&](size_t k) {
    if (failed) return;
    if (k == vars.size()) {
      visit_point();
      return;
    }
    int64_t lo = ranges[k].min_value, hi = ranges[k].max_value;
    if (auto it = loops_.find(vars[k]); it != loops_.end()) {
      int64_t m, e, last;
      if (!Eval(it->second.min, env, &m) || !Eval(it->second.extent, env, &e)) {
        failed = true;
        return;
      }
      if (e <= 0) return;  // the loop body does not run here
      if (!LastOf(m, e, &last)) {
        failed = true;
        return;
      }
      lo = std::max(lo, m);
      hi = std::min(hi, last);
    }
    for (int64_t x = lo; x <= hi && !failed; ++x) {
      env[vars[k]] = x;
      walk(k + 1);
    }
    env.erase(vars[k]);
  };
  walk(0);
  if (failed) return false;
  // No point runs the block: nothing to learn, interval arithmetic stands.
  if (!any) return false;
  *out = result;
  return true;
}

}  // namespace kiln::ir::verify_internal
