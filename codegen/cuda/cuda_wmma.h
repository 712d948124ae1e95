// The CUDA backend's tensor cores: fragment declarations for buffers in the
// wmma.* storage scopes and nvcuda::wmma calls for the lowered form of a
// tensorized block (ir/tensor_intrin/tensor_intrin.h, made by
// ir/transform/lower_tensor_intrin.cc). cuda_codegen.cc calls these while it
// emits a kernel.
#pragma once

#include <functional>
#include <string>

#include "ir/tensor_intrin/tensor_intrin.h"

namespace kiln::codegen {

// "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator".
bool IsWmmaScope(const std::string& scope);

// "nvcuda::wmma::fragment<...> name[count];" for a flattened buffer of a
// wmma scope: one 16x16x16 fragment per 256 elements. Throws BuildError for
// a size that is not whole fragments or a dtype the scope does not hold.
std::string WmmaFragmentDecl(const ir::Buffer& buffer, const std::string& name);

// The statements (each line starting with `pad`) for one lowered tensor
// intrinsic: `emit` renders an index expression, `name` a buffer's C name.
std::string WmmaStatement(const ir::LoweredTensorIntrin& op, const std::string& pad,
                          const std::function<std::string(const ir::Expr&)>& emit,
                          const std::function<std::string(const ir::Buffer&)>& name);

}  // namespace kiln::codegen
