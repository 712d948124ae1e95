// The CPU backend: loops. Serial loops with i64 counters where the range
// allows, vectorized loops widened lane by lane (or left to LLVM with a
// vectorize hint), and parallel loops outlined into bodies for
// kiln_parallel_for with their captured values in a closure.
#include "codegen/llvm_emitter.h"

#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>

#include "codegen/captured_uses.h"
#include "codegen/lane_analysis.h"

namespace kiln::codegen {

void CodeGen::EmitFor(const ir::ForNode& f) {
  if (f.for_kind == ForKind::kThreadBinding)
    Fail("loop '" + f.loop_var.name() + "' is bound to " + f.thread_tag +
         ": thread bindings belong to the CUDA backend, not the CPU one");
  if (lanes_) Fail("a loop inside vectorized loop (lowering should have demoted it)");
  if (f.for_kind == ForKind::kParallel) return EmitParallel(f);
  if (f.for_kind == ForKind::kVectorized) {
    const auto* ext = f.extent.as<ir::IntImmNode>();
    if (ext && !NeedsScalarLoop(f.body, f.loop_var.get())) {
      int lanes = 0;
      if (ext->value <= kMaxVectorLanes) {
        lanes = static_cast<int>(ext->value);
      } else {
        for (int l : {64, 32, 16, 8, 4})
          if (ext->value % l == 0) {
            lanes = l;
            break;
          }
      }
      if (lanes >= 2) return EmitVectorized(f, lanes, ext->value);
    }
  }
  EmitSerial(f);
}

// A counted loop over f's range, with f.loop_var bound in its body.
void CodeGen::EmitSerial(const ir::ForNode& f) {
  const DataType t = f.loop_var.dtype();
  const ir::VarNode* var = f.loop_var.get();
  llvm::Value* min = CastInt(EmitExpr(f.min), f.min.dtype(), t);
  llvm::Value* extent = CastInt(EmitExpr(f.extent), f.extent.dtype(), t);
  const auto range = ranges_.LoopRange(f.min, f.extent, t);
  if (!range || !t.is_int() || t.bits() >= 64) {
    EmitCountedLoop(var, min, b_.CreateAdd(min, extent), f.for_kind, [&](llvm::Value*) { EmitStmt(f.body); });
    return;
  }
  // The whole range fits the variable's type, so an i64 counter takes
  // the same values; indices then need no sign extension per access.
  llvm::Value* begin = b_.CreateSExt(min, b_.getInt64Ty());
  llvm::Value* end = b_.CreateNSWAdd(begin, b_.CreateSExt(extent, b_.getInt64Ty()));
  ranges_.Bind(var, *range);
  EmitCountedLoop(var, begin, end, f.for_kind, [&](llvm::Value* i) {
    cur_->vars64[var] = i;
    cur_->vars[var] = b_.CreateTrunc(i, ScalarType(t));
    EmitStmt(f.body);
    cur_->vars64.erase(var);
  });
  ranges_.Unbind(var);
}

void CodeGen::EmitCountedLoop(const ir::VarNode* var, llvm::Value* begin, llvm::Value* end, ForKind kind,
                              const std::function<void(llvm::Value*)>& body, int vector_width) {
  llvm::Function* fn = cur_->fn;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "for." + (var ? var->name : std::string("i")), fn);
  auto* loop_body = llvm::BasicBlock::Create(ctx_, "body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx_, "endfor", fn);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(begin->getType(), 2);
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), loop_body, exit);
  b_.SetInsertPoint(loop_body);
  if (var) cur_->vars[var] = i;
  {
    ValueRegion region(this);
    body(i);
  }
  if (var) cur_->vars.erase(var);
  // i < end, so i + 1 cannot overflow: nsw lets LLVM widen the induction
  // variable instead of sign-extending it at every address.
  llvm::Value* next = b_.CreateNSWAdd(i, llvm::ConstantInt::get(i->getType(), 1));
  llvm::BranchInst* back = b_.CreateBr(header);
  i->addIncoming(next, b_.GetInsertBlock());
  AttachLoopMetadata(back, kind, vector_width);
  b_.SetInsertPoint(exit);
}

void CodeGen::AttachLoopMetadata(llvm::BranchInst* back, ForKind kind, int vector_width) {
  std::vector<llvm::Metadata*> ops = {nullptr};
  auto flag = [&](const char* name) { ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, name)})); };
  if (kind == ForKind::kUnrolled) flag("llvm.loop.unroll.full");
  if (kind == ForKind::kVectorized && vector_width == 0)  // a body we could not widen
    ops.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(b_.getTrue())}));
  if (vector_width > 0) {
    ops.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(b_.getTrue())}));
    ops.push_back(llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
               llvm::ConstantAsMetadata::get(b_.getInt32(vector_width))}));
  }
  if (ops.size() == 1) return;
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, ops);
  loop->replaceOperandWith(0, loop);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

// The body runs once per group of `lanes` iterations, widened.
void CodeGen::EmitVectorized(const ir::ForNode& f, int lanes, int64_t extent) {
  const DataType t = f.loop_var.dtype();
  llvm::Value* min = CastInt(EmitExpr(f.min), f.min.dtype(), t);
  // Lane 0's value (the scalar form of the variable) stays in the loop's range.
  const auto range = ranges_.LoopRange(f.min, f.extent, t);
  if (range) ranges_.Bind(f.loop_var.get(), *range);
  auto widened = [&](llvm::Value* base) {
    cur_->vars[f.loop_var.get()] = base;
    vec_var_ = f.loop_var.get();
    lanes_ = lanes;
    EmitStmt(f.body);
    lanes_ = 0;
    vec_var_ = nullptr;
    cur_->vars.erase(f.loop_var.get());
  };
  if (extent == lanes) {
    widened(min);
  } else {
    llvm::Type* ty = min->getType();
    EmitCountedLoop(nullptr, llvm::ConstantInt::get(ty, 0), llvm::ConstantInt::get(ty, extent / lanes),
                    ForKind::kSerial, [&](llvm::Value* group) {
                      widened(b_.CreateAdd(min, b_.CreateMul(group, llvm::ConstantInt::get(ty, lanes))));
                    });
  }
  ranges_.Unbind(f.loop_var.get());
}

void CodeGen::EmitParallel(const ir::ForNode& f) {
  // What the body needs from here: variables and buffers in scope.
  UseCollector uses;
  uses.VisitStmt(f.body);
  std::vector<Capture> captures;
  for (const auto* v : uses.vars)
    if (v != f.loop_var.get() && cur_->vars.count(v)) captures.push_back(Capture{v, {}});
  for (const auto& b : uses.buffers)
    if (cur_->buffers.count(b.get())) captures.push_back(Capture{nullptr, b});

  const std::string base = name_ + ".par" + std::to_string(parallel_count_++);
  const DataType t = f.loop_var.dtype();
  llvm::Value* min = CastInt(EmitExpr(f.min), f.min.dtype(), t);
  llvm::Value* extent = CastInt(EmitExpr(f.extent), f.extent.dtype(), DataType::Int64());

  // impl(begin, end, min, captures...): the loop over its chunk.
  llvm::Function* impl =
      MakeImpl(base + ".impl", {b_.getInt64Ty(), b_.getInt64Ty(), ScalarType(t)}, captures);
  {
    FunctionScope scope(this, impl);
    auto arg = impl->arg_begin();
    llvm::Value* begin = &*arg++;
    llvm::Value* end = &*arg++;
    llvm::Value* lo = &*arg++;
    for (const auto& c : captures) {
      if (c.var) cur_->vars[c.var] = &*arg++;
      else cur_->buffers[c.buffer.get()] = &*arg++;
    }
    // The chunk [begin, end) lies in [0, extent).
    const auto range = ranges_.LoopRange(f.min, f.extent, t);
    if (range) ranges_.Bind(f.loop_var.get(), *range);
    EmitCountedLoop(f.loop_var.get(), begin, end, ForKind::kSerial, [&](llvm::Value* i) {
      if (range && t.is_int() && t.bits() < 64) {
        llvm::Value* v64 = b_.CreateNSWAdd(b_.CreateSExt(lo, b_.getInt64Ty()), i);
        cur_->vars64[f.loop_var.get()] = v64;
        cur_->vars[f.loop_var.get()] = b_.CreateTrunc(v64, ScalarType(t));
      } else {
        cur_->vars[f.loop_var.get()] = b_.CreateAdd(lo, CastInt(i, DataType::Int64(), t));
      }
      EmitStmt(f.body);
      cur_->vars64.erase(f.loop_var.get());
    });
    ranges_.Unbind(f.loop_var.get());
    b_.CreateRet(b_.getInt32(0));
  }

  // body(begin, end, closure): unpacks the closure, calls impl.
  auto* body_ty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt64Ty(), b_.getInt64Ty(), b_.getPtrTy()}, false);
  llvm::Function* body = llvm::Function::Create(body_ty, llvm::Function::InternalLinkage, base, m_);
  SetAttributes(body);
  {
    FunctionScope scope(this, body);
    std::vector<llvm::Value*> args = {body->getArg(0), body->getArg(1)};
    llvm::Type* slots = llvm::ArrayType::get(b_.getInt64Ty(), captures.size() + 1);
    auto slot = [&](size_t k) { return b_.CreateConstInBoundsGEP2_64(slots, body->getArg(2), 0, k); };
    args.push_back(b_.CreateLoad(ScalarType(t), slot(0)));
    for (size_t k = 0; k < captures.size(); ++k) {
      llvm::Type* ty = captures[k].var ? ScalarType(captures[k].var->dtype) : b_.getPtrTy();
      args.push_back(b_.CreateLoad(ty, slot(k + 1)));
    }
    b_.CreateRet(b_.CreateCall(impl, args));
  }

  // Here: fill the closure, run the loop on the pool.
  llvm::Type* slots = llvm::ArrayType::get(b_.getInt64Ty(), captures.size() + 1);
  llvm::Value* closure;
  {
    llvm::IRBuilder<> entry(cur_->entry, cur_->entry->begin());
    closure = entry.CreateAlloca(slots, nullptr, base + ".closure");
  }
  b_.CreateStore(min, b_.CreateConstInBoundsGEP2_64(slots, closure, 0, 0));
  for (size_t k = 0; k < captures.size(); ++k) {
    llvm::Value* v = captures[k].var ? cur_->vars.at(captures[k].var) : cur_->buffers.at(captures[k].buffer.get());
    b_.CreateStore(v, b_.CreateConstInBoundsGEP2_64(slots, closure, 0, k + 1));
  }
  llvm::FunctionCallee pfor = m_.getOrInsertFunction(
      "kiln_parallel_for",
      llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()}, false));
  llvm::Value* rc = b_.CreateCall(pfor, {extent, body, closure});
  ReturnIf(b_.CreateICmpNE(rc, b_.getInt32(0)), rc, "parallel_failed");
}

}  // namespace kiln::codegen
