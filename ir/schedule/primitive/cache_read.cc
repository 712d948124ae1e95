// cache_read: copy what a block reads into a new buffer of another storage
// scope, and make the consumers read the copy.
#include <unordered_set>

#include "ir/arith/analyzer.h"
#include "ir/op.h"
#include "ir/schedule/analysis.h"
#include "ir/schedule/define_kind.h"
#include "ir/schedule/primitive/cache_util.h"
#include "ir/schedule/primitive/kinds.h"
#include "ir/schedule/schedule.h"

namespace kiln::ir {

namespace {

constexpr const char* kPrim = "cache_read";

// The direct child of the scope (path index scope_index + 1 onwards) that
// holds the block at path.back().
const BlockNode* ChildOfScope(const StmtPath& path, int scope_index) {
  for (size_t i = scope_index + 1; i < path.size(); ++i) {
    if (const auto* r = path[i].as<BlockRealizeNode>()) return r->block.get();
  }
  return nullptr;
}

}  // namespace

BlockRV Schedule::CacheRead(BlockRV block, int read_buffer_index, const std::string& storage_scope,
                            const std::vector<BlockRV>& consumer_blocks) {
  cache::CheckStorageScope(kPrim, storage_scope);
  StmtPath path = PathOf(block);
  const BlockNode* self = path.back().as<BlockRealizeNode>()->block.get();
  if (read_buffer_index < 0 || read_buffer_index >= static_cast<int>(self->reads.size())) {
    throw ScheduleError(kPrim, "read_buffer_index " + std::to_string(read_buffer_index) +
                                   " is out of range: block '" + self->name + "' reads " +
                                   std::to_string(self->reads.size()) + " buffer region(s)");
  }
  const Buffer buffer = self->reads[read_buffer_index].buffer;
  if (cache::Writes(self, buffer.get())) {
    throw ScheduleError(kPrim, "block '" + self->name + "' both reads and writes buffer '" +
                                   buffer.name() + "'; its reads cannot be redirected to a cache");
  }
  int si = ScopeIndex(path);
  if (si < 0) throw ScheduleError(kPrim, "block '" + self->name + "' has no scope block above it");
  StmtPath scope_path(path.begin(), path.begin() + si + 1);
  const Stmt& scope = scope_path.back();
  const BlockNode* scope_block = scope.as<BlockRealizeNode>()->block.get();

  std::unordered_set<const BlockNode*> only;
  std::unordered_set<const BlockNode*> related;
  for (BlockRV c : consumer_blocks) {
    StmtPath cp = PathOf(c);
    const BlockNode* cb = cache::ConsumerInScope(kPrim, cp, si, scope, self);
    if (!cache::Reads(cb, buffer.get())) {
      throw ScheduleError(
          kPrim, "consumer block '" + cb->name + "' does not read buffer '" + buffer.name() + "'");
    }
    if (cache::Writes(cb, buffer.get())) {
      throw ScheduleError(kPrim, "consumer block '" + cb->name +
                                     "' both reads and writes buffer '" + buffer.name() +
                                     "'; its reads cannot be redirected to a cache");
    }
    only.insert(cb);
    related.insert(ChildOfScope(cp, si));
  }

  arith::Analyzer an;
  std::vector<Range> region;
  cache::Location loc;
  auto writers = WritersOf(scope, buffer.get());
  if (writers.size() > 1) {
    std::string names;
    for (const auto* w : writers) names += (names.empty() ? "" : ", ") + w->block->name;
    throw ScheduleError(kPrim, "buffer '" + buffer.name() + "' is written by " +
                                   std::to_string(writers.size()) + " blocks in scope block '" +
                                   scope_block->name + "' (" + names +
                                   "); cache_read needs at most one writer");
  }
  if (writers.size() == 1) {
    const BlockNode* writer = writers[0]->block.get();
    StmtPath wp = *FindBlockPath(func_, writer->name);
    BufferRegion written;
    for (const BufferRegion& w : writer->writes) {
      if (w.buffer.same_as(buffer)) written = w;
    }
    auto order = cache::ProgramOrder(func_);
    int writer_at = cache::OrderOf(order, writer);
    for (const BlockRealizeNode* reader : ReadersOf(scope, buffer.get())) {
      const BlockNode* rb = reader->block.get();
      if (rb == writer) continue;
      bool redirected = only.empty() || related.count(rb);
      if (!redirected) continue;
      if (cache::OrderOf(order, rb) < writer_at) {
        throw ScheduleError(kPrim, "block '" + rb->name + "' reads buffer '" + buffer.name() +
                                       "' before its writer '" + writer->name +
                                       "' runs; a cache copied after the write would not hold "
                                       "what it reads");
      }
      if (only.empty()) related.insert(rb);
      std::string why;
      if (!IsRegionCovered(scope_path, reader, &why)) {
        throw ScheduleError(kPrim, "the reads of block '" + rb->name +
                                       "' are not covered by what their producers write (" + why +
                                       "); a cache of what block '" + writer->name +
                                       "' writes might not hold them");
      }
    }
    loc = cache::DetectLocation(kPrim, scope, writer, related);
    region = cache::RelaxRegion(wp, loc.parent, written, &an);
  } else {
    loc = {scope.get(), 0};
    for (const BufferRegion& r : scope_block->reads) {
      if (r.buffer.same_as(buffer)) region = r.region;
    }
    if (region.empty()) {
      for (const Expr& dim : buffer.shape()) region.push_back({MakeConst(dim.dtype(), 0), dim});
    }
  }

  cache::Redirect r;
  r.from = buffer;
  r.is_write = false;
  r.only = only;
  r.loc = loc;
  return cache::FinishCache(this, instruction_kinds::CacheRead().name, scope_path, std::move(r),
                            region, &an, block, read_buffer_index, storage_scope, consumer_blocks);
}

namespace instruction_kinds {

const InstructionKind& CacheRead() {
  static const InstructionKind k =
      cache::CacheKind("CacheRead", "read_buffer_index", &Schedule::CacheRead);
  return k;
}

}  // namespace instruction_kinds
}  // namespace kiln::ir
