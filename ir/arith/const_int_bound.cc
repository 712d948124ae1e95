#include "ir/arith/const_int_bound.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "ir/arith/linear_sum.h"
#include "ir/buffer.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::arith {

namespace {

using B = ConstIntBound;
constexpr int64_t kNegInf = B::kNegInf;
constexpr int64_t kPosInf = B::kPosInf;

bool IsInf(int64_t v) { return v == kNegInf || v == kPosInf; }

// Arithmetic on bound ends: infinities absorb, finite overflow saturates.
int64_t SatAdd(int64_t a, int64_t b) {
  if (IsInf(a)) return a;  // (+inf) + (-inf) never arises from valid ranges
  if (IsInf(b)) return b;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t SatNeg(int64_t a) {
  if (a == kNegInf) return kPosInf;
  if (a == kPosInf) return kNegInf;
  return -a;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (IsInf(a) || IsInf(b)) return neg ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? kNegInf : kPosInf;
  return r;
}

// a / b rounded toward zero (trunc) or -infinity (floor); b != 0.
int64_t SatDiv(int64_t a, int64_t b, bool floor) {
  bool neg = (a < 0) != (b < 0);
  if (IsInf(b)) {
    if (IsInf(a)) return neg ? kNegInf : kPosInf;  // only a limit; safe direction
    return (floor && neg && a != 0) ? -1 : 0;
  }
  if (IsInf(a)) return neg ? kNegInf : kPosInf;
  if (a == kNegInf && b == -1) return kPosInf;
  int64_t q = a / b;
  if (floor && neg && q * b != a) --q;
  return q;
}

B Corners(std::initializer_list<int64_t> vals) {
  B r{kPosInf, kNegInf};
  for (int64_t v : vals) {
    r.min_value = std::min(r.min_value, v);
    r.max_value = std::max(r.max_value, v);
  }
  return r;
}

B Union(const B& a, const B& b) {
  return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}

// a clipped to b. Disjoint bounds can only come from a value that certainly
// overflows; then any value of b is possible.
B Clip(const B& a, const B& b) {
  B r{std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
  if (r.min_value > r.max_value) return b;
  return r;
}

B AddB(const B& a, const B& b) {
  return {SatAdd(a.min_value, b.min_value), SatAdd(a.max_value, b.max_value)};
}

B NegB(const B& a) { return {SatNeg(a.max_value), SatNeg(a.min_value)}; }

B MulB(const B& a, const B& b) {
  return Corners({SatMul(a.min_value, b.min_value), SatMul(a.min_value, b.max_value),
                  SatMul(a.max_value, b.min_value), SatMul(a.max_value, b.max_value)});
}

// Largest magnitude a value in a can have.
int64_t AbsMax(const B& a) { return std::max(SatNeg(a.min_value), a.max_value); }

B DivB(const B& a, B b, bool floor) {
  // Division by zero is undefined behaviour of the program, so the divisor's
  // zero is excluded from its range; a divisor that is only zero says nothing.
  if (b.min_value == 0 && b.max_value == 0) return B::Everything();
  if (b.min_value == 0) b.min_value = 1;
  if (b.max_value == 0) b.max_value = -1;
  if (b.min_value < 0 && b.max_value > 0) {
    // Both signs: |a / b| <= |a|, and floor may round one further down.
    int64_t m = AbsMax(a);
    return {floor ? SatAdd(SatNeg(m), -1) : SatNeg(m), m};
  }
  return Corners({SatDiv(a.min_value, b.min_value, floor), SatDiv(a.min_value, b.max_value, floor),
                  SatDiv(a.max_value, b.min_value, floor),
                  SatDiv(a.max_value, b.max_value, floor)});
}

B TruncModB(const B& a, B b) {
  if (b.min_value == 0 && b.max_value == 0) return B::Everything();
  if (b.min_value == 0) b.min_value = 1;
  if (b.max_value == 0) b.max_value = -1;
  // The result takes a's sign and is smaller than |b| in magnitude.
  int64_t bmax = AbsMax(b);
  int64_t m = bmax == kPosInf ? kPosInf : bmax - 1;
  if (b.min_value > 0 || b.max_value < 0) {
    int64_t bmin = b.min_value > 0 ? b.min_value : SatNeg(b.max_value);
    if (SatNeg(a.min_value) < bmin && a.max_value < bmin) return a;  // |a| < |b|: identity
  }
  return {a.min_value >= 0 ? 0 : std::max(a.min_value, SatNeg(m)),
          a.max_value <= 0 ? 0 : std::min(a.max_value, m)};
}

B FloorModB(const B& a, B b) {
  if (b.min_value == 0 && b.max_value == 0) return B::Everything();
  if (b.min_value == 0) b.min_value = 1;
  if (b.max_value == 0) b.max_value = -1;
  if (b.min_value > 0) {
    if (a.min_value >= 0 && a.max_value < b.min_value) return a;
    int64_t hi = b.max_value == kPosInf ? kPosInf : b.max_value - 1;
    if (a.min_value >= 0) hi = std::min(hi, a.max_value);
    return {0, hi};
  }
  if (b.max_value < 0) {
    if (a.max_value <= 0 && a.min_value > b.max_value) return a;
    int64_t lo = b.min_value == kNegInf ? kNegInf : b.min_value + 1;
    if (a.max_value <= 0) lo = std::max(lo, a.min_value);
    return {lo, 0};
  }
  return {b.min_value == kNegInf ? kNegInf : b.min_value + 1,
          b.max_value == kPosInf ? kPosInf : b.max_value - 1};
}

class BoundEvaluator {
 public:
  explicit BoundEvaluator(const ConstIntBoundAnalyzer& owner) : owner_(owner) {}

  B Eval(const Expr& e) {
    if (!e.defined()) throw IRError("ConstIntBound: undefined expression");
    B r = EvalNode(e);
    DataType t = e.dtype();
    if (!(t.is_integer() || t.is_bool())) return r;
    B range = B::OfType(t);
    // Signed index arithmetic is assumed not to overflow (as TVM does), so
    // the bound is clipped; unsigned arithmetic wraps in ordinary use, so a
    // bound that leaves the type's range says nothing.
    if (t.is_uint() && (r.min_value < range.min_value || r.max_value > range.max_value)) {
      return range;
    }
    return Clip(r, range);
  }

 private:
  B EvalNode(const Expr& e) {
    DataType t = e.dtype();
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        int64_t v = e.as<IntImmNode>()->value;
        if (t.is_uint() && v < 0) return B::OfType(t);  // a uint64 above INT64_MAX
        return B::Single(v);
      }
      case ExprKind::kVar: {
        B b;
        if (owner_.Lookup(e.as<VarNode>(), &b)) return b;
        return B::OfType(t);
      }
      default:
        break;
    }
    if (!(t.is_integer() || t.is_bool())) return B::Everything();
    if (const auto* bin = e.as<BinaryNode>()) {
      if (IsComparison(e.kind()) || e.kind() == ExprKind::kAnd || e.kind() == ExprKind::kOr) {
        return B::OfType(t);
      }
      B a = Eval(bin->a), b = Eval(bin->b);
      switch (e.kind()) {
        case ExprKind::kAdd:
          return AddB(a, b);
        case ExprKind::kSub:
          return AddB(a, NegB(b));
        case ExprKind::kMul:
          return MulB(a, b);
        case ExprKind::kDiv:
          return DivB(a, b, /*floor=*/false);
        case ExprKind::kFloorDiv:
          return DivB(a, b, /*floor=*/true);
        case ExprKind::kMod:
          return TruncModB(a, b);
        case ExprKind::kFloorMod:
          return FloorModB(a, b);
        case ExprKind::kMin:
          return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
        case ExprKind::kMax:
          return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
        default:
          return B::OfType(t);
      }
    }
    if (const auto* s = e.as<SelectNode>()) return Union(Eval(s->true_value), Eval(s->false_value));
    if (const auto* c = e.as<CallNode>()) {
      if (c->op == CallOp::kIfThenElse) return Union(Eval(c->args[1]), Eval(c->args[2]));
      return B::OfType(t);
    }
    if (const auto* c = e.as<CastNode>()) {
      DataType from = c->value.dtype();
      if (!(from.is_integer() || from.is_bool())) return B::OfType(t);
      B inner = Eval(c->value);
      B range = B::OfType(t);
      // A value that fits the target type is unchanged by the cast; one that
      // may not could wrap anywhere in the target range.
      if (inner.min_value >= range.min_value && inner.max_value <= range.max_value) return inner;
      return range;
    }
    if (const auto* b = e.as<BroadcastNode>()) return Eval(b->value);
    if (const auto* r = e.as<RampNode>()) {
      B span = MulB(Eval(r->stride), B::Make(0, r->lanes - 1));
      return AddB(Eval(r->base), span);
    }
    return B::OfType(t);
  }

  const ConstIntBoundAnalyzer& owner_;
};

}  // namespace

ConstIntBound BoundAdd(const ConstIntBound& a, const ConstIntBound& b) { return AddB(a, b); }
ConstIntBound BoundMul(const ConstIntBound& a, const ConstIntBound& b) { return MulB(a, b); }
ConstIntBound BoundUnion(const ConstIntBound& a, const ConstIntBound& b) { return Union(a, b); }

ConstIntBound ConstIntBound::OfType(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_int()) {
    if (t.bits() >= 64) return {};
    return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  }
  if (t.is_uint()) {
    if (t.bits() >= 63) return {0, kPosInf};
    return {0, (int64_t{1} << t.bits()) - 1};
  }
  return {};
}

std::string ConstIntBound::str() const {
  std::string lo = min_value == kNegInf ? "-inf" : std::to_string(min_value);
  std::string hi = max_value == kPosInf ? "+inf" : std::to_string(max_value);
  return "[" + lo + ", " + hi + "]";
}

void ConstIntBoundAnalyzer::Bind(const Var& v, const Range& r) {
  if (!v.defined() || !r.min.defined() || !r.extent.defined()) {
    throw IRError("ConstIntBoundAnalyzer::Bind: undefined variable or range");
  }
  // Loops mostly have constant ranges: their bounds are the values
  // themselves (what the evaluator gives an in-range signed constant).
  auto constant = [](const Expr& e, B* out) {
    const auto* imm = e.as<IntImmNode>();
    DataType t = e.dtype();
    if (imm == nullptr || !t.is_int() || !t.is_scalar() || WrapInt(t, imm->value) != imm->value) {
      return false;
    }
    *out = B::Single(imm->value);
    return true;
  };
  B mn, ext;
  if (!constant(r.min, &mn) || !constant(r.extent, &ext)) {
    mn = (*this)(r.min);
    ext = (*this)(r.extent);
  }
  // The largest value is min + extent - 1, taken at the largest min and extent.
  int64_t hi = ext.max_value == kPosInf ? kPosInf : SatAdd(mn.max_value, SatAdd(ext.max_value, -1));
  Update(v, B::Make(mn.min_value, hi));
}

const ConstIntBoundAnalyzer::Entry* ConstIntBoundAnalyzer::Find(const VarNode* v) const {
  if (!index_.empty()) {
    auto it = index_.find(v);
    return it == index_.end() ? nullptr : &entries_[it->second];
  }
  for (const Entry& e : entries_) {
    if (e.var.get() == v) return &e;
  }
  return nullptr;
}

void ConstIntBoundAnalyzer::Update(const Var& v, ConstIntBound b) {
  if (!v.defined()) throw IRError("ConstIntBoundAnalyzer::Update: undefined variable");
  if (const Entry* e = Find(v.get())) {
    entries_[static_cast<size_t>(e - entries_.data())].bound = b;
    return;
  }
  if (entries_.empty()) entries_.reserve(kLinearLimit);  // one allocation per analyzer
  entries_.push_back(Entry{v, b});
  if (!index_.empty()) {
    index_[v.get()] = entries_.size() - 1;
  } else if (entries_.size() > kLinearLimit) {
    for (size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].var.get()] = i;
  }
}

void ConstIntBoundAnalyzer::Unbind(const Var& v) {
  const Entry* e = Find(v.get());
  if (e == nullptr) return;
  // The last entry takes the freed place (the order carries no meaning).
  size_t pos = static_cast<size_t>(e - entries_.data());
  if (!index_.empty()) index_.erase(v.get());
  if (pos + 1 != entries_.size()) {
    entries_[pos] = std::move(entries_.back());
    if (!index_.empty()) index_[entries_[pos].var.get()] = pos;
  }
  entries_.pop_back();
}

bool ConstIntBoundAnalyzer::Lookup(const VarNode* v, ConstIntBound* out) const {
  const Entry* e = Find(v);
  if (e == nullptr) return false;
  *out = e->bound;
  return true;
}

ConstIntBound ConstIntBoundAnalyzer::operator()(const Expr& e) const {
  return BoundEvaluator(*this).Eval(e);
}

}  // namespace kiln::ir::arith
