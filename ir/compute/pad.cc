#include "ir/compute/pad.h"

#include "ir/compute/compute.h"
#include "ir/compute/fold.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::compute {

Tensor pad(const Tensor& t, const std::vector<int64_t>& before,
           const std::vector<int64_t>& after_in, double value, const std::string& name) {
  const std::vector<int64_t>& after = after_in.empty() ? before : after_in;
  size_t n = t.ndim();
  if (before.size() != n || after.size() != n) {
    throw IRError("pad " + name + ": tensor " + t.name() + " has " + std::to_string(n) +
                  " dimension(s) but pad_before/pad_after have " + std::to_string(before.size()) +
                  "/" + std::to_string(after.size()));
  }
  std::vector<Expr> out_shape;
  for (size_t i = 0; i < n; ++i) {
    if (before[i] < 0 || after[i] < 0) {
      throw IRError("pad " + name + ": negative padding in dimension " + std::to_string(i));
    }
    out_shape.push_back(FoldAdd(FoldAdd(t.shape()[i], before[i]), after[i]));
  }
  Expr pad_value = MakeConst(t.dtype(), value);
  return compute(
      out_shape,
      [&](const std::vector<Var>& idx) -> Body {
        std::vector<Expr> index;
        Expr cond;
        for (size_t i = 0; i < n; ++i) {
          if (before[i] == 0 && after[i] == 0) {
            index.push_back(idx[i]);
            continue;
          }
          index.push_back(FoldSub(idx[i], before[i]));
          Expr lo = LE(IntImm(before[i], idx[i].dtype()), idx[i]);
          Expr hi = LT(idx[i], FoldAdd(t.shape()[i], before[i]));
          cond = cond.defined() ? And(And(cond, lo), hi) : And(lo, hi);
        }
        if (!cond.defined()) return t(index);
        return IfThenElse(cond, t(index), pad_value);
      },
      name);
}

}  // namespace kiln::ir::compute
