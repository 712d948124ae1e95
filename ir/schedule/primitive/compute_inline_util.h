// Machinery shared by compute_inline and reverse_compute_inline: locating the
// block and its scope, TVM's completeness and output-block checks, removing a
// leaf block with the loops that only it uses, and recomputing the access
// regions of blocks whose accesses an inlining changed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/functor.h"
#include "ir/prim_func.h"
#include "ir/schedule/instruction.h"
#include "ir/schedule/schedule.h"
#include "ir/schedule/stmt_path.h"

namespace kiln::ir::inline_util {

// A block being inlined, seen from its scope (the innermost enclosing block).
struct Site {
  StmtPath path;  // function body .. the block's BlockRealize
  int scope_index = -1;
  const BlockRealizeNode* realize = nullptr;
  const BlockNode* block = nullptr;
  const BlockNode* scope = nullptr;
  // The child blocks of the scope in program order; `block` is one of them.
  std::vector<const BlockRealizeNode*> siblings;
  int position = -1;  // index of `block` in siblings
};

// Throws ScheduleError(primitive, ...) when path does not end at a
// non-root block.
Site LocateSite(const std::string& primitive, const StmtPath& path);

bool Touches(const std::vector<BufferRegion>& regions, const BufferNode* buffer);
// The block writes a buffer its scope does not allocate (analysis.h's
// IsOutputBlock on the site's scope).
bool IsOutput(const Site& site, const BlockNode* block);
// Every buffer `e` loads from, in first-use order.
std::vector<const BufferNode*> LoadedBuffers(const Expr& e);
// True if `e` loads from `buffer`.
bool LoadsFrom(const Expr& e, const BufferNode* buffer);

// TVM's complete-block conditions (analysis.h's IsCompleteBlock) for
// `realize`, a child of site.scope; throws ScheduleError "<primitive>:
// <role><why>", `role` being e.g. "the producer ".
void CheckComplete(const std::string& primitive, const Site& site, const BlockRealizeNode* realize,
                   const std::string& role = "");

// TVM's require_stage_pipeline on the site's scope (analysis.h).
void CheckStagePipeline(const std::string& primitive, const Site& site);

// A primitive's whole work on the block at path.back(): with check_only, the
// checks alone (an empty Stmt), else the new function body.
using InlineImpl = Stmt (*)(const StmtPath& path, bool check_only);

// True if `impl` accepts the block at block_path.back(); on false *why (if
// given) receives the message the primitive would raise. The Schedule form
// also answers false for a handle the schedule cannot resolve.
bool Feasible(InlineImpl impl, const StmtPath& block_path, std::string* why);
bool Feasible(InlineImpl impl, const Schedule& sch, BlockRV block, std::string* why);

// The instruction kind `name` of compute_inline or reverse_compute_inline:
// one block input, no attributes, replayed with `fn`.
InstructionKind InlineKind(const std::string& name, void (Schedule::*fn)(BlockRV));

// The statement to remove with the block: its BlockRealize, or the outermost
// loop (or guard) above it whose body holds nothing else. Its parent is a
// SeqStmt; throws ScheduleError when the block is its scope's only content.
Stmt RemovalRoot(const std::string& primitive, const Site& site);

// The read and write regions of `block` as its statements access them (TVM's
// GetBlockReadWriteRegion): buffers in order of first access; loops inside
// the block are relaxed over their ranges; nested blocks contribute their
// own regions under their bindings. A reduction block (one with init) does
// not list the buffers it writes among its reads.
std::pair<std::vector<BufferRegion>, std::vector<BufferRegion>> DetectRegions(
    const BlockNode& block);

// Rewrites a scope after an inlining of `buffer`: removes the statement
// `removed` from its SeqStmt, drops `buffer` from the scope's alloc_buffers
// and recomputes the regions of every other block that accessed `buffer`.
// Subclasses replace the accesses themselves.
class ScopeRewriter : public IRMutator {
 public:
  ScopeRewriter(Buffer buffer, const BlockNode* scope, Stmt removed)
      : buffer_(std::move(buffer)), scope_(scope), removed_(std::move(removed)) {}

  // The new function body: site.path's scope rewritten in place.
  Stmt Run(const Site& site);

 protected:
  Stmt VisitSeqStmt(const Stmt& s, const SeqStmtNode* op) override;
  Block VisitBlock(const Block& b) override;

  Buffer buffer_;
  const BlockNode* scope_;
  Stmt removed_;
};

}  // namespace kiln::ir::inline_util
