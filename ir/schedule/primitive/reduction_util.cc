#include "ir/schedule/primitive/reduction_util.h"

#include <unordered_set>
#include <utility>

#include "ir/functor.h"
#include "ir/op.h"
#include "ir/text/printer.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/schedule_error.h"
#include "ir/structural_equal.h"

namespace kiln::ir {

Expr Reducer::Identity() const {
  switch (kind) {
    case ReducerKind::kSum:
      return MakeConst(dtype, 0);
    case ReducerKind::kProduct:
      return MakeConst(dtype, 1);
    case ReducerKind::kMin:
      return MaxValue(dtype);
    case ReducerKind::kMax:
      return MinValue(dtype);
  }
  return Expr();
}

Expr Reducer::Combine(Expr x, Expr y) const {
  switch (kind) {
    case ReducerKind::kSum:
      return Add(std::move(x), std::move(y));
    case ReducerKind::kProduct:
      return Mul(std::move(x), std::move(y));
    case ReducerKind::kMin:
      return Min(std::move(x), std::move(y));
    case ReducerKind::kMax:
      return Max(std::move(x), std::move(y));
  }
  return Expr();
}

const char* Reducer::Name() const {
  switch (kind) {
    case ReducerKind::kSum:
      return "sum";
    case ReducerKind::kProduct:
      return "product";
    case ReducerKind::kMin:
      return "min";
    case ReducerKind::kMax:
      return "max";
  }
  return "?";
}

namespace {

bool SameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!StructuralEqual(a[i], b[i])) return false;
  }
  return true;
}

// True if `e` is a load of exactly the element `store` writes.
bool LoadsStoredElement(const Expr& e, const BufferStoreNode* store) {
  const auto* load = e.as<BufferLoadNode>();
  return load != nullptr && load->buffer.same_as(store->buffer) &&
         SameIndices(load->indices, store->indices);
}

class BufferReadFinder : public IRVisitor {
 public:
  explicit BufferReadFinder(const BufferNode* buffer) : buffer_(buffer) {}
  bool found = false;

 protected:
  void VisitBufferLoad(const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) found = true;
    IRVisitor::VisitBufferLoad(op);
  }

 private:
  const BufferNode* buffer_;
};

bool ReadsBuffer(const Expr& e, const BufferNode* buffer) {
  BufferReadFinder finder(buffer);
  finder.VisitExpr(e);
  return finder.found;
}

}  // namespace

ReducerMatch MatchReducer(const BlockNode& block) {
  ReducerMatch out;
  const auto* init = block.init ? block.init->as<BufferStoreNode>() : nullptr;
  const auto* update = block.body.as<BufferStoreNode>();
  if (init == nullptr || update == nullptr) {
    out.why_not = "its init and body must each be a single buffer store";
    return out;
  }
  if (!init->buffer.same_as(update->buffer) || !SameIndices(init->indices, update->indices)) {
    out.why_not = "its init and body must store to the same element of the same buffer";
    return out;
  }
  const DataType dtype = update->value.dtype();
  const auto* combined = update->value.as<BinaryNode>();
  for (ReducerKind kind :
       {ReducerKind::kSum, ReducerKind::kProduct, ReducerKind::kMin, ReducerKind::kMax}) {
    Reducer reducer{kind, dtype};
    if (!StructuralEqual(init->value, reducer.Identity())) continue;
    const ExprKind op = kind == ReducerKind::kSum       ? ExprKind::kAdd
                        : kind == ReducerKind::kProduct ? ExprKind::kMul
                        : kind == ReducerKind::kMin     ? ExprKind::kMin
                                                        : ExprKind::kMax;
    if (combined == nullptr || combined->kind != op) continue;
    // The combiners are commutative, so the stored element may be either operand.
    Expr lhs = combined->a, rhs = combined->b;
    if (!LoadsStoredElement(lhs, update)) std::swap(lhs, rhs);
    if (!LoadsStoredElement(lhs, update)) continue;
    if (ReadsBuffer(rhs, update->buffer.get())) {
      out.why_not = "the value combined into " + update->buffer.name() + " reads " +
                    update->buffer.name() + " itself";
      return out;
    }
    out.parts = ReductionParts{init, update, reducer, lhs, rhs};
    return out;
  }
  out.why_not = "init " + ToText(init->value) + " and update " + ToText(update->value) +
                " match none of sum (x + y, 0), product (x * y, 1), min (T.min, max value) "
                "and max (T.max, min value)";
  return out;
}

void CheckReductionBlock(const StmtPath& path, const std::string& primitive) {
  std::string why;
  if (!IsReductionBlock(path, &why)) throw ScheduleError(primitive, why);
}

std::string UniqueBlockName(const PrimFunc& f, const std::string& base) {
  std::unordered_set<std::string> names;
  for (const BlockRealizeNode* r : AllBlockRealizes(f)) names.insert(r->block->name);
  if (!names.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!names.count(candidate)) return candidate;
  }
}

std::vector<Expr> SplitConjuncts(const Expr& predicate) {
  std::vector<Expr> out;
  if (!predicate.defined() || IsConstInt(predicate, 1)) return out;
  if (const auto* b = predicate.as<BinaryNode>(); b != nullptr && b->kind == ExprKind::kAnd) {
    out = SplitConjuncts(b->a);
    for (Expr& c : SplitConjuncts(b->b)) out.push_back(std::move(c));
    return out;
  }
  out.push_back(predicate);
  return out;
}

Expr JoinConjuncts(const std::vector<Expr>& conjuncts) {
  if (conjuncts.empty()) return BoolImm(true);
  Expr out = conjuncts.front();
  for (size_t i = 1; i < conjuncts.size(); ++i) out = And(out, conjuncts[i]);
  return out;
}

}  // namespace kiln::ir
