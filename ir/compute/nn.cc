#include "ir/compute/nn.h"

#include "ir/compute/compute.h"
#include "ir/error.h"
#include "ir/op.h"

namespace kiln::ir::compute {

Tensor relu(const Tensor& x) {
  return compute(x.shape(), [&](const std::vector<Var>& i) -> Body {
    return Max(x(std::vector<Expr>(i.begin(), i.end())), MakeConst(x.dtype(), 0));
  });
}

Tensor softmax(const Tensor& x, int axis) {
  int ndim = static_cast<int>(x.ndim());
  if (axis < 0) axis += ndim;
  if (axis < 0 || axis >= ndim) {
    throw IRError("softmax of " + x.name() + ": axis out of range for a " + std::to_string(ndim) +
                  "-d tensor");
  }
  const Expr& extent = x.shape()[axis];
  auto make_k = [&]() { return reduce_axis(Range{IntImm(0, extent.dtype()), extent}, "k"); };
  // Indices of the full shape with the reduced dimension put back at `axis`.
  auto with_axis = [&](const std::vector<Var>& reduced, const Expr& k) {
    std::vector<Expr> idx(reduced.begin(), reduced.end());
    idx.insert(idx.begin() + axis, k);
    return idx;
  };
  auto without_axis = [&](const std::vector<Var>& full) {
    std::vector<Expr> idx;
    for (int i = 0; i < ndim; ++i) {
      if (i != axis) idx.push_back(full[i]);
    }
    return idx;
  };
  std::vector<Expr> reduced_shape;
  for (int i = 0; i < ndim; ++i) {
    if (i != axis) reduced_shape.push_back(x.shape()[i]);
  }
  auto all = [](const std::vector<Var>& v) { return std::vector<Expr>(v.begin(), v.end()); };

  IterVar k1 = make_k();
  Tensor max_elem = compute(
      reduced_shape,
      [&](const std::vector<Var>& i) -> Body { return max(x(with_axis(i, k1.var)), {k1}); },
      "T_softmax_maxelem");
  Tensor exp = compute(
      x.shape(),
      [&](const std::vector<Var>& i) -> Body {
        return Call(CallOp::kExp, {Sub(x(all(i)), max_elem(without_axis(i)))});
      },
      "T_softmax_exp");
  IterVar k2 = make_k();
  Tensor expsum = compute(
      reduced_shape,
      [&](const std::vector<Var>& i) -> Body { return sum(exp(with_axis(i, k2.var)), {k2}); },
      "T_softmax_expsum");
  Annotations attrs;
  attrs["axis"] = IntImm(axis);
  return compute(
      x.shape(),
      [&](const std::vector<Var>& i) -> Body { return Div(exp(all(i)), expsum(without_axis(i))); },
      "T_softmax_norm", {}, attrs);
}

}  // namespace kiln::ir::compute
