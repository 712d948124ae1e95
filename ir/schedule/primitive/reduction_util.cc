#include "ir/schedule/primitive/reduction_util.h"

#include <unordered_set>
#include <utility>

#include "ir/arith/analyzer.h"
#include "ir/arith/iter_map.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/printer.h"
#include "ir/schedule/schedule_error.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace kiln::ir {

Expr Reducer::Identity() const {
  switch (kind) {
    case ReducerKind::kSum: return MakeConst(dtype, 0);
    case ReducerKind::kProduct: return MakeConst(dtype, 1);
    case ReducerKind::kMin: return MaxValue(dtype);
    case ReducerKind::kMax: return MinValue(dtype);
  }
  return Expr();
}

Expr Reducer::Combine(Expr x, Expr y) const {
  switch (kind) {
    case ReducerKind::kSum: return Add(std::move(x), std::move(y));
    case ReducerKind::kProduct: return Mul(std::move(x), std::move(y));
    case ReducerKind::kMin: return Min(std::move(x), std::move(y));
    case ReducerKind::kMax: return Max(std::move(x), std::move(y));
  }
  return Expr();
}

const char* Reducer::Name() const {
  switch (kind) {
    case ReducerKind::kSum: return "sum";
    case ReducerKind::kProduct: return "product";
    case ReducerKind::kMin: return "min";
    case ReducerKind::kMax: return "max";
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

// Every BufferStore in `s`.
class StoreCollector : public IRVisitor {
 public:
  std::vector<const BufferStoreNode*> stores;

 protected:
  void VisitBufferStore(const BufferStoreNode* op) override {
    stores.push_back(op);
    IRVisitor::VisitBufferStore(op);
  }
};

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
  const auto* realize = path.back().as<BlockRealizeNode>();
  const BlockNode& block = *realize->block.get();
  const std::string who = "block " + block.name + " is not a reduction block: ";
  if (!block.init) throw ScheduleError(primitive, who + "it has no init statement (T.init)");
  std::unordered_set<const VarNode*> reduce_vars;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.iter_type == IterType::kCommReduce) {
      reduce_vars.insert(iv.var.get());
    } else if (iv.iter_type != IterType::kDataPar) {
      throw ScheduleError(primitive, who + "its iter var " + iv.var.name() +
                                         " is neither spatial nor reduction");
    }
  }

  // Affine bindings over the loops between the scope block and this block.
  std::vector<std::pair<Var, Range>> iters;
  for (const ForNode* loop : LoopsAbove(path)) {
    iters.emplace_back(loop->loop_var, Range{loop->min, loop->extent});
  }
  if (!realize->iter_values.empty()) {
    arith::Analyzer analyzer;
    arith::IterMapResult map = arith::DetectIterMap(realize->iter_values, iters, realize->predicate,
                                                    arith::IterMapLevel::kSurjective, &analyzer);
    if (!map.ok()) {
      throw ScheduleError(primitive, who + "its iter var bindings are not affine in its loops (" +
                                         map.errors.front() + ")");
    }
  }

  // The only writer of its outputs among the blocks of its scope.
  const int scope = ScopeIndex(path);
  if (scope >= 0) {
    for (const BlockRealizeNode* other : ChildBlockRealizes(path[scope])) {
      if (other == realize) continue;
      for (const BufferRegion& w : block.writes) {
        for (const BufferRegion& ow : other->block->writes) {
          if (ow.buffer.same_as(w.buffer)) {
            throw ScheduleError(primitive, who + "block " + other->block->name +
                                               " also writes its output " + w.buffer.name());
          }
        }
      }
    }
  }

  // Reduction iter vars must not pick the element written.
  StoreCollector collector;
  collector.VisitStmt(*block.init);
  collector.VisitStmt(block.body);
  auto is_reduce = [&](const VarNode* v) { return reduce_vars.count(v) > 0; };
  for (const BufferStoreNode* store : collector.stores) {
    for (const Expr& index : store->indices) {
      if (UsesVar(index, is_reduce)) {
        throw ScheduleError(primitive, who + "a reduction iter var indexes its output " +
                                           store->buffer.name() + " (" + ToText(index) + ")");
      }
    }
  }
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
