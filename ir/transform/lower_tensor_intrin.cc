// LowerTensorIntrin: each block Tensorize marked (annotation
// "kiln.tensor_intrin", ir/schedule/primitive/tensorize.cc) loses its loops
// and inner block to the form tensor_intrin.h describes:
//   for tc in T.serial(1, annotations={"kiln.tensor_intrin": "<intrinsic>"}):
//       T.evaluate(X[first]); T.evaluate(X[last]); ...   # per operand
// The loads name each operand tile's first element (where the fragment or
// pointer points) and its last one. The pair is what survives the rest of
// lowering intact: the loads are compacted and flattened like any other, the
// allocation planner and the compaction see the whole tile between them
// (the loop keeps its annotation, so neither Simplify nor UnrollLoops
// removes it), and after flattening the two offsets give the backend the
// leading dimension ((last - first - (cols - 1)) / (rows - 1)) and, for a
// fragment buffer, which 16x16 fragment it is (codegen/cuda/cuda_wmma.cc).
//
// The block is matched against its intrinsic again here (a primitive
// applied after Tensorize may have changed it); a block that no longer
// matches is an IRError naming it.
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/tensor_intrin/tensor_intrin.h"
#include "ir/tensor_intrin/tensor_intrin_match.h"
#include "ir/transform/passes.h"

namespace kiln::ir::transform {
namespace {

class TensorIntrinLowerer : public IRMutator {
 protected:
  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    const BlockNode& b = *op->block.get();
    auto it = b.annotations.find(kTensorIntrinAttr);
    if (it == b.annotations.end()) return IRMutator::VisitBlockRealize(s, op);
    const auto* name = it->second.as<StringImmNode>();
    const TensorIntrin* intrin = name == nullptr ? nullptr : FindTensorIntrin(name->value);
    if (intrin == nullptr) {
      throw IRError("block '" + b.name + "' is marked " + kTensorIntrinAttr +
                    " with no registered tensor intrinsic");
    }
    std::string why;
    auto match = MatchTensorIntrin(*op, *intrin, &why);
    if (!match) {
      throw IRError("block '" + b.name + "' was tensorized with " + intrin->name +
                    " but no longer matches it: " + why);
    }
    std::vector<Stmt> loads;
    for (const TensorIntrinOperand& o : match->operands) {
      std::vector<Expr> last;
      for (size_t k = 0; k < o.origin.size(); ++k) {
        last.push_back(o.extent[k] == 1 ? o.origin[k]
                                        : Add(o.origin[k], IntImm(o.extent[k] - 1,
                                                                  o.origin[k].dtype())));
      }
      loads.push_back(Evaluate(BufferLoad(o.buffer, o.origin)));
      loads.push_back(Evaluate(BufferLoad(o.buffer, last)));
    }
    BlockNode n = b;
    n.body = For(Var("tc"), IntImm(0), IntImm(1), ForKind::kSerial, SeqStmt(std::move(loads)), "",
                 {{kTensorIntrinAttr, StringImm(intrin->name)}});
    return BlockRealize(op->iter_values, op->predicate, MakeBlock(std::move(n)));
  }
};

}  // namespace

PrimFunc LowerTensorIntrin(const PrimFunc& func) {
  PrimFunc f = func;
  f.body = TensorIntrinLowerer().VisitStmt(func.body);
  return f;
}

}  // namespace kiln::ir::transform
