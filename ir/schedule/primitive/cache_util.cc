#include "ir/schedule/primitive/cache_util.h"

#include <algorithm>
#include <unordered_map>

#include "ir/arith/int_set.h"
#include "ir/functor.h"
#include "ir/op.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/schedule_error.h"
#include "ir/schedule/schedule_mutator.h"
#include "ir/substitute.h"

namespace kiln::ir::cache {

namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A rank name alone or followed by a ".tag".
bool RankWithTag(const std::string& s, const std::string& rank) {
  if (!StartsWith(s, rank)) return false;
  return s.size() == rank.size() || (s[rank.size()] == '.' && s.size() > rank.size() + 1);
}

bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

}  // namespace

void CheckStorageScope(const std::string& primitive, const std::string& scope) {
  static const char* const kExact[] = {"wmma.matrix_a",   "wmma.matrix_b",   "wmma.accumulator",
                                       "m16n8k8.matrixA", "m16n8k8.matrixB", "m16n8k8.matrixC",
                                       "metal.simdgroup"};
  for (const char* s : kExact) {
    if (scope == s) return;
  }
  for (const char* rank : {"global", "shared", "local", "warp"}) {
    if (RankWithTag(scope, rank)) return;
  }
  throw ScheduleError(primitive, "invalid storage scope \"" + scope +
                                     "\" (expected global, shared, shared.dyn, local, warp, "
                                     "a wmma.* scope, or one of those with a \".tag\")");
}

std::string FreshName(const PrimFunc& f, const std::string& base) {
  std::unordered_set<std::string> taken;
  for (const BlockRealizeNode* r : AllBlockRealizes(f)) {
    taken.insert(r->block->name);
    for (const Buffer& b : r->block->alloc_buffers) taken.insert(b.name());
  }
  for (const Buffer& b : f.params) taken.insert(b.name());
  if (!taken.count(base)) return base;
  for (int k = 1;; ++k) {
    std::string name = base + "_" + std::to_string(k);
    if (!taken.count(name)) return name;
  }
}

bool Reads(const BlockNode* b, const BufferNode* buffer) { return Touches(b->reads, buffer); }
bool Writes(const BlockNode* b, const BufferNode* buffer) { return Touches(b->writes, buffer); }

namespace {

// A walk of the scope in program order that finds the insertion point by the
// rules of TVM's CacheLocDetector: the first sequence (innermost first, as
// the walk returns) in which the writer has been seen and a related block is
// reached gives the position; its enclosing loop, or the scope, the parent.
class LocDetector {
 public:
  LocDetector(const BlockRealizeNode* scope, const BlockNode* writer,
              const std::unordered_set<const BlockNode*>& related)
      : scope_(scope), writer_(writer), related_(related) {}

  void Visit(const Stmt& s, const StmtNode* parent) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kSeqStmt: {
        bool outer_saw_writer = saw_writer_;
        saw_writer_ = false;
        const auto& seq = s.as<SeqStmtNode>()->seq;
        for (size_t i = 0; i < seq.size() && pos_ == -1; ++i) {
          Visit(seq[i], s.get());
          if (saw_writer_ && saw_related_ && pos_ == -1) {
            pos_ = static_cast<int>(i);
            seq_parent_ = parent;
            break;
          }
          if (saw_related_) break;
        }
        saw_writer_ = saw_writer_ || outer_saw_writer;
        return;
      }
      case StmtKind::kBlockRealize: {
        const auto* r = s.as<BlockRealizeNode>();
        if (r == scope_) {
          Visit(r->block->body, s.get());
          if (saw_related_ && loc_ == nullptr) {
            loc_ = s.get();
            if (!saw_writer_ && pos_ == -1) pos_ = 0;
          }
        } else if (r->block.get() == writer_) {
          saw_writer_ = true;
        } else if (related_.count(r->block.get())) {
          saw_related_ = true;
        }
        return;
      }
      case StmtKind::kFor:
        Visit(s.as<ForNode>()->body, s.get());
        if (saw_writer_ && saw_related_ && loc_ == nullptr && pos_ != -1) loc_ = s.get();
        return;
      case StmtKind::kIfThenElse:
        Visit(s.as<IfThenElseNode>()->then_case, s.get());
        Visit(s.as<IfThenElseNode>()->else_case, s.get());
        return;
      default:
        return;
    }
  }

  const StmtNode* loc() const { return loc_; }
  int pos() const { return pos_; }
  const StmtNode* seq_parent() const { return seq_parent_; }

 private:
  const BlockRealizeNode* scope_;
  const BlockNode* writer_;
  const std::unordered_set<const BlockNode*>& related_;
  bool saw_writer_ = false;
  bool saw_related_ = false;
  const StmtNode* loc_ = nullptr;
  int pos_ = -1;
  const StmtNode* seq_parent_ = nullptr;
};

}  // namespace

Location DetectLocation(const std::string& primitive, const Stmt& scope, const BlockNode* writer,
                        const std::unordered_set<const BlockNode*>& related) {
  const auto* scope_realize = scope.as<BlockRealizeNode>();
  if (related.empty()) {
    const auto* seq = scope_realize->block->body.as<SeqStmtNode>();
    return {scope.get(), seq ? static_cast<int>(seq->seq.size()) : 1};
  }
  LocDetector d(scope_realize, writer, related);
  d.Visit(scope, nullptr);
  if (d.loc() == nullptr || d.pos() < 0) {
    throw ScheduleError(primitive, "found no point in scope block '" + scope_realize->block->name +
                                       "' after block '" + writer->name +
                                       "' and before its consumers to insert the cache stage");
  }
  if (d.seq_parent() != nullptr && d.seq_parent() != d.loc()) {
    throw ScheduleError(primitive, "the cache stage for block '" + writer->name +
                                       "' would go inside a conditional statement, which the "
                                       "stage cannot be inserted under");
  }
  return {d.loc(), d.pos()};
}

std::vector<const ForNode*> LoopsBelow(const StmtPath& path, const StmtNode* loc) {
  std::vector<const ForNode*> loops;
  size_t start = 0;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i].get() == loc) start = i + 1;
  }
  for (size_t i = start; i + 1 < path.size(); ++i) {
    if (const auto* l = path[i].as<ForNode>()) loops.push_back(l);
  }
  return loops;
}

std::vector<Range> RelaxRegion(const StmtPath& writer_path, const StmtNode* loc,
                               const BufferRegion& region, arith::Analyzer* an) {
  const auto* realize = writer_path.back().as<BlockRealizeNode>();
  VarMap binding;
  for (size_t i = 0; i < realize->block->iter_vars.size(); ++i) {
    binding[realize->block->iter_vars[i].var.get()] = realize->iter_values[i];
  }
  // Loops and the iter vars of enclosing blocks may stay symbolic in the
  // region; their ranges let the clamp to the buffer's shape fold away.
  for (size_t i = 0; i + 1 < writer_path.size(); ++i) {
    if (const auto* l = writer_path[i].as<ForNode>())
      an->Bind(l->loop_var, Range{l->min, l->extent});
    if (const auto* r = writer_path[i].as<BlockRealizeNode>()) {
      for (const IterVar& iv : r->block->iter_vars) an->Bind(iv.var, iv.dom);
    }
  }
  std::unordered_map<const VarNode*, Range> relaxed;
  for (const ForNode* l : LoopsBelow(writer_path, loc))
    relaxed[l->loop_var.get()] = {l->min, l->extent};
  arith::IntSetMap dom = arith::DomainFromRanges(relaxed, an);

  std::vector<Range> out;
  const Buffer& buffer = region.buffer;
  for (size_t d = 0; d < region.region.size(); ++d) {
    const Range& r = region.region[d];
    Expr lo_e = Substitute(r.min, binding);
    arith::IntervalSet lo = arith::EvalSet(lo_e, dom, an);
    // A point access (extent 1, the common case) ends where it starts.
    arith::IntervalSet hi = IsConstInt(r.extent, 1)
                                ? lo
                                : arith::EvalSet(Substitute(r.min + r.extent - 1, binding), dom, an);
    Expr zero = MakeConst(buffer.shape()[d].dtype(), 0);
    Expr last = an->Simplify(buffer.shape()[d] - 1);
    Expr min = lo.has_lower_bound() ? an->Simplify(Max(lo.min, zero)) : zero;
    Expr max = hi.has_upper_bound() ? an->Simplify(Min(hi.max, last)) : last;
    out.push_back({min, an->Simplify(max - min + 1)});
  }
  return out;
}

Stmt MakeCopyStage(const std::string& name, const Buffer& src, const Buffer& dst,
                   const std::vector<Range>& region, arith::Analyzer* an) {
  std::vector<Var> loop_vars;
  std::vector<Expr> iter_values;
  for (const Range& r : region) {
    Var ax("ax" + std::to_string(loop_vars.size()), r.extent.dtype());
    loop_vars.push_back(ax);
    Expr min = an->Simplify(r.min);
    iter_values.push_back(IsConstInt(min, 0) ? Expr(ax) : Add(min, ax));
  }
  BlockNode block;
  block.name = name;
  std::vector<Expr> indices;
  std::vector<Range> point;
  for (size_t d = 0; d < src.ndim(); ++d) {
    const Expr& dim = src.shape()[d];
    Var v("v" + std::to_string(d), dim.dtype());
    block.iter_vars.push_back({v, Range{MakeConst(dim.dtype(), 0), dim}, IterType::kDataPar});
    indices.push_back(v);
    point.push_back({v, MakeConst(dim.dtype(), 1)});
  }
  block.reads = {BufferRegion{src, point}};
  block.writes = {BufferRegion{dst, point}};
  block.body = BufferStore(dst, BufferLoad(src, indices), indices);
  Stmt body = BlockRealize(std::move(iter_values), BoolImm(true), MakeBlock(std::move(block)));
  for (size_t i = loop_vars.size(); i-- > 0;) {
    body = For(loop_vars[i], MakeConst(region[i].extent.dtype(), 0), region[i].extent,
               ForKind::kSerial, body);
  }
  return body;
}

namespace {

Stmt InsertAt(const Stmt& body, int pos, const Stmt& stage) {
  if (const auto* seq = body.as<SeqStmtNode>()) {
    std::vector<Stmt> items = seq->seq;
    items.insert(items.begin() + std::min<size_t>(pos, items.size()), stage);
    return SeqStmt(std::move(items));
  }
  return pos == 0 ? SeqStmt({stage, body}) : SeqStmt({body, stage});
}

class ScopeRewriter : public IRMutator {
 public:
  explicit ScopeRewriter(const Redirect& r) : r_(r) {}

 protected:
  Stmt VisitFor(const Stmt& s, const ForNode* op) override {
    Stmt out = IRMutator::VisitFor(s, op);
    if (op != r_.loc.parent) return out;
    auto n = MakeNode<ForNode>(*out.as<ForNode>());
    n->body = InsertAt(n->body, r_.loc.pos, r_.stage);
    return Stmt(std::move(n));
  }

  Block VisitBlock(const Block& b) override {
    const BlockNode* node = b.get();
    bool active;
    if (r_.is_write) {
      // Inactive blocks are still walked: a listed consumer may sit inside.
      active = active_ || node == r_.writer || r_.only.count(node) > 0;
    } else {
      if (Writes(node, r_.from.get())) return b;
      active = active_ || r_.only.empty() || r_.only.count(node) > 0;
    }
    bool saved = active_;
    active_ = active;
    Block out = IRMutator::VisitBlock(b);
    active_ = saved;
    return out;
  }

  Buffer VisitBuffer(const Buffer& b) override { return active_ && b.same_as(r_.from) ? r_.to : b; }

 private:
  const Redirect& r_;
  bool active_ = false;
};

}  // namespace

Stmt RewriteScope(const StmtPath& scope_path, const Redirect& r) {
  const Stmt& scope = scope_path.back();
  const BlockNode* scope_block = scope.as<BlockRealizeNode>()->block.get();
  ScopeRewriter rewriter(r);
  BlockNode b = *scope_block;
  b.body = rewriter.VisitStmt(scope_block->body);
  if (r.loc.parent == scope.get()) b.body = InsertAt(b.body, r.loc.pos, r.stage);
  b.alloc_buffers.push_back(r.alloc);
  return ReplaceBlockAlongPath(scope_path, MakeBlock(std::move(b)));
}

std::vector<const BlockNode*> ProgramOrder(const PrimFunc& f) {
  std::vector<const BlockNode*> out;
  for (const BlockRealizeNode* r : AllBlockRealizes(f)) out.push_back(r->block.get());
  return out;
}

int OrderOf(const std::vector<const BlockNode*>& order, const BlockNode* b) {
  auto it = std::find(order.begin(), order.end(), b);
  return it == order.end() ? -1 : static_cast<int>(it - order.begin());
}

const BlockNode* ConsumerInScope(const std::string& primitive, const StmtPath& consumer_path,
                                 int scope_index, const Stmt& scope, const BlockNode* self) {
  const BlockNode* cb = consumer_path.back().as<BlockRealizeNode>()->block.get();
  if (static_cast<int>(consumer_path.size()) <= scope_index + 1 ||
      !consumer_path[scope_index].same_as(scope)) {
    throw ScheduleError(primitive, "consumer block '" + cb->name + "' is not under scope block '" +
                                       scope.as<BlockRealizeNode>()->block->name + "' of block '" +
                                       self->name + "'");
  }
  return cb;
}

BlockRV FinishCache(Schedule* sch, const std::string& kind, const StmtPath& scope_path, Redirect r,
                    const std::vector<Range>& region, arith::Analyzer* an, BlockRV block,
                    int buffer_index, const std::string& storage_scope,
                    const std::vector<BlockRV>& consumer_blocks) {
  std::string name = FreshName(sch->func(), r.from.name() + "_" + storage_scope);
  Buffer cached = r.from.WithScope(storage_scope).WithName(name);
  r.to = cached;
  r.stage = r.is_write ? MakeCopyStage(name, cached, r.from, region, an)
                       : MakeCopyStage(name, r.from, cached, region, an);
  r.alloc = cached;
  ScheduleMutator mutator(*sch);
  mutator.SetBody(RewriteScope(scope_path, r));

  BlockRV out = mutator.NewBlockRV(name);
  std::vector<InstArg> consumers;
  for (BlockRV c : consumer_blocks) consumers.push_back(InstArg::Of(c.ref()));
  mutator.Record(kind, {InstArg::Of(block.ref()), InstArg::List(std::move(consumers))},
                 nlohmann::json::array({buffer_index, storage_scope}), {out.ref()});
  return out;
}

InstructionKind CacheKind(const std::string& name, const std::string& index_arg,
                          BlockRV (Schedule::*fn)(BlockRV, int, const std::string&,
                                                  const std::vector<BlockRV>&)) {
  return kind_definition::DefineKind(
      name, {},
      [fn](Schedule& sch, const kind_definition::Args& a) -> std::vector<RVRef> {
        // TVM before consumer_blocks recorded the block alone.
        if (a.size() != 1 && a.size() != 2) {
          a.Fail("expected 2 inputs (block, consumer_blocks), got " + std::to_string(a.size()));
        }
        a.ExpectAttrs(2);
        int64_t index = a.AttrInt(0);
        return {(sch.*fn)(a.Block(0), static_cast<int>(index), a.AttrStr(1),
                          a.size() > 1 ? a.BlockList(1) : std::vector<BlockRV>{})
                    .ref()};
      },
      [index_arg](kind_definition::PyCall& py) {
        py.Arg("block", py.in[0]).Arg(index_arg, py.attrs[0].dump());
        py.Arg("storage_scope", kind_definition::PyStr(py.attrs[1].get<std::string>()));
        if (py.in.size() > 1 && py.in[1] != "[]" && py.in[1] != "None") {
          py.Arg("consumer_blocks", py.in[1]);
        }
      });
}

}  // namespace kiln::ir::cache
