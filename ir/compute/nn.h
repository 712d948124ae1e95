// topi.nn operators the workload suite is built from: relu and softmax.
#pragma once

#include <string>

#include "ir/compute/tensor.h"

namespace kiln::ir::compute {

// max(x, 0) elementwise; stage "compute" with axes i0, i1, ... (topi.nn.relu).
Tensor relu(const Tensor& x);

// topi.nn.softmax: four stages T_softmax_maxelem (max over `axis`, reduce
// axis "k"), T_softmax_exp (exp(x - max)), T_softmax_expsum (sum, "k") and
// T_softmax_norm (exp / expsum, annotated {"axis": axis}). A negative axis
// counts from the end.
Tensor softmax(const Tensor& x, int axis = -1);

}  // namespace kiln::ir::compute
