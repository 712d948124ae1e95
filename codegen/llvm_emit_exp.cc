// exp of float32, scalar or vector, as inline arithmetic instead of
// llvm.exp: x86 has no vector exp instruction, so LLVM splits llvm.exp of a
// vector into one libm call per lane, and cannot vectorize a loop that calls
// it. An exp-bound kernel (softmax, attention, sigmoid) then runs at the
// speed of scalar expf calls whatever its schedule. Inline, exp vectorizes
// with the loop around it (Kiln's vectorize, or LLVM's loop vectorizer for a
// serial loop).
//
// Range reduction: x = n·ln2 + r with n = round(x·log2 e) and |r| <= ln2/2,
// ln2 split in a part exact in float (0.693359375) and the rest, so r keeps
// its bits; exp(r) by a degree-7 polynomial (the classic minimax fit for
// float, about 1 ulp on the reduced range); 2^n built in the exponent
// bits, in two halves so that n from -150 to 128 stays a normal float each
// and the product overflows to inf or underflows (gradually) to 0 as exp
// does. x is clamped to [-104, 89] first (exp is 0 or inf past those in
// float), and NaN is passed through. tests/codegen/exp_test.cc holds it to
// within 2 ulp of the C library across the float range.
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>

#include "codegen/llvm_emitter.h"

namespace kiln::codegen {

llvm::Value* CodeGen::EmitExp(llvm::Value* x) {
  // Other types keep llvm.exp: half is widened to float by LLVM, and double
  // would need a longer polynomial than this float fit.
  if (!x->getType()->getScalarType()->isFloatTy()) return Unary(llvm::Intrinsic::exp, x);
  llvm::Type* ft = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  llvm::Type* it = WidenTo(x, b_.getInt32Ty());
  auto ci = [&](int v) {
    return llvm::ConstantInt::get(it, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
  };

  llvm::Value* xc = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, c(-104.0));
  xc = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, xc, c(89.0));
  llvm::Value* n = Unary(llvm::Intrinsic::rint, b_.CreateFMul(xc, c(1.44269504088896341)));
  llvm::Value* r = b_.CreateFSub(xc, b_.CreateFMul(n, c(0.693359375)));
  r = b_.CreateFSub(r, b_.CreateFMul(n, c(-2.12194440e-4)));

  llvm::Value* p = c(1.9875691500e-4);
  for (double k :
       {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}) {
    p = b_.CreateFAdd(b_.CreateFMul(p, r), c(k));
  }
  llvm::Value* y = b_.CreateFAdd(b_.CreateFAdd(b_.CreateFMul(p, b_.CreateFMul(r, r)), r), c(1.0));

  llvm::Value* ni = b_.CreateFPToSI(n, it);
  llvm::Value* n1 = b_.CreateAShr(ni, ci(1));
  llvm::Value* n2 = b_.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* e) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, ci(127)), ci(23)), ft);
  };
  llvm::Value* out = b_.CreateFMul(b_.CreateFMul(y, pow2(n1)), pow2(n2));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, out);
}

}  // namespace kiln::codegen
