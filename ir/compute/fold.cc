#include "ir/compute/fold.h"

#include <limits>

#include "ir/op.h"

namespace kiln::ir::compute {

namespace {

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Both operands integer constants of one type: the folded constant's type.
bool BothConst(const Expr& a, const Expr& b, int64_t* x, int64_t* y) {
  return AsConstInt(a, x) && AsConstInt(b, y) && a.dtype() == b.dtype() && !a.dtype().is_bool();
}

Expr Literal(const Expr& like, int64_t v) {
  DataType t = like.dtype().element_of();
  if (t.is_floating()) return FloatImm(static_cast<double>(v), t);
  if (t.is_bool()) t = DataType::Int32();
  return IntImm(v, t);
}

}  // namespace

Expr IndexConst(int64_t value) {
  bool fits =
      value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max();
  return IntImm(value, fits ? DataType::Int32() : DataType::Int64());
}

Expr FoldAdd(Expr a, Expr b) {
  int64_t x, y;
  if (BothConst(a, b, &x, &y)) return IntImm(x + y, a.dtype());
  if (IsConstInt(b, 0) && a.dtype().is_integer()) return a;
  if (IsConstInt(a, 0) && b.dtype().is_integer()) return b;
  return Add(std::move(a), std::move(b));
}

Expr FoldSub(Expr a, Expr b) {
  int64_t x, y;
  if (BothConst(a, b, &x, &y)) return IntImm(x - y, a.dtype());
  if (IsConstInt(b, 0) && a.dtype().is_integer()) return a;
  return Sub(std::move(a), std::move(b));
}

Expr FoldMul(Expr a, Expr b) {
  int64_t x, y;
  if (BothConst(a, b, &x, &y)) return IntImm(x * y, a.dtype());
  if (a.dtype().is_integer() && b.dtype().is_integer()) {
    if (IsConstInt(b, 1)) return a;
    if (IsConstInt(a, 1)) return b;
    if (IsConstInt(b, 0) && a.dtype() == b.dtype()) return b;
    if (IsConstInt(a, 0) && a.dtype() == b.dtype()) return a;
  }
  return Mul(std::move(a), std::move(b));
}

Expr FoldFloorDiv(Expr a, Expr b) {
  int64_t x, y;
  if (BothConst(a, b, &x, &y) && y != 0) return IntImm(FloorDivInt(x, y), a.dtype());
  if (IsConstInt(b, 1) && a.dtype().is_integer()) return a;
  return FloorDiv(std::move(a), std::move(b));
}

Expr FoldFloorMod(Expr a, Expr b) {
  int64_t x, y;
  if (BothConst(a, b, &x, &y) && y != 0) return IntImm(x - FloorDivInt(x, y) * y, a.dtype());
  if (IsConstInt(b, 1) && a.dtype().is_integer()) return Literal(a, 0);
  return FloorMod(std::move(a), std::move(b));
}

Expr FoldAdd(Expr a, int64_t b) {
  Expr l = Literal(a, b);
  return FoldAdd(std::move(a), l);
}
Expr FoldSub(Expr a, int64_t b) {
  Expr l = Literal(a, b);
  return FoldSub(std::move(a), l);
}
Expr FoldSub(int64_t a, Expr b) {
  Expr l = Literal(b, a);
  return FoldSub(l, std::move(b));
}
Expr FoldMul(Expr a, int64_t b) {
  Expr l = Literal(a, b);
  return FoldMul(std::move(a), l);
}
Expr FoldFloorDiv(Expr a, int64_t b) {
  Expr l = Literal(a, b);
  return FoldFloorDiv(std::move(a), l);
}
Expr FoldFloorMod(Expr a, int64_t b) {
  Expr l = Literal(a, b);
  return FoldFloorMod(std::move(a), l);
}

}  // namespace kiln::ir::compute
