// Lowered Kiln IR -> LLVM IR.
//
// The shape of what is emitted (kernel_abi.h is the contract with callers):
//  - `i32 @<name>(ptr %args)` loads each parameter's data pointer and calls
//    `@<name>.impl`, whose pointer parameters carry noalias (when the
//    function has "tir.noalias") and 64-byte alignment, so that LLVM may keep
//    values in registers across stores to other buffers.
//  - Every parallel loop becomes `i32 @<name>.parN(i64 begin, i64 end, ptr
//    closure)`, handed to kiln_parallel_for; it unpacks the captured values
//    and calls `@<name>.parN.impl`, again with noalias pointer parameters.
//  - A vectorized loop is widened here, not left to LLVM's loop vectorizer:
//    its body is evaluated once per group of lanes, with loads and stores
//    whose index moves by one element per lane as vector loads and stores,
//    a uniform index as a scalar load and broadcast, and any other index as a
//    gather or scatter. A T.if_then_else whose condition is the same for
//    every lane is one branch per group of lanes; a body with one whose
//    condition differs between lanes keeps a scalar loop with a vectorize
//    hint instead (each lane may evaluate only its own branch).
//  - Allocated buffers up to 64 KiB live on the stack (allocas in the entry
//    block, so SROA can turn small accumulators into registers); larger ones
//    are heap-allocated on scope entry and freed on exit. A failed allocation
//    or a failed parallel body makes the kernel return non-zero.
//  - Loop counters are i64, and a buffer index whose arithmetic is proven
//    not to wrap (index_range.h) is computed in i64 with no-wrap flags;
//    other integer arithmetic keeps its own type.
//  - Pure integer values (index arithmetic, casts, splats, addresses) are
//    emitted once where they dominate and reused (value_numbering.h), so an
//    unrolled body does not restate every index in full.
//  - Semantics follow the reference interpreter: integer arithmetic wraps,
//    floats are rounded to their type at every operation (multiply-add
//    contraction is allowed, as in TVM), float-to-int casts saturate.
#include "codegen/llvm_codegen.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/index_range.h"
#include "codegen/llvm_backend.h"
#include "codegen/value_numbering.h"
#include "ir/substitute.h"

namespace kiln::codegen {
namespace {

using ir::CallOp;
using ir::DataType;
using ir::Expr;
using ir::ExprKind;
using ir::ForKind;
using ir::Stmt;

constexpr int64_t kMaxStackBytes = 64 * 1024;
constexpr int kMaxVectorLanes = 64;

[[noreturn]] void Fail(const std::string& msg) { throw BuildError("CPU backend: " + msg); }

bool IsCIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Visits every variable and buffer an expression or statement mentions.
struct UseCollector {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;
  std::unordered_set<const ir::VarNode*> seen_vars;
  std::unordered_set<const ir::BufferNode*> seen_buffers;

  void AddBuffer(const ir::Buffer& b) {
    if (seen_buffers.insert(b.get()).second) buffers.push_back(b);
  }
  void Visit(const Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
      case ExprKind::kVar: {
        const auto* v = e.as<ir::VarNode>();
        if (seen_vars.insert(v).second) vars.push_back(v);
        return;
      }
      case ExprKind::kNot:
        return Visit(e.as<ir::NotNode>()->a);
      case ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        Visit(s->condition);
        Visit(s->true_value);
        return Visit(s->false_value);
      }
      case ExprKind::kCast:
        return Visit(e.as<ir::CastNode>()->value);
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<ir::BufferLoadNode>();
        AddBuffer(l->buffer);
        for (const auto& i : l->indices) Visit(i);
        return;
      }
      case ExprKind::kCall:
        for (const auto& a : e.as<ir::CallNode>()->args) Visit(a);
        return;
      case ExprKind::kRamp:
        Visit(e.as<ir::RampNode>()->base);
        return Visit(e.as<ir::RampNode>()->stride);
      case ExprKind::kBroadcast:
        return Visit(e.as<ir::BroadcastNode>()->value);
      default:
        if (const auto* b = e.as<ir::BinaryNode>()) {
          Visit(b->a);
          Visit(b->b);
        }
        return;
    }
  }
  void Visit(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case ir::StmtKind::kFor: {
        const auto* f = s.as<ir::ForNode>();
        Visit(f->min);
        Visit(f->extent);
        return Visit(f->body);
      }
      case ir::StmtKind::kBlockRealize: {
        const auto* r = s.as<ir::BlockRealizeNode>();
        for (const auto& b : r->block->alloc_buffers) AddBuffer(b);
        return Visit(r->block->body);
      }
      case ir::StmtKind::kBufferStore: {
        const auto* st = s.as<ir::BufferStoreNode>();
        AddBuffer(st->buffer);
        Visit(st->value);
        for (const auto& i : st->indices) Visit(i);
        return;
      }
      case ir::StmtKind::kSeqStmt:
        for (const auto& x : s.as<ir::SeqStmtNode>()->seq) Visit(x);
        return;
      case ir::StmtKind::kIfThenElse: {
        const auto* i = s.as<ir::IfThenElseNode>();
        Visit(i->condition);
        Visit(i->then_case);
        return Visit(i->else_case);
      }
      case ir::StmtKind::kEvaluate:
        return Visit(s.as<ir::EvaluateNode>()->value);
    }
  }
};

bool UsesVar(const Expr& e, const ir::VarNode* v) {
  return ir::UsesVar(e, [v](const ir::VarNode* u) { return u == v; });
}

// Whether a vectorized loop over `lane_var` must stay a scalar loop: its
// body has a statement the widened form cannot express (an if, an
// allocation scope), or a T.if_then_else whose condition differs between
// lanes (each lane may evaluate only its own branch: padding guards loads
// that would be out of bounds). A condition that is the same for every lane
// (the usual padding test on a spatial index, with the lanes over channels)
// becomes one branch per group of lanes.
bool NeedsScalarLoop(const Expr& e, const ir::VarNode* lane_var);
bool NeedsScalarLoop(const Stmt& s, const ir::VarNode* lane_var) {
  bool found = false;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (!st.defined() || found) return;
    if (const auto* store = st.as<ir::BufferStoreNode>()) {
      found = NeedsScalarLoop(store->value, lane_var);
      for (const auto& i : store->indices) found = found || NeedsScalarLoop(i, lane_var);
    } else if (const auto* q = st.as<ir::SeqStmtNode>()) {
      for (const auto& x : q->seq) walk(x);
    } else if (const auto* f = st.as<ir::ForNode>()) {
      walk(f->body);
    } else if (st.as<ir::IfThenElseNode>() || st.as<ir::BlockRealizeNode>()) {
      found = true;
    }
  };
  walk(s);
  return found;
}
bool NeedsScalarLoop(const Expr& e, const ir::VarNode* lane_var) {
  if (!e.defined()) return false;
  auto any = [&](const std::vector<Expr>& v) {
    return std::any_of(v.begin(), v.end(), [&](const Expr& a) { return NeedsScalarLoop(a, lane_var); });
  };
  if (const auto* c = e.as<ir::CallNode>()) {
    if (c->op == CallOp::kIfThenElse && UsesVar(c->args[0], lane_var)) return true;
    return any(c->args);
  }
  if (const auto* b = e.as<ir::BinaryNode>())
    return NeedsScalarLoop(b->a, lane_var) || NeedsScalarLoop(b->b, lane_var);
  if (const auto* n = e.as<ir::NotNode>()) return NeedsScalarLoop(n->a, lane_var);
  if (const auto* s = e.as<ir::SelectNode>())
    return NeedsScalarLoop(s->condition, lane_var) || NeedsScalarLoop(s->true_value, lane_var) ||
           NeedsScalarLoop(s->false_value, lane_var);
  if (const auto* c = e.as<ir::CastNode>()) return NeedsScalarLoop(c->value, lane_var);
  if (const auto* l = e.as<ir::BufferLoadNode>()) return any(l->indices);
  return false;
}

// The constant per-lane step of `index` in `v` when index is affine in v
// with a constant coefficient; nullopt otherwise (the index needs a gather).
std::optional<int64_t> LaneStride(const Expr& e, const ir::VarNode* v) {
  switch (e.kind()) {
    case ExprKind::kVar:
      return e.get() == v ? 1 : 0;
    case ExprKind::kIntImm:
      return 0;
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      const auto* b = e.as<ir::BinaryNode>();
      auto x = LaneStride(b->a, v), y = LaneStride(b->b, v);
      if (!x || !y) return std::nullopt;
      return e.kind() == ExprKind::kAdd ? *x + *y : *x - *y;
    }
    case ExprKind::kMul: {
      const auto* b = e.as<ir::BinaryNode>();
      auto x = LaneStride(b->a, v), y = LaneStride(b->b, v);
      if (!x || !y) return std::nullopt;
      if (*x == 0 && *y == 0) return 0;
      if (const auto* c = b->b.as<ir::IntImmNode>(); c && *y == 0) return *x * c->value;
      if (const auto* c = b->a.as<ir::IntImmNode>(); c && *x == 0) return *y * c->value;
      return std::nullopt;
    }
    case ExprKind::kCast: {
      const auto* c = e.as<ir::CastNode>();
      if (!c->dtype.is_integer() || !c->value.dtype().is_integer()) return std::nullopt;
      auto x = LaneStride(c->value, v);
      if (x && *x == 0) return 0;
      // Widening keeps the stride (indices do not wrap in valid programs).
      if (x && c->dtype.bits() >= c->value.dtype().bits()) return x;
      return std::nullopt;
    }
    default:
      if (!UsesVar(e, v)) return 0;
      return std::nullopt;
  }
}

class CodeGen {
 public:
  CodeGen(llvm::LLVMContext& ctx, llvm::Module& m, llvm::TargetMachine& tm, bool noalias)
      : ctx_(ctx), m_(m), tm_(tm), b_(ctx), noalias_(noalias) {
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  void EmitKernel(const ir::PrimFunc& f) {
    name_ = f.name;
    for (const auto& p : f.params) {
      for (const auto& dim : p->shape)
        if (!dim.as<ir::IntImmNode>())
          Fail("parameter '" + p.name() + "' has a symbolic shape; the CPU kernel ABI passes "
               "only data pointers, so every extent must be a constant");
    }
    // The impl function: one noalias pointer per parameter.
    std::vector<Capture> params;
    for (const auto& p : f.params) params.push_back(Capture{nullptr, p});
    llvm::Function* impl = MakeImpl(name_ + ".impl", {}, params);
    {
      FunctionScope scope(this, impl);
      auto arg = impl->arg_begin();
      for (const auto& p : f.params) cur_->buffers[p.get()] = &*arg++;
      EmitStmt(f.body);
      b_.CreateRet(b_.getInt32(0));
    }

    // The exported entry: unpacks args[] and calls the impl.
    auto* entry_ty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy()}, false);
    llvm::Function* entry =
        llvm::Function::Create(entry_ty, llvm::Function::ExternalLinkage, name_, m_);
    SetAttributes(entry);
    auto* bb = llvm::BasicBlock::Create(ctx_, "entry", entry);
    b_.SetInsertPoint(bb);
    std::vector<llvm::Value*> args;
    llvm::Value* argv = entry->getArg(0);
    for (size_t i = 0; i < f.params.size(); ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), argv, i);
      args.push_back(b_.CreateLoad(b_.getPtrTy(), slot));
    }
    b_.CreateRet(b_.CreateCall(impl, args));
  }

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

  void SetAttributes(llvm::Function* fn) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (!tm_.getTargetCPU().empty()) fn->addFnAttr("target-cpu", tm_.getTargetCPU());
    if (!tm_.getTargetFeatureString().empty())
      fn->addFnAttr("target-features", tm_.getTargetFeatureString());
    // LLVM's own vectorizer (loops we could not widen, copies of caches)
    // otherwise picks 256-bit vectors on AVX-512 hosts.
    // (The subtarget knows the CPU's implied features, not only -mattr's.)
    if (tm_.getMCSubtargetInfo()->checkFeatures("+avx512f")) fn->addFnAttr("prefer-vector-width", "512");
  }

  // `i32 name(lead..., captures...)`, internal, with noalias pointers.
  llvm::Function* MakeImpl(const std::string& name, const std::vector<llvm::Type*>& lead,
                           const std::vector<Capture>& captures) {
    std::vector<llvm::Type*> types = lead;
    for (const auto& c : captures) types.push_back(c.var ? ScalarType(c.var->dtype) : b_.getPtrTy());
    auto* ty = llvm::FunctionType::get(b_.getInt32Ty(), types, false);
    llvm::Function* fn = llvm::Function::Create(ty, llvm::Function::InternalLinkage, name, m_);
    SetAttributes(fn);
    for (size_t i = 0; i < captures.size(); ++i) {
      if (captures[i].var) continue;
      const unsigned arg = static_cast<unsigned>(lead.size() + i);
      // Allocated buffers are distinct objects; parameters are distinct when
      // the function says so. All are 64-byte aligned (kernel_abi.h, allocas
      // and aligned_alloc alike).
      if (noalias_ || !params_.count(captures[i].buffer.get()))
        fn->addParamAttr(arg, llvm::Attribute::NoAlias);
      fn->addParamAttr(arg, llvm::Attribute::NoCapture);
      fn->addParamAttr(arg, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    }
    return fn;
  }

  // ---- types ---------------------------------------------------------------

  llvm::Type* ScalarType(DataType t) {
    if (t.is_vector()) return llvm::FixedVectorType::get(ScalarType(t.element_of()), t.lanes());
    switch (t.code()) {
      case DataType::Code::kBool:
        return b_.getInt1Ty();
      case DataType::Code::kInt:
      case DataType::Code::kUInt:
        return b_.getIntNTy(t.bits());
      case DataType::Code::kFloat:
        if (t.bits() == 16) return b_.getHalfTy();
        if (t.bits() == 32) return b_.getFloatTy();
        if (t.bits() == 64) return b_.getDoubleTy();
        break;
      case DataType::Code::kBFloat:
        Fail("bfloat16 arithmetic is not supported by the CPU backend (use float32, or the CUDA target)");
      case DataType::Code::kHandle:
        return b_.getPtrTy();
    }
    Fail("unsupported data type " + t.str());
  }
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

  // ---- statements ----------------------------------------------------------

  void EmitStmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case ir::StmtKind::kFor:
        return EmitFor(*s.as<ir::ForNode>());
      case ir::StmtKind::kBlockRealize:
        return EmitAllocScope(*s.as<ir::BlockRealizeNode>());
      case ir::StmtKind::kBufferStore:
        return EmitStore(*s.as<ir::BufferStoreNode>());
      case ir::StmtKind::kSeqStmt:
        for (const auto& x : s.as<ir::SeqStmtNode>()->seq) EmitStmt(x);
        return;
      case ir::StmtKind::kIfThenElse:
        return EmitIf(*s.as<ir::IfThenElseNode>());
      case ir::StmtKind::kEvaluate:
        return;  // lowered Evaluate nodes have no effect (lower.h)
    }
  }

  void EmitIf(const ir::IfThenElseNode& n) {
    if (lanes_) Fail("an if inside a vectorized loop (lowering should have demoted the loop)");
    llvm::Value* cond = EmitExpr(n.condition);
    llvm::Function* fn = cur_->fn;
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn);
    auto* else_bb = n.else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn) : nullptr;
    auto* done = llvm::BasicBlock::Create(ctx_, "endif", fn);
    b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
    b_.SetInsertPoint(then_bb);
    {
      ValueRegion region(this);
      EmitStmt(n.then_case);
    }
    b_.CreateBr(done);
    if (else_bb) {
      b_.SetInsertPoint(else_bb);
      ValueRegion region(this);
      EmitStmt(n.else_case);
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
  }

  void EmitAllocScope(const ir::BlockRealizeNode& r) {
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

  // if (cond) return rc;  (continues in a fresh block)
  void ReturnIf(llvm::Value* cond, llvm::Value* rc, const char* name) {
    auto* fail = llvm::BasicBlock::Create(ctx_, name, cur_->fn);
    auto* ok = llvm::BasicBlock::Create(ctx_, "cont", cur_->fn);
    auto* weights = llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20);
    b_.CreateCondBr(cond, fail, ok, weights);
    b_.SetInsertPoint(fail);
    b_.CreateRet(rc);
    b_.SetInsertPoint(ok);
  }

  llvm::Value* Buffer(const ir::Buffer& buf) {
    auto it = cur_->buffers.find(buf.get());
    if (it == cur_->buffers.end())
      Fail("buffer '" + buf.name() + "' is used outside the scope that allocates it");
    return it->second;
  }

  llvm::Value* IndexOf(const std::vector<Expr>& indices, const std::string& buffer) {
    if (indices.size() != 1)
      Fail("access to '" + buffer + "' has " + std::to_string(indices.size()) +
           " indices; lowered buffers are flat (one index)");
    if (!lanes_ && ranges_.NoWrapRange(indices[0])) return Index64(indices[0]);
    llvm::Value* i = EmitExpr(indices[0]);
    return CastInt(i, indices[0].dtype(), DataType::Int64());
  }

  // An index expression for which ranges_.NoWrapRange holds (and so for
  // each of its subexpressions), computed in i64.
  llvm::Value* Index64(const Expr& e) {
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

  void EmitStore(const ir::BufferStoreNode& st) {
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

  using Align = llvm::Align;
  static Align ElemAlign(DataType t) { return Align(std::max(1, t.bytes())); }

  // The index of lane 0, computed in scalar mode.
  llvm::Value* ScalarIndex(const std::vector<Expr>& indices, const std::string& buffer) {
    const int saved = lanes_;
    lanes_ = 0;
    llvm::Value* i = IndexOf(indices, buffer);
    lanes_ = saved;
    return i;
  }

  llvm::Value* ToMem(llvm::Value* v, DataType t) {
    return t.is_bool() ? b_.CreateZExt(v, lanes_ ? llvm::FixedVectorType::get(b_.getInt8Ty(), lanes_)
                                                 : static_cast<llvm::Type*>(b_.getInt8Ty()))
                       : v;
  }

  void EmitFor(const ir::ForNode& f) {
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
  void EmitSerial(const ir::ForNode& f) {
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

  void EmitCountedLoop(const ir::VarNode* var, llvm::Value* begin, llvm::Value* end, ForKind kind,
                       const std::function<void(llvm::Value*)>& body, int vector_width = 0) {
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

  void AttachLoopMetadata(llvm::BranchInst* back, ForKind kind, int vector_width) {
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
  void EmitVectorized(const ir::ForNode& f, int lanes, int64_t extent) {
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

  void EmitParallel(const ir::ForNode& f) {
    // What the body needs from here: variables and buffers in scope.
    UseCollector uses;
    uses.Visit(f.body);
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

  // ---- expressions ---------------------------------------------------------

  llvm::Value* CastInt(llvm::Value* v, DataType from, DataType to) {
    llvm::Type* ty = lanes_ && v->getType()->isVectorTy() ? ValueType(to) : ScalarType(to);
    if (v->getType() == ty) return v;
    return Pure({kVnIntCast, from.is_int() ? 1u : 0u, v, ty}, [&] {
      return from.is_int() ? b_.CreateSExtOrTrunc(v, ty) : b_.CreateZExtOrTrunc(v, ty);
    });
  }

  llvm::Value* EmitExpr(const Expr& e) {
    if (!e.defined()) Fail("an undefined expression");
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        const auto* n = e.as<ir::IntImmNode>();
        llvm::Type* ty = ScalarType(n->dtype.element_of());
        return Splat(llvm::ConstantInt::get(ty, static_cast<uint64_t>(n->value), n->dtype.is_int()));
      }
      case ExprKind::kFloatImm: {
        const auto* n = e.as<ir::FloatImmNode>();
        return Splat(llvm::ConstantFP::get(ScalarType(n->dtype.element_of()), n->value));
      }
      case ExprKind::kStringImm:
        Fail("a string constant used as a value");
      case ExprKind::kVar: {
        const auto* v = e.as<ir::VarNode>();
        auto it = cur_->vars.find(v);
        if (it == cur_->vars.end()) Fail("variable '" + v->name + "' is used outside its loop");
        if (lanes_ && v == vec_var_) {
          llvm::Value* lane0 = it->second;
          return Pure({kVnLaneIndex, static_cast<uint64_t>(lanes_), lane0, nullptr}, [&] {
            std::vector<llvm::Constant*> steps;
            for (int k = 0; k < lanes_; ++k)
              steps.push_back(llvm::ConstantInt::get(lane0->getType(), k));
            return b_.CreateAdd(b_.CreateVectorSplat(lanes_, lane0),
                                llvm::ConstantVector::get(steps));
          });
        }
        return Splat(it->second);
      }
      case ExprKind::kNot: {
        llvm::Value* a = EmitExpr(e.as<ir::NotNode>()->a);
        return Pure({kVnNot, 0, a, nullptr}, [&] { return b_.CreateNot(a); });
      }
      case ExprKind::kSelect: {
        const auto* s = e.as<ir::SelectNode>();
        llvm::Value* c = EmitExpr(s->condition);
        llvm::Value* t = EmitExpr(s->true_value);
        llvm::Value* f = EmitExpr(s->false_value);
        if (lanes_) c = Splat(c);
        return b_.CreateSelect(c, t, f);
      }
      case ExprKind::kCast:
        return EmitCast(*e.as<ir::CastNode>());
      case ExprKind::kBufferLoad:
        return EmitLoad(*e.as<ir::BufferLoadNode>());
      case ExprKind::kCall:
        return EmitCall(*e.as<ir::CallNode>());
      case ExprKind::kRamp: {
        if (lanes_) Fail("a vector ramp inside a vectorized loop");
        const auto* r = e.as<ir::RampNode>();
        llvm::Value* base = EmitExpr(r->base);
        llvm::Value* stride = EmitExpr(r->stride);
        llvm::Value* out = llvm::PoisonValue::get(ScalarType(r->dtype));
        for (int k = 0; k < r->lanes; ++k) {
          llvm::Value* lane = b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantInt::get(stride->getType(), k)));
          out = b_.CreateInsertElement(out, lane, static_cast<uint64_t>(k));
        }
        return out;
      }
      case ExprKind::kBroadcast: {
        if (lanes_) Fail("a vector broadcast inside a vectorized loop");
        const auto* n = e.as<ir::BroadcastNode>();
        return b_.CreateVectorSplat(n->lanes, EmitExpr(n->value));
      }
      default:
        return EmitBinary(*e.as<ir::BinaryNode>(), e.kind());
    }
  }

  llvm::Value* EmitLoad(const ir::BufferLoadNode& l) {
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

  llvm::Value* EmitCast(const ir::CastNode& c) {
    const DataType from = c.value.dtype().element_of(), to = c.dtype.element_of();
    llvm::Value* v = EmitExpr(c.value);
    llvm::Type* ty = lanes_ ? ValueType(to) : ScalarType(c.dtype);
    if (from == to) return v;
    if (to.is_bool()) {
      if (from.is_floating()) {
        // As the interpreter: truncate toward zero (NaN to 0), then test.
        llvm::Type* i8 = lanes_ ? ValueType(DataType::Int(8)) : ScalarType(DataType::Int(8, c.dtype.lanes()));
        v = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i8, v->getType()}, {v});
      }
      return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from.is_bool()) return to.is_floating() ? b_.CreateUIToFP(v, ty) : b_.CreateZExt(v, ty);
    if (from.is_integer() && to.is_integer()) return CastInt(v, from, to);
    if (from.is_integer()) return from.is_int() ? b_.CreateSIToFP(v, ty) : b_.CreateUIToFP(v, ty);
    if (to.is_integer())
      return b_.CreateIntrinsic(to.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
                                {ty, v->getType()}, {v});
    return b_.CreateFPCast(v, ty);
  }

  llvm::Value* EmitBinary(const ir::BinaryNode& n, ExprKind kind) {
    llvm::Value* a = EmitExpr(n.a);
    llvm::Value* b = EmitExpr(n.b);
    const DataType t = n.a.dtype().element_of();
    if (a->getType() != b->getType()) {  // defensive: operands of mixed widths
      if (!t.is_integer())
        Fail("operands of different types: " + n.a.dtype().str() + " and " + n.b.dtype().str());
      b = CastInt(b, n.b.dtype().element_of(), t);
    }
    if (t.is_floating()) return FloatBinary(kind, a, b);
    const bool is_signed = t.is_int();
    const uint64_t op = static_cast<uint64_t>(kind) << 1 | (is_signed ? 1 : 0);
    return Pure({kVnBinary, op, a, b}, [&] { return IntBinary(kind, is_signed, a, b); });
  }

  llvm::Value* IntBinary(ExprKind kind, bool is_signed, llvm::Value* a, llvm::Value* b) {
    switch (kind) {
      case ExprKind::kAdd: return b_.CreateAdd(a, b);
      case ExprKind::kSub: return b_.CreateSub(a, b);
      case ExprKind::kMul: return b_.CreateMul(a, b);
      case ExprKind::kDiv: return is_signed ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
      case ExprKind::kMod: return is_signed ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        if (!is_signed) return kind == ExprKind::kFloorDiv ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
        // Round toward -inf: adjust where the remainder's sign differs from b's.
        llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
        llvm::Value* r = b_.CreateSRem(a, b);
        llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                           b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
        if (kind == ExprKind::kFloorMod) return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
        llvm::Value* q = b_.CreateSDiv(a, b);
        return b_.CreateSelect(adjust, b_.CreateSub(q, llvm::ConstantInt::get(q->getType(), 1)), q);
      }
      case ExprKind::kMin:
        return b_.CreateSelect(is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
      case ExprKind::kMax:
        return b_.CreateSelect(is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
      case ExprKind::kEQ: return b_.CreateICmpEQ(a, b);
      case ExprKind::kNE: return b_.CreateICmpNE(a, b);
      case ExprKind::kLT: return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case ExprKind::kLE: return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
      case ExprKind::kGT: return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
      case ExprKind::kGE: return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
      case ExprKind::kAnd: return b_.CreateAnd(a, b);
      case ExprKind::kOr: return b_.CreateOr(a, b);
      default:
        Fail("unsupported integer operator");
    }
  }

  llvm::Value* FloatBinary(ExprKind kind, llvm::Value* a, llvm::Value* b) {
    switch (kind) {
      case ExprKind::kAdd: return b_.CreateFAdd(a, b);
      case ExprKind::kSub: return b_.CreateFSub(a, b);
      case ExprKind::kMul: return b_.CreateFMul(a, b);
      case ExprKind::kDiv: return b_.CreateFDiv(a, b);
      case ExprKind::kMod: return b_.CreateFRem(a, b);
      case ExprKind::kFloorDiv:
        return Unary(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
      case ExprKind::kFloorMod:
        return b_.CreateFSub(a, b_.CreateFMul(Unary(llvm::Intrinsic::floor, b_.CreateFDiv(a, b)), b));
      // As the interpreter (and TVM's CPU code): min(a, b) = a < b ? a : b.
      case ExprKind::kMin: return b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);
      case ExprKind::kMax: return b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
      case ExprKind::kEQ: return b_.CreateFCmpOEQ(a, b);
      case ExprKind::kNE: return b_.CreateFCmpUNE(a, b);
      case ExprKind::kLT: return b_.CreateFCmpOLT(a, b);
      case ExprKind::kLE: return b_.CreateFCmpOLE(a, b);
      case ExprKind::kGT: return b_.CreateFCmpOGT(a, b);
      case ExprKind::kGE: return b_.CreateFCmpOGE(a, b);
      default:
        Fail("unsupported float operator");
    }
  }

  llvm::Value* Unary(llvm::Intrinsic::ID id, llvm::Value* v) {
    return b_.CreateUnaryIntrinsic(id, v);
  }

  // A libm function applied lane by lane (LLVM has no vector form of it).
  llvm::Value* LibmCall(const char* base_name, DataType t, const std::vector<llvm::Value*>& args) {
    const DataType et = t.element_of();
    if (et.bits() == 16) {  // compute half in float, as the C library has no half math
      std::vector<llvm::Value*> wide;
      for (auto* a : args) wide.push_back(b_.CreateFPExt(a, WidenTo(a, b_.getFloatTy())));
      llvm::Value* r = LibmCall(base_name, DataType::Float(32, t.lanes()), wide);
      return b_.CreateFPTrunc(r, args[0]->getType());
    }
    const std::string name = std::string(base_name) + (et.bits() == 32 ? "f" : "");
    llvm::Type* sty = ScalarType(et);
    std::vector<llvm::Type*> types(args.size(), sty);
    llvm::FunctionCallee fn = m_.getOrInsertFunction(name, llvm::FunctionType::get(sty, types, false));
    auto* vty = llvm::dyn_cast<llvm::FixedVectorType>(args[0]->getType());
    if (!vty) return b_.CreateCall(fn, args);
    llvm::Value* out = llvm::PoisonValue::get(vty);
    for (unsigned k = 0; k < vty->getNumElements(); ++k) {
      std::vector<llvm::Value*> lane;
      for (auto* a : args) lane.push_back(b_.CreateExtractElement(a, static_cast<uint64_t>(k)));
      out = b_.CreateInsertElement(out, b_.CreateCall(fn, lane), static_cast<uint64_t>(k));
    }
    return out;
  }

  llvm::Type* WidenTo(llvm::Value* like, llvm::Type* elem) {
    if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
      return llvm::FixedVectorType::get(elem, v->getNumElements());
    return elem;
  }

  llvm::Value* EmitCall(const ir::CallNode& c) {
    if (c.op == CallOp::kIfThenElse) return EmitLazySelect(c);
    std::vector<llvm::Value*> args;
    for (const auto& a : c.args) args.push_back(EmitExpr(a));
    const DataType t = c.args.empty() ? c.dtype : c.args[0].dtype();
    if (!t.is_floating()) Fail(std::string("T.") + ir::CallOpName(c.op) + " of a non-float argument");
    llvm::Value* x = args[0];
    auto one = [&] { return llvm::ConstantFP::get(x->getType(), 1.0); };
    switch (c.op) {
      case CallOp::kExp: return Unary(llvm::Intrinsic::exp, x);
      case CallOp::kExp2: return Unary(llvm::Intrinsic::exp2, x);
      case CallOp::kExp10: return LibmCall("exp10", t, args);
      case CallOp::kLog: return Unary(llvm::Intrinsic::log, x);
      case CallOp::kLog2: return Unary(llvm::Intrinsic::log2, x);
      case CallOp::kLog10: return Unary(llvm::Intrinsic::log10, x);
      case CallOp::kLog1p: return LibmCall("log1p", t, args);
      case CallOp::kSqrt: return Unary(llvm::Intrinsic::sqrt, x);
      case CallOp::kRsqrt: return b_.CreateFDiv(one(), Unary(llvm::Intrinsic::sqrt, x));
      case CallOp::kTanh: return LibmCall("tanh", t, args);
      case CallOp::kSigmoid:
        return b_.CreateFDiv(one(), b_.CreateFAdd(one(), Unary(llvm::Intrinsic::exp, b_.CreateFNeg(x))));
      case CallOp::kPow: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, args[1]);
      case CallOp::kFabs: return Unary(llvm::Intrinsic::fabs, x);
      case CallOp::kErf: return LibmCall("erf", t, args);
      case CallOp::kFloor: return Unary(llvm::Intrinsic::floor, x);
      case CallOp::kCeil: return Unary(llvm::Intrinsic::ceil, x);
      case CallOp::kRound: return Unary(llvm::Intrinsic::nearbyint, x);
      case CallOp::kTrunc: return Unary(llvm::Intrinsic::trunc, x);
      case CallOp::kSin: return Unary(llvm::Intrinsic::sin, x);
      case CallOp::kCos: return Unary(llvm::Intrinsic::cos, x);
      case CallOp::kTan: return LibmCall("tan", t, args);
      case CallOp::kAtan: return LibmCall("atan", t, args);
      case CallOp::kIsNan: return b_.CreateFCmpUNO(x, x);
      case CallOp::kIsInf:
        return b_.CreateFCmpOEQ(Unary(llvm::Intrinsic::fabs, x), llvm::ConstantFP::getInfinity(x->getType()));
      case CallOp::kIsFinite:
        return b_.CreateFCmpOLT(Unary(llvm::Intrinsic::fabs, x), llvm::ConstantFP::getInfinity(x->getType()));
      case CallOp::kFmod: return b_.CreateFRem(x, args[1]);
      case CallOp::kIfThenElse:
      case CallOp::kStorageSync:  // GPU only: lowering for a CPU never makes one
      case CallOp::kCount_:
        break;
    }
    Fail(std::string("unsupported intrinsic T.") + ir::CallOpName(c.op));
  }

  // T.if_then_else(c, a, b): only the taken branch is evaluated (it may load
  // out of bounds where the condition is false, as padding does).
  llvm::Value* EmitLazySelect(const ir::CallNode& c) {
    llvm::Value* cond;
    if (lanes_) {
      // In a widened loop the condition is the same for every lane
      // (NeedsScalarLoop): lane 0's scalar value decides for the group.
      if (UsesVar(c.args[0], vec_var_))
        Fail("internal error: T.if_then_else whose condition differs between lanes, widened");
      const int saved = lanes_;
      lanes_ = 0;
      cond = EmitExpr(c.args[0]);
      lanes_ = saved;
    } else {
      cond = EmitExpr(c.args[0]);
    }
    llvm::Function* fn = cur_->fn;
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "ite.then", fn);
    auto* else_bb = llvm::BasicBlock::Create(ctx_, "ite.else", fn);
    auto* done = llvm::BasicBlock::Create(ctx_, "ite.end", fn);
    b_.CreateCondBr(cond, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* t;
    {
      ValueRegion region(this);
      t = Splat(EmitExpr(c.args[1]));
    }
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(else_bb);
    llvm::Value* f;
    {
      ValueRegion region(this);
      f = Splat(EmitExpr(c.args[2]));
    }
    llvm::BasicBlock* else_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode* phi = b_.CreatePHI(t->getType(), 2);
    phi->addIncoming(t, then_end);
    phi->addIncoming(f, else_end);
    return phi;
  }

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

}  // namespace

std::unique_ptr<llvm::Module> EmitModule(const ir::PrimFunc& lowered, llvm::LLVMContext& ctx,
                                         llvm::TargetMachine& tm) {
  if (!IsCIdentifier(lowered.name))
    Fail("kernel name '" + lowered.name + "' is not a C identifier (letters, digits, '_')");
  auto module = std::make_unique<llvm::Module>("kiln." + lowered.name, ctx);
  module->setTargetTriple(tm.getTargetTriple().str());
  module->setDataLayout(tm.createDataLayout());
  bool noalias = false;
  if (auto it = lowered.attrs.find("tir.noalias"); it != lowered.attrs.end())
    if (const auto* v = it->second.as<ir::IntImmNode>()) noalias = v->value != 0;
  CodeGen cg(ctx, *module, tm, noalias);
  for (const auto& p : lowered.params) cg.params_.insert(p.get());
  cg.EmitKernel(lowered);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module, &os))
    throw BuildError("CPU backend: internal error, the emitted LLVM IR does not verify: " + os.str());
  return module;
}

}  // namespace kiln::codegen
