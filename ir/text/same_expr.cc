#include "ir/text/same_expr.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "ir/buffer.h"

namespace kiln::ir::text {

namespace {

bool SameList(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!SameExpr(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool SameExpr(const Expr &a, const Expr &b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::kIntImm:
      return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x == y || (x != x && y != y);
    }
    case ExprKind::kStringImm:
      return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
    case ExprKind::kVar:
      return false;  // different nodes
    case ExprKind::kNot:
      return SameExpr(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      const auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return SameExpr(x->condition, y->condition) && SameExpr(x->true_value, y->true_value) &&
             SameExpr(x->false_value, y->false_value);
    }
    case ExprKind::kCast:
      return SameExpr(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kBufferLoad: {
      const auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return x->buffer.same_as(y->buffer) && SameList(x->indices, y->indices);
    }
    case ExprKind::kCall: {
      const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op == y->op && SameList(x->args, y->args);
    }
    case ExprKind::kRamp: {
      const auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return x->lanes == y->lanes && SameExpr(x->base, y->base) && SameExpr(x->stride, y->stride);
    }
    case ExprKind::kBroadcast: {
      const auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      return x->lanes == y->lanes && SameExpr(x->value, y->value);
    }
    default: {
      const auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      return SameExpr(x->a, y->a) && SameExpr(x->b, y->b);
    }
  }
}

bool IsReservedName(const std::string &name) {
  static constexpr std::array<std::string_view, 38> kReserved = {
      "False",   "None",     "True",     "and",    "as",    "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",   "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",    "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass",  "raise",  "return", "try",
      "while",   "with",     "yield",    "T",      "range", "match"};
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

}  // namespace kiln::ir::text
