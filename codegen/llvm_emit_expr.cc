// The CPU backend: expressions. Integer and float arithmetic with the
// interpreter's semantics, casts, intrinsics (LLVM intrinsics or libm
// calls lane by lane) and the lazy T.if_then_else.
#include "codegen/llvm_emitter.h"

#include <string>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>

#include "codegen/lane_analysis.h"

namespace kiln::codegen {

llvm::Value* CodeGen::CastInt(llvm::Value* v, DataType from, DataType to) {
  llvm::Type* ty = lanes_ && v->getType()->isVectorTy() ? ValueType(to) : ScalarType(to);
  if (v->getType() == ty) return v;
  return Pure({kVnIntCast, from.is_int() ? 1u : 0u, v, ty}, [&] {
    return from.is_int() ? b_.CreateSExtOrTrunc(v, ty) : b_.CreateZExtOrTrunc(v, ty);
  });
}

llvm::Value* CodeGen::EmitExpr(const Expr& e) {
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
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
    case ExprKind::kMin:
    case ExprKind::kMax:
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr:
      return EmitBinary(*e.as<ir::BinaryNode>(), e.kind());
  }
  Fail("internal error: an expression of unknown kind");
}

llvm::Value* CodeGen::EmitCast(const ir::CastNode& c) {
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

llvm::Value* CodeGen::EmitBinary(const ir::BinaryNode& n, ExprKind kind) {
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

llvm::Value* CodeGen::IntBinary(ExprKind kind, bool is_signed, llvm::Value* a, llvm::Value* b) {
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

llvm::Value* CodeGen::FloatBinary(ExprKind kind, llvm::Value* a, llvm::Value* b) {
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

// A libm function applied lane by lane (LLVM has no vector form of it).
llvm::Value* CodeGen::LibmCall(const char* base_name, DataType t, const std::vector<llvm::Value*>& args) {
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

llvm::Value* CodeGen::EmitCall(const ir::CallNode& c) {
  if (c.op == CallOp::kIfThenElse) return EmitLazySelect(c);
  std::vector<llvm::Value*> args;
  for (const auto& a : c.args) args.push_back(EmitExpr(a));
  const DataType t = c.args.empty() ? c.dtype : c.args[0].dtype();
  if (!t.is_floating()) Fail(std::string("T.") + ir::CallOpName(c.op) + " of a non-float argument");
  llvm::Value* x = args[0];
  auto one = [&] { return llvm::ConstantFP::get(x->getType(), 1.0); };
  switch (c.op) {
    case CallOp::kExp:
      return EmitExp(x);
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
      return b_.CreateFDiv(one(), b_.CreateFAdd(one(), EmitExp(b_.CreateFNeg(x))));
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
    case CallOp::kStorageSync:  // GPU only: lowering for a CPU never makes these
    case CallOp::kWarpShuffleDown:
    case CallOp::kCount_:
      break;
  }
  Fail(std::string("unsupported intrinsic T.") + ir::CallOpName(c.op));
}

// T.if_then_else(c, a, b): only the taken branch is evaluated (it may load
// out of bounds where the condition is false, as padding does).
llvm::Value* CodeGen::EmitLazySelect(const ir::CallNode& c) {
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

}  // namespace kiln::codegen
