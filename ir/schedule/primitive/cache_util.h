// What cache_read and cache_write share: the storage-scope check, where the
// copy stage goes (TVM's CacheLocDetector rules), the region it copies, the
// copy stage itself, and the rewrite of the scope that redirects accesses.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "ir/arith/analyzer.h"
#include "ir/prim_func.h"
#include "ir/schedule/instruction.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/stmt_path.h"
#include "ir/stmt.h"

namespace kiln::ir::cache {

// Throws ScheduleError(primitive, ...) unless `scope` is a storage scope TVM
// knows: global, shared, local, warp (each optionally followed by ".tag"),
// shared.dyn, wmma.matrix_a / matrix_b / accumulator, m16n8k8.matrixA/B/C,
// metal.simdgroup.
void CheckStorageScope(const std::string& primitive, const std::string& scope);

// `base` if no block or buffer of `f` is called that, else base_1, base_2, ...
// (blocks are addressed by name, so the copy stage needs a fresh one).
std::string FreshName(const PrimFunc& f, const std::string& base);

bool Reads(const BlockNode* b, const BufferNode* buffer);
bool Writes(const BlockNode* b, const BufferNode* buffer);

// Where the copy stage goes: inserted at `pos` into the body of `parent` (a
// For, or the scope BlockRealize).
struct Location {
  const StmtNode* parent = nullptr;
  int pos = 0;
};

// TVM's placement: with related blocks (consumers of the cached buffer for
// cache_read, consumers that keep reading the original for cache_write), right
// before the first related block, in the body of the lowest loop (or the
// scope) holding both it and `writer`; with none, at the end of the scope.
// Throws ScheduleError(primitive, ...) where no such point exists (e.g. under
// an if).
Location DetectLocation(const std::string& primitive, const Stmt& scope, const BlockNode* writer,
                        const std::unordered_set<const BlockNode*>& related);

// The region of `region` (a region of the block at writer_path.back(), in its
// iter vars) touched while the loops strictly below `loc` on writer_path run,
// clamped to the buffer's shape. Loops above stay symbolic. Binds every loop
// of writer_path into `an`.
std::vector<Range> RelaxRegion(const StmtPath& writer_path, const StmtNode* loc,
                               const BufferRegion& region, arith::Analyzer* an);

// The loops of `path` strictly below `loc` (all the loops of the path when
// loc is not on it), outer to inner.
std::vector<const ForNode*> LoopsBelow(const StmtPath& path, const StmtNode* loc);

// The copy stage: loops ax0.. over `region`'s extents, and a block `name`
// with iter vars v0.. over `src`'s shape copying src[v] into dst[v].
Stmt MakeCopyStage(const std::string& name, const Buffer& src, const Buffer& dst,
                   const std::vector<Range>& region, arith::Analyzer* an);

// The rewrite of the scope: which blocks use the new buffer, and where the
// stage goes.
struct Redirect {
  Buffer from, to;
  // cache_read: every block not writing `from` is redirected when `only` is
  // empty, else the blocks in `only` (and blocks nested in them).
  // cache_write: the writer, blocks nested in it, and the blocks in `only`.
  bool is_write = false;
  const BlockNode* writer = nullptr;
  std::unordered_set<const BlockNode*> only;
  Location loc;
  Stmt stage;
  Buffer alloc;  // appended to the scope block's alloc_buffers
};

// Rewrites the scope block at scope_path.back() and returns the new function
// body.
Stmt RewriteScope(const StmtPath& scope_path, const Redirect& r);

// The consumer block at consumer_path.back(), after checking that it lies
// under the scope block at scope_path index `scope_index` (scope) of `self`,
// the block being cached; throws ScheduleError(primitive, ...) if not.
const BlockNode* ConsumerInScope(const std::string& primitive, const StmtPath& consumer_path,
                                 int scope_index, const Stmt& scope, const BlockNode* self);

// The steps cache_read and cache_write end with: the cache buffer (r.from in
// `storage_scope`, under a fresh name) becomes r.to and r.alloc, r.stage
// copies `region` from the original into it (cache_read) or back
// (cache_write, r.is_write), the scope at scope_path.back() is rewritten,
// and the instruction `kind` is recorded with the block, the consumer blocks
// and (buffer_index, storage_scope). Returns the copy stage's handle.
BlockRV FinishCache(Schedule* sch, const std::string& kind, const StmtPath& scope_path, Redirect r,
                    const std::vector<Range>& region, arith::Analyzer* an, BlockRV block,
                    int buffer_index, const std::string& storage_scope,
                    const std::vector<BlockRV>& consumer_blocks);

// The instruction kind `name` of cache_read or cache_write: it replays with
// `fn`, and its Python line names the buffer index `index_arg`
// (read_buffer_index / write_buffer_index).
InstructionKind CacheKind(const std::string& name, const std::string& index_arg,
                          BlockRV (Schedule::*fn)(BlockRV, int, const std::string&,
                                                  const std::vector<BlockRV>&));

// Program (pre-)order position of every block of f.
std::vector<const BlockNode*> ProgramOrder(const PrimFunc& f);
int OrderOf(const std::vector<const BlockNode*>& order, const BlockNode* b);

}  // namespace kiln::ir::cache
