#include "codegen/cuda/cuda_wmma.h"

#include <vector>

#include "codegen/llvm_backend.h"
#include "ir/arith/analyzer.h"
#include "ir/buffer.h"
#include "ir/op.h"
#include "ir/tensor_intrin/tensor_intrin.h"

namespace kiln::codegen {
namespace {

[[noreturn]] void Fail(const std::string& msg) { throw BuildError("CUDA codegen: " + msg); }

constexpr int64_t kFrag = 16;

std::string ElementType(const ir::Buffer& b) {
  ir::DataType t = b.dtype();
  if (b.scope() == "wmma.accumulator") {
    if (t == ir::DataType::Float32()) return "float";
    if (t == ir::DataType::Float(16)) return "half";
  } else if (t == ir::DataType::Float(16)) {
    return "half";
  }
  Fail("buffer '" + b.name() + "' in scope " + b.scope() + " has type " + t.str() +
       ", which the wmma fragments here do not hold (float16 operands, float16/float32 "
       "accumulators)");
}

// One operand of the call, after flattening: its buffer and the offsets of
// the tile's first and last element.
struct Operand {
  ir::Buffer buffer;
  std::string first, last;
  ir::Expr first_expr, last_expr;
};

// wmma's load and store take rows whose length (the leading dimension) is a
// multiple of 16 bytes: 8 halves, 4 floats. A tile's is fixed (its last
// element is 15 rows and 15 columns past its first), so it is checked here
// rather than left to fail on the device: a buffer wider than the domain the
// intrinsic matched (a padded output, say) can have rows of any length.
void CheckLeadingDimension(const Operand& o, const std::string& intrin) {
  int64_t span = 0;
  const ir::Expr d = ir::arith::Analyzer().Simplify(ir::Sub(o.last_expr, o.first_expr));
  if (!ir::AsConstInt(d, &span) || span < kFrag * kFrag - 1 ||
      (span - (kFrag - 1)) % (kFrag - 1) != 0) {
    Fail(intrin + ": the tile of " + o.buffer.name() +
         " has no constant leading dimension (its last element is not 15 rows and 15 columns "
         "past its first)");
  }
  const int64_t ld = (span - (kFrag - 1)) / (kFrag - 1);
  const int64_t unit = 16 / o.buffer.dtype().bytes();
  if (ld % unit != 0) {
    Fail(intrin + ": the rows of " + o.buffer.name() + " are " + std::to_string(ld) +
         " elements long; wmma needs a leading dimension that is a multiple of " +
         std::to_string(unit) + " (16 bytes)");
  }
}

}  // namespace

bool IsWmmaScope(const std::string& scope) { return scope.rfind("wmma.", 0) == 0; }

std::string WmmaFragmentDecl(const ir::Buffer& b, const std::string& name) {
  int64_t n = 0;
  if (b.ndim() != 1 || !ir::AsConstInt(b.shape()[0], &n) || n <= 0 || n % (kFrag * kFrag) != 0) {
    Fail("fragment buffer '" + b.name() + "' is not a whole number of 16x16 fragments");
  }
  std::string use;
  if (b.scope() == "wmma.matrix_a") {
    use = "nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major";
  } else if (b.scope() == "wmma.matrix_b") {
    use = "nvcuda::wmma::matrix_b, 16, 16, 16, half, nvcuda::wmma::row_major";
  } else if (b.scope() == "wmma.accumulator") {
    use = "nvcuda::wmma::accumulator, 16, 16, 16, " + ElementType(b);
  } else {
    Fail("unknown fragment scope " + b.scope());
  }
  ElementType(b);
  return "nvcuda::wmma::fragment<" + use + "> " + name + "[" + std::to_string(n / (kFrag * kFrag)) +
         "];";
}

std::string WmmaStatement(const ir::LoweredTensorIntrin& op, const std::string& pad,
                          const std::function<std::string(const ir::Expr&)>& emit,
                          const std::function<std::string(const ir::Buffer&)>& name) {
  const ir::TensorIntrinImpl impl = op.intrin->impl;
  const std::string& intrin = op.intrin->name;
  std::vector<Operand> ops;
  for (const auto& o : op.operands) {
    if (o.first.size() != 1 || o.last.size() != 1) {
      Fail(intrin + ": the operand loads of " + o.buffer.name() + " are not flattened");
    }
    ops.push_back({o.buffer, emit(o.first[0]), emit(o.last[0]), o.first[0], o.last[0]});
  }
  // Leading dimension of a row-major 16x16 tile from its first and last
  // element: last - first = 15 * ld + 15.
  std::string out = pad + "{\n";
  const std::string in = pad + "  ";
  std::vector<std::string> ld;
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string v = "kiln_ld" + std::to_string(i);
    out += in + "const int " + v + " = (int)(((" + ops[i].last + ") - (" + ops[i].first +
           ") - 15) / 15);\n";
    ld.push_back(v);
  }
  auto frag = [&](size_t i, const std::string& scope) {
    if (ops[i].buffer.scope() != scope) {
      Fail("operand " + ops[i].buffer.name() + " of " + intrin + " is in scope " +
           ops[i].buffer.scope() + ", not " + scope);
    }
    const std::string& f = ops[i].first;
    return name(ops[i].buffer) + "[((" + f + ") / " + ld[i] + " / 16) * (" + ld[i] + " / 16) + ((" +
           f + ") % " + ld[i] + ") / 16]";
  };
  auto ptr = [&](size_t i) {
    if (IsWmmaScope(ops[i].buffer.scope())) {
      Fail("operand " + ops[i].buffer.name() + " of " + intrin +
           " must be in memory, not a fragment");
    }
    CheckLeadingDimension(ops[i], intrin);
    return "&" + name(ops[i].buffer) + "[" + ops[i].first + "]";
  };
  switch (impl) {
    case ir::TensorIntrinImpl::kWmmaFill:
      out += in + "nvcuda::wmma::fill_fragment(" + frag(0, "wmma.accumulator") + ", 0.0f);\n";
      break;
    case ir::TensorIntrinImpl::kWmmaLoadA:
      out += in + "nvcuda::wmma::load_matrix_sync(" + frag(1, "wmma.matrix_a") + ", " + ptr(0) +
             ", " + ld[0] + ");\n";
      break;
    case ir::TensorIntrinImpl::kWmmaLoadB:
      out += in + "nvcuda::wmma::load_matrix_sync(" + frag(1, "wmma.matrix_b") + ", " + ptr(0) +
             ", " + ld[0] + ");\n";
      break;
    case ir::TensorIntrinImpl::kWmmaMma: {
      std::string c = frag(0, "wmma.accumulator");
      out += in + "nvcuda::wmma::mma_sync(" + c + ", " + frag(1, "wmma.matrix_a") + ", " +
             frag(2, "wmma.matrix_b") + ", " + c + ");\n";
      break;
    }
    case ir::TensorIntrinImpl::kWmmaStore:
      out += in + "nvcuda::wmma::store_matrix_sync(" + ptr(1) + ", " +
             frag(0, "wmma.accumulator") + ", " + ld[1] + ", nvcuda::wmma::mem_row_major);\n";
      break;
  }
  return out + pad + "}\n";
}

}  // namespace kiln::codegen
