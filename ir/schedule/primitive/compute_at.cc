// compute_at and reverse_compute_at: move a producer under a loop of its
// consumers (or a consumer under a loop of its producers) and regenerate the
// moved block's loop nest so one run of the nest covers exactly the region
// the blocks under that loop exchange with it in one iteration.
//
// The two primitives are mirrors (TVM's ComputeAtOrReverseComputeAtImpl):
//   compute_at          provided = the block's writes, required = the reads of
//                       its consumers under the loop (all must be there);
//   reverse_compute_at  provided = the block's reads, required = the writes of
//                       its producers under the loop (all must be there).
// The required regions are relaxed over the loops strictly inside the target
// loop; loops at and above it stay symbolic. Each block var then ranges over
// the part of the required region its index covers, and is bound as
// "region min + new loop var"; a predicate keeps it inside its own domain
// when the region pokes out of it.
#include "ir/schedule/primitive/compute_at.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/int_set.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/schedule_mutator.h"
#include "ir/substitute.h"
#include "ir/text/printer.h"

namespace kiln::ir {
namespace {

using BufferSet = std::unordered_set<const BufferNode*>;
using arith::IntervalSet;

BufferSet BuffersOf(const std::vector<BufferRegion>& regions) {
  BufferSet out;
  for (const auto& r : regions) out.insert(r.buffer.get());
  return out;
}

bool TouchesAny(const std::vector<BufferRegion>& regions, const BufferSet& buffers) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return buffers.count(r.buffer.get()) > 0; });
}

std::vector<Stmt> Children(const Stmt& body) {
  if (const auto* seq = body.as<SeqStmtNode>()) return seq->seq;
  return {body};
}

// Calls `visit` for every block under `s` not nested in another block, with
// the loops between `s` and it (outer to inner).
void ForEachBlock(
    const Stmt& s, std::vector<const ForNode*>* loops,
    const std::function<void(const BlockRealizeNode*, const std::vector<const ForNode*>&)>& visit) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kBlockRealize:
      visit(s.as<BlockRealizeNode>(), *loops);
      return;
    case StmtKind::kFor:
      loops->push_back(s.as<ForNode>());
      ForEachBlock(s.as<ForNode>()->body, loops, visit);
      loops->pop_back();
      return;
    case StmtKind::kSeqStmt:
      for (const auto& c : s.as<SeqStmtNode>()->seq) ForEachBlock(c, loops, visit);
      return;
    case StmtKind::kIfThenElse:
      ForEachBlock(s.as<IfThenElseNode>()->then_case, loops, visit);
      ForEachBlock(s.as<IfThenElseNode>()->else_case, loops, visit);
      return;
    default:
      return;
  }
}

std::vector<const BlockRealizeNode*> BlocksIn(const Stmt& s) {
  std::vector<const BlockRealizeNode*> out;
  std::vector<const ForNode*> loops;
  ForEachBlock(s, &loops, [&](const BlockRealizeNode* r, const auto&) { out.push_back(r); });
  return out;
}

std::string NameList(const std::vector<const BlockNode*>& blocks) {
  std::string out;
  for (const BlockNode* b : blocks) out += (out.empty() ? "'" : ", '") + b->name + "'";
  return out;
}

// One block var's range so far: `dom` the values the required regions ask
// for, `bound` the values that are legal for it (both unions; undefined when
// nothing constrains them yet).
struct VarDomain {
  std::optional<IntervalSet> dom;
  std::optional<IntervalSet> bound;
  bool conflicting = false;  // two regions asked for provably different ranges
};

// One compute_at (or, reversed, reverse_compute_at) move of a block under a
// loop: the legality checks, the loops regenerated around the block for the
// region its consumers (producers) need, and the body without the old block.
class ComputeAtMove {
 public:
  ComputeAtMove(const PrimFunc& f, std::string block_name, const VarNode* loop_var,
                bool preserve_unit_loops, int index, bool reverse, std::string primitive)
      : f_(f),
        block_name_(std::move(block_name)),
        loop_var_(loop_var),
        preserve_(preserve_unit_loops),
        index_(index),
        reverse_(reverse),
        primitive_(std::move(primitive)) {}

  Stmt Run();

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw ScheduleError(primitive_, message);
  }
  std::string Where() const { return "block '" + block_name_ + "' and loop " + loop_var_->name; }

  void CheckPlacement();
  void CollectNeighbours();
  int FindInsertionPoint();
  void CheckInterference();
  void CheckNoPartialReads();
  std::unordered_map<const BufferNode*, std::vector<std::vector<IntervalSet>>> RequiredRegions();
  std::vector<VarDomain> BlockVarDomains();
  Stmt MakeNewNest(const std::vector<VarDomain>& doms);
  Stmt RemoveBlock();

  const PrimFunc& f_;
  const std::string block_name_;
  const VarNode* loop_var_;
  const bool preserve_;
  const int index_;
  const bool reverse_;
  const std::string primitive_;

  arith::Analyzer an_;
  StmtPath block_path_, loop_path_;
  const BlockRealizeNode* realize_ = nullptr;
  const BlockNode* block_ = nullptr;
  const ForNode* loop_ = nullptr;
  int scope_index_ = -1;
  std::vector<const BlockRealizeNode*> siblings_;
  std::vector<const BlockNode*> producers_, consumers_;
  // Blocks under the target loop with the loops between it and them.
  std::vector<std::pair<const BlockRealizeNode*, std::vector<const ForNode*>>> under_loop_;
};

void ComputeAtMove::CheckPlacement() {
  auto bp = FindBlockPath(f_, block_name_);
  if (!bp) Fail("no block named '" + block_name_ + "'");
  auto lp = FindLoopPath(f_, loop_var_);
  if (!lp) Fail("loop " + loop_var_->name + " does not exist");
  block_path_ = std::move(*bp);
  loop_path_ = std::move(*lp);
  realize_ = block_path_.back().as<BlockRealizeNode>();
  block_ = realize_->block.get();
  loop_ = loop_path_.back().as<ForNode>();
  scope_index_ = ScopeIndex(block_path_);
  if (scope_index_ < 0) Fail("block '" + block_name_ + "' is the root block and cannot be moved");
  const Stmt& scope = block_path_[scope_index_];
  if (ScopeIndex(loop_path_) != scope_index_ || !loop_path_[scope_index_].same_as(scope)) {
    Fail("expected " + Where() + " to be under the same block scope ('" +
         scope.as<BlockRealizeNode>()->block->name +
         "'), with no other block between the loop and "
         "that scope");
  }
  for (size_t i = scope_index_ + 1; i < block_path_.size(); ++i) {
    if (block_path_[i].same_as(loop_path_.back())) {
      Fail("loop " + loop_var_->name + " is an ancestor of block '" + block_name_ +
           "'; the block can only move under a loop outside its own loop nest");
    }
  }
  // Loops at and above the target stay symbolic: the analyzer knows their ranges.
  for (size_t i = scope_index_ + 1; i < loop_path_.size(); ++i) {
    const auto* l = loop_path_[i].as<ForNode>();
    if (l == nullptr) continue;
    // A unit loop's variable is its min (as TVM's analyzer binds it).
    if (IsConstInt(l->extent, 1)) {
      an_.Bind(l->loop_var, l->min);
    } else {
      an_.Bind(l->loop_var, Range{l->min, l->extent});
    }
  }
}

void ComputeAtMove::CollectNeighbours() {
  siblings_ = ChildBlockRealizes(block_path_[scope_index_]);
  const BufferSet reads = BuffersOf(block_->reads);
  const BufferSet writes = BuffersOf(block_->writes);
  bool after = false;
  for (const BlockRealizeNode* s : siblings_) {
    const BlockNode* other = s->block.get();
    if (other == block_) {
      after = true;
      continue;
    }
    if (!after && TouchesAny(other->writes, reads)) producers_.push_back(other);
    if (after && TouchesAny(other->reads, writes)) consumers_.push_back(other);
  }
  std::string why_complete, why_reduction;
  if (!IsCompleteBlock(block_path_, &why_complete) &&
      !IsReductionBlock(block_path_, &why_reduction)) {
    Fail("block '" + block_name_ + "' must be a complete or a reduction block, but " +
         why_complete + ", and " + why_reduction);
  }
  const Stmt& scope = block_path_[scope_index_];
  if (!reverse_ && IsOutputBlock(scope, block_)) {
    Fail("block '" + block_name_ + "' is an output block: it writes a buffer its scope '" +
         scope.as<BlockRealizeNode>()->block->name +
         "' does not allocate, so its result must stay complete");
  }
  std::vector<const ForNode*> loops;
  ForEachBlock(loop_->body, &loops,
               [&](const BlockRealizeNode* r, const auto& ls) { under_loop_.emplace_back(r, ls); });
}

int ComputeAtMove::FindInsertionPoint() {
  const std::vector<Stmt> children = Children(loop_->body);
  const int n = static_cast<int>(children.size());
  int last_producer = -1, first_consumer = n;
  std::unordered_set<const BlockNode*> seen;
  for (int i = 0; i < n; ++i) {
    for (const BlockRealizeNode* r : BlocksIn(children[i])) {
      const BlockNode* b = r->block.get();
      seen.insert(b);
      if (std::find(producers_.begin(), producers_.end(), b) != producers_.end()) last_producer = i;
      if (std::find(consumers_.begin(), consumers_.end(), b) != consumers_.end()) {
        first_consumer = std::min(first_consumer, i);
      }
    }
  }
  const auto& required = reverse_ ? producers_ : consumers_;
  std::vector<const BlockNode*> missing;
  for (const BlockNode* b : required) {
    if (!seen.count(b)) missing.push_back(b);
  }
  if (!missing.empty()) {
    std::string relation = reverse_ ? "producer" : "consumer";
    Fail("all the " + relation + "s of block '" + block_name_ + "' must be under loop " +
         loop_var_->name + ", but " + std::to_string(missing.size()) + " " + relation +
         (missing.size() == 1 ? " is" : "s are") + " not: " + NameList(missing));
  }
  if (required.empty()) {
    Fail("block '" + block_name_ + "' has no " + (reverse_ ? "producer" : "consumer") +
         " under loop " + loop_var_->name + ", so there is no region to cover");
  }
  if (last_producer >= first_consumer) {
    Fail("no position under loop " + loop_var_->name + " keeps the producers of block '" +
         block_name_ + "' before it and its consumers after it (a producer sits in child " +
         std::to_string(last_producer) + ", a consumer in child " + std::to_string(first_consumer) +
         ")");
  }
  if (index_ == -1) return first_consumer;
  if (index_ == -2) return last_producer + 1;
  if (index_ >= last_producer + 1 && index_ <= first_consumer) return index_;
  Fail("index " + std::to_string(index_) + " is not a valid position under loop " +
       loop_var_->name + ": valid are -1, -2 and [" + std::to_string(last_producer + 1) + ", " +
       std::to_string(first_consumer) + "]");
}

// The move reorders the block against every block that runs between its old
// and its new place, and against every block of the loop nest it joins (which
// now runs before it in later iterations). Where the two paths part, those are
// the children from the block's side to the loop's side. Only the intended
// dataflow may cross it: its consumers reading it (compute_at), its producers
// feeding it (reverse_compute_at).
void ComputeAtMove::CheckInterference() {
  size_t k = scope_index_ + 1;
  while (k < block_path_.size() && k < loop_path_.size() && block_path_[k].same_as(loop_path_[k])) {
    ++k;
  }
  const Stmt& parent = block_path_[k - 1];
  std::vector<const BlockNode*> crossed;
  std::unordered_set<const BlockNode*> loop_side;
  for (const BlockRealizeNode* r : BlocksIn(loop_path_[k])) loop_side.insert(r->block.get());
  if (const auto* seq = parent.as<SeqStmtNode>()) {
    int bi = -1, li = -1;
    for (size_t i = 0; i < seq->seq.size(); ++i) {
      if (seq->seq[i].same_as(block_path_[k])) bi = static_cast<int>(i);
      if (seq->seq[i].same_as(loop_path_[k])) li = static_cast<int>(i);
    }
    for (int i = std::min(bi, li); i <= std::max(bi, li); ++i) {
      for (const BlockRealizeNode* r : BlocksIn(seq->seq[i])) crossed.push_back(r->block.get());
    }
  } else {
    for (const BlockRealizeNode* r : BlocksIn(parent)) crossed.push_back(r->block.get());
  }
  const BufferSet reads = BuffersOf(block_->reads);
  const BufferSet writes = BuffersOf(block_->writes);
  auto is = [](const std::vector<const BlockNode*>& v, const BlockNode* b) {
    return std::find(v.begin(), v.end(), b) != v.end();
  };
  for (const BlockNode* x : crossed) {
    if (x == block_) continue;
    const bool writes_input = TouchesAny(x->writes, reads);
    const bool reads_output = TouchesAny(x->reads, writes);
    if (!reverse_ && is(producers_, x)) {
      if (loop_side.count(x)) {
        Fail("block '" + x->name + "', a producer of block '" + block_name_ +
             "', runs in the loop nest of loop " + loop_var_->name +
             "; the block would read values it has not produced yet");
      }
      continue;
    }
    bool ok;
    if (!reverse_) {
      ok = is(consumers_, x) ? !writes_input : !writes_input && !reads_output;
    } else if (is(producers_, x)) {
      ok = !reads_output;
    } else {
      ok = is(consumers_, x) || (!writes_input && !reads_output);
    }
    if (!ok) {
      Fail("moving block '" + block_name_ + "' under loop " + loop_var_->name +
           " would reorder it against block '" + x->name + "', which " +
           (writes_input ? "writes a buffer the block reads" : "reads a buffer the block writes"));
    }
  }
}

// reverse_compute_at places the consumer inside the producers' iterations: a
// producer whose reduction runs over the target loop or a loop above it has
// only partial results there.
void ComputeAtMove::CheckNoPartialReads() {
  if (!reverse_) return;
  std::unordered_set<const VarNode*> outer;
  for (size_t i = scope_index_ + 1; i < loop_path_.size(); ++i) {
    if (const auto* l = loop_path_[i].as<ForNode>()) outer.insert(l->loop_var.get());
  }
  auto is_outer = [&](const VarNode* v) { return outer.count(v) > 0; };
  for (const auto& [r, loops] : under_loop_) {
    const BlockNode* b = r->block.get();
    if (std::find(producers_.begin(), producers_.end(), b) == producers_.end()) continue;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (b->iter_vars[i].iter_type == IterType::kDataPar) continue;
      if (UsesVar(r->iter_values[i], is_outer)) {
        Fail("producer block '" + b->name + "' reduces over loop " + loop_var_->name +
             " or a loop above it (iteration variable " + b->iter_vars[i].var.name() +
             "); block '" + block_name_ + "' would read its partial results");
      }
    }
  }
}

std::unordered_map<const BufferNode*, std::vector<std::vector<IntervalSet>>>
ComputeAtMove::RequiredRegions() {
  const BufferSet provided = BuffersOf(reverse_ ? block_->reads : block_->writes);
  const auto& wanted = reverse_ ? producers_ : consumers_;
  std::unordered_map<const BufferNode*, std::vector<std::vector<IntervalSet>>> out;
  for (const auto& [r, loops] : under_loop_) {
    const BlockNode* b = r->block.get();
    if (std::find(wanted.begin(), wanted.end(), b) == wanted.end()) continue;
    VarMap binding;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
      binding[b->iter_vars[i].var.get()] = r->iter_values[i];
    arith::IntSetMap inner_dom;
    for (const ForNode* l : loops) {
      inner_dom[l->loop_var.get()] = IntervalSet::FromRange(Range{l->min, l->extent}, &an_);
    }
    for (const auto& region : reverse_ ? b->writes : b->reads) {
      if (!provided.count(region.buffer.get())) continue;
      // GPU: a buffer every thread of a group shares is computed for all of
      // them, so the thread-bound loops above the target whose threads share
      // the buffer's memory are relaxed too (TVM's CanRelaxStorageUnderThread:
      // shared memory over threadIdx and vthread, global over every thread
      // axis). CPU programs have no thread-bound loops.
      arith::IntSetMap dom = inner_dom;
      const std::string& scope = region.buffer->scope;
      for (size_t i = scope_index_ + 1; i < loop_path_.size(); ++i) {
        const auto* l = loop_path_[i].as<ForNode>();
        if (l == nullptr || l->for_kind != ForKind::kThreadBinding) continue;
        bool block_axis = l->thread_tag.rfind("blockIdx", 0) == 0;
        bool relax = scope == "global" || ((scope == "shared" || scope == "shared.dyn") && !block_axis);
        if (relax) dom[l->loop_var.get()] = IntervalSet::FromRange(Range{l->min, l->extent}, &an_);
      }
      std::vector<IntervalSet> dims;
      for (size_t d = 0; d < region.region.size(); ++d) {
        const Range& rg = region.region[d];
        IntervalSet lo = arith::EvalSet(Substitute(rg.min, binding), dom, &an_);
        // A point access (extent 1, the common case) ends where it starts.
        IntervalSet hi = IsConstInt(rg.extent, 1)
                             ? lo
                             : arith::EvalSet(Substitute(rg.min + rg.extent - 1, binding), dom, &an_);
        IntervalSet s{lo.min, hi.max};
        if (!s.is_bounded()) {
          Fail("cannot bound dimension " + std::to_string(d) + " of the region of buffer '" +
               region.buffer->name + "' that block '" + b->name + "' accesses under loop " +
               loop_var_->name);
        }
        dims.push_back(s);
      }
      out[region.buffer.get()].push_back(std::move(dims));
    }
  }
  return out;
}

std::vector<VarDomain> ComputeAtMove::BlockVarDomains() {
  std::vector<VarDomain> doms(block_->iter_vars.size());
  std::unordered_map<const VarNode*, size_t> var_index;
  for (size_t i = 0; i < block_->iter_vars.size(); ++i)
    var_index[block_->iter_vars[i].var.get()] = i;
  auto required = RequiredRegions();
  for (const auto& region : reverse_ ? block_->reads : block_->writes) {
    auto it = required.find(region.buffer.get());
    if (it == required.end() || it->second.empty()) continue;
    const BufferNode* buffer = region.buffer.get();
    for (size_t d = 0; d < region.region.size(); ++d) {
      std::vector<IntervalSet> per_block;
      for (const auto& dims : it->second) per_block.push_back(dims[d]);
      IntervalSet req = arith::Union(per_block, &an_);
      Expr pmin = an_.Simplify(region.region[d].min);
      Expr pext = an_.Simplify(region.region[d].extent);
      // Words for a failure only: printing the index costs more than the checks.
      auto where = [&] {
        return "dimension " + std::to_string(d) + " of buffer '" + buffer->name + "' (index " +
               ToText(region.region[d].min) + ")";
      };
      if (!IsConstInt(pext, 1)) {
        Fail("block '" + block_name_ + "' accesses more than one element in " + where() +
             "; compute location needs one element per block instance");
      }
      int64_t c;
      if (AsConstInt(pmin, &c)) {
        if (!an_.CanProveEqual(req.min, pmin) || !an_.CanProveEqual(req.max, pmin)) {
          Fail("block '" + block_name_ + "' only provides element " + std::to_string(c) + " of " +
               where() + ", but the blocks under loop " + loop_var_->name + " need [" +
               ToText(req.min) + ", " + ToText(req.max) + "]");
        }
        continue;
      }
      const auto* v = pmin.as<VarNode>();
      auto vi = v ? var_index.find(v) : var_index.end();
      if (vi == var_index.end()) {
        Fail("block '" + block_name_ + "' indexes " + where() +
             " by an expression that is not a lone iteration variable; cannot derive its range");
      }
      Expr dim_max = an_.Simplify(Max(buffer->shape[d] - 1, IntImm(0, buffer->shape[d].dtype())));
      IntervalSet bound{IntImm(0, dim_max.dtype()), dim_max};
      VarDomain& vd = doms[vi->second];
      if (vd.dom) {
        if (!an_.CanProveEqual(vd.dom->min, req.min) || !an_.CanProveEqual(vd.dom->max, req.max)) {
          vd.conflicting = true;
        }
        vd.dom = arith::Union(*vd.dom, req, &an_);
        vd.bound = arith::Union(*vd.bound, bound, &an_);
      } else {
        vd.dom = req;
        vd.bound = bound;
      }
    }
  }
  for (size_t i = 0; i < doms.size(); ++i) {
    const IterVar& iv = block_->iter_vars[i];
    VarDomain& vd = doms[i];
    IntervalSet own = IntervalSet::FromRange(iv.dom, &an_);
    if (reverse_ && vd.conflicting) {
      // The consumer would iterate over the union and read elements some
      // producer has not written in this iteration yet.
      Fail("block '" + block_name_ + "' needs different ranges of iteration variable " +
           iv.var.name() + " for different producers under loop " + loop_var_->name);
    }
    if (!vd.dom) {
      vd.dom = own;
      vd.bound.reset();
      continue;
    }
    IntervalSet bound = arith::Intersect(*vd.bound, own, &an_);
    IntervalSet dom{an_.Simplify(vd.dom->min), an_.Simplify(vd.dom->max)};
    bound = IntervalSet{an_.Simplify(bound.min), an_.Simplify(bound.max)};
    if (an_.CanProve(dom.min >= bound.min) && an_.CanProve(dom.max <= bound.max)) {
      vd.dom = dom;
      vd.bound.reset();
    } else if (an_.CanProve(bound.min >= dom.min) && an_.CanProve(bound.max <= dom.max)) {
      vd.dom = bound;
      vd.bound.reset();
    } else {
      vd.dom = dom;
      vd.bound = bound;
    }
  }
  return doms;
}

Stmt ComputeAtMove::MakeNewNest(const std::vector<VarDomain>& doms) {
  std::vector<Var> loop_vars;
  std::vector<Expr> extents;
  std::vector<Expr> values;
  Expr predicate;
  for (size_t i = 0; i < doms.size(); ++i) {
    const IterVar& iv = block_->iter_vars[i];
    const IntervalSet& dom = *doms[i].dom;
    Expr min = an_.Simplify(dom.min);
    Expr extent = an_.Simplify(dom.max - min + 1);
    int64_t e;
    if (AsConstInt(extent, &e) && e <= 0) {
      Fail("the blocks under loop " + loop_var_->name + " need no value of iteration variable " +
           iv.var.name() + " of block '" + block_name_ + "'");
    }
    Expr value;
    if (preserve_ || !IsConstInt(extent, 1)) {
      Var v("ax" + std::to_string(loop_vars.size()), iv.var->dtype);
      loop_vars.push_back(v);
      extents.push_back(extent);
      an_.Bind(v, Range{IntImm(0, v->dtype), extent});
      value = IsConstInt(min, 0) ? Expr(v) : Expr(min + v);
    } else {
      value = min;
    }
    values.push_back(value);
    if (doms[i].bound) {
      const IntervalSet& b = *doms[i].bound;
      Expr lower = value >= b.min;
      if (!an_.CanProve(lower)) predicate = predicate.defined() ? predicate && lower : lower;
      Expr upper = value < an_.Simplify(b.max + 1);
      if (!an_.CanProve(upper)) predicate = predicate.defined() ? predicate && upper : upper;
    }
  }
  // Each conjunct is already simple; leaving them as built keeps TVM's
  // "binding < bound" spelling.
  if (!predicate.defined()) predicate = BoolImm(true);
  Stmt nest = BlockRealize(std::move(values), predicate, realize_->block);
  for (size_t i = loop_vars.size(); i-- > 0;) {
    nest = For(loop_vars[i], IntImm(0, loop_vars[i]->dtype), extents[i], ForKind::kSerial, nest);
  }
  return nest;
}

// Removes the block together with the loops (and ifs) that hold nothing else.
Stmt ComputeAtMove::RemoveBlock() {
  size_t t = block_path_.size() - 1;
  while (t > 0) {
    const Stmt& parent = block_path_[t - 1];
    if (parent.kind() == StmtKind::kFor) {
      --t;
    } else if (const auto* ite = parent.as<IfThenElseNode>(); ite && !ite->else_case.defined()) {
      --t;
    } else {
      break;
    }
  }
  if (t == 0 || block_path_[t - 1].kind() != StmtKind::kSeqStmt) {
    Fail("block '" + block_name_ + "' is the only statement of its scope and cannot be moved");
  }
  StmtPath prefix(block_path_.begin(), block_path_.begin() + t + 1);
  return ReplaceAlongPath(prefix, Stmt());
}

Stmt ComputeAtMove::Run() {
  CheckPlacement();
  CollectNeighbours();
  int position = FindInsertionPoint();
  CheckInterference();
  CheckNoPartialReads();
  Stmt nest = MakeNewNest(BlockVarDomains());

  std::vector<Stmt> children = Children(loop_->body);
  children.insert(children.begin() + position, nest);
  auto new_loop = MakeNode<ForNode>(*loop_);
  new_loop->body = SeqStmt(std::move(children));

  PrimFunc removed = f_;
  removed.body = RemoveBlock();
  auto path = FindLoopPath(removed, loop_var_);
  if (!path)
    Fail("loop " + loop_var_->name + " vanished while removing block '" + block_name_ + "'");
  return ReplaceAlongPath(*path, Stmt(std::move(new_loop)));
}

}  // namespace

Stmt MoveBlockUnderLoop(const PrimFunc& f, const std::string& block_name, const VarNode* loop_var,
                        bool preserve_unit_loops, int index, bool reverse,
                        const std::string& primitive) {
  return ComputeAtMove(f, block_name, loop_var, preserve_unit_loops, index, reverse, primitive)
      .Run();
}

std::optional<Stmt> TryMoveBlockUnderLoop(const PrimFunc& f, const std::string& block_name,
                                          const VarNode* loop_var, bool preserve_unit_loops,
                                          bool reverse) {
  try {
    return MoveBlockUnderLoop(f, block_name, loop_var, preserve_unit_loops, -1, reverse, "check");
  } catch (const ScheduleError&) {
    return std::nullopt;
  }
}

namespace {

void ComputeAtImpl(Schedule& sch, BlockRV block, LoopRV loop, bool preserve_unit_loops, int index,
                   bool reverse) {
  const InstructionKind& kind =
      reverse ? instruction_kinds::ReverseComputeAt() : instruction_kinds::ComputeAt();
  const std::string primitive = kind_definition::PythonMethod(kind.name);  // compute_at, ...
  std::string name = sch.NameOf(block);
  sch.PathOf(block);  // fails clearly if the block is gone
  const VarNode* loop_var = sch.PathOf(loop).back().as<ForNode>()->loop_var.get();
  ScheduleMutator mutator(sch);
  // The move sample_compute_location checked just before, if this is it.
  const Stmt* planned = !reverse && preserve_unit_loops && index == -1
                            ? mutator.PlannedMove(name, loop_var)
                            : nullptr;
  Stmt body = planned ? *planned
                      : MoveBlockUnderLoop(sch.func(), name, loop_var, preserve_unit_loops, index,
                                           reverse, primitive);
  mutator.SetBody(std::move(body));
  mutator.Record(kind.name, {InstArg::Of(block.ref()), InstArg::Of(loop.ref())},
                 nlohmann::json::array({preserve_unit_loops ? 1 : 0, index}), {});
}

}  // namespace

void Schedule::ComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops, int index) {
  if (IsRootMark(loop)) {
    // compute_at to the root is where the block already is.
    PathOf(block);
    Record(instruction_kinds::ComputeAt().name, {InstArg::Of(block.ref()), InstArg::Of(loop.ref())},
           nlohmann::json::array({preserve_unit_loops ? 1 : 0, index}), {});
    return;
  }
  if (IsInlineMark(loop)) {
    // Recorded as compute_at at the mark (as TVM does), so a replay that
    // samples another location follows it.
    ComputeInline(block);
    trace_.Pop();
    Record(instruction_kinds::ComputeAt().name, {InstArg::Of(block.ref()), InstArg::Of(loop.ref())},
           nlohmann::json::array({preserve_unit_loops ? 1 : 0, index}), {});
    return;
  }
  ComputeAtImpl(*this, block, loop, preserve_unit_loops, index, /*reverse=*/false);
}

void Schedule::ReverseComputeAt(BlockRV block, LoopRV loop, bool preserve_unit_loops, int index) {
  if (IsRootMark(loop)) {
    PathOf(block);
    Record(instruction_kinds::ReverseComputeAt().name,
           {InstArg::Of(block.ref()), InstArg::Of(loop.ref())},
           nlohmann::json::array({preserve_unit_loops ? 1 : 0, index}), {});
    return;
  }
  if (IsInlineMark(loop)) {
    ReverseComputeInline(block);
    trace_.Pop();
    Record(instruction_kinds::ReverseComputeAt().name,
           {InstArg::Of(block.ref()), InstArg::Of(loop.ref())},
           nlohmann::json::array({preserve_unit_loops ? 1 : 0, index}), {});
    return;
  }
  ComputeAtImpl(*this, block, loop, preserve_unit_loops, index, /*reverse=*/true);
}

namespace instruction_kinds {

namespace {

InstructionKind ComputeAtKind(const std::string& name, bool reverse) {
  return kind_definition::DefineKind(
      name, {},
      [reverse](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        a.ExpectInputs(2);
        a.ExpectAttrs(2);
        BlockRV block = a.Block(0);
        LoopRV loop = a.Loop(1);
        bool preserve = a.AttrBool(0);
        int64_t index = a.AttrInt(1);
        if (index < -2 || index > (int64_t{1} << 30)) a.Fail("index is out of range");
        if (reverse) {
          sch.ReverseComputeAt(block, loop, preserve, static_cast<int>(index));
        } else {
          sch.ComputeAt(block, loop, preserve, static_cast<int>(index));
        }
        return {};
      },
      [](kind_definition::PyCall& py) {
        const nlohmann::json& p = py.attrs[0];
        bool preserve = p.is_boolean() ? p.get<bool>() : p.get<int64_t>() != 0;
        py.Arg("block", py.in[0]).Arg("loop", py.in[1]);
        py.Arg("preserve_unit_loops", kind_definition::PyBool(preserve))
            .Arg("index", py.attrs[1].dump());
      });
}

}  // namespace

const InstructionKind& ComputeAt() {
  static const InstructionKind k = ComputeAtKind("ComputeAt", false);
  return k;
}

const InstructionKind& ReverseComputeAt() {
  static const InstructionKind k = ComputeAtKind("ReverseComputeAt", true);
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
