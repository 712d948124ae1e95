// reverse_compute_inline: folds a consumer into its only producer, which then
// writes the consumer's output directly (TVM's ReverseComputeInline; the
// epilogue fusion of elementwise tails).
#include <algorithm>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/compute_inline.h"
#include "ir/schedule/primitive/compute_inline_util.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/structural_equal.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr char kPrim[] = "reverse_compute_inline";

using inline_util::Site;

// Rewrites the consumer's store into the producer's terms: its iteration
// variables become the producer's store indices, its loads of the inlined
// buffer the producer's value.
class ConsumerRewriter : public IRMutator {
 public:
  ConsumerRewriter(const VarMap* sub, const BufferNode* buffer, Expr rhs)
      : sub_(sub), buffer_(buffer), rhs_(std::move(rhs)) {}

 protected:
  Expr VisitVar(const Expr& e, const VarNode* op) override {
    auto it = sub_->find(op);
    if (it == sub_->end()) return e;
    return it->second.dtype() == op->dtype ? it->second : Cast(op->dtype, it->second);
  }
  Expr VisitBufferLoad(const Expr& e, const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) return rhs_;
    return IRMutator::VisitBufferLoad(e, op);
  }

 private:
  const VarMap* sub_;
  const BufferNode* buffer_;
  Expr rhs_;
};

class ReverseInliner : public inline_util::ScopeRewriter {
 public:
  ReverseInliner(Buffer buffer, const BlockNode* scope, Stmt removed, const BlockNode* producer,
                 Stmt producer_store, Stmt new_store, Expr extra_predicate)
      : ScopeRewriter(std::move(buffer), scope, std::move(removed)),
        producer_(producer),
        producer_store_(std::move(producer_store)),
        new_store_(std::move(new_store)),
        extra_predicate_(std::move(extra_predicate)) {}

 protected:
  Stmt VisitBufferStore(const Stmt& s, const BufferStoreNode* op) override {
    if (s.same_as(producer_store_)) return new_store_;
    return IRMutator::VisitBufferStore(s, op);
  }
  Stmt VisitBlockRealize(const Stmt& s, const BlockRealizeNode* op) override {
    Stmt visited = IRMutator::VisitBlockRealize(s, op);
    if (op->block.get() != producer_ || !extra_predicate_.defined()) return visited;
    auto n = MakeNode<BlockRealizeNode>(*visited.as<BlockRealizeNode>());
    arith::Analyzer an;
    n->predicate = IsConstInt(n->predicate, 1) ? extra_predicate_
                                               : an.Simplify(And(n->predicate, extra_predicate_));
    return Stmt(std::move(n));
  }

 private:
  const BlockNode* producer_;
  Stmt producer_store_;
  Stmt new_store_;
  Expr extra_predicate_;  // undefined when the producer's domain is the consumer's
};

std::string Names(const std::vector<const BufferNode*>& bs) {
  std::string s;
  for (const BufferNode* b : bs) s += (s.empty() ? "" : ", ") + b->name;
  return s;
}

// Checks everything, then (unless check_only) returns the new function body.
Stmt ReverseComputeInlineImpl(const StmtPath& path, bool check_only) {
  Site site = inline_util::LocateSite(kPrim, path);
  const BlockNode* consumer = site.block;
  const std::string& name = consumer->name;
  if (consumer->init) {
    throw ScheduleError(kPrim, "block " + name +
                                   " has an init statement (it is a reduction block); only a "
                                   "block computing each element once can be inlined");
  }

  inline_util::CheckStagePipeline(kPrim, site);

  // The consumer reads exactly one buffer that a block of its scope writes.
  std::vector<const BufferNode*> produced;
  for (const BufferRegion& r : consumer->reads) {
    if (std::find(produced.begin(), produced.end(), r.buffer.get()) != produced.end()) continue;
    for (const BlockRealizeNode* s : site.siblings) {
      if (s != site.realize && inline_util::Touches(s->block->writes, r.buffer.get())) {
        produced.push_back(r.buffer.get());
        break;
      }
    }
  }
  if (produced.size() != 1) {
    throw ScheduleError(
        kPrim,
        "block " + name +
            " must read exactly one buffer that another block of its scope writes, but it reads " +
            (produced.empty() ? std::string("none") : Names(produced)));
  }
  const BufferNode* buffer = produced[0];
  inline_util::CheckComplete(kPrim, site, site.realize);

  // Its single producer: a complete leaf block before it, writing a buffer of
  // the scope that nothing else reads.
  std::vector<const BlockRealizeNode*> producers;
  for (const BlockRealizeNode* s : site.siblings) {
    if (s != site.realize && inline_util::Touches(s->block->writes, buffer)) producers.push_back(s);
  }
  if (producers.size() != 1) {
    throw ScheduleError(kPrim, "block " + name + " must have a single producer of buffer " +
                                   buffer->name + ", but " + std::to_string(producers.size()) +
                                   " blocks write it");
  }
  const BlockRealizeNode* prod_realize = producers[0];
  const BlockNode* producer = prod_realize->block.get();
  int prod_pos = static_cast<int>(
      std::find(site.siblings.begin(), site.siblings.end(), prod_realize) - site.siblings.begin());
  if (prod_pos > site.position) {
    throw ScheduleError(kPrim, "the producer block " + producer->name + " of buffer " +
                                   buffer->name + " comes after its consumer " + name);
  }
  if (producer->init) {
    throw ScheduleError(kPrim, "the producer block " + producer->name +
                                   " is not complete: it has an init statement (it is a "
                                   "reduction block)");
  }
  inline_util::CheckComplete(kPrim, site, prod_realize, "the producer ");
  const auto* prod_store = producer->body.as<BufferStoreNode>();
  if (prod_store == nullptr || prod_store->buffer.get() != buffer) {
    throw ScheduleError(kPrim, "the body of the producer block " + producer->name +
                                   " is not a single store to buffer " + buffer->name);
  }
  if (inline_util::IsOutput(site, producer)) {
    throw ScheduleError(kPrim, "the producer block " + producer->name +
                                   " is an output block: it writes buffer " + buffer->name +
                                   ", which is not allocated in its scope (block " +
                                   site.scope->name + ")");
  }
  for (const BlockRealizeNode* s : site.siblings) {
    if (s == site.realize || s == prod_realize) continue;
    if (inline_util::Touches(s->block->reads, buffer)) {
      throw ScheduleError(kPrim, "buffer " + buffer->name + " of the producer block " +
                                     producer->name + " is also read by block " + s->block->name +
                                     ", not only by " + name);
    }
  }

  // The body must be C[...] = g(..., B[v...], ...) with every load of B at
  // the same indices, each a distinct iteration variable, and no predicate.
  const std::string pattern =
      "the body of block " + name + " is not a single store reading buffer " + buffer->name +
      " at its iteration variables (C[...] = g(" + buffer->name +
      "[v_0, v_1, ...], ...), every load of " + buffer->name + " at the same distinct variables)";
  const auto* store = consumer->body.as<BufferStoreNode>();
  if (!IsConstInt(site.realize->predicate, 1)) {
    throw ScheduleError(kPrim,
                        "block " + name + " has a predicate; a predicated block cannot be inlined");
  }
  if (store == nullptr || store->buffer.get() == buffer) throw ScheduleError(kPrim, pattern);
  // The fused block writes in the producer's order; that keeps the result
  // only if the consumer writes every element once.
  {
    std::vector<bool> indexes(consumer->iter_vars.size(), false);
    bool injective = true;
    for (const Expr& idx : store->indices) {
      int64_t c;
      if (AsConstInt(idx, &c)) continue;
      const auto* v = idx.as<VarNode>();
      size_t k = 0;
      while (k < consumer->iter_vars.size() && consumer->iter_vars[k].var.get() != v) ++k;
      if (v == nullptr || k == consumer->iter_vars.size() || indexes[k]) {
        injective = false;
        break;
      }
      indexes[k] = true;
    }
    for (size_t k = 0; injective && k < consumer->iter_vars.size(); ++k) {
      injective = indexes[k] || IsConstInt(consumer->iter_vars[k].dom.extent, 1);
    }
    if (!injective) {
      throw ScheduleError(kPrim, "block " + name + " does not store to " + store->buffer.name() +
                                     " at distinct iteration variables, one per non-unit "
                                     "iteration variable: fused into its producer, its writes "
                                     "to one element could happen in another order");
    }
  }
  struct LoadFinder : IRVisitor {
    const BufferNode* buffer;
    std::vector<const BufferLoadNode*> loads;
    void VisitBufferLoad(const BufferLoadNode* op) override {
      if (op->buffer.get() == buffer) loads.push_back(op);
      IRVisitor::VisitBufferLoad(op);
    }
  } finder;
  finder.buffer = buffer;
  finder.VisitStmt(consumer->body);
  if (finder.loads.empty()) throw ScheduleError(kPrim, pattern);
  const std::vector<Expr>& load_idx = finder.loads[0]->indices;
  for (const BufferLoadNode* l : finder.loads) {
    for (size_t d = 0; d < load_idx.size(); ++d) {
      if (!StructuralEqual(l->indices[d], load_idx[d])) {
        throw ScheduleError(kPrim,
                            pattern + "; it loads " + buffer->name + " at different indices");
      }
    }
  }
  VarMap sub;
  std::vector<bool> used(consumer->iter_vars.size(), false);
  for (size_t d = 0; d < load_idx.size(); ++d) {
    const auto* v = load_idx[d].as<VarNode>();
    size_t k = 0;
    while (k < consumer->iter_vars.size() && consumer->iter_vars[k].var.get() != v) ++k;
    if (v == nullptr || k == consumer->iter_vars.size() || used[k]) {
      throw ScheduleError(kPrim, pattern + "; index " + std::to_string(d) + " is not");
    }
    used[k] = true;
    sub[v] = prod_store->indices[d];
  }
  for (size_t k = 0; k < consumer->iter_vars.size(); ++k) {
    if (used[k]) continue;
    const IterVar& iv = consumer->iter_vars[k];
    int64_t mn;
    if (!IsConstInt(iv.dom.extent, 1) || !AsConstInt(iv.dom.min, &mn)) {
      throw ScheduleError(kPrim, pattern + "; iteration variable " + iv.var.name() +
                                     " indexes no dimension of " + buffer->name);
    }
    sub[iv.var.get()] = iv.dom.min;
  }

  // The producer's iterations must reach every iteration of the consumer.
  arith::Analyzer an;
  arith::IntSetMap prod_dom;
  for (const IterVar& iv : producer->iter_vars) {
    an.Bind(iv.var, iv.dom);
    prod_dom[iv.var.get()] = arith::IntervalSet::FromRange(iv.dom, &an);
  }
  Expr in_bound = BoolImm(true);
  for (size_t k = 0; k < consumer->iter_vars.size(); ++k) {
    if (!used[k]) continue;
    const IterVar& iv = consumer->iter_vars[k];
    const Expr& p = sub.at(iv.var.get());
    arith::IntervalSet reach = arith::EvalSet(p, prod_dom, &an);
    Expr last = iv.dom.min + iv.dom.extent - 1;
    if (!reach.is_bounded() || !an.CanProve(reach.min <= iv.dom.min) ||
        !an.CanProve(reach.max >= last)) {
      throw ScheduleError(kPrim, "the iteration domain of block " + name +
                                     " is not covered by its producer " + producer->name +
                                     " (iteration variable " + iv.var.name() + ")");
    }
    in_bound = And(in_bound, And(GE(p, iv.dom.min), LT(p, iv.dom.min + iv.dom.extent)));
  }
  in_bound = an.Simplify(in_bound);
  Expr extra;
  if (!IsConstInt(in_bound, 1)) {
    VarMap bind;
    for (size_t i = 0; i < producer->iter_vars.size(); ++i) {
      bind[producer->iter_vars[i].var.get()] = prod_realize->iter_values[i];
    }
    arith::Analyzer plain;
    extra = plain.Simplify(Substitute(in_bound, bind));
  }

  // The consumer's output is written earlier than before: no block between
  // the two may touch it.
  for (int i = prod_pos + 1; i < site.position; ++i) {
    const BlockNode* mid = site.siblings[i]->block.get();
    for (const BufferRegion& w : consumer->writes) {
      if (inline_util::Touches(mid->reads, w.buffer.get()) ||
          inline_util::Touches(mid->writes, w.buffer.get())) {
        throw ScheduleError(kPrim, "block " + mid->name + ", between the producer " +
                                       producer->name + " and " + name + ", accesses buffer " +
                                       w.buffer.name() + ", which " + name + " writes");
      }
    }
  }

  ConsumerRewriter rewrite(&sub, buffer, prod_store->value);
  Stmt new_store = rewrite.VisitStmt(consumer->body);
  Stmt removed = inline_util::RemovalRoot(kPrim, site);
  if (check_only) return Stmt();
  Buffer buffer_handle;
  for (const Buffer& b : site.scope->alloc_buffers) {
    if (b.get() == buffer) buffer_handle = b;
  }
  ReverseInliner inliner(buffer_handle, site.scope, removed, producer, producer->body, new_store,
                         extra);
  return inliner.Run(site);
}

}  // namespace

bool CanReverseComputeInline(const PrimFunc& /*func*/, const StmtPath& block_path,
                             std::string* why) {
  return inline_util::Feasible(&ReverseComputeInlineImpl, block_path, why);
}

bool CanReverseComputeInline(const Schedule& sch, BlockRV block, std::string* why) {
  return inline_util::Feasible(&ReverseComputeInlineImpl, sch, block, why);
}

void Schedule::ReverseComputeInline(BlockRV block) {
  SetBody(ReverseComputeInlineImpl(PathOf(block), /*check_only=*/false));
  Record(instruction_kinds::ReverseComputeInline().name, {InstArg::Of(block.ref())},
         nlohmann::json::array(), {});
}

namespace instruction_kinds {

const InstructionKind& ReverseComputeInline() {
  static const InstructionKind k =
      inline_util::InlineKind("ReverseComputeInline", &Schedule::ReverseComputeInline);
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
