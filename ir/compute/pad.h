// Constant padding, as topi.nn.pad builds it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/compute/tensor.h"

namespace kiln::ir::compute {

// A stage of shape shape[i] + before[i] + after[i] (after defaults to before)
// holding `t` shifted by `before` and `value` elsewhere:
//   if_then_else(before_i <= i and i < shape_i + before_i and ..., t[i - before_i, ...], value)
// Dimensions with no padding index straight through and add no condition; with
// no padding at all the stage is a plain copy (topi still emits it). The
// conditions are written in the form TVM's simplifier prints them.
Tensor pad(const Tensor& t, const std::vector<int64_t>& before,
           const std::vector<int64_t>& after = {}, double value = 0.0,
           const std::string& name = "PadInput");

}  // namespace kiln::ir::compute
