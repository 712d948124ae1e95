// Tensor intrinsics: the hardware operations Tensorize can put in place of a
// block (ir/schedule/primitive/tensorize.cc).
//
// Each intrinsic pairs a description with an implementation, as TVM's
// TensorIntrin does. The description is a small PrimFunc whose parameters
// are the operand tiles (shape, dtype and storage scope, e.g. a 16x16
// float16 tile in "wmma.matrix_a") and whose body is one loop nest over one
// block: it says what the operation computes, and the interpreter runs it
// like any function. Tensorize matches a blockized block against it
// structurally (tensor_intrin_match.h). The implementation is the operation
// the backend emits for a matched block: after the lowering pass
// LowerTensorIntrin (ir/transform/lower_tensor_intrin.cc) the block is one
// T.kiln_tensor_intrin call that names it, which the CUDA backend turns into
// nvcuda::wmma calls (codegen/cuda/cuda_wmma.cc).
//
// Registered (all for sm_70 and later; TVM's names, tensor_intrin/cuda.py):
//   wmma_fill_16x16x16_f32              C = 0 in wmma.accumulator
//   wmma_load_16x16x16_f16_a_shared     A tile shared -> wmma.matrix_a
//   wmma_load_16x16x16_f16_a_shared_dyn   (the same from shared.dyn)
//   wmma_load_16x16x16_f16_b_shared     B tile shared -> wmma.matrix_b
//   wmma_load_16x16x16_f16_b_shared_dyn
//   wmma_sync_16x16x16_f16f16f32        C += f32(A) * f32(B), the 16x16x16 MMA
//   wmma_store_16x16x16_f32_global      accumulator -> global
//   wmma_store_16x16x16_f32_shared      accumulator -> shared
// Every tile is row major; the operands' leading dimensions come from the
// buffers they live in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/prim_func.h"

namespace kiln::ir {

// What the backend emits for an intrinsic.
enum class TensorIntrinImpl {
  kWmmaFill,   // fill_fragment(acc, 0)
  kWmmaLoadA,  // load_matrix_sync(matrix_a fragment, pointer, ldm)
  kWmmaLoadB,  // load_matrix_sync(matrix_b fragment, pointer, ldm)
  kWmmaMma,    // mma_sync(acc, a, b, acc)
  kWmmaStore,  // store_matrix_sync(pointer, acc, ldm, mem_row_major)
};

struct TensorIntrin {
  std::string name;
  // The semantics. Parameters are the operands in the implementation's
  // order: fill (C), load (source, fragment), mma (C, A, B), store
  // (fragment, destination).
  PrimFunc desc;
  TensorIntrinImpl impl;
};

// The intrinsic registered as `name`, or null.
const TensorIntrin* FindTensorIntrin(const std::string& name);
// Every registered name, sorted.
std::vector<std::string> TensorIntrinNames();
// "wmma_sync" ... as the lowered call spells the implementation.
const char* TensorIntrinImplName(TensorIntrinImpl impl);
bool TensorIntrinImplFromName(const std::string& name, TensorIntrinImpl* out);
// The operand (0-based, in the description's parameter order) the
// implementation writes; the others it reads (an accumulating MMA also
// reads its operand 0).
int TensorIntrinWrittenOperand(TensorIntrinImpl impl);

// The form a tensorized block takes in lowered code
// (ir/transform/lower_tensor_intrin.cc): a serial loop of extent 1
// annotated kTensorIntrinAttr = the intrinsic's name, whose body is one
// T.evaluate(load) per tile corner, first then last element of each operand
// in the description's parameter order. The loads name the operands' tiles;
// they are compacted and flattened with everything else, and the backend
// reads them back with this.
inline constexpr const char* kTensorIntrinAttr = "kiln.tensor_intrin";

struct LoweredTensorIntrin {
  const TensorIntrin* intrin = nullptr;
  struct Operand {
    Buffer buffer;
    std::vector<Expr> first, last;  // indices of the tile's first and last element
    bool written = false;
  };
  std::vector<Operand> operands;
};

// Reads a loop of that form; nullopt for any other loop. A loop that carries
// the annotation but is malformed sets *why (when not null).
std::optional<LoweredTensorIntrin> AsLoweredTensorIntrin(const ForNode& loop,
                                                         std::string* why = nullptr);
}  // namespace kiln::ir
