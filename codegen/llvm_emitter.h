// The CPU backend's emitter: lowered Kiln IR -> LLVM IR, one CodeGen per
// module (internal to codegen/: it names LLVM types). What it emits and why
// is described in codegen/llvm_codegen.cc; its methods live in files by
// concept: llvm_codegen.cc (the kernel, its functions, types, statements),
// llvm_emit_memory.cc (allocation, addresses, loads and stores),
// llvm_emit_loops.cc (serial, vectorized and parallel loops) and
// llvm_emit_expr.cc (expressions and intrinsics).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/index_range.h"
#include "codegen/llvm_backend.h"
#include "codegen/value_numbering.h"
#include "ir/prim_func.h"

namespace kiln::codegen {

[[noreturn]] inline void Fail(const std::string& msg) { throw BuildError("CPU backend: " + msg); }

inline constexpr int64_t kMaxStackBytes = 64 * 1024;
inline constexpr int kMaxVectorLanes = 64;

class CodeGen {
 public:
  using Align = llvm::Align;
  using CallOp = ir::CallOp;
  using DataType = ir::DataType;
  using Expr = ir::Expr;
  using ExprKind = ir::ExprKind;
  using ForKind = ir::ForKind;
  using Stmt = ir::Stmt;

  CodeGen(llvm::LLVMContext& ctx, llvm::Module& m, llvm::TargetMachine& tm, bool noalias)
      : ctx_(ctx), m_(m), tm_(tm), b_(ctx), noalias_(noalias) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  void EmitKernel(const ir::PrimFunc& f);

 private:
  // A value passed into an impl function: a variable or a buffer pointer.
  struct Capture {
    const ir::VarNode* var = nullptr;
    ir::Buffer buffer;
  };

  struct Scope {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;
    std::unordered_map<const ir::VarNode*, llvm::Value*> vars;
    // Loop variables whose counter runs in i64: that counter (vars holds
    // its truncation to the variable's type).
    std::unordered_map<const ir::VarNode*, llvm::Value*> vars64;
    std::unordered_map<const ir::BufferNode*, llvm::Value*> buffers;
    ValueNumbering values;  // pure values computed so far that still dominate
  };

  // Operation codes of ValueNumbering keys.
  enum ValueOp : unsigned {
    kVnBinary = 1, kVnIndex64, kVnIntCast, kVnSplat, kVnGep, kVnLaneIndex, kVnNot
  };

  // Opens a region of control flow in the current function: the values
  // computed inside do not dominate what follows it.
  class ValueRegion {
   public:
    explicit ValueRegion(CodeGen* cg) : values_(cg->cur_->values), mark_(values_.Open()) {}
    ~ValueRegion() { values_.Close(mark_); }

   private:
    ValueNumbering& values_;
    size_t mark_;
  };

  // Switches emission into `fn` (a fresh entry block) and back on exit.
  class FunctionScope {
   public:
    FunctionScope(CodeGen* cg, llvm::Function* fn) : cg_(cg), saved_(cg->cur_) {
      saved_block_ = cg->b_.GetInsertBlock();
      if (saved_block_) saved_point_ = cg->b_.GetInsertPoint();
      scope_.fn = fn;
      scope_.entry = llvm::BasicBlock::Create(cg->ctx_, "entry", fn);
      cg->b_.SetInsertPoint(scope_.entry);
      cg->cur_ = &scope_;
    }
    ~FunctionScope() {
      cg_->cur_ = saved_;
      if (saved_block_) cg_->b_.SetInsertPoint(saved_block_, saved_point_);
    }

   private:
    CodeGen* cg_;
    Scope* saved_;
    Scope scope_;
    llvm::BasicBlock* saved_block_ = nullptr;
    llvm::BasicBlock::iterator saved_point_;
  };

  void SetAttributes(llvm::Function* fn);

  // `i32 name(lead..., captures...)`, internal, with noalias pointers.
  llvm::Function* MakeImpl(const std::string& name, const std::vector<llvm::Type*>& lead,
                           const std::vector<Capture>& captures);

  // ---- types (llvm_codegen.cc) ----------------------------------------------

  llvm::Type* ScalarType(DataType t);

  // The in-memory element type (bool is a byte).
  llvm::Type* MemType(DataType t) { return t.is_bool() ? b_.getInt8Ty() : ScalarType(t); }

  // ScalarType(t), widened to the current lane count in vector mode.
  llvm::Type* ValueType(DataType t) {
    llvm::Type* s = ScalarType(t);
    return lanes_ ? llvm::FixedVectorType::get(s, lanes_) : s;
  }

  llvm::Value* Splat(llvm::Value* v) {
    if (!lanes_ || v->getType()->isVectorTy()) return v;
    return Pure({kVnSplat, static_cast<uint64_t>(lanes_), v, nullptr},
                [&] { return b_.CreateVectorSplat(lanes_, v); });
  }

  // A pure value: reused from an earlier emission that dominates, or made.
  template <typename Make>
  llvm::Value* Pure(const ValueNumbering::Key& key, Make make) {
    return cur_->values.GetOrMake(key, make);
  }

  // &base[index], elements of type elem.
  llvm::Value* Address(llvm::Type* elem, llvm::Value* base, llvm::Value* index) {
    return Pure({kVnGep, reinterpret_cast<uintptr_t>(elem), base, index},
                [&] { return b_.CreateInBoundsGEP(elem, base, index); });
  }

  // ---- statements (llvm_codegen.cc) -----------------------------------------

  void EmitStmt(const Stmt& s);

  void EmitIf(const ir::IfThenElseNode& n);

  // ---- memory: allocation, addresses, loads and stores (llvm_emit_memory.cc)

  void EmitAllocScope(const ir::BlockRealizeNode& r);

  // if (cond) return rc;  (continues in a fresh block)
  void ReturnIf(llvm::Value* cond, llvm::Value* rc, const char* name);

  llvm::Value* Buffer(const ir::Buffer& buf);

  llvm::Value* IndexOf(const std::vector<Expr>& indices, const std::string& buffer);

  // An index expression for which ranges_.NoWrapRange holds (and so for
  // each of its subexpressions), computed in i64.
  llvm::Value* Index64(const Expr& e);

  void EmitStore(const ir::BufferStoreNode& st);

  static Align ElemAlign(DataType t) { return Align(std::max(1, t.bytes())); }

  // The index of lane 0, computed in scalar mode.
  llvm::Value* ScalarIndex(const std::vector<Expr>& indices, const std::string& buffer);

  llvm::Value* ToMem(llvm::Value* v, DataType t) {
    return t.is_bool() ? b_.CreateZExt(v, lanes_ ? llvm::FixedVectorType::get(b_.getInt8Ty(), lanes_)
                                                 : static_cast<llvm::Type*>(b_.getInt8Ty()))
                       : v;
  }

  // ---- loops: serial, vectorized, parallel (llvm_emit_loops.cc) -------------

  void EmitFor(const ir::ForNode& f);

  // A counted loop over f's range, with f.loop_var bound in its body.
  void EmitSerial(const ir::ForNode& f);

  void EmitCountedLoop(const ir::VarNode* var, llvm::Value* begin, llvm::Value* end, ForKind kind,
                       const std::function<void(llvm::Value*)>& body, int vector_width = 0);

  void AttachLoopMetadata(llvm::BranchInst* back, ForKind kind, int vector_width);

  // The body runs once per group of `lanes` iterations, widened.
  void EmitVectorized(const ir::ForNode& f, int lanes, int64_t extent);

  void EmitParallel(const ir::ForNode& f);

  // ---- expressions (llvm_emit_expr.cc) --------------------------------------

  llvm::Value* CastInt(llvm::Value* v, DataType from, DataType to);

  llvm::Value* EmitExpr(const Expr& e);

  llvm::Value* EmitLoad(const ir::BufferLoadNode& l);

  llvm::Value* EmitCast(const ir::CastNode& c);

  llvm::Value* EmitBinary(const ir::BinaryNode& n, ExprKind kind);

  llvm::Value* IntBinary(ExprKind kind, bool is_signed, llvm::Value* a, llvm::Value* b);

  llvm::Value* FloatBinary(ExprKind kind, llvm::Value* a, llvm::Value* b);

  llvm::Value* Unary(llvm::Intrinsic::ID id, llvm::Value* v) {
    return b_.CreateUnaryIntrinsic(id, v);
  }

  // exp of a float scalar or vector: inline for float32
  // (codegen/llvm_emit_exp.cc), llvm.exp for the other types.
  llvm::Value* EmitExp(llvm::Value* x);

  // A libm function applied lane by lane (LLVM has no vector form of it).
  llvm::Value* LibmCall(const char* base_name, DataType t, const std::vector<llvm::Value*>& args);

  llvm::Type* WidenTo(llvm::Value* like, llvm::Type* elem) {
    if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return llvm::FixedVectorType::get(elem, v->getNumElements());
    return elem;
  }

  llvm::Value* EmitCall(const ir::CallNode& c);

  // T.if_then_else(c, a, b): only the taken branch is evaluated (it may load
  // out of bounds where the condition is false, as padding does).
  llvm::Value* EmitLazySelect(const ir::CallNode& c);

 public:
  std::unordered_set<const ir::BufferNode*> params_;

 private:
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::TargetMachine& tm_;
  llvm::IRBuilder<> b_;
  bool noalias_;
  std::string name_;
  Scope* cur_ = nullptr;
  int lanes_ = 0;                         // > 0 while widening a vectorized loop
  const ir::VarNode* vec_var_ = nullptr;  // its loop variable
  int parallel_count_ = 0;
  IndexRanges ranges_;  // of the loop variables being emitted
};

}  // namespace kiln::codegen
