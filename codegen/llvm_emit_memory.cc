// The CPU backend: buffer allocation scopes, buffer addresses and index
// arithmetic, and loads and stores in scalar and widened (vector) form.
#include "codegen/llvm_emitter.h"

#include <algorithm>
#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/MDBuilder.h>

#include "codegen/lane_analysis.h"

namespace kiln::codegen {

void CodeGen::EmitAllocScope(const ir::BlockRealizeNode& r) {
  const ir::BlockNode& block = *r.block.get();
  if (!block.iter_vars.empty())
    Fail("block '" + block.name + "' still has iteration variables: the function is not lowered");
  std::vector<llvm::Value*> heap;
  for (const auto& buf : block.alloc_buffers) {
    int64_t elems = 1;
    for (const auto& dim : buf->shape) {
      const auto* c = dim.as<ir::IntImmNode>();
      if (!c) Fail("buffer '" + buf.name() + "' allocated by block '" + block.name + "' has a non-constant size");
      elems *= c->value;
    }
    const int64_t bytes = std::max<int64_t>(1, elems) * buf.dtype().bytes();
    llvm::Type* elem = MemType(buf.dtype());
    if (bytes <= kMaxStackBytes) {
      llvm::IRBuilder<> entry(cur_->entry, cur_->entry->begin());
      auto* a = entry.CreateAlloca(elem, entry.getInt64(std::max<int64_t>(1, elems)), buf.name());
      a->setAlignment(llvm::Align(64));
      cur_->buffers[buf.get()] = a;
    } else {
      const int64_t rounded = (bytes + 63) / 64 * 64;
      llvm::FunctionCallee alloc = m_.getOrInsertFunction(
          "aligned_alloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty(), b_.getInt64Ty()}, false));
      llvm::Value* p = b_.CreateCall(alloc, {b_.getInt64(64), b_.getInt64(rounded)}, buf.name());
      ReturnIf(b_.CreateIsNull(p), b_.getInt32(1), "alloc_failed");
      cur_->buffers[buf.get()] = p;
      heap.push_back(p);
    }
  }
  EmitStmt(block.body);
  llvm::FunctionCallee free_fn =
      m_.getOrInsertFunction("free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
  for (auto* p : heap) b_.CreateCall(free_fn, {p});
  for (const auto& buf : block.alloc_buffers) cur_->buffers.erase(buf.get());
}

llvm::Value* CodeGen::Buffer(const ir::Buffer& buf) {
  auto it = cur_->buffers.find(buf.get());
  if (it == cur_->buffers.end())
    Fail("buffer '" + buf.name() + "' is used outside the scope that allocates it");
  return it->second;
}

llvm::Value* CodeGen::IndexOf(const std::vector<Expr>& indices, const std::string& buffer) {
  if (indices.size() != 1)
    Fail("access to '" + buffer + "' has " + std::to_string(indices.size()) +
         " indices; lowered buffers are flat (one index)");
  if (!lanes_ && ranges_.NoWrapRange(indices[0])) return Index64(indices[0]);
  llvm::Value* i = EmitExpr(indices[0]);
  return CastInt(i, indices[0].dtype(), DataType::Int64());
}

// An index expression for which ranges_.NoWrapRange holds (and so for
// each of its subexpressions), computed in i64.
llvm::Value* CodeGen::Index64(const Expr& e) {
  llvm::Type* i64 = b_.getInt64Ty();
  if (const auto* c = e.as<ir::IntImmNode>()) return llvm::ConstantInt::get(i64, static_cast<uint64_t>(c->value), true);
  if (const auto* v = e.as<ir::VarNode>()) {
    if (auto it = cur_->vars64.find(v); it != cur_->vars64.end()) return it->second;
    return CastInt(EmitExpr(e), e.dtype(), DataType::Int64());
  }
  // Floor division and modulo keep their general form, although their
  // operands are known non-negative here: as shifts and masks (what LLVM
  // makes of unsigned ones), the terms of a fused loop's index merge into
  // bitwise ors that LLVM 16's alias analysis cannot take apart, and
  // accumulators in memory then stay there instead of being promoted to
  // registers (measured: 2x slower kernels on some GMM candidates).
  if (e.kind() == ExprKind::kFloorDiv || e.kind() == ExprKind::kFloorMod)
    return CastInt(EmitExpr(e), e.dtype(), DataType::Int64());
  const auto* n = e.as<ir::BinaryNode>();
  llvm::Value* a = Index64(n->a);
  llvm::Value* b = Index64(n->b);
  // No wrap in the type means none in i64 either; unsigned no-wrap needs
  // both operands non-negative as well.
  const bool nonneg = ranges_.NoWrapRange(n->a)->is_non_negative() &&
                      ranges_.NoWrapRange(n->b)->is_non_negative();
  const uint64_t op = static_cast<uint64_t>(e.kind()) << 1 | (nonneg ? 1 : 0);
  return Pure({kVnIndex64, op, a, b}, [&]() -> llvm::Value* {
    switch (e.kind()) {
      case ExprKind::kAdd: return b_.CreateAdd(a, b, "", nonneg, true);
      case ExprKind::kSub: return b_.CreateSub(a, b, "", false, true);
      case ExprKind::kMul: return b_.CreateMul(a, b, "", nonneg, true);
      case ExprKind::kMin: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
      case ExprKind::kMax: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
      default: Fail("internal error: an index operator without a proven range");
    }
  });
}

void CodeGen::EmitStore(const ir::BufferStoreNode& st) {
  llvm::Value* base = Buffer(st.buffer);
  llvm::Type* elem = MemType(st.buffer.dtype());
  const Align align = ElemAlign(st.buffer.dtype());
  if (!lanes_) {
    llvm::Value* v = ToMem(EmitExpr(st.value), st.buffer.dtype());
    llvm::Value* ptr = Address(elem, base, IndexOf(st.indices, st.buffer.name()));
    b_.CreateAlignedStore(v, ptr, align);
    return;
  }
  llvm::Value* value = ToMem(Splat(EmitExpr(st.value)), st.buffer.dtype());
  const auto stride = st.indices.size() == 1 ? LaneStride(st.indices[0], vec_var_) : std::nullopt;
  if (stride && *stride == 1) {
    llvm::Value* ptr = Address(elem, base, ScalarIndex(st.indices, st.buffer.name()));
    b_.CreateAlignedStore(value, ptr, align);
  } else if (stride && *stride == 0) {
    // Every lane writes one element: the last lane's store is the one that stays.
    llvm::Value* last = b_.CreateExtractElement(value, static_cast<uint64_t>(lanes_ - 1));
    llvm::Value* ptr = Address(elem, base, ScalarIndex(st.indices, st.buffer.name()));
    b_.CreateAlignedStore(last, ptr, align);
  } else {
    llvm::Value* ptrs = Address(elem, base, IndexOf(st.indices, st.buffer.name()));
    b_.CreateMaskedScatter(value, ptrs, align);  // lanes are written in order
  }
}

// The index of lane 0, computed in scalar mode.
llvm::Value* CodeGen::ScalarIndex(const std::vector<Expr>& indices, const std::string& buffer) {
  const int saved = lanes_;
  lanes_ = 0;
  llvm::Value* i = IndexOf(indices, buffer);
  lanes_ = saved;
  return i;
}

llvm::Value* CodeGen::EmitLoad(const ir::BufferLoadNode& l) {
  llvm::Value* base = Buffer(l.buffer);
  const DataType t = l.buffer.dtype();
  llvm::Type* elem = MemType(t);
  const Align align = ElemAlign(t);
  auto from_mem = [&](llvm::Value* v) {
    return t.is_bool() ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
  };
  if (!lanes_) {
    llvm::Value* ptr = Address(elem, base, IndexOf(l.indices, l.buffer.name()));
    return from_mem(b_.CreateAlignedLoad(elem, ptr, align));
  }
  const auto stride = l.indices.size() == 1 ? LaneStride(l.indices[0], vec_var_) : std::nullopt;
  if (stride && *stride == 0) {
    llvm::Value* ptr = Address(elem, base, ScalarIndex(l.indices, l.buffer.name()));
    return Splat(from_mem(b_.CreateAlignedLoad(elem, ptr, align)));
  }
  auto* vec_ty = llvm::FixedVectorType::get(elem, lanes_);
  if (stride && *stride == 1) {
    llvm::Value* ptr = Address(elem, base, ScalarIndex(l.indices, l.buffer.name()));
    return from_mem(b_.CreateAlignedLoad(vec_ty, ptr, align));
  }
  llvm::Value* ptrs = Address(elem, base, IndexOf(l.indices, l.buffer.name()));
  return from_mem(b_.CreateMaskedGather(vec_ty, ptrs, align));
}

}  // namespace kiln::codegen
