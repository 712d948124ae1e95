#include "ir/arith/expr_compare.h"

#include <cstring>

#include "ir/buffer.h"
#include "ir/stmt.h"

namespace kiln::ir::arith {

namespace {

template <typename T>
int Cmp3(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareType(DataType a, DataType b) {
  if (int c = Cmp3(static_cast<int>(a.code()), static_cast<int>(b.code()))) return c;
  if (int c = Cmp3(a.bits(), b.bits())) return c;
  return Cmp3(a.lanes(), b.lanes());
}

// identity: when true, distinct variables never compare equal (for ExprEqual).
int CompareImpl(const Expr& a, const Expr& b, bool identity) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  if (int c = Cmp3(static_cast<int>(a.kind()), static_cast<int>(b.kind()))) return c;
  if (int c = CompareType(a.dtype(), b.dtype())) return c;
  auto sub = [&](const Expr& x, const Expr& y) { return CompareImpl(x, y, identity); };
  switch (a.kind()) {
    case ExprKind::kIntImm:
      return Cmp3(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      // Bitwise for NaN and signed zero, so equality is reflexive.
      return std::memcmp(&x, &y, sizeof(double));
    }
    case ExprKind::kStringImm:
      return a.as<StringImmNode>()->value.compare(b.as<StringImmNode>()->value);
    case ExprKind::kVar: {
      if (int c = a.as<VarNode>()->name.compare(b.as<VarNode>()->name)) return c < 0 ? -1 : 1;
      // Different variables: a tie in the order, but never equal.
      return identity ? 1 : 0;
    }
    case ExprKind::kNot:
      return sub(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      const auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      if (int c = sub(x->condition, y->condition)) return c;
      if (int c = sub(x->true_value, y->true_value)) return c;
      return sub(x->false_value, y->false_value);
    }
    case ExprKind::kCast:
      return sub(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kCall: {
      const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (int c = Cmp3(static_cast<int>(x->op), static_cast<int>(y->op))) return c;
      if (int c = Cmp3(x->args.size(), y->args.size())) return c;
      for (size_t i = 0; i < x->args.size(); ++i) {
        if (int c = sub(x->args[i], y->args[i])) return c;
      }
      return 0;
    }
    case ExprKind::kRamp: {
      const auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      if (int c = Cmp3(x->lanes, y->lanes)) return c;
      if (int c = sub(x->base, y->base)) return c;
      return sub(x->stride, y->stride);
    }
    case ExprKind::kBroadcast: {
      const auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      if (int c = Cmp3(x->lanes, y->lanes)) return c;
      return sub(x->value, y->value);
    }
    case ExprKind::kBufferLoad: {
      const auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      if (x->buffer.get() != y->buffer.get()) {
        if (int c = x->buffer.name().compare(y->buffer.name())) return c < 0 ? -1 : 1;
        if (identity) return 1;
      }
      if (int c = Cmp3(x->indices.size(), y->indices.size())) return c;
      for (size_t i = 0; i < x->indices.size(); ++i) {
        if (int c = sub(x->indices[i], y->indices[i])) return c;
      }
      return 0;
    }
    default:
      break;
  }
  if (const auto* x = a.as<BinaryNode>()) {
    const auto* y = b.as<BinaryNode>();
    if (int c = sub(x->a, y->a)) return c;
    return sub(x->b, y->b);
  }
  return 0;
}

}  // namespace

int ExprCompare(const Expr& a, const Expr& b) { return CompareImpl(a, b, false); }

bool ExprEqual(const Expr& a, const Expr& b) { return CompareImpl(a, b, true) == 0; }

}  // namespace kiln::ir::arith
