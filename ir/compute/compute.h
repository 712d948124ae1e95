// Compute stages, reduce axes and reducers of the TE-like frontend (TVM's
// te.compute, te.reduce_axis, te.sum / te.max / te.min).
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "ir/compute/tensor.h"

namespace kiln::ir::compute {

// A reduce axis over `dom` (or [0, extent)). Its variable is used inside the
// reducer's source expression and listed in the reducer's axes.
IterVar reduce_axis(Range dom, std::string name);
IterVar reduce_axis(int64_t extent, std::string name);

// Reductions; the identity elements are TVM's: 0, min_value(t), max_value(t).
Reduce sum(Expr source, std::vector<IterVar> axes);
Reduce max(Expr source, std::vector<IterVar> axes);
Reduce min(Expr source, std::vector<IterVar> axes);

// Returns the identity element of the reduction kind for type t.
Expr ReduceIdentity(Reduce::Kind kind, DataType t);
// Combines the running value `acc` with the next `value`.
Expr ReduceCombine(Reduce::Kind kind, Expr acc, Expr value);

using ComputeFn = std::function<Body(const std::vector<Var>& axes)>;

// One compute stage of the given output shape. fcompute receives one Var per
// output dimension, named axis_names[i] (default "i0", "i1", ... like TVM's
// varargs lambdas); it returns a value or a Reduce. The output dtype is the
// body's. attrs become the block's annotations.
Tensor compute(std::vector<Expr> shape, const ComputeFn& fcompute, std::string name = "compute",
               std::vector<std::string> axis_names = {}, Annotations attrs = {});
Tensor compute(const std::vector<int64_t>& shape, const ComputeFn& fcompute,
               std::string name = "compute", std::vector<std::string> axis_names = {},
               Annotations attrs = {});
// Makes `compute({4}, ...)` unambiguous.
Tensor compute(std::initializer_list<int64_t> shape, const ComputeFn& fcompute,
               std::string name = "compute", std::vector<std::string> axis_names = {},
               Annotations attrs = {});

}  // namespace kiln::ir::compute
