// cache_write: a block writes a new buffer of another storage scope instead
// of its output, and a stage right after copies the result back.
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/arith/iter_map.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/cache_util.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"
#include "ir/substitute.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrim = "cache_write";

// True if `b` or a block nested in it has an init (so the cache is written
// before the block reads it back).
bool HasInit(const BlockNode* b) {
  if (b->init) return true;
  for (const BlockRealizeNode* c : ChildBlockRealizes(b->body)) {
    if (HasInit(c->block.get())) return true;
  }
  return false;
}

// The write-back copies every element of `region`; it must be exactly what
// the writer writes while the loops below the stage run, or it would copy
// elements of the cache nobody wrote over the original buffer.
void CheckWriteBackExact(const StmtPath& path, const cache::Location& loc,
                         const BufferRegion& written, const std::vector<Range>& region,
                         arith::Analyzer* an) {
  const auto* realize = path.back().as<BlockRealizeNode>();
  const BlockNode* b = realize->block.get();
  VarMap binding;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    binding[b->iter_vars[i].var.get()] = realize->iter_values[i];
  }
  std::vector<std::pair<Var, Range>> iters;
  for (const ForNode* l : cache::LoopsBelow(path, loc.parent)) {
    iters.push_back({l->loop_var, Range{l->min, l->extent}});
  }
  std::vector<Expr> indices;
  for (size_t d = 0; d < written.region.size(); ++d) {
    const Range& r = written.region[d];
    Expr index = Substitute(r.min, binding);
    int64_t ext = 0;
    Expr extent = an->Simplify(Substitute(r.extent, binding));
    if (!AsConstInt(extent, &ext)) {
      throw ScheduleError(kPrim, "block '" + b->name + "' writes a region of buffer '" +
                                     written.buffer.name() + "' whose extent in dimension " +
                                     std::to_string(d) + " is not a constant");
    }
    if (ext != 1) {
      Var t("t" + std::to_string(d), index.dtype());
      iters.push_back({t, Range{MakeConst(index.dtype(), 0), extent}});
      index = index + t;
    }
    indices.push_back(index);
  }
  arith::IterMapResult map = arith::DetectIterMap(indices, iters, realize->predicate,
                                                  arith::IterMapLevel::kSurjective, an);
  std::string why;
  if (!map.ok()) {
    why = map.errors.front();
  } else {
    for (size_t d = 0; d < map.indices.size() && why.empty(); ++d) {
      const arith::IterSumExpr& sum = map.indices[d];
      int64_t expected = 1;
      for (size_t k = sum.args.size(); k-- > 0;) {
        if (sum.args[k].scale != expected) {
          why = "dimension " + std::to_string(d) + " is written with gaps";
          break;
        }
        expected *= sum.args[k].extent;
      }
      Expr base = sum.base.defined() ? sum.base : MakeConst(indices[d].dtype(), 0);
      if (why.empty() &&
          (!an->CanProveEqual(region[d].min, base) ||
           !an->CanProveEqual(region[d].extent, MakeConst(region[d].extent.dtype(),
                                                          static_cast<double>(expected))))) {
        why = "dimension " + std::to_string(d) + " is not written over its whole range";
      }
    }
  }
  if (!why.empty()) {
    throw ScheduleError(kPrim, "block '" + b->name +
                                   "' does not write a whole rectangular region of "
                                   "buffer '" +
                                   written.buffer.name() + "' (" + why +
                                   "); the write-back would copy elements it never "
                                   "wrote");
  }
}

}  // namespace

BlockRV Schedule::CacheWrite(BlockRV block, int write_buffer_index,
                             const std::string& storage_scope,
                             const std::vector<BlockRV>& consumer_blocks) {
  cache::CheckStorageScope(kPrim, storage_scope);
  StmtPath path = PathOf(block);
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  if (write_buffer_index < 0 || write_buffer_index >= static_cast<int>(self->writes.size())) {
    throw ScheduleError(kPrim, "write_buffer_index " + std::to_string(write_buffer_index) +
                                   " is out of range: block '" + self->name + "' writes " +
                                   std::to_string(self->writes.size()) + " buffer region(s)");
  }
  const BufferRegion written = self->writes[write_buffer_index];
  const Buffer buffer = written.buffer;
  int si = ScopeIndex(path);
  if (si < 0) throw ScheduleError(kPrim, "block '" + self->name + "' has no scope block above it");
  StmtPath scope_path(path.begin(), path.begin() + si + 1);
  const Stmt& scope = scope_path.back();
  const BlockNode* scope_block = scope.as<BlockRealizeNode>()->block.get();

  auto writers = WritersOf(scope, buffer.get());
  if (writers.size() != 1) {
    std::string names;
    for (const auto* w : writers) names += (names.empty() ? "" : ", ") + w->block->name;
    throw ScheduleError(
        kPrim, "buffer '" + buffer.name() + "' is written by " + std::to_string(writers.size()) +
                   " blocks in scope block '" + scope_block->name + "' (" + names +
                   "); cache_write needs it written by block '" + self->name + "' alone");
  }
  if (cache::Reads(self, buffer.get()) && !HasInit(self)) {
    throw ScheduleError(kPrim, "block '" + self->name + "' reads the values buffer '" +
                                   buffer.name() +
                                   "' held before it ran (it has no init); a "
                                   "cache would not hold them");
  }

  auto order = cache::ProgramOrder(func_);
  int self_at = cache::OrderOf(order, self);
  std::unordered_set<const BlockNode*> only;
  for (BlockRV c : consumer_blocks) {
    StmtPath cp = PathOf(c);
    const BlockNode* cb = cache::ConsumerInScope(kPrim, cp, si, scope, self);
    if (cb == self || !cache::Reads(cb, buffer.get())) {
      throw ScheduleError(kPrim, "consumer block '" + cb->name + "' does not read buffer '" +
                                     buffer.name() + "' written by block '" + self->name + "'");
    }
    if (cache::Writes(cb, buffer.get())) {
      throw ScheduleError(
          kPrim, "consumer block '" + cb->name + "' also writes buffer '" + buffer.name() + "'");
    }
    if (cache::OrderOf(order, cb) < self_at) {
      throw ScheduleError(kPrim, "consumer block '" + cb->name + "' runs before block '" +
                                     self->name + "' and so cannot read its cache");
    }
    only.insert(cb);
  }
  std::unordered_set<const BlockNode*> related;
  for (const BlockRealizeNode* reader : ReadersOf(scope, buffer.get())) {
    const BlockNode* rb = reader->block.get();
    if (rb == self || cache::OrderOf(order, rb) < self_at || only.count(rb)) continue;
    related.insert(rb);
  }

  arith::Analyzer an;
  cache::Location loc = cache::DetectLocation(kPrim, scope, self, related);
  std::vector<Range> region = cache::RelaxRegion(path, loc.parent, written, &an);
  CheckWriteBackExact(path, loc, written, region, &an);

  cache::Redirect r;
  r.from = buffer;
  r.is_write = true;
  r.writer = self;
  r.only = only;
  r.loc = loc;
  return cache::FinishCache(this, instruction_kinds::CacheWrite().name, scope_path, std::move(r),
                            region, &an, block, write_buffer_index, storage_scope, consumer_blocks);
}

namespace instruction_kinds {

const InstructionKind& CacheWrite() {
  static const InstructionKind k =
      cache::CacheKind("CacheWrite", "write_buffer_index", &Schedule::CacheWrite);
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
