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
#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/llvm_emitter.h"

namespace kiln::codegen {

namespace {

bool IsCIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

void CodeGen::EmitKernel(const ir::PrimFunc& f) {
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

void CodeGen::SetAttributes(llvm::Function* fn) {
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
llvm::Function* CodeGen::MakeImpl(const std::string& name, const std::vector<llvm::Type*>& lead,
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

llvm::Type* CodeGen::ScalarType(DataType t) {
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

void CodeGen::EmitStmt(const Stmt& s) {
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

void CodeGen::EmitIf(const ir::IfThenElseNode& n) {
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

// if (cond) return rc;  (continues in a fresh block)
void CodeGen::ReturnIf(llvm::Value* cond, llvm::Value* rc, const char* name) {
  auto* fail = llvm::BasicBlock::Create(ctx_, name, cur_->fn);
  auto* ok = llvm::BasicBlock::Create(ctx_, "cont", cur_->fn);
  auto* weights = llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20);
  b_.CreateCondBr(cond, fail, ok, weights);
  b_.SetInsertPoint(fail);
  b_.CreateRet(rc);
  b_.SetInsertPoint(ok);
}

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
